/// A filter of the database and queue commands (`find`, `search`, `list`, `count`, `findadd`,
/// `playlistfind`…), as mpd 0.23 reads and applies it.
///
/// Two forms, which may be mixed in one command (all must hold):
/// - Expressions, one argument each: `(TAG == 'VALUE')`, `(TAG != 'VALUE')`,
///   `(TAG contains 'VALUE')`, `(TAG starts_with 'VALUE')` (mpd 0.24's, accepted because it costs
///   nothing), `(TAG =~ 'REGEX')`, `(TAG !~ 'REGEX')`, where TAG is a tag name, `any` (any tag's
///   value, not the URI) or `file` (the URI); `(base 'FOLDER')` (the songs below a folder; `''`
///   is the root, a trailing slash is ignored, a leading one or a `.` or `..` part is refused as
///   "Bad URI"); `(modified-since 'WHEN')` (a UNIX time in seconds, or ISO 8601:
///   `2024-05-01`, `2024-05-01T12:00:00Z`, `…+02:00`; no zone is UTC); `(!EXPRESSION)`;
///   `(EXPRESSION AND EXPRESSION …)`. Values are in `'…'` or `"…"`, in which a backslash takes the
///   next character as it is. Spaces may surround every part but must follow `contains` and
///   `starts_with`; `AND` is upper-case; tag names are read in any case, `base` and
///   `modified-since` only so.
/// - Pairs, the legacy form: `TAG VALUE [TAG VALUE…]`, TAG also `any`, `file`, `base` or
///   `modified-since`.
///
/// Case and matching (`caseSensitive` is true for `find`, false for `search`): `find`'s pairs
/// compare whole values exactly; `search`'s pairs test whether the value contains the text,
/// ignoring case; in expressions the operator decides what is compared and `search` makes every
/// comparison (regular expressions too) ignore case.
///
/// A tag with several values matches when one of them does. A tag the song does not have matches
/// an empty value (`(Artist == '')` finds the songs without an artist), else its fallback's values
/// are tested when it has them, as mpd does: `AlbumArtist` falls back to `Artist`, `ArtistSort` to
/// `Artist`, `AlbumSort` to `Album`, `AlbumArtistSort` to `AlbumArtist`, then `Artist` (not to
/// `ArtistSort`, as mpd 0.23.12 does not).
/// `!=` and `!~` are the negations of `==` and `=~`: a song without the tag matches `!= 'x'`
/// (mpd 0.23.12 answers the same).
///
/// Refused, with mpd's messages where it has one (every error is ``MPDError/Code/argument``):
/// unknown tags (mpd's `Performer`, `Label`… too, since the index does not keep them),
/// `added-since` and `prio` (mpd 0.24's), `AudioFormat` (the index does not keep formats), more
/// than ``maximumDepth`` nested parentheses or ``maximumTerms`` terms, and regular expressions
/// beyond what `MPDRegex` runs in bounded time (back-references, look-around; at most 256 bytes).
public struct MPDFilter: Sendable {
    /// The most nested parentheses in one expression.
    public static let maximumDepth = 16
    /// The most terms (comparisons, `base`, `modified-since`) in one filter, over all its arguments.
    public static let maximumTerms = 64

    indirect enum Node: Sendable {
        /// A tag's values; `nil` is `any`.
        case tag(MPDTag?, StringTest)
        case uri(StringTest)
        /// The songs at or below a folder, without a trailing slash; "" is the whole library.
        case base(String)
        /// Songs changed at or after this time, in seconds since 1970.
        case modifiedSince(Int64)
        case not(Node)
        case and([Node])
    }

    let node: Node

    /// The folder every song the filter matches lies in, when the filter says (a `base` term at
    /// its top level, alone or in an `AND`): a caller reads only that folder's songs, and answers
    /// "No such directory" (``MPDError/Code/noExist``), as mpd does, when nothing is indexed there.
    /// "" is the whole library. Applying the whole filter to those songs is still needed.
    public var basePath: String? {
        switch node {
        case .base(let folder): return folder
        case .and(let items):
            for case .base(let folder) in items { return folder }
            return nil
        default: return nil
        }
    }

    /// Reads a filter from the start of `arguments`: expressions and pairs until the arguments end
    /// or one is `sort`, `window`, `group` or `position` (at a pair's place), which starts `rest`.
    ///
    /// - Parameter caseSensitive: true for `find` and its kin, false for `search` and its kin.
    /// - Throws: ``MPDError`` (``MPDError/Code/argument``) with mpd's message for each mistake:
    ///   "Incorrect number of filter arguments", "Unknown filter type", "')' expected", "Unparsed
    ///   garbage after expression", "Quoted string expected"…; nothing is read from a filter with
    ///   a mistake.
    public static func parse(
        _ arguments: ArraySlice<String>, caseSensitive: Bool
    ) throws(MPDError) -> (filter: MPDFilter, rest: ArraySlice<String>) {
        var items: [Node] = []
        var rest = arguments
        var terms = 0
        while let first = rest.first {
            if first.hasPrefix("(") {
                var parser = ExpressionParser(
                    scalars: Array(first.unicodeScalars), foldsCase: !caseSensitive, terms: terms)
                let node = try parser.parseExpression(depth: 1)
                guard parser.isAtEnd else { throw MPDError(.argument, "Unparsed garbage after expression") }
                terms = parser.terms
                items.append(node)
                rest.removeFirst()
                continue
            }
            if first == "sort" || first == "window" || first == "group" || first == "position" { break }
            guard rest.count >= 2 else { throw MPDError(.argument, "Incorrect number of filter arguments") }
            terms += 1
            guard terms <= maximumTerms else { throw tooManyTerms }
            items.append(try pair(tag: first, value: rest.dropFirst().first!, foldsCase: !caseSensitive))
            rest.removeFirst(2)
        }
        guard !items.isEmpty else { throw MPDError(.argument, "Incorrect number of filter arguments") }
        return (MPDFilter(node: items.count == 1 ? items[0] : .and(items)), rest)
    }

    /// Whether `song` passes the filter.
    public func matches(_ song: MPDSong) -> Bool { Self.matches(node, song) }

    static let tooManyTerms = MPDError(.argument, "the filter has more than \(maximumTerms) terms")

    // MARK: Matching

    private static func matches(_ node: Node, _ song: MPDSong) -> Bool {
        switch node {
        case .tag(nil, let test):
            return song.tags.contains { test.matchesUnnegated($0.value) } != test.negated
        case .tag(let tag?, let test):
            return tagMatches(tag, test, song) != test.negated
        case .uri(let test):
            return test.matchesUnnegated(song.uri) != test.negated
        case .base(let folder):
            return folder.isEmpty || song.uri.hasPrefix(folder + "/")
        case .modifiedSince(let time):
            return song.lastModified.map { $0 >= time } ?? false
        case .not(let inner):
            return !matches(inner, song)
        case .and(let items):
            return items.allSatisfy { matches($0, song) }
        }
    }

    private static func tagMatches(_ tag: MPDTag, _ test: StringTest, _ song: MPDSong) -> Bool {
        // nil: the song has no value of `candidate`.
        func anyValue(of candidate: MPDTag) -> Bool? {
            var present = false
            for item in song.tags where item.tag == candidate {
                if test.matchesUnnegated(item.value) { return true }
                present = true
            }
            return present ? false : nil
        }
        if let found = anyValue(of: tag) { return found }
        if test.value.isEmpty { return true }
        for fallback in fallbacks(of: tag) {
            if let found = anyValue(of: fallback) { return found }
        }
        return false
    }

    /// The tags whose values stand for `tag` when a song has none, in order (mpd's tag fallbacks).
    static func fallbacks(of tag: MPDTag) -> [MPDTag] {
        switch tag {
        case .albumArtist, .artistSort: [.artist]
        case .albumSort: [.album]
        case .albumArtistSort: [.albumArtist, .artist]
        default: []
        }
    }

    /// One comparison of a text with a value.
    struct StringTest: Sendable {
        enum Operation: Sendable {
            case equals, contains, startsWith
            case regex(MPDRegex)
        }

        var operation: Operation
        /// The value compared with, lower-cased when `foldsCase`.
        var value: String
        var foldsCase: Bool
        /// `!=` or `!~`: the song matches when no value passes.
        var negated = false

        init(_ operation: Operation, _ value: String, foldsCase: Bool, negated: Bool = false) {
            self.operation = operation
            self.value = foldsCase ? Self.folded(value) : value
            self.foldsCase = foldsCase
            self.negated = negated
        }

        /// Compares UTF-8 bytes, as mpd does (after folding case for `search`): a search over
        /// 50,000 songs calls this hundreds of thousands of times.
        func matchesUnnegated(_ text: String) -> Bool {
            if case .regex(let regex) = operation { return regex.matches(text) }
            var text = foldsCase ? Self.folded(text) : text
            switch operation {
            case .equals: return text.utf8.elementsEqual(value.utf8)
            case .startsWith: return text.utf8.starts(with: value.utf8)
            case .contains:
                guard !value.isEmpty else { return true }
                var value = value
                return text.withUTF8 { haystack in value.withUTF8 { needle in Self.contains(haystack, needle) } }
            case .regex: return false
            }
        }

        /// Whether `needle` (not empty) occurs in `haystack`.
        static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
            guard needle.count <= haystack.count else { return false }
            let first = needle[0]
            for start in 0...(haystack.count - needle.count) where haystack[start] == first {
                var offset = 1
                while offset < needle.count, haystack[start + offset] == needle[offset] { offset += 1 }
                if offset == needle.count { return true }
            }
            return false
        }

        /// `text` in lower case; ASCII text without capitals is returned as it is, uncopied.
        static func folded(_ text: String) -> String {
            let isFolded = text.utf8.allSatisfy { $0 < UInt8(ascii: "A") || ($0 > UInt8(ascii: "Z") && $0 < 0x80) }
            return isFolded ? text : text.lowercased()
        }
    }

    // MARK: The legacy pairs

    private enum FilterType {
        case tag(MPDTag)
        case any, file, base, modifiedSince, audioFormat
    }

    private static func filterType(_ name: String) -> FilterType? {
        switch name.lowercased() {
        case "file", "filename": return .file
        case "any": return .any
        case "audioformat": return .audioFormat
        default:
            if name == "base" { return .base }
            if name == "modified-since" { return .modifiedSince }
            return MPDTag(name: name).map { .tag($0) }
        }
    }

    static let audioFormatRefused = MPDError(.argument, "AudioFormat filters are not supported")

    private static func pair(tag name: String, value: String, foldsCase: Bool) throws(MPDError) -> Node {
        guard let type = filterType(name) else { throw MPDError(.argument, "Unknown filter type") }
        // As in mpd 0.20 and older, `search` means "contains, ignoring case".
        let test = StringTest(foldsCase ? .contains : .equals, value, foldsCase: foldsCase)
        switch type {
        case .tag(let tag): return .tag(tag, test)
        case .any: return .tag(nil, test)
        case .file: return .uri(test)
        case .base: return .base(try folder(value))
        case .modifiedSince: return .modifiedSince(try timestamp(value))
        case .audioFormat: throw audioFormatRefused
        }
    }

    /// A `base` folder: relative, without `.` or `..` or empty parts; a trailing slash is dropped.
    static func folder(_ value: String) throws(MPDError) -> String {
        var folder = Substring(value)
        if folder.hasSuffix("/") { folder = folder.dropLast() }
        guard !folder.isEmpty else { return "" }
        let parts = folder.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw MPDError(.argument, "Bad URI")
        }
        return String(folder)
    }

    // MARK: Times

    /// A UNIX time in seconds, or an ISO 8601 date or date and time (UTC unless a zone is given).
    static func timestamp(_ text: String) throws(MPDError) -> Int64 {
        let failure = MPDError(.argument, "Failed to parse date")
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            guard let seconds = Int64(text) else { throw failure }
            return seconds
        }
        var bytes = Array(text.utf8)[...]
        func number(_ digits: Int) -> Int? {
            guard bytes.count >= digits, bytes.prefix(digits).allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            let value = bytes.prefix(digits).reduce(0) { $0 * 10 + Int($1 - 0x30) }
            bytes.removeFirst(digits)
            return value
        }
        func take(_ character: Character) -> Bool {
            guard bytes.first == character.asciiValue else { return false }
            bytes.removeFirst()
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), (1...12).contains(month), take("-"),
            let day = number(2), (1...31).contains(day)
        else { throw failure }
        var seconds = Int64(daysSince1970(year: year, month: month, day: day)) * 86_400
        if take("T") || take(" ") {
            guard let hour = number(2), hour < 24, take(":"), let minute = number(2), minute < 60 else { throw failure }
            var second = 0
            if take(":") {
                guard let value = number(2), value <= 60 else { throw failure }
                second = value
                if take(".") {
                    while number(1) != nil {}
                }
            }
            seconds += Int64(hour * 3600 + minute * 60 + second)
            if take("Z") {
            } else if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                bytes.removeFirst()
                guard let hours = number(2), hours < 24 else { throw failure }
                _ = take(":")
                let minutes = number(2) ?? 0
                let offset = Int64(hours * 3600 + minutes * 60)
                seconds += sign == UInt8(ascii: "+") ? -offset : offset
            }
        }
        guard bytes.isEmpty else { throw failure }
        return seconds
    }

    /// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    // MARK: Expressions

    private struct ExpressionParser {
        let scalars: [Unicode.Scalar]
        let foldsCase: Bool
        var terms: Int
        var position = 0

        init(scalars: [Unicode.Scalar], foldsCase: Bool, terms: Int) {
            self.scalars = scalars
            self.foldsCase = foldsCase
            self.terms = terms
        }

        var isAtEnd: Bool { position == scalars.count }
        private var next: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

        private func error(_ message: String) -> MPDError { MPDError(.argument, message) }

        private mutating func skipSpaces() {
            while let scalar = next, scalar.value <= 0x20 { position += 1 }
        }

        /// Whether the text at the position starts with `word` (ASCII, any case); consumed if so.
        private mutating func take(_ word: String, ignoringCase: Bool = false) -> Bool {
            let wanted = Array(word.unicodeScalars)
            guard scalars.count - position >= wanted.count else { return false }
            for (offset, scalar) in wanted.enumerated() {
                let found = scalars[position + offset]
                let same = ignoringCase ? MPDRegex.lowercase(found) == scalar : found == scalar
                guard same else { return false }
            }
            position += wanted.count
            return true
        }

        /// A run of letters, digits, `_` and `-`, then spaces.
        private mutating func word() -> String {
            var result = ""
            while let scalar = next, scalar.isASCII,
                scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
            {
                result.unicodeScalars.append(scalar)
                position += 1
            }
            skipSpaces()
            return result
        }

        private mutating func quoted() throws(MPDError) -> String {
            guard let quote = next, quote == "'" || quote == "\"" else { throw error("Quoted string expected") }
            position += 1
            var value = ""
            while true {
                guard var scalar = next else { throw error("Closing quote not found") }
                position += 1
                if scalar == quote { break }
                if scalar == "\\" {
                    guard let escaped = next else { throw error("Closing quote not found") }
                    position += 1
                    scalar = escaped
                }
                value.unicodeScalars.append(scalar)
            }
            skipSpaces()
            return value
        }

        private mutating func close() throws(MPDError) {
            guard next == ")" else { throw error("')' expected") }
            position += 1
            skipSpaces()
        }

        private mutating func countTerm() throws(MPDError) {
            terms += 1
            guard terms <= MPDFilter.maximumTerms else { throw MPDFilter.tooManyTerms }
        }

        /// An expression starting at the `(` at the position, and the spaces after it.
        mutating func parseExpression(depth: Int) throws(MPDError) -> Node {
            guard depth <= MPDFilter.maximumDepth else {
                throw error("the filter is nested more than \(MPDFilter.maximumDepth) levels deep")
            }
            guard next == "(" else { throw error("'(' expected") }
            position += 1
            skipSpaces()
            if next == "(" {
                var items = [try parseExpression(depth: depth + 1)]
                while next != ")" {
                    let word = word()
                    guard !word.isEmpty else { throw error("Word expected") }
                    guard word == "AND" else { throw error("'AND' expected") }
                    items.append(try parseExpression(depth: depth + 1))
                }
                try close()
                return items.count == 1 ? items[0] : .and(items)
            }
            if next == "!" {
                position += 1
                skipSpaces()
                let inner = try parseExpression(depth: depth + 1)
                try close()
                return .not(inner)
            }
            let name = word()
            guard !name.isEmpty else { throw error("Word expected") }
            guard let type = MPDFilter.filterType(name) else { throw error("Unknown filter type: \(name)") }
            try countTerm()
            let node: Node
            switch type {
            case .modifiedSince: node = .modifiedSince(try MPDFilter.timestamp(try quoted()))
            case .base: node = .base(try MPDFilter.folder(try quoted()))
            case .audioFormat: throw MPDFilter.audioFormatRefused
            case .tag(let tag): node = .tag(tag, try stringTest())
            case .any: node = .tag(nil, try stringTest())
            case .file: node = .uri(try stringTest())
            }
            try close()
            return node
        }

        private mutating func stringTest() throws(MPDError) -> StringTest {
            if take("contains ", ignoringCase: true) {
                skipSpaces()
                return StringTest(.contains, try quoted(), foldsCase: foldsCase)
            }
            if take("starts_with ", ignoringCase: true) {
                skipSpaces()
                return StringTest(.startsWith, try quoted(), foldsCase: foldsCase)
            }
            if take("=~") || take("!~") {
                let negated = scalars[position - 2] == "!"
                skipSpaces()
                let pattern = try quoted()
                let regex = try MPDRegex(pattern, foldsCase: foldsCase)
                return StringTest(.regex(regex), pattern, foldsCase: foldsCase, negated: negated)
            }
            guard take("==") || take("!=") else { throw error("'==' or '!=' expected") }
            let negated = scalars[position - 2] == "!"
            skipSpaces()
            return StringTest(.equals, try quoted(), foldsCase: foldsCase, negated: negated)
        }
    }
}
