/// One complete D-Bus type.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature
    /// A unix file descriptor (`h`). It can be described but not sent: values of
    /// this type are refused with `NotSupported`.
    case unixFD
    case array(DBusType)
    /// An array of dictionary entries, `a{KV}`; the key is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// A struct of one or more fields, `(…)`.
    case structure([DBusType])
    case variant

    /// Basic types are the ones allowed as dictionary keys.
    public var isBasic: Bool {
        switch self {
        case .array, .dictionary, .structure, .variant: false
        default: true
        }
    }

    /// The type's signature text, such as `a{sv}`.
    public var description: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array, .dictionary, .structure:
            {
                var text = ""
                appendSignature(to: &text)
                return text
            }()
        }
    }

    func appendSignature(to text: inout String) {
        switch self {
        case .array(let element):
            text.append("a")
            element.appendSignature(to: &text)
        case .dictionary(let key, let value):
            text.append("a{")
            key.appendSignature(to: &text)
            value.appendSignature(to: &text)
            text.append("}")
        case .structure(let fields):
            text.append("(")
            for field in fields { field.appendSignature(to: &text) }
            text.append(")")
        default:
            text.unicodeScalars.append(Unicode.Scalar(basicCode))
        }
    }

    /// The one-byte type code (`y`, `b`, … `a`, `(`, `v`).
    var basicCode: UInt8 {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .boolean: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .unixFD: UInt8(ascii: "h")
        case .array, .dictionary: UInt8(ascii: "a")
        case .structure: UInt8(ascii: "(")
        case .variant: UInt8(ascii: "v")
        }
    }

    /// Array and struct nesting depth of this type, as the spec counts it
    /// (a dictionary entry counts as a struct).
    var nesting: (arrays: Int, structs: Int) {
        switch self {
        case .array(let element):
            let inner = element.nesting
            return (inner.arrays + 1, inner.structs)
        case .dictionary(let key, let value):
            let inner = value.nesting
            let keyNesting = key.nesting
            return (max(inner.arrays, keyNesting.arrays) + 1, max(inner.structs, keyNesting.structs) + 1)
        case .structure(let fields):
            var deepest = (arrays: 0, structs: 0)
            for field in fields {
                let inner = field.nesting
                deepest = (max(deepest.arrays, inner.arrays), max(deepest.structs, inner.structs))
            }
            return (deepest.arrays, deepest.structs + 1)
        default:
            return (0, 0)
        }
    }
}

/// A D-Bus type signature: a sequence of complete types, such as `sa{sv}as`.
///
/// Invariants: at most 255 bytes; every type complete; at most 32 nested
/// arrays and 32 nested structs; dictionary entries only directly inside an
/// array, with a basic key; no empty struct.
public struct Signature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The complete types, in order.
    public let types: [DBusType]
    /// The signature text.
    public let rawValue: String

    /// Parses and validates a signature; throws `InvalidArgs` naming the offset and the rule broken.
    public init(validating string: String) throws {
        var parser = SignatureParser(text: string)
        types = try parser.parseAll()
        rawValue = string
    }

    /// Builds a signature from complete types; throws if it breaks a limit of the spec.
    public init(_ types: [DBusType]) throws {
        var text = ""
        for type in types {
            type.appendSignature(to: &text)
            let nesting = type.nesting
            if nesting.arrays > maximumArrayNesting || nesting.structs > maximumStructNesting {
                throw DBusError.invalidArgs(
                    "Invalid signature '\(text)…': more than 32 nested arrays or 32 nested structs")
            }
            if case .structure(let fields) = type, fields.isEmpty {
                throw DBusError.invalidArgs("Invalid signature: a struct needs at least one field")
            }
        }
        if text.utf8.count > 255 {
            throw DBusError.invalidArgs("Invalid signature: it is \(text.utf8.count) bytes long; the limit is 255")
        }
        self.types = types
        rawValue = text
    }

    public init(stringLiteral value: String) {
        do { try self.init(validating: value) } catch { preconditionFailure("\(error)") }
    }

    init(unchecked types: [DBusType]) {
        self.types = types
        var text = ""
        for type in types { type.appendSignature(to: &text) }
        rawValue = text
    }

    public static let empty = Signature(unchecked: [])

    public var description: String { rawValue }
    public static func == (lhs: Signature, rhs: Signature) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

let maximumArrayNesting = 32
let maximumStructNesting = 32

struct SignatureParser {
    let text: String
    let bytes: [UInt8]
    var offset = 0

    init(text: String) {
        self.text = text
        bytes = Array(text.utf8)
    }

    mutating func parseAll() throws -> [DBusType] {
        if bytes.count > 255 { throw failure("it is \(bytes.count) bytes long; the limit is 255") }
        var types: [DBusType] = []
        while offset < bytes.count {
            types.append(try parseOne(arrays: 0, structs: 0))
        }
        return types
    }

    func failure(_ problem: String) -> DBusError {
        DBusError.invalidArgs("Invalid signature '\(text)': \(problem)")
    }

    mutating func parseOne(arrays: Int, structs: Int) throws -> DBusType {
        guard offset < bytes.count else { throw failure("a type is missing at the end") }
        let byte = bytes[offset]
        let at = offset
        offset += 1
        switch byte {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            if arrays + 1 > maximumArrayNesting { throw failure("more than 32 nested arrays at offset \(at)") }
            if offset < bytes.count && bytes[offset] == UInt8(ascii: "{") {
                offset += 1
                if structs + 1 > maximumStructNesting {
                    throw failure("more than 32 nested structs at offset \(at)")
                }
                let key = try parseOne(arrays: arrays + 1, structs: structs + 1)
                guard key.isBasic else {
                    throw failure("a dictionary key must be a basic type, found '\(key)' at offset \(at + 2)")
                }
                guard offset < bytes.count, bytes[offset] != UInt8(ascii: "}") else {
                    throw failure("the dictionary entry at offset \(at + 1) has no value type")
                }
                let value = try parseOne(arrays: arrays + 1, structs: structs + 1)
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "}") else {
                    throw failure("the dictionary entry at offset \(at + 1) needs exactly two types and a '}'")
                }
                offset += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(arrays: arrays + 1, structs: structs))
        case UInt8(ascii: "("):
            if structs + 1 > maximumStructNesting { throw failure("more than 32 nested structs at offset \(at)") }
            var fields: [DBusType] = []
            while true {
                guard offset < bytes.count else { throw failure("the struct at offset \(at) is not closed") }
                if bytes[offset] == UInt8(ascii: ")") {
                    offset += 1
                    break
                }
                fields.append(try parseOne(arrays: arrays, structs: structs + 1))
            }
            if fields.isEmpty { throw failure("the struct at offset \(at) is empty") }
            return .structure(fields)
        case UInt8(ascii: "{"):
            throw failure("a dictionary entry '{' at offset \(at) is only allowed right after 'a'")
        case UInt8(ascii: ")"), UInt8(ascii: "}"):
            throw failure("unexpected \(describe(byte)) at offset \(at)")
        default:
            throw failure("\(describe(byte)) at offset \(at) is not a type code")
        }
    }
}
