/// Values written in D-Bus's wire format (little-endian), for replies assembled from bytes kept
/// between calls instead of value by value through libdbus's iterators.
///
/// Offsets are relative to the start of `bytes`, which stands for an 8-aligned place in a
/// message (a body's start, a dictionary entry's), so bytes written for one such place are
/// valid at any other. Whatever it cannot write as libdbus would accept (a NUL inside a
/// string, a unix fd, a dictionary key that is not basic, an element of another type than its
/// array's, too deep a nesting) makes ``append(_:)`` return false: the caller then builds the
/// message the ordinary way, which reports the problem as it always has. libdbus validates the
/// finished message again before it is sent.
struct WireBody {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    var count: Int { bytes.count }

    mutating func pad(to alignment: Int) {
        let remainder = bytes.count % alignment
        if remainder != 0 { bytes.append(contentsOf: repeatElement(0, count: alignment - remainder)) }
    }

    /// Appends bytes written for an 8-aligned place, after padding to 8.
    mutating func appendAligned(_ other: [UInt8]) {
        pad(to: 8)
        bytes.append(contentsOf: other)
    }

    /// A 4-aligned UInt32 (an array's length to patch later).
    mutating func appendUInt32(_ value: UInt32) { appendInteger(value) }

    private mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Writes `value` at a 4-byte place reserved earlier (an array's length).
    private mutating func patch(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for index in 0..<4 { bytes[offset + index] = raw[index] }
        }
    }

    /// Appends `value` with its alignment; false (with `bytes` then unspecified) when it cannot
    /// be written as libdbus would accept it.
    mutating func append(_ value: DBusValue) -> Bool { append(value, depth: 0) }

    private mutating func append(_ value: DBusValue, depth: Int) -> Bool {
        // The wire allows 64 levels of containers; libdbus checks the finished message again.
        guard depth <= 64 else { return false }
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): appendInteger(UInt32(v ? 1 : 0))
        case .int16(let v): appendInteger(v)
        case .uint16(let v): appendInteger(v)
        case .int32(let v): appendInteger(v)
        case .uint32(let v): appendInteger(v)
        case .int64(let v): appendInteger(v)
        case .uint64(let v): appendInteger(v)
        case .double(let v): appendInteger(v.bitPattern)
        case .string(let v): return appendString(v)
        case .objectPath(let v): return appendString(v.rawValue)
        case .signature(let v): return appendSignature(v.rawValue)
        case .array(let element, let items):
            guard !element.containsUnixFD else { return false }
            appendInteger(UInt32(0))
            let lengthAt = bytes.count - 4
            pad(to: element.alignment)
            let start = bytes.count
            if element == .byte {
                for item in items {
                    guard case .byte(let byte) = item else { return false }
                    bytes.append(byte)
                }
            } else {
                for item in items {
                    guard item.hasType(element), append(item, depth: depth + 1) else { return false }
                }
            }
            return finishArray(lengthAt: lengthAt, start: start)
        case .dictionary(let key, let valueType, let entries):
            guard key.isBasic, !key.containsUnixFD, !valueType.containsUnixFD else { return false }
            appendInteger(UInt32(0))
            let lengthAt = bytes.count - 4
            pad(to: 8)
            let start = bytes.count
            for entry in entries {
                guard entry.key.hasType(key), entry.value.hasType(valueType) else { return false }
                pad(to: 8)
                guard append(entry.key, depth: depth + 2), append(entry.value, depth: depth + 2) else { return false }
            }
            return finishArray(lengthAt: lengthAt, start: start)
        case .structure(let fields):
            guard !fields.isEmpty else { return false }
            pad(to: 8)
            for field in fields where !append(field, depth: depth + 1) { return false }
        case .variant(let variant):
            let type = variant.value.type
            guard !type.containsUnixFD, appendSignature(type.description) else { return false }
            return append(variant.value, depth: depth + 1)
        }
        return true
    }

    /// Writes an array or dictionary whose elements `body` appends (padding each to
    /// `elementAlignment` itself); false when `body` does or the array is too long.
    mutating func appendArray(elementAlignment: Int, _ body: (inout WireBody) -> Bool) -> Bool {
        appendInteger(UInt32(0))
        let lengthAt = bytes.count - 4
        pad(to: elementAlignment)
        let start = bytes.count
        guard body(&self) else { return false }
        return finishArray(lengthAt: lengthAt, start: start)
    }

    /// Appends one field of a message header, a `(yv)` whose variant holds a basic value, without
    /// building the struct and the variant as values.
    mutating func appendHeaderField(_ code: UInt8, _ value: DBusValue) -> Bool {
        let signature = value.type.description
        guard value.type.isBasic, signature.utf8.count == 1 else { return false }
        pad(to: 8)
        bytes.append(code)
        return appendSignature(signature) && append(value)
    }

    mutating func finishArray(lengthAt: Int, start: Int) -> Bool {
        let length = bytes.count - start
        // The D-Bus limit on an array's length.
        guard length <= 1 << 26 else { return false }
        patch(UInt32(length), at: lengthAt)
        return true
    }

    mutating func appendString(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard !utf8.contains(0) else { return false }
            appendInteger(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            return true
        }
    }

    mutating func appendSignature(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count <= 255 else { return false }
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
        return true
    }
}

extension DBusType {
    /// The alignment of this type's values on the wire.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array, .dictionary: 4
        case .int64, .uint64, .double, .structure: 8
        }
    }
}
