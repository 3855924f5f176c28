#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What remotes are shown of the copy: rows with the content limits applied.
extension ContentCache {
    /// The rows a listing of container `id` shows, limits applied: children,
    /// and a loading row last while the data source is still loading after a
    /// listing stopped waiting for it.
    ///
    /// `.containers` are the rows MediaServer2 sees as containers: real ones,
    /// and the informative and loading rows (which open onto nothing);
    /// `.items` the playable rows that are not containers.
    ///
    /// `sorted` replaces the listing order (a sorted listing's, informative rows still first);
    /// ids no longer children of `id` are left out of it.
    func rows(of id: ContentTree.NodeID, kind: ContentListingKind, sorted: [ContentTree.NodeID]? = nil)
        -> (ids: ArraySlice<ContentTree.NodeID>, hasLoadingRow: Bool, count: Int)
    {
        var order =
            sorted.map { $0.filter { tree.exists($0) && tree[$0].parent == id } }?[...]
            ?? tree.listingOrder(of: id)[...]
        // Only once a listing has given up waiting: until then the data source answers in time.
        var loading = tree[id].owesUpdate && !tree[id].isComplete
        if id == ContentTree.rootID, let tabs = context.tabLimit {
            // Informative rows stay; only the containers after the limit go.
            var containers = 0
            order = order.filter { child in
                guard tree[child].item?.isContainer == true else { return true }
                containers += 1
                return containers <= tabs
            }[...]
        }
        if let limit = context.itemLimit, order.count >= limit {
            order = order.prefix(limit)
            loading = false
        }
        switch kind {
        case .all: break
        case .containers: order = order.filter { tree[$0].item?.opensAsContainer == true }[...]
        case .items:
            order = order.filter { tree[$0].item?.opensAsContainer != true }[...]
            loading = false
        }
        return (order, loading, order.count + (loading ? 1 : 0))
    }

    /// The row of node `id` as remotes see it; a container not read yet has no counts (the
    /// manager asks the data source for a hint, outside its lock). `parent`, when given, is where
    /// its parent is (a page's rows share it, rather than each walking up to the root for it).
    func entry(for id: ContentTree.NodeID, under parent: (path: [String], indexPath: IndexPath)? = nil) -> ContentEntry {
        // Fields are read in place (`tree[id].…`): a copy of the node retains all it holds.
        let item = tree[id].item ?? ContentItem(identifier: "", isContainer: true)
        var children: ContentEntry.ChildCounts?
        if item.isContainer {
            let blocked = context.depthLimit.map { tree[id].depth >= $0 } ?? false
            if blocked {
                children = ContentEntry.ChildCounts(childCount: 0, itemCount: 0, containerCount: 0, isComplete: true)
            } else if let count = tree[id].pagedCount {
                let shown = context.itemLimit.map { min(count, $0) } ?? count
                children = ContentEntry.ChildCounts(
                    childCount: shown, itemCount: tree[id].pagesContainers ? 0 : shown,
                    containerCount: tree[id].pagesContainers ? shown : 0, isComplete: tree[id].isComplete)
            } else if let copiedCount = tree[id].children?.count {
                let all = rows(of: id, kind: .all)
                let containers =
                    all.ids.count == copiedCount
                    ? tree[id].containerCount + (all.hasLoadingRow ? 1 : 0) : rows(of: id, kind: .containers).count
                children = ContentEntry.ChildCounts(
                    childCount: all.count, itemCount: all.count - containers, containerCount: containers,
                    isComplete: tree[id].isComplete)
            }
        }
        let parentShowsProgress = tree[id].parent.map { tree[$0].displaysProgress } ?? false
        return ContentEntry(
            item: item, path: parent.map { $0.path + [tree[id].key] } ?? tree.path(of: id),
            indexPath: tree[id].parent == nil
                ? IndexPath() : parent.map { $0.indexPath.appending(tree[id].sourceIndex) } ?? tree.indexPath(of: id),
            isNowPlaying: tree[id].item != nil && nowPlayingSet.contains(item.identifier),
            isLoadingPlaceholder: false, displaysPlaybackProgress: parentShowsProgress, children: children,
            depth: tree[id].depth)
    }

    /// A page of the listing of container `id`: rows `offset..<offset+maximum` of what
    /// ``rows(of:kind:sorted:)`` shows, a loading row last when the page reaches the end, and
    /// the not yet loaded child containers it shows (the first `prefetchLimit`).
    func page(
        of id: ContentTree.NodeID, at path: [String], kind: ContentListingKind, sorted: [ContentTree.NodeID]?,
        offset: Int, maximum: Int?, prefetchLimit: Int
    ) -> (listing: ContentListing, prefetch: [ContentTree.NodeID]) {
        let rows = rows(of: id, kind: kind, sorted: sorted)
        let total = rows.count
        let window = ContentListing.window(offset: offset, maximum: maximum, of: total)
        let shownEnd = min(window.upperBound, rows.ids.count)
        let shown = rows.ids[min(window.lowerBound, shownEnd)..<shownEnd]
        let parent = (path: tree.path(of: id), indexPath: tree.indexPath(of: id))
        var entries = shown.map { entry(for: $0, under: parent) }
        if rows.hasLoadingRow, window.upperBound == total, window.lowerBound < total {
            entries.append(Self.loadingEntry(parentPath: path))
        }
        var prefetch: [ContentTree.NodeID] = []
        for child in shown where prefetch.count < prefetchLimit {
            if tree[child].item?.isContainer == true && !tree[child].isComplete { prefetch.append(child) }
        }
        return (ContentListing(entries: entries, totalCount: total, isComplete: tree[id].isComplete), prefetch)
    }

    /// Whether a listing of the container at `id` shows a loading row now.
    func showsLoadingRow(_ id: ContentTree.NodeID) -> Bool { rows(of: id, kind: .all).hasLoadingRow }

    /// The keys of the rows a listing of `id` shows, the loading row's last when there is one.
    func shownKeys(of id: ContentTree.NodeID) -> [String] {
        let rows = rows(of: id, kind: .all)
        return rows.ids.map { tree[$0].key } + (rows.hasLoadingRow ? [ContentTree.loadingKey] : [])
    }

    /// The row standing for the children of the container at `parentPath` still loading.
    static func loadingEntry(parentPath: [String]) -> ContentEntry {
        ContentEntry(
            item: ContentItem(identifier: ContentTree.loadingKey, title: "Loading…"),
            path: parentPath + [ContentTree.loadingKey], indexPath: nil, isNowPlaying: false,
            isLoadingPlaceholder: true, displaysPlaybackProgress: false, children: nil, depth: parentPath.count + 1)
    }

    // MARK: Paged containers

    /// What a paged container shows, read in one step: where it is, and how many rows a listing
    /// of `kind` has under the content limits. Nil when `id` is not (any more) a paged container.
    func pagedShape(of id: ContentTree.NodeID, kind: ContentListingKind = .all)
        -> (node: ContentTree.Node, path: [String], indexPath: IndexPath, total: Int)?
    {
        guard let node = tree.node(id), let count = node.pagedCount else { return nil }
        let shown = context.itemLimit.map { min(count, $0) } ?? count
        // Every child is alike: a listing of the other kind shows none.
        let total =
            switch kind {
            case .all: shown
            case .containers: node.pagesContainers ? shown : 0
            case .items: node.pagesContainers ? 0 : shown
            }
        return (node, tree.path(of: id), tree.indexPath(of: id), total)
    }

    /// The row `item` at `index` of the paged container `node` (at `path`, `indexPath`).
    func pagedEntry(_ item: ContentItem, at index: Int, in node: ContentTree.Node, path: [String], indexPath: IndexPath)
        -> ContentEntry
    {
        ContentEntry(
            item: item, path: path + [item.identifier], indexPath: indexPath.appending(index),
            isNowPlaying: nowPlayingSet.contains(item.identifier), isLoadingPlaceholder: false,
            displaysPlaybackProgress: node.displaysProgress, children: nil, depth: node.depth + 1)
    }
}
