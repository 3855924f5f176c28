import AsyncSupport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Searching and sorting: the data source's answers, with the content limits applied.
extension PlayableContentManager {
    /// The most rows the manager sorts by reading their items, for a data source that cannot
    /// sort a search's results (``PlayableContentDataSource/sortedIndexPaths(_:by:)``): past it
    /// a sorted search fails with ``ContentError/sortNotSupported(_:)`` rather than reading
    /// the items of every match.
    public static let maximumRowsSortedInMemory = 5_000

    /// Whether the data source can search.
    public var supportsSearch: Bool { state.withLock { $0.dataSource?.supportsSearch ?? false } }

    /// The rows below the container at `path` matching `query`, as the data
    /// source finds them, with content limits applied. The data source is called as in
    /// ``listChildren(of:kind:offset:maximum:prefetch:)``, off the threads tasks share.
    public func search(
        _ query: ContentQuery, below path: [String] = [], offset: Int = 0, maximum: Int? = nil
    ) async throws -> [ContentEntry] {
        try await withTaskExecutorPreference(DataSourceReads.shared) {
            let (dataSource, indexPath) = try searchPlace(below: path)
            let found = try await dataSource.searchContent(matching: query, in: indexPath)
            // Only rows a remote may reach count: limits apply to what is shown.
            let wanted = min(context.itemLimit ?? Int.max, maximum.map { max(offset, 0) + max($0, 0) } ?? Int.max)
            var entries: [ContentEntry] = []
            for indexPath in found where entries.count < wanted {
                if let entry = entry(atIndexPath: indexPath, withinLimits: false) { entries.append(entry) }
            }
            forgetLeastRecentlyUsed()
            return Array(entries.dropFirst(max(offset, 0)))
        }
    }

    /// The rows below the container at `path` matching `query`, in the order `sort` gives, with
    /// the number of matches a remote may reach: those within the depth limit, at most the
    /// item limit of the content limits (which cap the sorted rows, as in a listing).
    ///
    /// The data source orders the matches when it can
    /// (``PlayableContentDataSource/sortedIndexPaths(_:by:)``); otherwise the manager reads and
    /// sorts them, up to ``maximumRowsSortedInMemory``.
    ///
    /// - Throws: as ``search(_:below:offset:maximum:)``, and ``ContentError/sortNotSupported(_:)``
    ///   when the data source cannot sort more matches than the manager sorts itself.
    public func search(
        _ query: ContentQuery, below path: [String] = [], sortedBy sort: ContentSort, offset: Int = 0,
        maximum: Int? = nil
    ) async throws -> ContentSearchResult {
        try await withTaskExecutorPreference(DataSourceReads.shared) {
            let (dataSource, indexPath) = try searchPlace(below: path)
            var found = try await dataSource.searchContent(matching: query, in: indexPath)
            let context = self.context
            if let depth = context.depthLimit { found = found.filter { $0.count <= depth } }
            if !sort.isNatural { found = try sorted(found, by: sort, in: dataSource) }
            if let limit = context.itemLimit, found.count > limit { found = Array(found.prefix(limit)) }
            let window = ContentListing.window(offset: offset, maximum: maximum, of: found.count)
            let entries = found[window].compactMap { entry(atIndexPath: $0, withinLimits: false) }
            forgetLeastRecentlyUsed()
            return ContentSearchResult(entries: entries, totalCount: found.count)
        }
    }

    /// The data source and where it has the container at `path`, to search below it.
    private func searchPlace(below path: [String]) throws -> ((any PlayableContentDataSource), IndexPath) {
        let indexPath = try withNode(at: path) { cache, id in cache.tree.indexPath(of: id) }
        guard let dataSource = state.withLock({ $0.dataSource }), dataSource.supportsSearch else {
            throw ContentError.searchNotSupported
        }
        return (dataSource, indexPath)
    }

    private func sorted(_ found: [IndexPath], by sort: ContentSort, in dataSource: any PlayableContentDataSource) throws
        -> [IndexPath]
    {
        if let sorted = dataSource.sortedIndexPaths(found, by: sort) { return sorted }
        guard found.count <= Self.maximumRowsSortedInMemory else {
            throw ContentError.sortNotSupported(
                "the search found \(found.count) rows, more than \(Self.maximumRowsSortedInMemory) to sort here; narrow it")
        }
        let items = found.map { entry(atIndexPath: $0, withinLimits: false)?.item ?? ContentItem(identifier: "") }
        return sort.order(of: items).map { found[$0] }
    }

    /// The keys of the children of the copied container at `path` in the order `sort` gives:
    /// informative rows first, in their order, then the others as the data source sorts them,
    /// or as their items in the copy sort. Keys, not node ids, so that the order still applies
    /// to the container when it is read again before the page is made.
    func sortedChildKeys(at path: [String], by sort: ContentSort) throws(ContentError) -> [String] {
        let dataSource = state.withLock { $0.dataSource }
        let (indexPath, informative, others) = try withNode(at: path) { cache, id in
            let children = cache.tree[id].children ?? []
            let rows = children.map { child in
                let node = cache.tree[child]
                return (key: node.key, sourceIndex: node.sourceIndex, item: node.item ?? ContentItem(identifier: ""))
            }
            return (
                cache.tree.indexPath(of: id), rows.filter { $0.item.isInformative }.map(\.key),
                rows.filter { !$0.item.isInformative }
            )
        }
        let count = dataSource.map { max(0, $0.numberOfChildItems(at: indexPath)) } ?? 0
        if count > 0, let sorted = dataSource?.sortedChildIndexes(at: indexPath, by: sort, in: 0..<count) {
            let keyAtSourceIndex = Dictionary(others.map { ($0.sourceIndex, $0.key) }, uniquingKeysWith: { first, _ in first })
            var seen: Set<String> = []
            var order = sorted.compactMap { keyAtSourceIndex[$0] }.filter { seen.insert($0).inserted }
            // Rows of the copy the data source did not place (it changed meanwhile) go last.
            order += others.map(\.key).filter { !seen.contains($0) }
            return informative + order
        }
        return informative + sort.order(of: others.map(\.item)).map { others[$0].key }
    }
}
