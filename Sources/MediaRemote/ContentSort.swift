/// An order for a listing or a search: fields of a ``ContentItem``, each ascending or
/// descending, compared in turn.
///
/// Remotes send it (dLeyna's `SortBy` of MediaServer2's `…Ex` methods is parsed into one); a
/// data source that can order its rows itself answers it in
/// ``PlayableContentDataSource/sortedChildIndexes(at:by:in:)`` and
/// ``PlayableContentDataSource/sortedIndexPaths(_:by:)``, and the manager orders the rows it
/// holds for one that cannot.
///
/// The order every implementation keeps:
/// - text fields compare case-insensitively (as ``ContentComparison`` folds text: lowercased);
///   ``ContentField/trackNumber`` and ``ContentField/duration`` as numbers;
///   ``ContentField/kind`` by its name (`audio`, `container`, `music`);
/// - a row without a value for a field comes after every row with one, ascending or descending;
/// - rows equal on every key keep their order in the listing (the sort is stable), so an empty
///   sort is the natural order.
public struct ContentSort: Sendable, Hashable, CustomStringConvertible {
    /// One key of a sort: a field and its direction.
    public struct Key: Sendable, Hashable {
        public var field: ContentField
        public var ascending: Bool

        /// A key: `field`, ascending unless `ascending` is false.
        public init(_ field: ContentField, ascending: Bool = true) {
            self.field = field
            self.ascending = ascending
        }
    }

    /// The keys, the first deciding first. Each field appears at most once.
    public var keys: [Key]

    /// An order of `keys`, compared in turn.
    public init(_ keys: [Key]) { self.keys = keys }

    /// No keys: the listing's natural order.
    public static let natural = ContentSort([])

    /// Whether the sort has no keys, leaving the natural order.
    public var isNatural: Bool { keys.isEmpty }

    /// The fields a sort may use: those whose order every data source can tell from its rows.
    public static let sortableFields: [ContentField] = [
        .title, .kind, .artist, .album, .genre, .date, .trackNumber, .duration,
    ]

    public var description: String {
        keys.map { ($0.ascending ? "+" : "-") + $0.field.rawValue }.joined(separator: ",")
    }

    /// `items` in this order: their positions in `items`, sorted (stable, see ``ContentSort``).
    ///
    /// O(n log n) comparisons of values made once per item; for a data source that holds its
    /// rows in memory, or the manager's copy.
    public func order(of items: [ContentItem]) -> [Int] {
        guard !isNatural else { return Array(items.indices) }
        let values = items.map { item in keys.map { SortValue($0.field, item) } }
        return items.indices.sorted { left, right in
            for (position, key) in keys.enumerated() {
                let order = values[left][position].compare(values[right][position], ascending: key.ascending)
                if order != 0 { return order < 0 }
            }
            return left < right
        }
    }
}

/// A field's value as a sort compares it.
private enum SortValue {
    case text(String)
    case number(Int64)
    case missing

    init(_ field: ContentField, _ item: ContentItem) {
        switch field {
        case .trackNumber: self = item.media?.trackNumber.map { .number(Int64($0)) } ?? .missing
        case .duration: self = item.media?.duration.map { .number($0.components.seconds) } ?? .missing
        default: self = field.value(in: item).map { .text(ContentComparison.folded($0)) } ?? .missing
        }
    }

    /// Negative when `self` comes first; a missing value comes last in both directions.
    func compare(_ other: SortValue, ascending: Bool) -> Int {
        let order: Int
        switch (self, other) {
        case (.missing, .missing): return 0
        case (.missing, _): return 1
        case (_, .missing): return -1
        case (.text(let a), .text(let b)): order = a < b ? -1 : (a > b ? 1 : 0)
        case (.number(let a), .number(let b)): order = a < b ? -1 : (a > b ? 1 : 0)
        case (.number, .text): order = -1
        case (.text, .number): order = 1
        }
        return ascending ? order : -order
    }
}
