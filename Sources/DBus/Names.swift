// Validated D-Bus names. Each type can only hold a value that the D-Bus
// specification accepts, so code that has one never sends an invalid name.
// `init(validating:)` checks run-time strings and throws `InvalidArgs` saying
// what is wrong. A string literal (`let path: ObjectPath = "/org/x"`, or
// `ObjectPath("/org/x")`, which Swift also treats as a literal) is checked
// when it is created, and an invalid one is a programmer error that stops the
// program, as `URL(string:)!` would. So never write `try ObjectPath("…")` for
// input: write `try ObjectPath(validating: input)`.

/// An object path such as `/org/mpris/MediaPlayer2`.
///
/// Invariants: starts with `/`; elements of `[A-Za-z0-9_]`, none empty; no
/// trailing `/` except for the root path `/`.
public struct ObjectPath: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    /// Validates `string` as an object path; throws `InvalidArgs` saying why it is not one.
    public init(validating string: String) throws {
        if let problem = ObjectPath.problem(in: string) {
            throw DBusError.invalidArgs("Invalid object path '\(DBusError.excerpt(string))': \(problem)")
        }
        rawValue = string
    }

    public init?(rawValue: String) {
        guard ObjectPath.problem(in: rawValue) == nil else { return nil }
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    /// For strings libdbus has already validated.
    init(trusted string: String) { rawValue = string }

    public static let root = ObjectPath(trusted: "/")

    public var description: String { rawValue }
    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The elements of the path; empty for `/`.
    public var elements: [Substring] { rawValue.split(separator: "/") }

    /// The path one level up, or `nil` for `/`.
    public var parent: ObjectPath? {
        guard rawValue != "/" else { return nil }
        let cut = rawValue.lastIndex(of: "/")!
        return cut == rawValue.startIndex ? .root : ObjectPath(trusted: String(rawValue[..<cut]))
    }

    /// This path with one more element. `element` is escaped with ``escapeElement(_:)``,
    /// so any string, even an empty one, gives a valid path.
    public func appending(_ element: String) -> ObjectPath {
        let escaped = ObjectPath.escapeElement(element)
        return ObjectPath(trusted: rawValue == "/" ? "/" + escaped : rawValue + "/" + escaped)
    }

    /// Whether `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: ObjectPath) -> Bool {
        if ancestor.rawValue == "/" || ancestor == self { return true }
        return rawValue.hasPrefix(ancestor.rawValue) && rawValue.utf8.dropFirst(ancestor.rawValue.utf8.count).first == UInt8(ascii: "/")
    }

    /// Turns any string into one valid path element, reversibly.
    ///
    /// Letters and digits stay as they are; every other byte of the UTF-8
    /// encoding becomes `_` and two lowercase hex digits (so `_` itself becomes
    /// `_5f`); the empty string becomes `_`. The same scheme as sd-bus's
    /// `sd_bus_path_encode`, so paths look familiar.
    public static func escapeElement(_ string: String) -> String {
        if string.isEmpty { return "_" }
        // Bytes, not Characters: a media tree escapes two or three elements per listed row, and
        // appending Characters one at a time was 12-18 % of the server's CPU for a listing.
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count * 2)
        for byte in string.utf8 {
            if isAlphanumeric(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "_"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0xF))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Reverses ``escapeElement(_:)``; returns `nil` for text it could not have produced.
    public static func unescapeElement(_ element: some StringProtocol) -> String? {
        if element == "_" { return "" }
        var bytes: [UInt8] = []
        var iterator = element.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "_") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue)
                else { return nil }
                bytes.append(high << 4 | low)
            } else if isAlphanumeric(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    static func problem(in string: String) -> String? {
        let bytes = Array(string.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return "it must start with '/'" }
        if bytes.count == 1 { return nil }
        if bytes.last == UInt8(ascii: "/") { return "only the root path '/' may end with '/'" }
        var previousWasSlash = false
        for (offset, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return "empty element at offset \(offset) ('//')" }
                previousWasSlash = true
            } else {
                guard isAlphanumeric(byte) || byte == UInt8(ascii: "_") else {
                    return "character \(describe(byte)) at offset \(offset) is not one of [A-Za-z0-9_]"
                }
                previousWasSlash = false
            }
        }
        return nil
    }
}

/// An interface name such as `org.mpris.MediaPlayer2.Player`.
///
/// Invariants: at most 255 bytes; two or more elements separated by `.`; each
/// element non-empty, of `[A-Za-z0-9_]`, not starting with a digit.
public struct InterfaceName: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String
    public init(validating string: String) throws {
        if let problem = dottedNameProblem(string, allowHyphen: false, allowLeadingDigit: false) {
            throw DBusError.invalidArgs("Invalid interface name '\(DBusError.excerpt(string))': \(problem)")
        }
        rawValue = string
    }
    public init?(rawValue: String) { try? self.init(validating: rawValue) }
    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }
    init(trusted string: String) { rawValue = string }
    public var description: String { rawValue }
}

/// An error name such as `org.freedesktop.DBus.Error.InvalidArgs`; the same rules as an interface name.
public struct ErrorName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(validating string: String) throws {
        if let problem = dottedNameProblem(string, allowHyphen: false, allowLeadingDigit: false) {
            throw DBusError.invalidArgs("Invalid error name '\(DBusError.excerpt(string))': \(problem)")
        }
        rawValue = string
    }
    public init?(rawValue: String) { try? self.init(validating: rawValue) }
    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }
    init(trusted string: String) { rawValue = string }
    public var description: String { rawValue }
}

/// A method or signal name such as `PlayPause`.
///
/// Invariants: 1 to 255 bytes of `[A-Za-z0-9_]`, not starting with a digit.
public struct MemberName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(validating string: String) throws {
        if let problem = MemberName.problem(in: string) {
            throw DBusError.invalidArgs("Invalid member name '\(DBusError.excerpt(string))': \(problem)")
        }
        rawValue = string
    }
    public init?(rawValue: String) { try? self.init(validating: rawValue) }
    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }
    init(trusted string: String) { rawValue = string }
    public var description: String { rawValue }

    static func problem(in string: String) -> String? {
        let bytes = Array(string.utf8)
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > 255 { return "it is \(bytes.count) bytes long; the limit is 255" }
        if isDigit(bytes[0]) { return "it starts with a digit" }
        for (offset, byte) in bytes.enumerated() where !(isAlphanumeric(byte) || byte == UInt8(ascii: "_")) {
            return "character \(describe(byte)) at offset \(offset) is not one of [A-Za-z0-9_]"
        }
        return nil
    }
}

/// A bus name: a unique connection name such as `:1.42`, or a well-known name
/// such as `org.mpris.MediaPlayer2.vlc`.
///
/// Invariants: at most 255 bytes; two or more `.`-separated elements of
/// `[A-Za-z0-9_-]`; in a well-known name no element starts with a digit.
public struct BusName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(validating string: String) throws {
        let problem: String?
        if string.hasPrefix(":") {
            problem = dottedNameProblem(String(string.dropFirst()), allowHyphen: true, allowLeadingDigit: true, limit: 254)
        } else {
            problem = dottedNameProblem(string, allowHyphen: true, allowLeadingDigit: false)
        }
        if let problem { throw DBusError.invalidArgs("Invalid bus name '\(DBusError.excerpt(string))': \(problem)") }
        rawValue = string
    }
    public init?(rawValue: String) { try? self.init(validating: rawValue) }
    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }
    init(trusted string: String) { rawValue = string }
    public var description: String { rawValue }
    /// Whether this is a unique connection name (`:1.42`) rather than a well-known one.
    public var isUnique: Bool { rawValue.hasPrefix(":") }
    /// The bus itself, `org.freedesktop.DBus`.
    public static let bus = BusName(trusted: "org.freedesktop.DBus")
}

func dottedNameProblem(_ string: String, allowHyphen: Bool, allowLeadingDigit: Bool, limit: Int = 255) -> String? {
    let bytes = Array(string.utf8)
    if bytes.isEmpty { return "it is empty" }
    if bytes.count > limit { return "it is \(bytes.count) bytes long; the limit is \(limit)" }
    var elementCount = 0
    var elementStart = true
    for (offset, byte) in bytes.enumerated() {
        if byte == UInt8(ascii: ".") {
            if elementStart { return "empty element at offset \(offset)" }
            elementStart = true
            continue
        }
        let allowed = isAlphanumeric(byte) || byte == UInt8(ascii: "_") || (allowHyphen && byte == UInt8(ascii: "-"))
        guard allowed else {
            let set = allowHyphen ? "[A-Za-z0-9_-]" : "[A-Za-z0-9_]"
            return "character \(describe(byte)) at offset \(offset) is not one of \(set)"
        }
        if elementStart {
            if !allowLeadingDigit && isDigit(byte) { return "an element starts with a digit at offset \(offset)" }
            elementCount += 1
            elementStart = false
        }
    }
    if elementStart { return "it ends with '.'" }
    if elementCount < 2 { return "it needs at least two elements separated by '.'" }
    return nil
}

@inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
@inline(__always) func isAlphanumeric(_ byte: UInt8) -> Bool {
    isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
}
func describe(_ byte: UInt8) -> String {
    byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
}
