import DBus
import MediaRemote

/// Parses dLeyna's `SortBy`, the sort order of MediaServer2's `…Ex` methods, into a
/// ``ContentSort``.
///
/// ```
/// +Artist,-Date,+DisplayName
/// ```
///
/// Comma-separated MediaServer2 property names, each prefixed by `+` (ascending) or `-`
/// (descending), with no white space, as dLeyna-server takes it; `""` is the natural order.
/// The names are ``sortableProperties``, each at most once. Any client may send one, so it is
/// bounded: at most ``maximumLength`` characters (and so at most
/// `sortableProperties.count` keys); past a bound, or malformed, it is refused as invalid.
enum SortCriteria {
    /// The longest `SortBy`, in characters: every sortable property once fits in 100.
    static let maximumLength = 256

    /// The properties a `SortBy` may name, with the fields they sort by: what the root's
    /// `SortCaps` lists.
    static let sortableProperties: [(name: String, field: ContentField)] = [
        ("DisplayName", .title), ("Type", .kind), ("Artist", .artist), ("Album", .album), ("Genre", .genre),
        ("Date", .date), ("TrackNumber", .trackNumber), ("Duration", .duration),
    ]

    static func parse(_ text: String) throws(ContentError) -> ContentSort {
        guard !text.isEmpty else { return .natural }
        // Bytes first: counting the characters of a huge string would cost its length.
        guard text.utf8.count <= 4 * maximumLength, text.count <= maximumLength else {
            throw .invalidSort("SortBy is longer than \(maximumLength) characters")
        }
        var keys: [ContentSort.Key] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let quoted = DBusError.excerpt(String(part))
            guard let sign = part.first, sign == "+" || sign == "-" else {
                throw .invalidSort("'\(quoted)' must start with + or - (e.g. +DisplayName), in '\(DBusError.excerpt(text))'")
            }
            let name = part.dropFirst()
            guard let property = sortableProperties.first(where: { $0.name == name }) else {
                throw .invalidSort(
                    "cannot sort by '\(DBusError.excerpt(String(name)))'; SortCaps lists "
                        + sortableProperties.map(\.name).joined(separator: ", "))
            }
            guard !keys.contains(where: { $0.field == property.field }) else {
                throw .invalidSort("'\(property.name)' appears twice in '\(DBusError.excerpt(text))'")
            }
            keys.append(ContentSort.Key(property.field, ascending: sign == "+"))
        }
        return ContentSort(keys)
    }
}

extension MediaTreeNodes {
    /// The counted search dLeyna-server adds to MediaServer2's containers, which GENIVI's
    /// media manager (and other dLeyna clients in car stacks) call; its sorted listings are
    /// the listings' own (``addListing(to:)``).
    func addSortedSearch(to container: Interface) {
        let content = self.content
        let nodes = self
        // SearchObjectsEx(Query, Offset, Max, Filter, SortBy) -> (Result, TotalItems): as
        // SearchObjects, sorted, with the number of matches in all (not only this page), which
        // a head unit shows and sizes its scroll bar by.
        container.method(
            "SearchObjectsEx", inputs: [Argument("Query", .string)] + Self.listArguments + [Self.sortByArgument],
            outputs: Self.listResult + [Argument("TotalItems", .uint32)]
        ) { body in
            guard case .string(let text) = body[0] else { return [] }
            let (offset, maximum, filter) = try Self.window(body, from: 1)
            let sort = try Self.sortOrder(body[4])
            let query = try SearchCriteria.parse(text)
            let (path, listsChildren) = try nodes.calledNode()
            guard listsChildren else { return [nodes.dictionaries([], filter: filter), .uint32(0)] }
            let found = try await contentCall("search") {
                try await content.search(query, below: path, sortedBy: sort, offset: offset, maximum: maximum)
            }
            return [nodes.dictionaries(found.entries, filter: filter), .uint32(UInt32(clamping: found.totalCount))]
        }
    }

    /// The root's `SortCaps` and `SearchCaps` (on `org.mprisbridge.MediaRoot1`), as dLeyna's
    /// `MediaDevice` has them: the property names `SortBy` and a `SearchObjects` query accept
    /// (`SearchCaps` empty when the content cannot be searched). Constant for the service's life.
    func addCapabilities(to root: Interface) {
        _ = root.property("SortCaps", SortCriteria.sortableProperties.map(\.name), changes: .const)
        _ = root.property("SearchCaps", content.supportsSearch ? SearchCriteria.searchableProperties : [], changes: .const)
    }

    /// The order a `SortBy` argument names; InvalidArgs when it is malformed.
    static func sortOrder(_ value: DBusValue) throws -> ContentSort {
        guard case .string(let text) = value else { throw DBusError(.invalidArgs, "Expected SortBy") }
        return try SortCriteria.parse(text)
    }
}
