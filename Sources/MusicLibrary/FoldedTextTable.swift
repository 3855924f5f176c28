import Glibc

/// Texts folded the way ``ContentQuery`` folds them (lowercased) and put in Unicode
/// normalization form C, stored as UTF-8 bytes one after another, and numbered: the model's
/// rows refer to their title, artist and album by number, so sorting and searching them moves
/// no reference-counted strings.
///
/// Swift compares strings by their characters, which are equal when canonically equivalent:
/// “é” written as one scalar or as “e” and a combining accent. In form C equivalent texts have
/// the same bytes, so equality and order (Swift orders strings by their scalars in form C) are
/// those of the bytes, and a text holds another where it holds its bytes on character
/// boundaries.
struct FoldedTextTable: Sendable {
    /// Every text's bytes, one after another.
    private var bytes: [UInt8] = []
    /// Where each text ends in ``bytes``; text `i` starts where text `i - 1` ends.
    private var ends: [Int] = []
    /// Per text: ``comparesAsBytes(_:)``.
    private var byteComparable: [Bool] = []

    /// The number of texts.
    var count: Int { ends.count }

    /// Adds `text`, lowercased and in form C; returns its number.
    mutating func append(_ text: some StringProtocol) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII: lowercased byte by byte, no string made.
            var comparable = true
            for byte in text.utf8 {
                bytes.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
                if byte == 0x0D { comparable = false }
            }
            ends.append(bytes.count)
            byteComparable.append(comparable)
        } else {
            let utf8 = Self.foldedUTF8(text)
            bytes.append(contentsOf: utf8)
            ends.append(bytes.count)
            byteComparable.append(Self.comparesAsBytes(utf8))
        }
        return ends.count - 1
    }

    /// `text` lowercased, in normalization form C, as UTF-8.
    static func foldedUTF8(_ text: some StringProtocol) -> [UInt8] {
        let folded = text.lowercased()
        let utf8 = Array(folded.utf8)
        // `_nfcCodeUnits` is the standard library's public (if underscored) normalizer, the one
        // swift-foundation uses; ASCII is in form C already.
        return utf8.allSatisfy { $0 < 0x80 } ? utf8 : folded._nfcCodeUnits
    }

    /// Whether text of these UTF-8 bytes is all ASCII characters but carriage return: each
    /// byte is then a character of its own, so no match of bytes can split a character.
    static func comparesAsBytes(_ utf8: some Sequence<UInt8>) -> Bool {
        utf8.allSatisfy { $0 < 0x80 && $0 != 0x0D }
    }

    /// For each text, its place in the case-insensitive order (by the lowercased text's
    /// Unicode scalars); equal texts have equal ranks. Sorting by rank then costs integer
    /// comparisons only.
    func ranks() -> [Int] {
        withReader { reader in
            let order = (0..<count).sorted { reader.compare($0, $1) < 0 }
            var ranks = [Int](repeating: 0, count: count)
            var rank = 0
            for (position, text) in order.enumerated() {
                if position > 0, reader.compare(order[position - 1], text) != 0 { rank += 1 }
                ranks[text] = rank
            }
            return ranks
        }
    }

    /// Calls `body` with direct access to the texts' bytes.
    func withReader<Result>(_ body: (Reader) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBufferPointer { bytes in
            try ends.withUnsafeBufferPointer { ends in
                try byteComparable.withUnsafeBufferPointer { flags in
                    try body(Reader(bytes: bytes, ends: ends, byteComparable: flags))
                }
            }
        }
    }

    /// The texts, readable while ``withReader(_:)`` runs.
    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let ends: UnsafeBufferPointer<Int>
        let byteComparable: UnsafeBufferPointer<Bool>

        /// Text `id`'s UTF-8 bytes.
        func utf8(_ id: Int) -> UnsafeBufferPointer<UInt8> {
            let start = id == 0 ? 0 : ends[id - 1]
            return UnsafeBufferPointer(rebasing: bytes[start..<ends[id]])
        }

        /// See ``FoldedTextTable/comparesAsBytes(_:)``.
        func comparesAsBytes(_ id: Int) -> Bool { byteComparable[id] }

        /// Text `id` as a string (canonically equivalent to the folded text).
        func string(_ id: Int) -> String { String(decoding: utf8(id), as: UTF8.self) }

        /// Byte order, which is Swift's order of the texts: negative, zero or positive.
        func compare(_ left: Int, _ right: Int) -> Int {
            Self.compare(utf8(left), utf8(right))
        }

        static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
            let common = min(left.count, right.count)
            if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                let order = memcmp(a, b, common)
                if order != 0 { return Int(order) }
            }
            return left.count - right.count
        }

        /// Where the bytes of `part` (not empty) first occur in `text` at `from` or after.
        static func firstOffset(
            of part: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, from: Int = 0
        ) -> Int? {
            guard !part.isEmpty, part.count <= text.count, let haystack = text.baseAddress,
                let needle = part.baseAddress
            else { return nil }
            let first = Int32(needle.pointee)
            let last = text.count - part.count
            var start = from
            while start <= last {
                guard let found = memchr(haystack + start, first, last - start + 1) else { return nil }
                let offset = UnsafeRawPointer(found) - UnsafeRawPointer(haystack)
                if memcmp(haystack + offset, needle, part.count) == 0 { return offset }
                start = offset + 1
            }
            return nil
        }
    }
}
