/// A method's results already written in D-Bus wire format, for a handler that makes a large
/// reply straight from its own data instead of as a tree of ``DBusValue``s (each boxed, then
/// appended value by value through libdbus's iterators).
///
/// Bytes given to ``init(bytes:signature:fallback:)`` are handed to libdbus whole, which checks
/// them as it checks a received message. Should it refuse them, the reply is made from
/// `fallback`'s values the ordinary way, which reports the problem as it always has. Rows
/// written by ``PropertyRows`` (``PropertyRows/finishResults(fallback:)``) are valid by
/// construction and go on the wire unchecked.
public struct EncodedResults: Sendable {
    let bytes: [UInt8]
    let signature: Signature
    let fallback: @Sendable () throws -> [DBusValue]
    /// The bytes were written by this library's own writer, which refuses whatever libdbus
    /// would: the reply is written to the socket without libdbus reading it all again.
    let isWellFormed: Bool

    /// Results whose body, of `signature`, is `bytes`; `fallback` makes the same results as
    /// values, and is called only if libdbus refuses the bytes.
    public init(bytes: [UInt8], signature: Signature, fallback: @escaping @Sendable () throws -> [DBusValue]) {
        self.init(bytes: bytes, signature: signature, isWellFormed: false, fallback: fallback)
    }

    init(bytes: [UInt8], signature: Signature, isWellFormed: Bool, fallback: @escaping @Sendable () throws -> [DBusValue]) {
        self.bytes = bytes
        self.signature = signature
        self.isWellFormed = isWellFormed
        self.fallback = fallback
    }

    /// The bytes `values` are written as in a message's body (little-endian), or nil when they
    /// cannot be written as libdbus would accept them: what the ordinary path sends, to compare
    /// with bytes written otherwise.
    public static func wireBytes(of values: [DBusValue]) -> [UInt8]? {
        var body = WireBody()
        for value in values where !body.append(value) { return nil }
        return body.takeBytes()
    }
}

/// What a method declared with ``Interface/method(_:inputs:outputs:annotations:atOnce:results:)`` returns.
public enum MethodResults: Sendable {
    /// Results as values, marshalled as any method's are.
    case values([DBusValue])
    /// Results already in wire format.
    case encoded(EncodedResults)

    /// The results as values.
    func values() throws -> [DBusValue] {
        switch self {
        case .values(let values): values
        case .encoded(let encoded): try encoded.fallback()
        }
    }
}

/// An array of property dictionaries, `aa{sv}`, written row by row in wire format: a listing's
/// rows (MediaServer2's `ListChildren`) without a ``DBusValue`` per row.
///
/// ```swift
/// var rows = PropertyRows(capacity: 64 * 1024)
/// rows.appendRow { row in
///     row.add("DisplayName", .string("Song"))
///     row.add("Playable", .boolean(true))
/// }
/// let bytes = rows.finish()   // nil if a value could not be written
/// ```
public struct PropertyRows {
    private var body: WireBody
    private var lengthAt: Int
    private var start: Int
    private var failed = false

    /// An empty array, its bytes reserved for `capacity`.
    public init(capacity: Int = 0) {
        body = WireBody(capacity: capacity)
        body.appendUInt32(0)
        lengthAt = 0
        // An array of arrays: its elements are 4-aligned, and the body starts 8-aligned.
        start = body.count
    }

    /// Appends one dictionary, whose entries `fill` adds in order.
    public mutating func appendRow(_ fill: (inout Row) -> Void) {
        guard !failed else { return }
        var row = Row(body: body)
        body = WireBody()
        row.begin()
        fill(&row)
        failed = !row.end()
        body = row.body
    }

    /// The array's bytes, or nil if a value could not be written as libdbus would accept it
    /// (a NUL in a string, too long an array). The rows are finished: nothing more is appended.
    ///
    /// The outer array's length is written in place, so the bytes are not copied for it.
    public mutating func finish() -> [UInt8]? {
        guard !failed, body.finishArray(lengthAt: lengthAt, start: start) else { return nil }
        failed = true
        return body.takeBytes()
    }

    /// The rows as a method's results of signature `aa{sv}`, or nil as ``finish()`` is. Written
    /// here, they are valid by construction: the reply goes on the wire without libdbus
    /// checking its every row again, which cost the sender as much as the bus's own check.
    /// `fallback` makes the same rows as values, for a reply that cannot be sent as written
    /// (a message over the D-Bus limit of 128 MiB), which then reports the problem.
    public mutating func finishResults(fallback: @escaping @Sendable () throws -> [DBusValue]) -> EncodedResults? {
        guard let bytes = finish() else { return nil }
        return EncodedResults(bytes: bytes, signature: Self.signature, isWellFormed: true, fallback: fallback)
    }

    private static let signature = Signature(unchecked: [.array(.dictionary(key: .string, value: .variant))])

    /// One dictionary of a ``PropertyRows`` array, `a{sv}`.
    public struct Row {
        fileprivate var body: WireBody
        private var lengthAt = 0
        private var start = 0
        private var failed = false

        fileprivate init(body: WireBody) { self.body = body }

        fileprivate mutating func begin() {
            body.appendUInt32(0)
            lengthAt = body.count - 4
            body.pad(to: 8)
            start = body.count
        }

        fileprivate mutating func end() -> Bool {
            !failed && body.finishArray(lengthAt: lengthAt, start: start)
        }

        /// Appends the entry `name` → `value` (written in a variant).
        public mutating func add(_ name: String, _ value: DBusValue) {
            guard !failed else { return }
            body.pad(to: 8)
            guard body.appendString(name), Self.appendSignature(of: value, to: &body), body.append(value) else {
                failed = true
                return
            }
        }

        /// The signature of a property's value: the common ones without describing the type.
        private static func appendSignature(of value: DBusValue, to body: inout WireBody) -> Bool {
            let known: StaticString
            switch value {
            case .string: known = "s"
            case .objectPath: known = "o"
            case .boolean: known = "b"
            case .uint32: known = "u"
            case .int32: known = "i"
            case .int64: known = "x"
            case .double: known = "d"
            case .array(.string, _): known = "as"
            default: return body.appendVariantSignature(of: value)
            }
            body.appendKnownSignature(known)
            return true
        }
    }
}
