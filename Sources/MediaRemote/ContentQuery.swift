/// A search over the content tree: a condition on the fields of a
/// ``ContentItem``, combined with `and` and `or`.
///
/// Remotes send it (the MediaServer2 `SearchObjects` criteria are parsed into
/// one); a data source answers it in ``PlayableContentDataSource/searchContent(matching:in:)``,
/// with its own indexes or with ``matches(_:)``. Text comparisons ignore case.
public indirect enum ContentQuery: Sendable, Equatable, CustomStringConvertible {
    /// Every item.
    case all
    case and(ContentQuery, ContentQuery)
    case or(ContentQuery, ContentQuery)
    /// The field compared with a value, as text or, for numeric fields, as a number.
    case compare(ContentField, ContentComparison, String)
    /// The field is present (`true`) or absent (`false`).
    case exists(ContentField, Bool)

    /// The query a search box sends: the text in the title, the artist or the album.
    public static func text(_ text: String) -> ContentQuery {
        .or(.compare(.title, .contains, text), .or(.compare(.artist, .contains, text), .compare(.album, .contains, text)))
    }

    /// Whether `item` satisfies the query.
    public func matches(_ item: ContentItem) -> Bool {
        switch self {
        case .all: return true
        case .and(let left, let right): return left.matches(item) && right.matches(item)
        case .or(let left, let right): return left.matches(item) || right.matches(item)
        case .exists(let field, let present): return (field.value(in: item) != nil) == present
        case .compare(let field, let comparison, let value):
            guard let actual = field.value(in: item) else { return comparison == .notEqual || comparison == .doesNotContain }
            return comparison.holds(actual, value, numeric: field.isNumeric)
        }
    }

    /// The fields the query looks at, for a data source deciding whether its indexes can answer.
    public var fields: Set<ContentField> {
        switch self {
        case .all: []
        case .and(let left, let right), .or(let left, let right): left.fields.union(right.fields)
        case .compare(let field, _, _), .exists(let field, _): [field]
        }
    }

    public var description: String {
        switch self {
        case .all: "*"
        case .and(let left, let right): "(\(left) and \(right))"
        case .or(let left, let right): "(\(left) or \(right))"
        case .compare(let field, let comparison, let value): "\(field) \(comparison.rawValue) \"\(value)\""
        case .exists(let field, let present): "\(field) exists \(present)"
        }
    }
}

/// A field of a ``ContentItem`` a ``ContentQuery`` can test.
public enum ContentField: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case identifier, title, subtitle, artist, album, genre, mimeType, date
    /// Track number (numeric).
    case trackNumber
    /// Length in whole seconds (numeric).
    case duration
    /// The kind of row: `container`, `music` (a playable file), `audio` (a
    /// stream) or `informative`. `derivedFrom` matches on the prefix.
    case kind

    public var description: String { rawValue }

    var isNumeric: Bool { self == .trackNumber || self == .duration }

    /// The field's value in `item` as text, or `nil` when the item has none.
    public func value(in item: ContentItem) -> String? {
        switch self {
        case .identifier: item.identifier
        case .title: item.title
        case .subtitle: item.subtitle
        case .artist: item.media?.artist
        case .album: item.media?.album
        case .genre: item.media?.genre
        case .mimeType: item.media?.mimeType
        case .date: item.media?.date
        case .trackNumber: item.media?.trackNumber.map(String.init)
        case .duration: item.media?.duration.map { String($0.components.seconds) }
        case .kind: item.kind
        }
    }
}

extension ContentItem {
    /// The kind of row, as ``ContentField/kind`` names it.
    public var kind: String {
        if isContainer { return "container" }
        if !isPlayable { return "informative" }
        return isStreamingContent ? "audio" : "music"
    }
}

/// How a ``ContentQuery`` compares a field with a value.
public enum ContentComparison: String, Sendable, Hashable, CaseIterable {
    case equal = "="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case contains
    case doesNotContain
    /// The value names a class the field's value belongs to: `music` is derived
    /// from `music`; `container.album` from `container`.
    case derivedFrom = "derivedfrom"

    func holds(_ actual: String, _ expected: String, numeric: Bool) -> Bool {
        switch self {
        case .contains: return Self.folded(actual).contains(Self.folded(expected))
        case .doesNotContain: return !Self.folded(actual).contains(Self.folded(expected))
        case .derivedFrom:
            let actual = Self.folded(actual)
            let expected = Self.folded(expected)
            return actual == expected || actual.hasPrefix(expected + ".")
        default: break
        }
        let order: Int
        if numeric, let left = Double(actual), let right = Double(expected) {
            order = left < right ? -1 : (left > right ? 1 : 0)
        } else {
            let left = Self.folded(actual)
            let right = Self.folded(expected)
            order = left < right ? -1 : (left > right ? 1 : 0)
        }
        switch self {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        case .contains, .doesNotContain, .derivedFrom: return false
        }
    }

    /// Text folded for comparison and sorting: lowercased, so “abba” finds “ABBA”. A data source
    /// that compares or orders texts itself folds them with this, to agree with
    /// ``ContentQuery/matches(_:)`` and ``ContentSort``.
    public static func folded(_ text: String) -> String { text.lowercased() }
}
