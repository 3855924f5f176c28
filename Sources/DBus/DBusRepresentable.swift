/// A Swift type with a fixed D-Bus type, usable directly as a method argument,
/// a return value, a property or a signal argument.
///
/// The library provides conformances for the D-Bus basic types (`UInt8`,
/// `Bool`, `Int16`, `UInt16`, `Int32`, `UInt32`, `Int64`, `UInt64`, `Double`,
/// `String`, ``ObjectPath``, ``Signature``), for ``Variant``, and for arrays and
/// dictionaries of conforming types. `Int` deliberately has none: say `Int32` or
/// `Int64`, because the wire does.
///
/// To send a struct, conform your own type:
/// ```swift
/// struct Playlist: DBusRepresentable {
///     var id: ObjectPath, name: String, icon: String
///     static var dbusType: DBusType { .structure([.objectPath, .string, .string]) }
///     var dbusValue: DBusValue { .structure([id.dbusValue, name.dbusValue, icon.dbusValue]) }
///     init(dbusValue: DBusValue) throws {
///         let fields = try dbusValue.structureFields(count: 3)
///         (id, name, icon) = (try .init(dbusValue: fields[0]), try .init(dbusValue: fields[1]), try .init(dbusValue: fields[2]))
///     }
/// }
/// ```
///
/// Requirements: `dbusValue.type == Self.dbusType` for every value, and
/// `init(dbusValue:)` accepts what `dbusValue` produces and throws
/// ``DBusError`` with `InvalidArgs` for anything else.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type of every value of this Swift type.
    static var dbusType: DBusType { get }
    /// This value as a D-Bus value.
    var dbusValue: DBusValue { get }
    /// Reads a value of this type; throws `InvalidArgs` if `dbusValue` has another type.
    init(dbusValue: DBusValue) throws
}

extension DBusValue {
    /// The fields of a struct value, checked to be `count` of them.
    public func structureFields(count: Int) throws -> [DBusValue] {
        guard case .structure(let fields) = self, fields.count == count else {
            throw DBusError.invalidArgs("Expected a struct of \(count) fields, got a value of type '\(type)'")
        }
        return fields
    }
}

@usableFromInline
func typeMismatch(_ value: DBusValue, expected: DBusType) -> DBusError {
    DBusError.invalidArgs("Expected a value of type '\(expected)', got '\(value.type)'")
}

extension UInt8: DBusRepresentable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .byte(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .byte) }
        self = value
    }
}

extension Bool: DBusRepresentable {
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: DBusValue { .boolean(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .boolean(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .boolean) }
        self = value
    }
}

extension Int16: DBusRepresentable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .int16(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .int16) }
        self = value
    }
}

extension UInt16: DBusRepresentable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .uint16(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .uint16) }
        self = value
    }
}

extension Int32: DBusRepresentable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .int32(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .int32) }
        self = value
    }
}

extension UInt32: DBusRepresentable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .uint32(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .uint32) }
        self = value
    }
}

extension Int64: DBusRepresentable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .int64(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .int64) }
        self = value
    }
}

extension UInt64: DBusRepresentable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .uint64(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .uint64) }
        self = value
    }
}

extension Double: DBusRepresentable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .double(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .double) }
        self = value
    }
}

extension String: DBusRepresentable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .string(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .string) }
        self = value
    }
}

extension ObjectPath: DBusRepresentable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .objectPath(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .objectPath) }
        self = value
    }
}

extension Signature: DBusRepresentable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .signature(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .signature) }
        self = value
    }
}

extension Variant: DBusRepresentable {
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue: DBusValue) throws {
        guard case .variant(let value) = dbusValue else { throw typeMismatch(dbusValue, expected: .variant) }
        self = value
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusType: DBusType { .array(Element.dbusType) }
    // A closure, not a key path: a key path is built on every call in generic code.
    public var dbusValue: DBusValue { .array(Element.dbusType, map { $0.dbusValue }) }
    public init(dbusValue: DBusValue) throws {
        guard case .array(let element, let items) = dbusValue, element == Element.dbusType else {
            throw typeMismatch(dbusValue, expected: Self.dbusType)
        }
        self = try items.map(Element.init(dbusValue:))
    }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    public var dbusValue: DBusValue {
        .dictionary(
            key: Key.dbusType, value: Value.dbusType,
            map { DBusValue.DictionaryEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
    /// Reads a dictionary; when the wire repeats a key, the last entry wins.
    public init(dbusValue: DBusValue) throws {
        guard case .dictionary(let key, let value, let entries) = dbusValue,
            key == Key.dbusType, value == Value.dbusType
        else { throw typeMismatch(dbusValue, expected: Self.dbusType) }
        self.init(minimumCapacity: entries.count)
        for entry in entries {
            self[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value)
        }
    }
}

/// Reads typed arguments one after the other from a message body.
final class ArgumentReader {
    private let values: [DBusValue]
    private var index = 0

    init(_ values: [DBusValue]) { self.values = values }

    func next<T: DBusRepresentable>(_ type: T.Type) throws -> T {
        guard index < values.count else {
            throw DBusError.invalidArgs("Expected more arguments: argument \(index) of type '\(T.dbusType)' is missing")
        }
        defer { index += 1 }
        return try T(dbusValue: values[index])
    }
}

/// The D-Bus types of a parameter pack of Swift types, in order.
func dbusTypes<each T: DBusRepresentable>(_ types: repeat (each T).Type) -> [DBusType] {
    var result: [DBusType] = []
    for type in repeat each types { result.append(type.dbusType) }
    return result
}

/// The D-Bus values of a parameter pack of Swift values, in order.
func dbusValues<each T: DBusRepresentable>(_ values: repeat each T) -> [DBusValue] {
    var result: [DBusValue] = []
    for value in repeat each values { result.append(value.dbusValue) }
    return result
}
