import AsyncSupport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Serving remotes: rows, listings and pages.
extension PlayableContentManager {
    /// The most child containers one listing prefetches: a head unit's screen
    /// shows a dozen rows, and loading hundreds of albums nobody opens costs memory.
    public static let prefetchLimit = 24

    /// The row at `path` (`[]` is the root), reading it from the data source
    /// if needed. Throws ``ContentError/noSuchContent(_:)`` when nothing is
    /// there, or it lies deeper than the content limits allow.
    ///
    /// - Parameters:
    ///   - path: the keys of the nodes from the root to the row.
    ///   - readingChildren: whether a container's children are read too, so that its
    ///     entry counts them. Pass false to learn only whether the row exists and what it is
    ///     (a D-Bus object lookup does, on the connection's queue, which must not wait on the
    ///     data source for rows a listing reads anyway); its counts are then left out.
    public func entry(at path: [String], readingChildren: Bool = true) throws(ContentError) -> ContentEntry {
        if let last = path.last, last == ContentTree.loadingKey {
            let parentPath = Array(path.dropLast())
            // It exists exactly when a listing of the parent shows it.
            guard try withNode(at: parentPath, { cache, id in cache.showsLoadingRow(id) }) else {
                throw .noSuchContent(Self.describe(path))
            }
            return ContentCache.loadingEntry(parentPath: parentPath)
        }
        let found: (entry: ContentEntry, unread: ContentTree.NodeID?)
        do {
            found = try withNode(at: path) { cache, id in
                let unread = id != ContentTree.rootID && cache.tree[id].item?.isContainer == true && cache.tree[id].children == nil
                    && cache.isWithinDepth(id)
                return (cache.entry(for: id), unread ? id : nil)
            }
        } catch {
            if let row = pagedRow(at: path) { return row }
            throw error
        }
        guard readingChildren else { return found.entry }
        guard let unread = found.unread else { return withCountHints([found.entry])[0] }
        snapshot(unread)
        startLoading(unread)
        let counted = (try? withNode(at: path) { cache, id in cache.entry(for: id) }) ?? found.entry
        return withCountHints([counted])[0]
    }

    /// The item of the row at `path` (`[]` is the root, a container with no item), as
    /// ``entry(at:readingChildren:)`` with `readingChildren` false finds it, without making the
    /// entry: what a D-Bus call needs to know of the node it was called on (whether it lists
    /// children), asked once per call.
    public func rowItem(at path: [String]) throws(ContentError) -> ContentItem {
        // The common case, a row of the copy, in one step; any other as the entry finds it.
        let copied = state.withLock { state -> ContentItem? in
            guard path.last != ContentTree.loadingKey, case .found(let id) = state.cache.lookUp(path) else { return nil }
            return state.cache.tree[id].item ?? ContentItem(identifier: "", isContainer: true)
        }
        if let copied { return copied }
        return try entry(at: path, readingChildren: false).item
    }

    /// The keys of the children a listing of the container at `path` shows
    /// now (limits applied), without waiting for the data source: for
    /// introspection, which must answer at once.
    public func childKeys(of path: [String]) -> [String] {
        let threshold = pagedContainerThreshold
        let found = try? withNode(at: path) {
            cache, id -> (keys: [String], unread: ContentTree.NodeID?, paged: (indexPath: IndexPath, count: Int)?)? in
            guard cache.isWithinDepth(id), cache.isContainer(id) else { return nil }
            // A paged container small enough (one of items read from memory): its rows' keys
            // are their identifiers, read from the data source.
            if let shape = cache.pagedShape(of: id) {
                return ([], nil, shape.total <= threshold ? (shape.indexPath, shape.total) : nil)
            }
            return cache.tree[id].children == nil ? ([], id, nil) : (cache.shownKeys(of: id), nil, nil)
        }
        guard let found else { return [] }
        if let paged = found.paged, let dataSource = state.withLock({ $0.dataSource }),
            dataSource.readsChildItemsFromMemory(at: paged.indexPath)
        {
            return (0..<paged.count).compactMap { dataSource.contentItem(at: paged.indexPath.appending($0))?.identifier }
        }
        guard let unread = found.unread else { return found.keys }
        snapshot(unread)
        startLoading(unread)
        return (try? withNode(at: path) { cache, id in cache.shownKeys(of: id) }) ?? []
    }

    /// A page of the children of the container at `path`.
    ///
    /// - Parameters:
    ///   - path: the keys of the nodes from the root to the container.
    ///   - kind: all children, only playable items (and informative rows), or only containers.
    ///   - offset: the first row of the page, from 0.
    ///   - maximum: the most rows to return; `nil` for all.
    ///   - prefetch: whether to start loading the child containers the page
    ///     shows (the first ``prefetchLimit`` of them), as a remote about to
    ///     open one needs. Pass false for listings no one will browse into.
    /// - Returns: the rows, in listing order: informative rows first, then
    ///   the data source's order; a “loading” row last while the data source
    ///   is still loading after the deadline.
    ///
    /// The data source is called on threads of the manager's own, never on those Swift's tasks
    /// share, so a read that waits on a disk holds only this listing; unless it reads the
    /// container from memory (``PlayableContentDataSource/readsChildItemsFromMemory(at:)``).
    public func listChildren(
        of path: [String], kind: ContentListingKind = .all, offset: Int = 0, maximum: Int? = nil,
        prefetch: Bool = true
    ) async throws(ContentError) -> ContentListing {
        if let listing = pageFromCopy(of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch) {
            return listing
        }
        if readsFromMemory(path) {
            return try await readChildren(of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch)
        }
        return try await withTaskExecutorPreference(DataSourceReads.shared) { () async throws(ContentError) -> ContentListing in
            try await readChildren(of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch)
        }
    }

    /// The page ``listChildren(of:kind:offset:maximum:prefetch:)`` answers, when it can be made at
    /// once on the caller's thread from memory alone: from the copy, or from a data source that
    /// reads the container from memory (``PlayableContentDataSource/readsChildItemsFromMemory(at:)``)
    /// and loads at once (``PlayableContentDataSource/loadsChildItemsAtOnce``). Nil when the
    /// listing would wait on anything (a load, a batch of updates, the data source's threads), or
    /// would show more than `rowLimit` rows: ``listChildren(of:kind:offset:maximum:prefetch:)``
    /// answers it then. A service answers such a page on the thread that received the call, which
    /// spares the call two thread switches, while a larger page would hold that thread too long.
    ///
    /// The page is the one ``listChildren(of:kind:offset:maximum:prefetch:)`` would return at this
    /// moment; like it, the call reads the container into the copy when first reached.
    public func listChildrenImmediately(
        of path: [String], kind: ContentListingKind = .all, offset: Int = 0, maximum: Int? = nil, rowLimit: Int
    ) -> ContentListing? {
        if let listing = pageFromCopy(
            of: path, kind: kind, offset: offset, maximum: maximum, prefetch: true, rowLimit: rowLimit)
        {
            return listing
        }
        guard readsFromMemory(path), state.withLock({ $0.dataSource?.loadsChildItemsAtOnce == true }),
            let id = state.withLock({ state -> ContentTree.NodeID? in
                guard case .found(let id) = state.cache.lookUp(path), state.cache.isWithinDepth(id) else { return nil }
                return id
            })
        else { return nil }
        // Read now if it is not yet: the data source reads it at once, from memory.
        startLoading(id)
        if let shape = state.withLock({ $0.cache.pagedShape(of: id, kind: kind) }) {
            guard ContentListing.window(offset: offset, maximum: maximum, of: shape.total).count <= rowLimit,
                case .page(let paged)? = try? readPagedPage(at: path, kind: kind, offset: offset, maximum: maximum, sort: .natural)
            else { return nil }
            forgetLeastRecentlyUsed()
            return paged
        }
        return pageFromCopy(
            of: path, kind: kind, offset: offset, maximum: maximum, prefetch: false, rowLimit: rowLimit,
            hintsFromMemory: true)
    }

    /// Whether the data source reads the children of the container at `path` from memory
    /// (``PlayableContentDataSource/readsChildItemsFromMemory(at:)``): a listing of it in its
    /// natural order then reads them on the caller's thread, not on the data source's threads
    /// and back. False while a batch of updates is open, or for a path that names no container.
    private func readsFromMemory(_ path: [String]) -> Bool {
        // Asked outside the lock: the data source may take locks of its own.
        guard let (dataSource, indexPath) = state.withLock({ state -> (any PlayableContentDataSource, IndexPath)? in
            guard let dataSource = state.dataSource, !state.isUpdating, case .found(let id) = state.cache.lookUp(path),
                state.cache.isContainer(id)
            else { return nil }
            return (dataSource, state.cache.tree.indexPath(of: id))
        })
        else { return false }
        return dataSource.readsChildItemsFromMemory(at: indexPath)
    }

    /// The page when the copy answers it alone, on the caller's thread: a container read whole,
    /// listed in its own order, whose page asks the data source nothing (no count hint, nothing
    /// to prefetch). Nil for any other, which ``readChildren(of:kind:offset:maximum:prefetch:sort:)``
    /// answers on the data source's threads: most pages of a walk (an album's tracks) need no
    /// hop there and back. With `hintsFromMemory` (a container its data source reads from memory
    /// and loads at once), count hints are asked here and nothing is prefetched, as
    /// ``readChildren(of:kind:offset:maximum:prefetch:sort:)`` would. Nil too for a page of more
    /// than `rowLimit` rows.
    private func pageFromCopy(
        of path: [String], kind: ContentListingKind, offset: Int, maximum: Int?, prefetch: Bool, rowLimit: Int = .max,
        hintsFromMemory: Bool = false
    ) -> ContentListing? {
        let listing = state.withLock { state -> ContentListing? in
            guard !state.isUpdating, case .found(let id) = state.cache.lookUp(path), state.cache.isContainer(id) else {
                return nil
            }
            guard state.cache.tree[id].isComplete, state.cache.tree[id].pagedCount == nil, state.cache.isWithinDepth(id)
            else { return nil }
            if rowLimit != .max {
                let total = state.cache.rows(of: id, kind: kind).count
                guard ContentListing.window(offset: offset, maximum: maximum, of: total).count <= rowLimit else { return nil }
            }
            let shown = Self.page(of: id, at: path, in: &state.cache, kind: kind, sorted: nil, offset: offset, maximum: maximum, prefetch: prefetch)
            guard hintsFromMemory
                || (shown.prefetch.isEmpty && !shown.listing.entries.contains(where: { $0.item.isContainer && $0.children == nil }))
            else { return nil }
            return shown.listing
        }
        guard var listing else { return nil }
        if hintsFromMemory { listing.entries = withCountHints(listing.entries) }
        forgetLeastRecentlyUsed()
        return listing
    }

    /// The page a listing shows, made from the copy in the step that found the container, and
    /// the child containers to prefetch.
    private static func page(
        of id: ContentTree.NodeID, at path: [String], in cache: inout ContentCache, kind: ContentListingKind,
        sorted sortedKeys: [String]?, offset: Int, maximum: Int?, prefetch: Bool
    ) -> (listing: ContentListing, prefetch: [ContentTree.NodeID]) {
        let sorted = sortedKeys.map { keys in keys.compactMap { cache.tree[id].childByKey[$0] } }
        let page = cache.page(
            of: id, at: path, kind: kind, sorted: sorted, offset: offset, maximum: maximum,
            prefetchLimit: prefetch ? prefetchLimit : 0)
        // Children past the depth limit are never opened: nothing to prefetch.
        let opensChildren = cache.context.depthLimit.map { cache.tree[id].depth + 1 < $0 } ?? true
        return (page.listing, cache.isWithinDepth(id) && opensChildren ? page.prefetch : [])
    }

    /// A page of the children of the container at `path` in the order `sort` gives (see
    /// ``ContentSort``): informative rows first, then the rest sorted; content limits cap the
    /// sorted rows (a screen shows the first ones), before the kind filter, as in
    /// ``listChildren(of:kind:offset:maximum:prefetch:)``. A natural `sort` lists as that does.
    ///
    /// The data source orders the rows when it can
    /// (``PlayableContentDataSource/sortedChildIndexes(at:by:in:)``); otherwise the manager sorts
    /// its copy of the container, which it holds anyway.
    ///
    /// - Throws: as ``listChildren(of:kind:offset:maximum:prefetch:)``, and
    ///   ``ContentError/sortNotSupported(_:)`` for a container served page by page whose data
    ///   source cannot sort it.
    public func listChildren(
        of path: [String], kind: ContentListingKind = .all, sortedBy sort: ContentSort, offset: Int = 0,
        maximum: Int? = nil, prefetch: Bool = true
    ) async throws(ContentError) -> ContentListing {
        if sort.isNatural, let listing = pageFromCopy(of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch) {
            return listing
        }
        // Sorted, the data source may read what it sorts by from its store: on its threads.
        if sort.isNatural, readsFromMemory(path) {
            return try await readChildren(of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch)
        }
        return try await withTaskExecutorPreference(DataSourceReads.shared) { () async throws(ContentError) -> ContentListing in
            try await readChildren(
                of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch, sort: sort)
        }
    }

    private func readChildren(
        of path: [String], kind: ContentListingKind, offset: Int, maximum: Int?, prefetch: Bool,
        sort: ContentSort = .natural
    ) async throws(ContentError) -> ContentListing {
        // A listing of a container not read yet that comes while a batch of updates is open
        // waits for it (batches are short), rather than showing the container as loading.
        if mustWaitForUpdates(toList: path) { await waitUntilUpdated() }
        func page(of id: ContentTree.NodeID, in cache: inout ContentCache, sortedKeys: [String]?)
            -> (listing: ContentListing, prefetch: [ContentTree.NodeID])
        {
            Self.page(of: id, at: path, in: &cache, kind: kind, sorted: sortedKeys, offset: offset, maximum: maximum, prefetch: prefetch)
        }
        let found = try withNode(at: path) { cache, id throws(ContentError) in
            guard cache.isContainer(id) else { throw .noSuchContent("\(Self.describe(path)) is not a container") }
            let isComplete = cache.tree[id].isComplete
            // The common case, a container read whole and listed in its own order, in this one step.
            let shown =
                isComplete && cache.tree[id].pagedCount == nil && sort.isNatural && cache.isWithinDepth(id)
                ? page(of: id, in: &cache, sortedKeys: nil) : nil
            return (id: id, isComplete: isComplete, isWithinDepth: cache.isWithinDepth(id), shown: shown)
        }
        let (listing, prefetched): (ContentListing, [ContentTree.NodeID])
        if let shown = found.shown {
            (listing, prefetched) = shown
        } else {
            guard found.isWithinDepth, state.withLock({ $0.dataSource != nil }) else {
                return ContentListing(entries: [], totalCount: 0, isComplete: true)
            }
            if !found.isComplete, await !waitForLoad(found.id) {
                snapshot(found.id)
                state.withLock { state in
                    state.cache.noteAnsweredWhileLoading(found.id)
                    // Nothing is read while a batch is: loaded once it is, so remotes hear of it.
                    if state.isUpdating { state.owedAfterUpdates.insert(found.id) }
                }
            }
            if let paged = try await pagedPage(at: path, kind: kind, offset: offset, maximum: maximum, sort: sort) {
                forgetLeastRecentlyUsed()
                return paged
            }
            let sortedKeys = sort.isNatural ? nil : try sortedChildKeys(at: path, by: sort)
            (listing, prefetched) = try withNode(at: path) { cache, id in page(of: id, in: &cache, sortedKeys: sortedKeys) }
        }
        // Read when reached instead, from a data source that loads at once.
        if !prefetched.isEmpty, state.withLock({ $0.dataSource?.loadsChildItemsAtOnce != true }) {
            for child in prefetched { startLoading(child) }
        }
        var hinted = listing
        hinted.entries = withCountHints(listing.entries)
        forgetLeastRecentlyUsed()
        return hinted
    }

    /// Whether a listing of `path` must wait for the batch of updates being made: the container,
    /// or one on the way to it, has not been read, and nothing is read until the batch is.
    private func mustWaitForUpdates(toList path: [String]) -> Bool {
        state.withLock { state in
            guard state.isUpdating else { return false }
            guard case .found(let id) = state.cache.lookUp(path) else { return true }
            return state.cache.tree[id].children == nil
        }
    }

    /// What a read of a page of a paged container found.
    private enum PagedRead {
        /// The container is not served page by page.
        case notPaged
        /// A batch of updates began before the read or during it: the rows may come from the
        /// data source's next content, at the place the copy has for the container now.
        case stale
        case page(ContentListing)
    }

    /// A page of the container at `path` read from the data source, when the container is
    /// served page by page; nil for any other. A read a batch of updates overlapped is made
    /// again once the batch ends.
    private func pagedPage(at path: [String], kind: ContentListingKind, offset: Int, maximum: Int?, sort: ContentSort)
        async throws(ContentError) -> ContentListing?
    {
        // Each wait lasts until the batch ends or the loading deadline passes.
        for _ in 0..<3 {
            switch try readPagedPage(at: path, kind: kind, offset: offset, maximum: maximum, sort: sort) {
            case .notPaged: return nil
            case .page(let listing): return listing
            case .stale: await waitUntilUpdated()
            }
        }
        throw .noSuchContent("\(Self.describe(path)) (the content is being updated; ask again)")
    }

    /// One read of a page of the paged container at `path`, in one update epoch: the place the
    /// copy has for the container is where the data source has it only while no batch of
    /// updates is open (a container below a tab moves with the content around it).
    private func readPagedPage(at path: [String], kind: ContentListingKind, offset: Int, maximum: Int?, sort: ContentSort)
        throws(ContentError) -> PagedRead
    {
        guard let epoch = state.withLock({ $0.isUpdating ? nil : $0.updateEpoch }) else { return .stale }
        guard let shape = try withNode(at: path, { cache, id in cache.pagedShape(of: id, kind: kind) }),
            let dataSource = state.withLock({ $0.dataSource }), let count = shape.node.pagedCount
        else { return .notPaged }
        let window = ContentListing.window(offset: offset, maximum: maximum, of: shape.total)
        // Sorted: the data source says which children are at these sorted places (limits cap
        // the sorted rows, so the places are within the shown ones); or, for a container small
        // enough, they are sorted here.
        var indexes = Array(window)
        if !sort.isNatural, !window.isEmpty {
            if let sorted = dataSource.sortedChildIndexes(at: shape.indexPath, by: sort, in: window) {
                indexes = sorted.filter { $0 >= 0 && $0 < count }
            } else if count <= pagedContainerThreshold {
                // Paged for being read from memory, not for its size: sorted here as a copy is,
                // every row, the limits then taking the first of the sorted ones.
                let all = (0..<count).map { dataSource.contentItem(at: shape.indexPath.appending($0)) ?? ContentItem(identifier: "") }
                indexes = Array(sort.order(of: all)[window])
            } else {
                throw .sortNotSupported("this container is too large to sort here (\(count) rows), and its source cannot sort it")
            }
        }
        let items = indexes.compactMap { index in dataSource.contentItem(at: shape.indexPath.appending(index)).map { (index, $0) } }
        let entries = state.withLock { state -> [ContentEntry]? in
            guard Self.isCurrent(epoch, in: state) else { return nil }
            return items.map { index, item in
                state.cache.pagedEntry(item, at: index, in: shape.node, path: shape.path, indexPath: shape.indexPath)
            }
        }
        guard let entries else { return .stale }
        return .page(ContentListing(entries: withCountHints(entries), totalCount: shape.total, isComplete: shape.node.isComplete))
    }

    /// Row `index` of the paged container `parent`, read from the data source, within the
    /// container's count and (`withinLimits`) the content limits; nil for any other.
    private func pagedChild(of parent: ContentTree.NodeID, at index: Int, withinLimits: Bool = true) -> ContentEntry? {
        guard let (dataSource, shape) = state.withLock({ state in
            state.dataSource.flatMap { source in state.cache.pagedShape(of: parent).map { (source, $0) } }
        }), index >= 0, index < (withinLimits ? shape.total : shape.node.pagedCount ?? 0),
            let item = dataSource.contentItem(at: shape.indexPath.appending(index))
        else { return nil }
        return state.withLock { state in
            state.cache.pagedEntry(item, at: index, in: shape.node, path: shape.path, indexPath: shape.indexPath)
        }
    }

    /// Where the row `key` is in the paged container `parent`, as the data source finds it.
    ///
    /// Found through the data source only: a scan of the rows for a key a client made up would
    /// cost a read of the whole container per call.
    func pagedIndex(of key: String, in parent: ContentTree.NodeID) -> Int? {
        guard let (dataSource, indexPath) = state.withLock({ state in
            state.dataSource.flatMap { source in state.cache.tree.exists(parent) ? (source, state.cache.tree.indexPath(of: parent)) : nil }
        }) else { return nil }
        return dataSource.indexOfChild(withIdentifier: key, inContainerAt: indexPath)
    }

    /// Copies the child container at `index` of the paged container `parent` into the tree
    /// (`key` it must have, when given); returns its id, nil when there is no such container.
    func openChild(of parent: ContentTree.NodeID, at index: Int, key: String? = nil) -> ContentTree.NodeID? {
        guard let epoch = state.withLock({ state in state.cache.isWithinDepth(parent) && !state.isUpdating ? state.updateEpoch : nil }),
            let entry = pagedChild(of: parent, at: index), entry.item.isContainer, key == nil || entry.item.identifier == key,
            let indexPath = entry.indexPath
        else { return nil }
        return state.withLock { state in
            Self.isCurrent(epoch, in: state) ? state.cache.addOpenedChild(entry.item, of: parent, at: indexPath) : nil
        }
    }

    /// The row at `path` when its parent is served page by page: found through the data
    /// source (``PlayableContentDataSource/indexOfChild(withIdentifier:inContainerAt:)``); nil
    /// when the parent is not paged or has no such row.
    func pagedRow(at path: [String]) -> ContentEntry? {
        guard let key = path.last,
            let parent = try? withNode(at: Array(path.dropLast()), { cache, id in
                cache.isWithinDepth(id) && cache.tree[id].pagedCount != nil ? id : nil
            }),
            let index = pagedIndex(of: key, in: parent), let entry = pagedChild(of: parent, at: index),
            entry.item.identifier == key
        else { return nil }
        return withCountHints([entry])[0]
    }

    /// The row at `indexPath` as the data source numbers it now, reading
    /// containers on the way if needed; `nil` if there is none or it lies
    /// deeper than the content limits allow.
    public func entry(atIndexPath indexPath: IndexPath) -> ContentEntry? { entry(atIndexPath: indexPath, withinLimits: true) }

    /// ``entry(atIndexPath:)``; without `withinLimits`, a row of a container served page by page
    /// is found beyond the content limits too, as a copied container's row is: a search's
    /// results are a list of their own, capped by the limits as a list.
    func entry(atIndexPath indexPath: IndexPath, withinLimits: Bool) -> ContentEntry? {
        let found = try? find({ $0.lookUp(indexPath) }, describing: "\(Array(indexPath))") { cache, id in
            cache.entry(for: id)
        }
        switch found {
        case .node(let entry): return withCountHints([entry])[0]
        case .pagedRow(let parent, let index):
            // A row of a container served page by page is read from the data source.
            guard let entry = pagedChild(of: parent, at: index, withinLimits: withinLimits) else { return nil }
            state.withLock { $0.cache.tree.touch(parent) }
            return withCountHints([entry])[0]
        case nil: return nil
        }
    }

    /// Gives containers not read yet the data source's count of their children
    /// as a hint, limits applied. Called without the lock held, so a data
    /// source may call back into the manager.
    func withCountHints(_ entries: [ContentEntry]) -> [ContentEntry] {
        guard entries.contains(where: { $0.item.isContainer && $0.children == nil }),
            let (dataSource, limit) = state.withLock({ state in state.dataSource.map { ($0, state.cache.context.itemLimit) } })
        else { return entries }
        return entries.map { entry in
            guard entry.item.isContainer, entry.children == nil, let indexPath = entry.indexPath else { return entry }
            var entry = entry
            let count = max(0, dataSource.numberOfChildItems(at: indexPath))
            entry.children = ContentEntry.ChildCounts(
                childCount: limit.map { min(count, $0) } ?? count, itemCount: nil, containerCount: nil, isComplete: false)
            return entry
        }
    }
}
