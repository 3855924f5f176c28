import Glibc

/// Values written in D-Bus's wire format (little-endian), for replies assembled from bytes kept
/// between calls instead of value by value through libdbus's iterators.
///
/// Offsets are relative to the first byte written, which stands for an 8-aligned place in a
/// message (a body's start, a dictionary entry's), so bytes written for one such place are
/// valid at any other. Whatever it cannot write as libdbus would accept (a NUL inside a
/// string, a unix fd, a dictionary key that is not basic, an element of another type than its
/// array's, a variant's type that no signature may hold, too deep a nesting) makes
/// ``append(_:)`` return false: the caller then builds the message the ordinary way, which
/// reports the problem as it always has. What it writes is therefore a valid body: strings are
/// Swift's, always valid UTF-8; object paths and signatures are checked when made.
struct WireBody {
    /// The bytes written, then zeros up to the storage's end: growing fills with zeros, so
    /// padding and a string's closing NUL are written by moving `count` on, and each value is
    /// one copy into place rather than an array append per piece.
    private var storage: [UInt8]
    /// How many bytes are written.
    private(set) var count = 0

    init(capacity: Int = 0) { storage = [UInt8](repeating: 0, count: capacity) }

    /// The bytes written, without copying them; the body is left empty.
    mutating func takeBytes() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &storage)
        taken.removeSubrange(count...)
        count = 0
        return taken
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > storage.count { grow(toHold: count + extra) }
    }

    private mutating func grow(toHold needed: Int) {
        storage.append(contentsOf: repeatElement(0, count: Swift.max(needed, storage.count * 2, 64) - storage.count))
    }

    /// Copies `source` in at the end.
    private mutating func write(_ source: UnsafeRawBufferPointer) {
        guard let from = source.baseAddress, source.count > 0 else { return }
        reserve(source.count)
        let at = count
        storage.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: at).copyMemory(from: from, byteCount: source.count) }
        count += source.count
    }

    mutating func pad(to alignment: Int) {
        let remainder = count % alignment
        guard remainder != 0 else { return }
        reserve(alignment - remainder)
        count += alignment - remainder
    }

    /// Appends bytes written for an 8-aligned place, after padding to 8.
    mutating func appendAligned(_ other: [UInt8]) {
        pad(to: 8)
        other.withUnsafeBytes { write($0) }
    }

    /// A 4-aligned UInt32 (an array's length to patch later).
    mutating func appendUInt32(_ value: UInt32) { appendInteger(value) }

    private mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        pad(to: MemoryLayout<T>.size)
        reserve(MemoryLayout<T>.size)
        let at = count
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: at, as: T.self) }
        count += MemoryLayout<T>.size
    }

    private mutating func appendByte(_ value: UInt8) {
        reserve(1)
        storage[count] = value
        count += 1
    }

    /// Writes `value` at a 4-byte place written earlier (a message's body length).
    mutating func patchUInt32(_ value: UInt32, at offset: Int) { patch(value, at: offset) }

    /// Writes `value` at a 4-byte place reserved earlier (an array's length).
    private mutating func patch(_ value: UInt32, at offset: Int) {
        storage.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    /// Appends `value` with its alignment; false (what is written then unspecified) when it cannot
    /// be written as libdbus would accept it.
    mutating func append(_ value: DBusValue) -> Bool { append(value, depth: 0) }

    private mutating func append(_ value: DBusValue, depth: Int) -> Bool {
        // The wire allows 64 levels of containers and a signature 32 nested arrays or structs;
        // half the first keeps both without counting them apart. Deeper values go the ordinary way.
        guard depth <= Self.maximumDepth else { return false }
        switch value {
        case .byte(let v): appendByte(v)
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
            let lengthAt = count - 4
            pad(to: element.alignment)
            let start = count
            if element == .byte {
                for item in items {
                    guard case .byte(let byte) = item else { return false }
                    appendByte(byte)
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
            let lengthAt = count - 4
            pad(to: 8)
            let start = count
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
            guard appendVariantSignature(of: variant.value) else { return false }
            return append(variant.value, depth: depth + 1)
        }
        return true
    }

    /// Writes an array or dictionary whose elements `body` appends (padding each to
    /// `elementAlignment` itself); false when `body` does or the array is too long.
    mutating func appendArray(elementAlignment: Int, _ body: (inout WireBody) -> Bool) -> Bool {
        appendInteger(UInt32(0))
        let lengthAt = count - 4
        pad(to: elementAlignment)
        let start = count
        guard body(&self) else { return false }
        return finishArray(lengthAt: lengthAt, start: start)
    }

    /// Appends one field of a message header, a `(yv)` whose variant holds a basic value, without
    /// building the struct and the variant as values.
    mutating func appendHeaderField(_ code: UInt8, _ value: DBusValue) -> Bool {
        let signature = value.type.description
        guard value.type.isBasic, signature.utf8.count == 1 else { return false }
        pad(to: 8)
        appendByte(code)
        return appendSignature(signature) && append(value)
    }

    mutating func finishArray(lengthAt: Int, start: Int) -> Bool {
        let length = count - start
        // The D-Bus limit on an array's length.
        guard length <= 1 << 26 else { return false }
        patch(UInt32(length), at: lengthAt)
        return true
    }

    mutating func appendString(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            let length = utf8.count
            guard length == 0 || memchr(utf8.baseAddress!, 0, length) == nil else { return false }
            pad(to: 4)
            // The length, the text and its NUL, which the zeros past `count` already are.
            reserve(4 + length + 1)
            let at = count
            storage.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: UInt32(length).littleEndian, toByteOffset: at, as: UInt32.self)
                if length > 0 { raw.baseAddress!.advanced(by: at + 4).copyMemory(from: utf8.baseAddress!, byteCount: length) }
            }
            count += 4 + length + 1
            return true
        }
    }

    /// The deepest nesting of containers written: every level of an array, a dictionary entry,
    /// a struct or a variant counts.
    static let maximumDepth = 32

    /// Appends the signature a variant holding `value` starts with; false when no signature
    /// may hold its type (a unix fd, an empty struct, a dictionary key that is not basic, too
    /// deep a nesting, more than 255 characters).
    mutating func appendVariantSignature(of value: DBusValue) -> Bool {
        let type = value.type
        guard Self.canWriteSignature(of: type) else { return false }
        return appendSignature(type.description)
    }

    /// Whether a signature may hold `type`: no unix fd, no empty struct, basic dictionary keys,
    /// at most ``maximumDepth`` levels of containers.
    static func canWriteSignature(of type: DBusType) -> Bool {
        type.isBasic ? type != .unixFD : type.isWritableInVariant(depth: 0)
    }

    /// Appends a signature known valid when written (a literal such as `"s"`).
    mutating func appendKnownSignature(_ text: StaticString) {
        // A one-character literal may be stored as a scalar, which has no `utf8Start`.
        text.withUTF8Buffer { appendSignatureBytes(UnsafeRawBufferPointer($0)) }
    }

    mutating func appendSignature(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count <= 255 else { return false }
            appendSignatureBytes(UnsafeRawBufferPointer(utf8))
            return true
        }
    }

    /// A signature: its length in a byte, its text and a NUL (the zero past `count`).
    private mutating func appendSignatureBytes(_ utf8: UnsafeRawBufferPointer) {
        reserve(utf8.count + 2)
        storage[count] = UInt8(utf8.count)
        count += 1
        write(utf8)
        count += 1
    }
}

extension DBusType {
    /// Whether a variant may hold values of this type: no unix fd, no empty struct, basic
    /// dictionary keys, at most ``WireBody/maximumDepth`` levels of containers.
    fileprivate func isWritableInVariant(depth: Int) -> Bool {
        guard depth <= WireBody.maximumDepth else { return false }
        switch self {
        case .unixFD: return false
        case .array(let element): return element.isWritableInVariant(depth: depth + 1)
        case .dictionary(let key, let value):
            return key.isBasic && key != .unixFD && value.isWritableInVariant(depth: depth + 2)
        case .structure(let fields):
            return !fields.isEmpty && fields.allSatisfy { $0.isWritableInVariant(depth: depth + 1) }
        default: return true
        }
    }

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
