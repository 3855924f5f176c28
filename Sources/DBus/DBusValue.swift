/// Any D-Bus value, with its exact wire type.
///
/// Most code never touches this enum: interfaces are written with Swift types
/// that conform to ``DBusRepresentable``. It is the common currency underneath,
/// and the way to handle values whose type is known only at run time.
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// A UTF-8 string without NUL characters (a NUL is refused when sending).
    case string(String)
    case objectPath(ObjectPath)
    case signature(Signature)
    /// An array with its element type, which an empty array needs on the wire.
    case array(DBusType, [DBusValue])
    /// A dictionary (`a{KV}`) as ordered entries; the wire allows repeated keys.
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    case structure([DBusValue])
    // Indirect so that only variants are boxed; scalars stay inline.
    indirect case variant(Variant)

    /// One entry of a ``DBusValue/dictionary(key:value:_:)``.
    public struct DictionaryEntry: Hashable, Sendable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// Whether this value is of `type`, without building the value's type.
    func hasType(_ type: DBusType) -> Bool {
        switch (self, type) {
        case (.byte, .byte), (.boolean, .boolean), (.int16, .int16), (.uint16, .uint16), (.int32, .int32),
            (.uint32, .uint32), (.int64, .int64), (.uint64, .uint64), (.double, .double), (.string, .string),
            (.objectPath, .objectPath), (.signature, .signature), (.variant, .variant):
            return true
        case (.array(let element, _), .array(let expected)):
            return element == expected
        case (.dictionary(let key, let value, _), .dictionary(let expectedKey, let expectedValue)):
            return key == expectedKey && value == expectedValue
        case (.structure(let fields), .structure(let types)):
            guard fields.count == types.count else { return false }
            for (field, type) in zip(fields, types) where !field.hasType(type) { return false }
            return true
        default:
            return false
        }
    }
}

extension Signature {
    func checkNotFD() throws {
        if types.contains(where: \.containsUnixFD) { throw DBusError.unixFDNotSupported }
    }
}

extension DBusError {
    static let stringContainsNUL = DBusError.invalidArgs("A D-Bus string cannot contain a NUL character")
    static let unixFDNotSupported = DBusError(
        .notSupported, "Unix file descriptors ('h') are not supported by this library")
}

extension DBusType {
    var containsUnixFD: Bool {
        switch self {
        case .unixFD: true
        case .array(let element): element.containsUnixFD
        case .dictionary(let key, let value): key.containsUnixFD || value.containsUnixFD
        case .structure(let fields): fields.contains(where: \.containsUnixFD)
        default: false
        }
    }
}

/// A value of any type, boxed with its type: D-Bus's `v`.
public struct Variant: Hashable, Sendable, CustomStringConvertible {
    /// The boxed value.
    public let value: DBusValue

    public init(_ value: DBusValue) { self.value = value }
    public init<T: DBusRepresentable>(_ value: T) { self.value = value.dbusValue }

    /// The boxed value as `T`; throws `InvalidArgs` if the boxed type is not `T`'s.
    public func get<T: DBusRepresentable>(_ type: T.Type = T.self) throws -> T { try T(dbusValue: value) }

    public var description: String { "<\(value.type)> \(value)" }
}
