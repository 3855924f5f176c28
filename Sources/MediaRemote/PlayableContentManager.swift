import AsyncSupport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Serves an app's browsable content to remotes (a head unit, a media
/// server), in the shape of Apple's `MPPlayableContentManager`.
///
/// ```swift
/// let content = PlayableContentManager(dataSource: library, delegate: player)
/// content.nowPlayingIdentifiers = [album.identifier, track.identifier]
/// content.beginUpdates()   // …change the data source…
/// content.endUpdates()     // remotes hear once per changed container
/// ```
///
/// The manager keeps its own copy of the containers it has read, so
/// listings are answered from memory and the data source is asked once per
/// container (and again only after ``reloadData()`` or a batch of updates).
/// The copy is bounded (``maximumCachedRows``): the containers remotes reached
/// least recently are forgotten and read again when listed.
///
/// **Paths.** Remotes address a node by its *path*: the keys of the nodes on
/// the way from the root. A key is the item's identifier; a repeated
/// identifier among siblings gets a suffix (`"\u{0}2"`), so every row has a
/// path of its own, stable while the identifiers are.
///
/// **Responsiveness.** A listing of a container not read yet waits at most
/// ``loadingDeadline`` for ``PlayableContentDataSource/beginLoadingChildItems(at:)``;
/// then it answers with what the data source has so far plus a “loading”
/// row, and observers hear ``ContentChange/containersUpdated(_:)`` for the
/// container once loading ends. Listing a container prefetches the child
/// containers it shows.
///
/// **Limits.** While ``context`` enforces content limits, every listing,
/// count and search shows at most ``PlayableContentManagerContext/enforcedContentItemsCount``
/// rows, and containers at ``PlayableContentManagerContext/enforcedContentTreeDepth``
/// show no children.
///
/// Thread-safe; every method may be called from any thread. The manager never
/// calls the data source, the delegate or an observer while holding its lock,
/// so they may call back into it.
///
/// **Inside.** The decisions are a value, `ContentCache` (the copy, its bound, the limits
/// applied to rows), behind one lock; this class is its shell: it calls the data source, the
/// delegate and observers outside the lock and hands the cache what they said. Every call
/// finds its node and reads what it serves of it in one step of the cache, so content that
/// changes or is forgotten meanwhile is never read through a stale node.
public final class PlayableContentManager: Sendable {
    struct State {
        var dataSource: (any PlayableContentDataSource)?
        var delegate: (any PlayableContentDelegate)?
        var cache: ContentCache
        /// Listings waiting for a container to load, by container, each with its own token.
        var waiters: [ContentTree.NodeID: [Int: CheckedContinuation<Bool, Never>]] = [:]
        /// Calls waiting for the batch of updates to be read, each with its own token.
        var updateWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Containers a listing showed as loading while reads waited for a batch: loaded once
        /// it is read, so that remotes hear their `Updated`.
        var owedAfterUpdates: Set<ContentTree.NodeID> = []
        var nextWaiter = 0
        /// The batch of updates open, with the paths of the containers changed inside it.
        var batch = ChangeBatch<[String]>()
        /// Batches that ended and whose changes the copy is being brought up to: until they are
        /// read, the copy's index paths may be out of date.
        var batchesBeingRead = 0
        /// Moves on when a batch of updates begins and once it has been read: a read of the data
        /// source made across either may mix what it held before and after, so it is not copied.
        var updateEpoch: UInt64 = 0
        var reloadRequested = false
        var loadingDeadline: Duration

        /// Whether the data source may be changing under the copy: from the start of a batch of
        /// updates until the copy has read what it changed. A read of the data source for the
        /// copy neither starts nor is taken then.
        var isUpdating: Bool { batch.isOpen || batchesBeingRead > 0 }
    }

    let state: Mutex<State>
    private let observers = Observers<ContentChange>()

    /// The most rows the manager keeps in its copy. Past it, the containers remotes reached
    /// least recently are forgotten (never the one being listed, nor one still loading); a
    /// remote listing one again is answered by reading it from the data source again, and a
    /// batch of updates still tells remotes when one of them changed. A container of more than
    /// half this many rows stays once read: read again whole on every return to it, it would
    /// cost more than it frees.
    public let maximumCachedRows: Int

    /// The number of children past which a container whose children are all alike
    /// (``PlayableContentDataSource/uniformChildKind(at:)``) is not copied: each listing reads
    /// the page it shows from the data source, a row below it is found with
    /// ``PlayableContentDataSource/indexOfChild(withIdentifier:inContainerAt:)``, and a child
    /// container is copied when a remote opens it. Such a container (the Tracks or Albums tab
    /// of a large library) would otherwise cost tens of megabytes and be read whole before its
    /// first page. Its rows are not in introspection, and a batch of updates that reads it
    /// again announces it. A container of items the data source reads from memory
    /// (``PlayableContentDataSource/readsChildItemsFromMemory(at:)``) is served so whatever its
    /// size, its rows in introspection up to this many.
    public let pagedContainerThreshold: Int

    /// Creates a manager. `loadingDeadline` is the longest a listing waits for a slow data
    /// source; `maximumCachedRows` bounds the copy (see ``maximumCachedRows``),
    /// `pagedContainerThreshold` the containers served page by page.
    public init(
        dataSource: (any PlayableContentDataSource)? = nil, delegate: (any PlayableContentDelegate)? = nil,
        loadingDeadline: Duration = .milliseconds(500), maximumCachedRows: Int = 60_000,
        pagedContainerThreshold: Int = 5_000
    ) {
        self.maximumCachedRows = max(maximumCachedRows, 1)
        self.pagedContainerThreshold = max(pagedContainerThreshold, 1)
        state = Mutex(
            State(
                dataSource: dataSource, delegate: delegate, cache: ContentCache(maximumRows: self.maximumCachedRows),
                loadingDeadline: loadingDeadline))
    }

    /// The rows in the manager's copy now.
    public var cachedRowCount: Int { state.withLock { $0.cache.tree.liveCount - 1 } }

    // MARK: Configuration

    /// The app's content. Setting it forgets everything read from the old one
    /// and tells observers that the root changed.
    public var dataSource: (any PlayableContentDataSource)? {
        get { state.withLock { $0.dataSource } }
        set {
            state.withLock { state in
                state.dataSource = newValue
                state.cache.forgetAll()
            }
            announce([[]])
        }
    }

    /// Starts playback for remotes.
    public var delegate: (any PlayableContentDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// The longest a listing waits for ``PlayableContentDataSource/beginLoadingChildItems(at:)``.
    public var loadingDeadline: Duration {
        get { state.withLock { $0.loadingDeadline } }
        set { state.withLock { $0.loadingDeadline = max(newValue, .zero) } }
    }

    /// What the connected remote allows. Remotes set it with ``updateContext(_:)``.
    public var context: PlayableContentManagerContext { state.withLock { $0.cache.context } }

    /// Changes the context (a head unit connected, or set content limits),
    /// then tells the delegate and the observers, if it changed.
    public func updateContext(_ change: (inout PlayableContentManagerContext) -> Void) {
        let (context, delegate) = state.withLock { state -> (PlayableContentManagerContext?, (any PlayableContentDelegate)?) in
            var context = state.cache.context
            change(&context)
            context = PlayableContentManagerContext(
                endpointAvailable: context.endpointAvailable, contentLimitsEnforced: context.contentLimitsEnforced,
                enforcedContentItemsCount: context.enforcedContentItemsCount,
                enforcedContentTreeDepth: context.enforcedContentTreeDepth, maximumTabCount: context.maximumTabCount,
                enforcedTextLength: context.enforcedTextLength, maximumActionCount: context.maximumActionCount)
            guard context != state.cache.context else { return (nil, nil) }
            state.cache.context = context
            return (context, state.delegate)
        }
        guard let context else { return }
        delegate?.playableContentManager(self, didUpdate: context)
        notify(.contextChanged(context))
    }

    /// The identifiers of what is playing: the item and the containers it
    /// was started from (`[playlist, track]`). Rows with these identifiers
    /// are marked as playing; observers hear which paths changed.
    public var nowPlayingIdentifiers: [String] {
        get { state.withLock { $0.cache.nowPlaying } }
        set {
            let (marked, dataSource) = state.withLock { state in (state.cache.setNowPlaying(newValue), state.dataSource) }
            // Rows of containers served page by page are found through the data source (after
            // a walk of the tree, thousands of albums): the paths of only those that hold one.
            var paths = marked.paths
            if let dataSource {
                var found: [(id: ContentTree.NodeID, identifier: String)] = []
                for container in marked.paged {
                    for identifier in marked.flipped
                    where dataSource.indexOfChild(withIdentifier: identifier, inContainerAt: container.indexPath) != nil {
                        found.append((container.id, identifier))
                    }
                }
                if !found.isEmpty {
                    paths += state.withLock { state in
                        found.compactMap { row in
                            state.cache.tree.exists(row.id) ? state.cache.tree.path(of: row.id) + [row.identifier] : nil
                        }
                    }
                }
            }
            if !paths.isEmpty { notify(.nowPlayingChanged(paths)) }
        }
    }

    // MARK: Observing

    /// Calls `observer` after each change remotes should hear of, on the
    /// thread that made it, for as long as the returned observation is kept. It must be quick.
    public func observe(_ observer: @escaping @Sendable (ContentChange) -> Void) -> Observation {
        observers.add(observer)
    }

    func notify(_ change: ContentChange) { observers.notify(change) }

    /// Tells observers about changed containers now, or at the end of the current batch.
    func announce(_ changed: [[String]]) {
        guard !changed.isEmpty else { return }
        let now = state.withLock { state in changed.filter { state.batch.hold($0) != nil } }
        if !now.isEmpty { notify(.containersUpdated(now)) }
    }

    // MARK: Finding nodes

    /// The most lookups one call makes on its way down a path: each reads a container the
    /// copy lacks, and only content changing or forgotten under it faster than it reads sends
    /// it round again.
    static let maximumLookupRounds = 64

    /// What a step of ``find(_:describing:_:)`` needs next.
    private enum LookupStep<Value> {
        case done(Value)
        case read(ContentTree.NodeID)
        case open(ContentTree.NodeID, ContentCache.Row)
        case pagedRow(ContentTree.NodeID, index: Int)
        case missing
    }

    /// What ``find(_:describing:_:)`` found: what `body` made of the node, or a row of a
    /// container served page by page (never copied, so `body` cannot see it).
    enum Found<Value> {
        case node(Value)
        case pagedRow(ContentTree.NodeID, index: Int)
    }

    /// Finds a node with `lookUp`, reading the containers on the way that the copy lacks from
    /// the data source as they are now, and runs `body` on it in the same step as the lookup
    /// that found it: what `body` reads is the node asked for, whatever changes before or after.
    ///
    /// - Throws: ``ContentError/noSuchContent(_:)`` (naming `described`) when nothing is there,
    ///   it lies deeper than the content limits allow, or the data source is in a batch of
    ///   updates and the node is not in the copy; what `body` throws.
    func find<Value: Sendable>(
        _ lookUp: (inout ContentCache) -> ContentCache.Lookup, describing described: @autoclosure () -> String,
        _ body: (inout ContentCache, ContentTree.NodeID) throws(ContentError) -> Value
    ) throws(ContentError) -> Found<Value> {
        // The container being read on the way is pinned, so that others' calls do not forget
        // it before this call goes on through it.
        var pinned: ContentTree.NodeID?
        defer { if let pinned { state.withLock { $0.cache.unpin(pinned) } } }
        var lastRead: ContentTree.NodeID?
        for _ in 0..<Self.maximumLookupRounds {
            let step = try state.withLock { state throws(ContentError) -> LookupStep<Value> in
                if let previous = pinned {
                    state.cache.unpin(previous)
                    pinned = nil
                }
                switch lookUp(&state.cache) {
                case .found(let id): return .done(try body(&state.cache, id))
                case .read where state.isUpdating:
                    // The data source is changing and the copy's index paths may be out of date:
                    // nothing is read until the batch ends.
                    throw .noSuchContent("\(described()) (the content is being updated; ask again)")
                case .read(let id) where id != lastRead && state.dataSource != nil:
                    state.cache.pin(id)
                    pinned = id
                    return .read(id)
                case .open(let id, let row): return .open(id, row)
                case .pagedRow(let id, let index): return .pagedRow(id, index: index)
                case .read, .missing: return .missing
                }
            }
            switch step {
            case .done(let value): return .node(value)
            case .pagedRow(let id, let index): return .pagedRow(id, index: index)
            case .missing: throw .noSuchContent(described())
            case .read(let id):
                snapshot(id)
                startLoading(id)
                lastRead = id
            case .open(let parent, let row):
                let index: Int? =
                    switch row {
                    case .index(let index): index
                    case .key(let key): pagedIndex(of: key, in: parent)
                    }
                let key: String? = if case .key(let key) = row { key } else { nil }
                guard let index, openChild(of: parent, at: index, key: key) != nil else { throw .noSuchContent(described()) }
            }
        }
        throw .noSuchContent("\(described()) (the content kept changing while it was read)")
    }

    /// Finds the node at `path` (see ``find(_:describing:_:)``) and runs `body` on it in the
    /// step that found it.
    func withNode<Value: Sendable>(
        at path: [String], _ body: (inout ContentCache, ContentTree.NodeID) throws(ContentError) -> Value
    ) throws(ContentError) -> Value {
        switch try find({ $0.lookUp(path) }, describing: Self.describe(path), body) {
        case .node(let value): return value
        // A path names a row of a paged container only as a container to open.
        case .pagedRow: throw .noSuchContent(Self.describe(path))
        }
    }

    static func describe(_ path: [String]) -> String {
        path.isEmpty ? "the root" : "'" + path.map { $0.replacing("\u{0}", with: "#") }.joined(separator: "/") + "'"
    }

    /// Forgets what the copy holds past its bound; called as each call ends.
    func forgetLeastRecentlyUsed() {
        state.withLock { $0.cache.forgetLeastRecentlyUsed() }
    }

    // MARK: Actions and playback

    /// The item with `identifier`, from the data source, or from what has
    /// been read when the data source does not look identifiers up.
    public func contentItem(forIdentifier identifier: String) async throws -> ContentItem? {
        if let dataSource = state.withLock({ $0.dataSource }),
            let item = try await dataSource.contentItem(forIdentifier: identifier)
        {
            return item
        }
        return state.withLock { $0.cache.copiedItem(withIdentifier: identifier) }
    }

    /// Asks the delegate to play the row at `path`; returns once playback has started.
    ///
    /// - Throws: ``ContentError/noSuchContent(_:)``, ``ContentError/notPlayable(_:)``,
    ///   ``ContentError/noDelegate``, or what the delegate threw.
    public func initiatePlayback(at path: [String]) async throws {
        let item: ContentItem?
        let indexPath: IndexPath
        do {
            (item, indexPath) = try withNode(at: path) { cache, id in (cache.tree[id].item, cache.tree.indexPath(of: id)) }
        } catch {
            guard let row = pagedRow(at: path), let rowIndexPath = row.indexPath else { throw error }
            (item, indexPath) = (row.item, rowIndexPath)
        }
        guard let item, item.isPlayable else {
            throw ContentError.notPlayable(item?.title ?? Self.describe(path))
        }
        guard let delegate else { throw ContentError.noDelegate }
        try await delegate.playableContentManager(self, initiatePlaybackOfContentItemAt: indexPath)
    }

    /// The custom actions rows may offer (``ContentItem/actions`` names them); remotes show
    /// their titles and icons. Empty by default.
    public var customActions: [ContentAction] {
        get { state.withLock { $0.cache.customActions } }
        set { state.withLock { $0.cache.customActions = newValue } }
    }

    /// The actions a remote may offer on `item` now: those of its ``ContentItem/actions``
    /// that are declared in ``customActions``, at most the context's ``PlayableContentManagerContext/actionLimit``.
    public func offeredActions(of item: ContentItem) -> [String] { actionOffer.actions(of: item) }

    /// What decides the actions offered on a row now, read once for the rows of a listing.
    public var actionOffer: ContentActionOffer {
        state.withLock { state in
            ContentActionOffer(
                declared: Set(state.cache.customActions.map(\.identifier)), limit: state.cache.context.actionLimit)
        }
    }

    /// Asks the delegate to carry out `action` on the row at `path`; returns once it has.
    ///
    /// - Throws: ``ContentError/noSuchContent(_:)``, ``ContentError/actionNotAvailable(_:)``
    ///   when the row does not offer it now, ``ContentError/noDelegate``, or what the delegate threw.
    public func performAction(_ action: String, onRowAt path: [String]) async throws {
        guard !path.isEmpty else { throw ContentError.actionNotAvailable(action) }
        let row = try entry(at: path, readingChildren: false)
        guard let indexPath = row.indexPath, offeredActions(of: row.item).contains(action) else {
            throw ContentError.actionNotAvailable(action)
        }
        guard let delegate = self.delegate else { throw ContentError.noDelegate }
        try await delegate.playableContentManager(self, performAction: action, onContentItemAt: indexPath)
    }

    /// Asks the delegate to prepare a play queue from the rows at `paths`
    /// (`nil`: the app's choice), without starting playback.
    public func initializePlaybackQueue(with paths: [[String]]?) async throws {
        guard let delegate = self.delegate else { throw ContentError.noDelegate }
        let items = try paths.map { paths in
            try paths.map { path throws(ContentError) -> ContentItem in
                guard !path.isEmpty else { throw ContentError.noSuchContent(Self.describe(path)) }
                return try entry(at: path).item
            }
        }
        try await delegate.playableContentManager(self, initializePlaybackQueueWithContentItems: items)
    }

    /// Asks the delegate to read the content again from where the app keeps it, and returns
    /// once it has (see ``PlayableContentDelegate/playableContentManagerRefreshContent(_:)``).
    public func refreshContent() async throws {
        guard let delegate = self.delegate else { throw ContentError.noDelegate }
        try await delegate.playableContentManagerRefreshContent(self)
    }
}
