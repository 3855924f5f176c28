/// What a command answers before its `OK`: `key: value` lines and binary chunks, bounded.
///
/// A value is written on one line: line breaks in tags (a title with a newline) become
/// spaces, so no value can forge another line of the response.
public struct MPDResponse: Sendable, Equatable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []
    /// The most bytes this response may hold (``MPDLimits/maximumResponseBytes``).
    public let limit: Int

    public init(limit: Int = MPDLimits().maximumResponseBytes) {
        self.limit = limit
    }

    /// Whether nothing was written.
    public var isEmpty: Bool { bytes.isEmpty }

    /// Appends `key: value`.
    ///
    /// - Throws: ``MPDError/Code/system`` once the response would exceed ``limit``.
    public mutating func add(_ key: String, _ value: String) throws(MPDError) {
        try reserve(key.utf8.count + value.utf8.count + 3)
        bytes.append(contentsOf: key.utf8)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(UInt8(ascii: " "))
        for byte in value.utf8 {
            bytes.append(byte == 0x0A || byte == 0x0D ? UInt8(ascii: " ") : byte)
        }
        bytes.append(0x0A)
    }

    /// Appends `key: value` for an integer.
    public mutating func add(_ key: String, _ value: some BinaryInteger) throws(MPDError) {
        try add(key, String(value))
    }

    /// Appends a binary chunk: `binary: <count>`, the bytes, and a newline.
    public mutating func addBinary(_ chunk: some Collection<UInt8>) throws(MPDError) {
        try add("binary", chunk.count)
        try reserve(chunk.count + 1)
        bytes.append(contentsOf: chunk)
        bytes.append(0x0A)
    }

    /// Appends the lines of another response.
    public mutating func append(_ other: MPDResponse) throws(MPDError) {
        try reserve(other.bytes.count)
        bytes.append(contentsOf: other.bytes)
    }

    private mutating func reserve(_ count: Int) throws(MPDError) {
        guard bytes.count + count <= limit else {
            throw MPDError(.system, "the response is too large (over \(limit) bytes); ask for less")
        }
    }
}
