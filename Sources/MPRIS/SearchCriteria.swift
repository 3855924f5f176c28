import DBus
import MediaRemote

/// Parses the search criteria of MediaServer2's `SearchObjects` (the UPnP
/// ContentDirectory grammar over MediaServer2 property names) into a ``ContentQuery``.
///
/// ```
/// DisplayName contains "love" and (Artist = "ABBA" or Album exists true)
/// ```
///
/// Properties are MediaServer2 names (`DisplayName`, `Artist`, `Album`,
/// `Genre`, `MIMEType`, `Date`, `TrackNumber`, `Duration`, `Type`), the
/// project's (`Subtitle`, `Identifier`), or the UPnP names Rygel passes
/// through (`dc:title`, `upnp:artist`, `dc:creator`, `upnp:album`,
/// `upnp:genre`, `upnp:class`). `and` binds tighter than `or`; `*` matches everything.
///
/// Any client may send a query, and both parsing and evaluating one recurse
/// over its nesting, so a query is bounded before either: at most
/// ``maximumLength`` characters, ``maximumRelations`` relations and
/// ``maximumDepth`` levels of parentheses; past a bound it is refused as invalid.
enum SearchCriteria {
    /// The longest query text, in characters. Rygel's longest are under 300.
    static let maximumLength = 4096
    /// The most relations (`Artist = "x"`) one query may join with `and` and `or`.
    static let maximumRelations = 64
    /// The deepest nesting of parentheses.
    static let maximumDepth = 16

    /// Every property name a query may test: what the root's `SearchCaps` lists.
    static let searchableProperties = [
        "DisplayName", "Artist", "Album", "Genre", "MIMEType", "Date", "TrackNumber", "Duration", "Type", "Subtitle",
        "Identifier", "dc:title", "upnp:artist", "dc:creator", "upnp:author", "upnp:album", "upnp:genre", "dc:date",
        "upnp:originalTrackNumber", "upnp:class",
    ]

    static func parse(_ text: String) throws(ContentError) -> ContentQuery {
        guard text.count <= maximumLength else {
            throw .invalidQuery("the query is longer than \(maximumLength) characters")
        }
        var parser = Parser(tokens: try tokenize(text))
        if parser.tokens == [.word("*")] { return .all }
        let query = try parser.orExpression()
        guard parser.position == parser.tokens.count else {
            throw .invalidQuery("unexpected '\(DBusError.excerpt(parser.tokens[parser.position].description))' in '\(DBusError.excerpt(text))'")
        }
        return query
    }

    private enum Token: Equatable, CustomStringConvertible {
        case word(String)
        case quoted(String)
        case open, close

        var description: String {
            switch self {
            case .word(let word): word
            case .quoted(let value): "\"\(value)\""
            case .open: "("
            case .close: ")"
            }
        }
    }

    private static func tokenize(_ text: String) throws(ContentError) -> [Token] {
        var tokens: [Token] = []
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character.isWhitespace {
                index = text.index(after: index)
            } else if character == "(" || character == ")" {
                tokens.append(character == "(" ? .open : .close)
                index = text.index(after: index)
            } else if character == "\"" {
                var value = ""
                index = text.index(after: index)
                var closed = false
                while index < text.endIndex {
                    let next = text[index]
                    index = text.index(after: index)
                    if next == "\\", index < text.endIndex {
                        value.append(text[index])
                        index = text.index(after: index)
                    } else if next == "\"" {
                        closed = true
                        break
                    } else {
                        value.append(next)
                    }
                }
                guard closed else { throw .invalidQuery("a quoted value is not closed in '\(DBusError.excerpt(text))'") }
                tokens.append(.quoted(value))
            } else {
                var word = ""
                while index < text.endIndex, !text[index].isWhitespace, !"()\"".contains(text[index]) {
                    word.append(text[index])
                    index = text.index(after: index)
                }
                tokens.append(.word(word))
            }
        }
        guard !tokens.isEmpty else { throw .invalidQuery("the query is empty") }
        return tokens
    }

    private struct Parser {
        let tokens: [Token]
        var position = 0
        var relations = 0
        var depth = 0

        mutating func next() -> Token? {
            guard position < tokens.count else { return nil }
            defer { position += 1 }
            return tokens[position]
        }

        func peekWord(_ word: String) -> Bool {
            guard position < tokens.count, case .word(let found) = tokens[position] else { return false }
            return found.lowercased() == word
        }

        mutating func orExpression() throws(ContentError) -> ContentQuery {
            var query = try andExpression()
            while peekWord("or") {
                position += 1
                query = .or(query, try andExpression())
            }
            return query
        }

        mutating func andExpression() throws(ContentError) -> ContentQuery {
            var query = try primary()
            while peekWord("and") {
                position += 1
                query = .and(query, try primary())
            }
            return query
        }

        mutating func primary() throws(ContentError) -> ContentQuery {
            switch next() {
            case .open?:
                depth += 1
                guard depth <= SearchCriteria.maximumDepth else {
                    throw .invalidQuery("parentheses are nested more than \(SearchCriteria.maximumDepth) deep")
                }
                let query = try orExpression()
                guard next() == .close else { throw .invalidQuery("a '(' is not closed") }
                depth -= 1
                return query
            case .word(let property)?, .quoted(let property)?:
                relations += 1
                guard relations <= SearchCriteria.maximumRelations else {
                    throw .invalidQuery("the query joins more than \(SearchCriteria.maximumRelations) relations")
                }
                let property = DBusError.excerpt(property)
                guard case .word(let op)? = next() else { throw .invalidQuery("'\(property)' needs an operator") }
                guard let value = next() else {
                    throw .invalidQuery("'\(property) \(DBusError.excerpt(op))' needs a value")
                }
                return try SearchCriteria.relation(property, op, value)
            case let token?: throw .invalidQuery("unexpected '\(DBusError.excerpt(token.description))'")
            case nil: throw .invalidQuery("the query ends too early")
            }
        }
    }

    private static func relation(_ property: String, _ op: String, _ value: Token) throws(ContentError) -> ContentQuery {
        if op == "exists" {
            guard case .word(let flag) = value, flag == "true" || flag == "false" else {
                throw .invalidQuery("'exists' takes true or false")
            }
            if isClass(property) { return flag == "true" ? .all : .compare(.kind, .equal, "\u{0}") }
            return .exists(try field(property), flag == "true")
        }
        guard case .quoted(let text) = value else { throw .invalidQuery("the value after '\(DBusError.excerpt(op))' must be quoted") }
        guard let comparison = ContentComparison.allCases.first(where: { $0.rawValue.lowercased() == op.lowercased() })
        else { throw .invalidQuery("unknown operator '\(DBusError.excerpt(op))'") }
        if isClass(property) { return classRelation(comparison, text) }
        return .compare(try field(property), comparison, text)
    }

    private static func isClass(_ property: String) -> Bool { property == "Type" || property == "upnp:class" }

    /// `Type` takes MediaServer2 types (`container`, `music`, `audio`); `upnp:class` UPnP classes.
    private static func classRelation(_ comparison: ContentComparison, _ value: String) -> ContentQuery {
        let kinds: [String]
        switch value.lowercased() {
        case "object": kinds = ["container", "music", "audio"]
        case let upnp where upnp.hasPrefix("object.container"): kinds = ["container"]
        case "object.item", "object.item.audioitem": kinds = ["music", "audio"]
        case let upnp where upnp.hasPrefix("object.item.audioitem"): kinds = ["music"]
        case let upnp where upnp.hasPrefix("object."): kinds = []
        // MediaServer2's `music` is a kind of `audio` (UPnP's musicTrack of audioItem).
        case "audio" where comparison == .derivedFrom: kinds = ["music", "audio"]
        default: return .compare(.kind, comparison, value)
        }
        let matches = kinds.map { ContentQuery.compare(.kind, comparison == .derivedFrom ? .derivedFrom : .equal, $0) }
        let any = matches.dropFirst().reduce(matches.first ?? .compare(.kind, .equal, "\u{0}")) { .or($0, $1) }
        return comparison == .notEqual || comparison == .doesNotContain ? .and(.all, negate(kinds)) : any
    }

    private static func negate(_ kinds: [String]) -> ContentQuery {
        kinds.map { ContentQuery.compare(.kind, .notEqual, $0) }.reduce(.all) { .and($0, $1) }
    }

    private static func field(_ property: String) throws(ContentError) -> ContentField {
        switch property {
        case "DisplayName", "dc:title": .title
        case "Artist", "upnp:artist", "dc:creator", "upnp:author": .artist
        case "Album", "upnp:album": .album
        case "Genre", "upnp:genre": .genre
        case "MIMEType": .mimeType
        case "Date", "dc:date": .date
        case "TrackNumber", "upnp:originalTrackNumber": .trackNumber
        case "Duration": .duration
        case "Subtitle": .subtitle
        case "Identifier": .identifier
        default: throw .invalidQuery("cannot search by '\(DBusError.excerpt(property))'")
        }
    }
}
