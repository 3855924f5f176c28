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
public final class PlayableContentManager: Sendable {
    private struct State {
        var dataSource: (any PlayableContentDataSource)?
        var delegate: (any PlayableContentDelegate)?
        var tree = ContentTree()
        var context = PlayableContentManagerContext()
        var customActions: [ContentAction] = []
        var nowPlaying: [String] = []
        var nowPlayingSet: Set<String> = []
        var loads: [Int: Load] = [:]
        var nextWaiter = 0
        var batchDepth = 0
        var reloadRequested = false
        /// Paths of containers changed inside the current batch.
        var pendingChanges: [[String]] = []
        var observers = ObserverList<ContentChange>()
        var loadingDeadline: Duration
        /// Containers forgotten to keep the copy bounded, by path, with the fingerprint of the
        /// rows they had: a batch of updates reads them again to tell whether they changed.
        var forgotten: [[String]: Int] = [:]
        /// The copy's size after the last pass that could forget nothing more: no pass runs
        /// again until the copy grows past it.
        var floorAfterForgetting = 0
    }

    /// A container being loaded, and the listings waiting for it.
    private struct Load {
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state: Mutex<State>

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
    /// again announces it.
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
        state = Mutex(State(dataSource: dataSource, delegate: delegate, loadingDeadline: loadingDeadline))
    }

    /// The rows in the manager's copy now.
    public var cachedRowCount: Int { state.withLock { $0.tree.liveCount - 1 } }

    // MARK: Configuration

    /// The app's content. Setting it forgets everything read from the old one
    /// and tells observers that the root changed.
    public var dataSource: (any PlayableContentDataSource)? {
        get { state.withLock { $0.dataSource } }
        set {
            state.withLock { state in
                state.dataSource = newValue
                state.tree.remove(childrenOf: ContentTree.rootID)
                state.forgotten = [:]
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
    public var context: PlayableContentManagerContext { state.withLock { $0.context } }

    /// Changes the context (a head unit connected, or set content limits),
    /// then tells the delegate and the observers, if it changed.
    public func updateContext(_ change: (inout PlayableContentManagerContext) -> Void) {
        let (context, delegate) = state.withLock { state -> (PlayableContentManagerContext?, (any PlayableContentDelegate)?) in
            var context = state.context
            change(&context)
            context = PlayableContentManagerContext(
                endpointAvailable: context.endpointAvailable, contentLimitsEnforced: context.contentLimitsEnforced,
                enforcedContentItemsCount: context.enforcedContentItemsCount,
                enforcedContentTreeDepth: context.enforcedContentTreeDepth, maximumTabCount: context.maximumTabCount,
                enforcedTextLength: context.enforcedTextLength, maximumActionCount: context.maximumActionCount)
            guard context != state.context else { return (nil, nil) }
            state.context = context
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
        get { state.withLock { $0.nowPlaying } }
        set {
            let (copied, flipped, paged, dataSource) = state.withLock { state in
                let old = state.nowPlayingSet
                let new = Set(newValue)
                state.nowPlaying = newValue
                state.nowPlayingSet = new
                let flipped = old.symmetricDifference(new)
                var paths: [[String]] = []
                var paged: [(path: [String], indexPath: IndexPath)] = []
                guard !flipped.isEmpty else { return (paths, flipped, paged, state.dataSource) }
                for (id, node) in state.tree.nodes.enumerated() {
                    if let identifier = node?.item?.identifier, flipped.contains(identifier) {
                        paths.append(state.tree.path(of: id))
                    }
                    if node?.pagedCount != nil { paged.append((state.tree.path(of: id), state.tree.indexPath(of: id))) }
                }
                return (paths, flipped, paged, state.dataSource)
            }
            // Rows of containers served page by page are found through the data source.
            var paths = copied
            if let dataSource {
                for container in paged {
                    for identifier in flipped
                    where dataSource.indexOfChild(withIdentifier: identifier, inContainerAt: container.indexPath) != nil {
                        paths.append(container.path + [identifier])
                    }
                }
            }
            if !paths.isEmpty { notify(.nowPlayingChanged(paths)) }
        }
    }

    // MARK: Observing

    /// Calls `observer` after each change remotes should hear of, on the
    /// thread that made it. It must be quick.
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (ContentChange) -> Void) -> Observation {
        let token = state.withLock { $0.observers.add(observer) }
        return Observation { [weak self] in self?.state.withLock { $0.observers.remove(token) } }
    }

    private func notify(_ change: ContentChange) {
        for observer in state.withLock({ $0.observers.all }) { observer(change) }
    }

    /// Tells observers about changed containers now, or at the end of the current batch.
    private func announce(_ changed: [[String]]) {
        guard !changed.isEmpty else { return }
        let now = state.withLock { state -> [[String]] in
            guard state.batchDepth > 0 else { return changed }
            state.pendingChanges += changed
            return []
        }
        if !now.isEmpty { notify(.containersUpdated(now)) }
    }

    // MARK: Updates

    /// Starts a batch of changes to the data source. Batches nest; remotes
    /// hear of them when the outermost one ends.
    public func beginUpdates() {
        state.withLock { $0.batchDepth += 1 }
    }

    /// Ends a batch: re-reads every container read so far (the data source
    /// must answer from memory by now) and tells observers once, with each
    /// container whose rows changed.
    public func endUpdates() {
        let ending = state.withLock { state -> Bool in
            guard state.batchDepth > 0 else { return false }
            state.batchDepth -= 1
            return state.batchDepth == 0
        }
        guard ending else { return }
        let changed = rereadAll()
        let (pending, reload) = state.withLock { state in
            defer {
                state.pendingChanges = []
                state.reloadRequested = false
            }
            return (state.pendingChanges, state.reloadRequested)
        }
        let all = Self.unique(pending + changed)
        if !all.isEmpty { notify(.containersUpdated(all)) }
        if reload { reloadData() }
    }

    /// Reloads everything read so far, asking the data source to load each
    /// container again, and tells observers once per container that changed.
    /// Inside a batch it runs when the batch ends. The returned task ends
    /// when the reload is complete.
    @discardableResult
    public func reloadData() -> Task<Void, Never> {
        let deferred = state.withLock { state -> Bool in
            if state.batchDepth > 0 { state.reloadRequested = true }
            return state.batchDepth > 0
        }
        guard !deferred else { return Task {} }
        return Task(executorPreference: DataSourceReads.shared) { [self] in
            var changed: [[String]] = []
            var queue = [ContentTree.rootID]
            var next = 0
            while next < queue.count {
                let id = queue[next]
                next += 1
                guard let (dataSource, indexPath) = state.withLock({ state -> ((any PlayableContentDataSource), IndexPath)? in
                    guard state.tree.exists(id), state.tree[id].children != nil, let source = state.dataSource else { return nil }
                    return (source, state.tree.indexPath(of: id))
                }) else { continue }
                try? await dataSource.beginLoadingChildItems(at: indexPath)
                let merged = merge(read(dataSource, at: indexPath), into: id, completing: true)
                changed += merged.changed
                queue += merged.readChildren
            }
            if let dataSource = state.withLock({ $0.dataSource }) { changed += changedForgottenContainers(dataSource) }
            forgetLeastRecentlyUsed()
            announce(Self.unique(changed))
        }
    }

    private func rereadAll() -> [[String]] {
        defer { forgetLeastRecentlyUsed() }
        guard let dataSource = state.withLock({ $0.dataSource }) else { return [] }
        if let named = dataSource.changedContainerIdentifiers() { return reread(named, from: dataSource) }
        var changed: [[String]] = []
        var queue = state.withLock { state in [ContentTree.rootID].filter { state.tree[$0].children != nil } }
        var next = 0
        while next < queue.count {
            let id = queue[next]
            next += 1
            guard let indexPath = state.withLock({ $0.tree.exists(id) ? $0.tree.indexPath(of: id) : nil }) else { continue }
            let merged = merge(read(dataSource, at: indexPath), into: id, completing: false)
            changed += merged.changed
            queue += merged.readChildren
        }
        return changed + changedForgottenContainers(dataSource)
    }

    /// Reads again the containers of the copy that the data source says changed, parents
    /// before children, and checks the forgotten ones it names.
    private func reread(_ named: Set<String>, from dataSource: any PlayableContentDataSource) -> [[String]] {
        guard !named.isEmpty else { return [] }
        let containers = state.withLock { state in
            state.tree.readContainers().filter { named.contains(state.tree[$0].item?.identifier ?? "") }
        }
        var changed: [[String]] = []
        for id in containers {
            guard let indexPath = state.withLock({ $0.tree.exists(id) ? $0.tree.indexPath(of: id) : nil }) else { continue }
            changed += merge(read(dataSource, at: indexPath), into: id, completing: false).changed
        }
        return changed + changedForgottenContainers(dataSource, among: named)
    }

    // MARK: Keeping the copy bounded

    /// Forgets the least recently reached containers while the copy holds more than
    /// ``maximumCachedRows`` rows, down to three quarters of it, keeping each one's fingerprint.
    private func forgetLeastRecentlyUsed() {
        let limit = maximumCachedRows
        state.withLock { state in
            guard state.tree.liveCount - 1 > limit, state.tree.liveCount > state.floorAfterForgetting else { return }
            let target = limit - limit / 4
            let latest = state.tree.latestUse
            let candidates = state.tree.readContainers().filter { id in
                let node = state.tree[id]
                // Not the root, nor what the last call reached, nor a container still loading,
                // nor one too large to read again on every return to it, nor a paged one (it
                // holds nothing).
                return id != ContentTree.rootID && node.lastUse != latest && node.isComplete && !node.owesUpdate
                    && state.loads[id] == nil && (node.children?.count ?? 0) <= limit / 2 && node.pagedCount == nil
            }.sorted { state.tree[$0].lastUse < state.tree[$1].lastUse }
            for id in candidates {
                guard state.tree.liveCount - 1 > target else { break }
                guard state.tree.exists(id), state.tree[id].children != nil else { continue }
                for container in state.tree.readContainers(from: id) {
                    state.forgotten[state.tree.path(of: container)] = state.tree.fingerprint(of: container)
                }
                state.tree.remove(childrenOf: id)
                // A container opened below a paged one goes whole: it is not in its parent's list.
                state.tree.removeOpenedChild(id)
            }
            state.floorAfterForgetting = state.tree.liveCount - 1 > target ? state.tree.liveCount : 0
        }
    }

    /// The forgotten containers whose rows differ from when they were forgotten (or that are
    /// gone), read from the data source as they are now; their fingerprints are brought up to
    /// date. A container read into the copy again since is left to the copy.
    ///
    /// With `named`, only the forgotten containers whose identifier it holds are checked.
    private func changedForgottenContainers(_ dataSource: any PlayableContentDataSource, among named: Set<String>? = nil)
        -> [[String]]
    {
        var forgotten = state.withLock { $0.forgotten }
        if let named {
            // A key is the identifier, or the identifier, a NUL and a number for a repeated one.
            forgotten = forgotten.filter { path, _ in
                named.contains(String((path.last ?? "").split(separator: "\u{0}", omittingEmptySubsequences: false)[0]))
            }
        }
        guard !forgotten.isEmpty else { return [] }
        // Reads of containers on the way, shared within this pass.
        var reads: [IndexPath: ContentTree.ContainerRead] = [:]
        var changed: [[String]] = []
        for (path, fingerprint) in forgotten {
            let cachedAgain = state.withLock { state in
                state.tree.resolve(path).found.map { state.tree[$0].children != nil } ?? false
            }
            if cachedAgain {
                state.withLock { _ = $0.forgotten.removeValue(forKey: path) }
                continue
            }
            guard let indexPath = indexPath(ofForgotten: path, in: dataSource, reads: &reads) else {
                changed.append(path)
                state.withLock { _ = $0.forgotten.removeValue(forKey: path) }
                continue
            }
            let read = reads[indexPath] ?? read(dataSource, at: indexPath)
            let now = ContentTree.fingerprint(
                keys: ContentTree.keys(of: read.items.lazy.map(\.item)), items: read.items.lazy.map(\.item),
                displaysProgress: read.displaysProgress)
            if now != fingerprint {
                changed.append(path)
                state.withLock { $0.forgotten[path] = now }
            }
        }
        return changed
    }

    /// Where the data source has the container at `path` now: through the copy as far as it
    /// is read, then through reads of the data source; `nil` when a key is not there any more.
    private func indexPath(
        ofForgotten path: [String], in dataSource: any PlayableContentDataSource,
        reads: inout [IndexPath: ContentTree.ContainerRead]
    ) -> IndexPath? {
        var cached: Int? = ContentTree.rootID
        var indexPath = IndexPath()
        for key in path {
            if let current = cached {
                let step = state.withLock { state -> (isRead: Bool, isPaged: Bool, child: Int?) in
                    guard state.tree.exists(current), state.tree[current].children != nil else { return (false, false, nil) }
                    return (true, state.tree[current].pagedCount != nil, state.tree[current].childByKey[key])
                }
                if step.isRead, let child = step.child {
                    cached = child
                    indexPath = state.withLock { $0.tree.indexPath(of: child) }
                    continue
                }
                if step.isPaged {
                    // Not opened: the data source says where it is.
                    guard let index = dataSource.indexOfChild(withIdentifier: key, inContainerAt: indexPath) else {
                        return nil
                    }
                    indexPath = indexPath.appending(index)
                    cached = nil
                    continue
                }
                if step.isRead { return nil }
                cached = nil
            }
            let read = reads[indexPath] ?? read(dataSource, at: indexPath)
            reads[indexPath] = read
            guard let position = ContentTree.keys(of: read.items.lazy.map(\.item)).firstIndex(of: key) else { return nil }
            indexPath = indexPath.appending(read.items[position].sourceIndex)
        }
        return indexPath
    }

    /// Merges what the data source said about container `id` (complete if
    /// `completing`, else as complete as it was), for a reload or a batch.
    /// Returns the paths of the containers that changed and the child
    /// containers read before, which must be visited next.
    private func merge(_ read: ContentTree.ContainerRead, into id: Int, completing: Bool)
        -> (changed: [[String]], readChildren: [Int])
    {
        state.withLock { state in
            guard state.tree.exists(id) else { return ([], []) }
            var ids: Set<Int> = []
            Self.rememberOpenedChildren(of: id, in: &state)
            state.tree.merge(read, into: id, complete: completing || state.tree[id].isComplete, changed: &ids)
            let readChildren = (state.tree[id].children ?? []).filter { state.tree[$0].children != nil }
            return (ids.map { state.tree.path(of: $0) }, readChildren)
        }
    }

    /// Before a paged container is read again (its opened children go, as their places may have
    /// moved): keeps the fingerprints of what was read below them, so a batch of updates still
    /// tells remotes which of them changed.
    private static func rememberOpenedChildren(of id: Int, in state: inout State) {
        guard state.tree[id].pagedCount != nil else { return }
        for child in state.tree.childIDs(of: id) {
            for container in state.tree.readContainers(from: child) {
                state.forgotten[state.tree.path(of: container)] = state.tree.fingerprint(of: container)
            }
        }
    }

    private static func unique(_ paths: [[String]]) -> [[String]] {
        var seen: Set<[String]> = []
        return paths.filter { seen.insert($0).inserted }
    }

    private func read(_ dataSource: any PlayableContentDataSource, at indexPath: IndexPath) -> ContentTree.ContainerRead {
        let count = max(0, dataSource.numberOfChildItems(at: indexPath))
        if count > pagedContainerThreshold, let kind = dataSource.uniformChildKind(at: indexPath) {
            return ContentTree.ContainerRead(
                items: [], displaysProgress: dataSource.childItemsDisplayPlaybackProgress(at: indexPath),
                pagedCount: count, pagesContainers: kind == .containers)
        }
        var items: [(sourceIndex: Int, item: ContentItem)] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            if let item = dataSource.contentItem(at: indexPath.appending(index)) { items.append((index, item)) }
        }
        return ContentTree.ContainerRead(
            items: items, displaysProgress: dataSource.childItemsDisplayPlaybackProgress(at: indexPath))
    }

    // MARK: Loading

    /// Reads the container `id` from the data source as it is now, without
    /// waiting for loading; the node stays incomplete.
    private func snapshot(_ id: Int) {
        guard let (dataSource, indexPath) = state.withLock({ state -> ((any PlayableContentDataSource), IndexPath)? in
            guard let source = state.dataSource, state.tree.exists(id) else { return nil }
            return (source, state.tree.indexPath(of: id))
        }) else { return }
        // A data source with nothing to wait for is read once, complete.
        if dataSource.loadsChildItemsAtOnce { return startLoading(id) }
        let read = read(dataSource, at: indexPath)
        state.withLock { state in
            guard state.tree.exists(id), !state.tree[id].isComplete else { return }
            var ignored: Set<Int> = []
            state.tree.merge(read, into: id, complete: false, changed: &ignored)
        }
    }

    /// Starts loading container `id` unless it is loaded or loading.
    private func startLoading(_ id: Int) {
        let start = state.withLock { state -> ((any PlayableContentDataSource), IndexPath)? in
            guard let source = state.dataSource, state.tree.exists(id), !state.tree[id].isComplete,
                state.loads[id] == nil
            else { return nil }
            state.loads[id] = Load()
            return (source, state.tree.indexPath(of: id))
        }
        guard let (dataSource, indexPath) = start else { return }
        // Read at once: the caller is about to use the container (so nothing is forgotten here;
        // the call forgets what it must when it is done).
        if dataSource.loadsChildItemsAtOnce { return finishLoading(id, read: read(dataSource, at: indexPath), at: indexPath) }
        Task(executorPreference: DataSourceReads.shared) { [self] in
            try? await dataSource.beginLoadingChildItems(at: indexPath)
            finishLoading(id, read: read(dataSource, at: indexPath), at: indexPath)
            forgetLeastRecentlyUsed()
        }
    }

    /// Merges what loading container `id` read, complete, and wakes the listings waiting for it.
    private func finishLoading(_ id: Int, read: ContentTree.ContainerRead, at indexPath: IndexPath) {
        let (waiters, changed) = state.withLock { state -> ([CheckedContinuation<Bool, Never>], [[String]]) in
            let waiters = state.loads.removeValue(forKey: id).map { Array($0.waiters.values) } ?? []
            var ids: Set<Int> = []
            if state.tree.exists(id), state.tree.indexPath(of: id) == indexPath {
                state.tree.merge(read, into: id, complete: true, changed: &ids)
            }
            return (waiters, ids.map { state.tree.path(of: $0) })
        }
        for waiter in waiters { waiter.resume(returning: true) }
        announce(changed)
    }

    /// Waits until container `id` is loaded or the deadline passes; true when loaded.
    private func waitForLoad(_ id: Int) async -> Bool {
        startLoading(id)
        return await withCheckedContinuation { continuation in
            let registration = state.withLock { state -> (Int, Duration)? in
                guard state.loads[id] != nil else { return nil }
                let token = state.nextWaiter
                state.nextWaiter += 1
                state.loads[id]!.waiters[token] = continuation
                return (token, state.loadingDeadline)
            }
            guard let (token, deadline) = registration else {
                return continuation.resume(returning: state.withLock { $0.tree.exists(id) && $0.tree[id].isComplete })
            }
            Task {
                try? await Task.sleep(for: deadline)
                let expired = state.withLock { $0.loads[id]?.waiters.removeValue(forKey: token) }
                expired?.resume(returning: false)
            }
        }
    }

    /// The node at `path`, reading containers on the way from the data source
    /// as they are now when they were not read yet.
    private func resolve(_ path: [String]) throws(ContentError) -> Int {
        while true {
            let (found, deepest, remaining) = state.withLock { $0.tree.resolve(path) }
            if let found {
                state.withLock { $0.tree.touch(found) }
                return found
            }
            if state.withLock({ $0.tree[deepest].pagedCount != nil }) {
                // A container below a paged one is copied once a remote opens it.
                let key = path[state.withLock { $0.tree[deepest].depth }]
                guard let index = pagedIndex(of: key, in: deepest), openChild(of: deepest, at: index, key: key) != nil
                else { throw .noSuchContent(Self.describe(path)) }
                continue
            }
            let isContainer = state.withLock { state in
                deepest == ContentTree.rootID || state.tree[deepest].item?.isContainer == true
            }
            guard remaining > 0, isContainer, withinDepth(of: deepest) else {
                throw .noSuchContent(Self.describe(path))
            }
            snapshot(deepest)
            startLoading(deepest)
            if state.withLock({ $0.tree.exists(deepest) && $0.tree[deepest].children == nil }) {
                throw .noSuchContent(Self.describe(path))
            }
        }
    }

    private func withinDepth(of id: Int) -> Bool {
        state.withLock { state in
            guard let limit = state.context.depthLimit, state.tree.exists(id) else { return true }
            return state.tree[id].depth < limit
        }
    }

    private static func describe(_ path: [String]) -> String {
        path.isEmpty ? "the root" : "'" + path.map { $0.replacing("\u{0}", with: "#") }.joined(separator: "/") + "'"
    }

    // MARK: Serving remotes

    /// The most child containers one listing prefetches: a head unit's screen
    /// shows a dozen rows, and loading hundreds of albums nobody opens costs memory.
    public static let prefetchLimit = 24

    /// The row at `path` (`[]` is the root), reading it from the data source
    /// if needed. Throws ``ContentError/noSuchContent(_:)`` when nothing is
    /// there, or it lies deeper than the content limits allow.
    ///
    /// - Parameter readingChildren: whether a container's children are read too, so that its
    ///   entry counts them. Pass false to learn only whether the row exists and what it is
    ///   (a D-Bus object lookup does, on the connection's queue, which must not wait on the
    ///   data source for rows a listing reads anyway); its counts are then left out.
    public func entry(at path: [String], readingChildren: Bool = true) throws(ContentError) -> ContentEntry {
        if let last = path.last, last == ContentTree.loadingKey {
            let parent = try resolve(Array(path.dropLast()))
            // It exists exactly when a listing of the parent shows it.
            guard state.withLock({ state in state.tree.exists(parent) && Self.rows(of: parent, in: state, kind: .all).hasLoadingRow })
            else { throw .noSuchContent(Self.describe(path)) }
            return Self.loadingEntry(parentPath: Array(path.dropLast()))
        }
        let id: Int
        do {
            id = try resolve(path)
        } catch {
            if let row = pagedRow(at: path) { return row }
            throw error
        }
        guard readingChildren else { return state.withLock { state in Self.entry(for: id, in: state) } }
        if id != ContentTree.rootID, state.withLock({ $0.tree[id].item?.isContainer == true && $0.tree[id].children == nil }),
            withinDepth(of: id)
        {
            snapshot(id)
            startLoading(id)
        }
        return withCountHints([state.withLock { state in Self.entry(for: id, in: state) }])[0]
    }

    /// The keys of the children a listing of the container at `path` shows
    /// now (limits applied), without waiting for the data source: for
    /// introspection, which must answer at once.
    public func childKeys(of path: [String]) -> [String] {
        guard let id = try? resolve(path), withinDepth(of: id) else { return [] }
        let isContainer = state.withLock { id == ContentTree.rootID || $0.tree[id].item?.isContainer == true }
        guard isContainer else { return [] }
        if state.withLock({ $0.tree[id].children == nil }) {
            snapshot(id)
            startLoading(id)
        }
        return state.withLock { state in
            let rows = Self.rows(of: id, in: state, kind: .all)
            return rows.ids.map { state.tree[$0].key } + (rows.hasLoadingRow ? [ContentTree.loadingKey] : [])
        }
    }

    /// A page of the children of the container at `path`.
    ///
    /// - Parameters:
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
    /// share, so a read that waits on a disk holds only this listing.
    public func listChildren(
        of path: [String], kind: ContentListingKind = .all, offset: Int = 0, maximum: Int? = nil,
        prefetch: Bool = true
    ) async throws(ContentError) -> ContentListing {
        try await withTaskExecutorPreference(DataSourceReads.shared) { () async throws(ContentError) -> ContentListing in
            try await readChildren(of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch)
        }
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
        try await withTaskExecutorPreference(DataSourceReads.shared) { () async throws(ContentError) -> ContentListing in
            try await readChildren(
                of: path, kind: kind, offset: offset, maximum: maximum, prefetch: prefetch, sort: sort)
        }
    }

    private func readChildren(
        of path: [String], kind: ContentListingKind, offset: Int, maximum: Int?, prefetch: Bool,
        sort: ContentSort = .natural
    ) async throws(ContentError) -> ContentListing {
        let id = try resolve(path)
        let isContainer = state.withLock { id == ContentTree.rootID || $0.tree[id].item?.isContainer == true }
        guard isContainer else { throw .noSuchContent("\(Self.describe(path)) is not a container") }
        guard withinDepth(of: id), state.withLock({ $0.dataSource != nil }) else {
            return ContentListing(entries: [], totalCount: 0, isComplete: true)
        }
        let loaded = state.withLock { $0.tree[id].isComplete } ? true : await waitForLoad(id)
        if !loaded {
            snapshot(id)
            state.withLock { state in if state.tree.exists(id) { state.tree[id].owesUpdate = true } }
        }
        if let paged = try pagedPage(of: id, kind: kind, offset: offset, maximum: maximum, sort: sort) {
            forgetLeastRecentlyUsed()
            return paged
        }
        let sorted = sort.isNatural ? nil : sortedChildren(of: id, by: sort)
        let (listing, prefetch) = state.withLock { state -> (ContentListing, [Int]) in
            guard state.tree.exists(id) else { return (ContentListing(entries: [], totalCount: 0, isComplete: true), []) }
            let rows = Self.rows(of: id, in: state, kind: kind, sorted: sorted)
            let total = rows.count
            let start = min(max(offset, 0), total)
            let end = maximum.map { min(total, start + max($0, 0)) } ?? total
            let shownEnd = min(end, rows.ids.count)
            var entries = rows.ids[min(start, shownEnd)..<shownEnd].map { Self.entry(for: $0, in: state) }
            if rows.hasLoadingRow, end == total, start < total { entries.append(Self.loadingEntry(parentPath: path)) }
            var prefetched: [Int] = []
            for child in rows.ids[min(start, shownEnd)..<shownEnd] where prefetched.count < (prefetch ? Self.prefetchLimit : 0) {
                if state.tree[child].item?.isContainer == true && !state.tree[child].isComplete { prefetched.append(child) }
            }
            return (ContentListing(entries: entries, totalCount: total, isComplete: state.tree[id].isComplete), prefetched)
        }
        if withinDepth(of: id), state.withLock({ state in state.context.depthLimit.map { state.tree[id].depth + 1 < $0 } ?? true }) {
            // Read when reached instead, from a data source that loads at once.
            if state.withLock({ $0.dataSource?.loadsChildItemsAtOnce != true }) {
                for child in prefetch { startLoading(child) }
            }
        }
        var hinted = listing
        hinted.entries = withCountHints(listing.entries)
        forgetLeastRecentlyUsed()
        return hinted
    }

    /// A page of container `id` read from the data source, when the container is served page
    /// by page; nil for any other.
    private func pagedPage(of id: Int, kind: ContentListingKind, offset: Int, maximum: Int?, sort: ContentSort)
        throws(ContentError) -> ContentListing?
    {
        guard
            let (dataSource, node, path, indexPath, limit) = state.withLock({ state in
                state.tree.exists(id) && state.tree[id].pagedCount != nil
                    ? state.dataSource.map {
                        ($0, state.tree[id], state.tree.path(of: id), state.tree.indexPath(of: id), state.context.itemLimit)
                    } : nil
            }), let count = node.pagedCount
        else { return nil }
        // Every child is alike: a listing of the other kind shows none.
        let shown = limit.map { min(count, $0) } ?? count
        let total =
            switch kind {
            case .all: shown
            case .containers: node.pagesContainers ? shown : 0
            case .items: node.pagesContainers ? 0 : shown
            }
        let start = min(max(offset, 0), total)
        let end = maximum.map { min(total, start + max($0, 0)) } ?? total
        // Sorted: the data source says which children are at these sorted places (limits cap
        // the sorted rows, so the places are within the shown ones).
        var indexes = Array(start..<end)
        if !sort.isNatural, start < end {
            guard let sorted = dataSource.sortedChildIndexes(at: indexPath, by: sort, in: start..<end) else {
                throw .sortNotSupported("this container is too large to sort here (\(count) rows), and its source cannot sort it")
            }
            indexes = sorted.filter { $0 >= 0 && $0 < count }
        }
        var entries: [ContentEntry] = []
        entries.reserveCapacity(end - start)
        for index in indexes {
            guard let item = dataSource.contentItem(at: indexPath.appending(index)) else { continue }
            entries.append(pagedEntry(item, at: index, in: node, path: path, indexPath: indexPath))
        }
        return ContentListing(entries: withCountHints(entries), totalCount: total, isComplete: node.isComplete)
    }

    /// The row `item` at `index` of the paged container `node` (at `path`, `indexPath`).
    private func pagedEntry(_ item: ContentItem, at index: Int, in node: ContentTree.Node, path: [String], indexPath: IndexPath)
        -> ContentEntry
    {
        ContentEntry(
            item: item, path: path + [item.identifier], indexPath: indexPath.appending(index),
            isNowPlaying: state.withLock { $0.nowPlayingSet.contains(item.identifier) }, isLoadingPlaceholder: false,
            displaysPlaybackProgress: node.displaysProgress, children: nil, depth: node.depth + 1)
    }

    /// Row `index` of the paged container `parent`, read from the data source, within the
    /// container's count and the content limits; nil for any other.
    private func pagedChild(of parent: Int, at index: Int) -> ContentEntry? {
        guard
            let (dataSource, node, path, indexPath, limit) = state.withLock({ state in
                state.tree.exists(parent) && state.tree[parent].pagedCount != nil
                    ? state.dataSource.map {
                        ($0, state.tree[parent], state.tree.path(of: parent), state.tree.indexPath(of: parent),
                         state.context.itemLimit)
                    } : nil
            }), index >= 0, index < min(node.pagedCount ?? 0, limit ?? Int.max),
            let item = dataSource.contentItem(at: indexPath.appending(index))
        else { return nil }
        return pagedEntry(item, at: index, in: node, path: path, indexPath: indexPath)
    }

    /// Where the row `key` is in the paged container `parent`, as the data source finds it.
    ///
    /// Found through the data source only: a scan of the rows for a key a client made up would
    /// cost a read of the whole container per call.
    private func pagedIndex(of key: String, in parent: Int) -> Int? {
        guard let (dataSource, indexPath) = state.withLock({ state in
            state.dataSource.map { ($0, state.tree.indexPath(of: parent)) }
        }) else { return nil }
        return dataSource.indexOfChild(withIdentifier: key, inContainerAt: indexPath)
    }

    /// Copies the child container at `index` of the paged container `parent` into the tree
    /// (`key` it must have, when given); returns its id, nil when there is no such container.
    private func openChild(of parent: Int, at index: Int, key: String? = nil) -> Int? {
        guard withinDepth(of: parent), let entry = pagedChild(of: parent, at: index), entry.item.isContainer,
            key == nil || entry.item.identifier == key
        else { return nil }
        return state.withLock { state in
            // Still the container the row was read from.
            guard state.tree.exists(parent), state.tree[parent].pagedCount != nil,
                state.tree.indexPath(of: parent).appending(index) == entry.indexPath
            else { return nil }
            return state.tree.addOpenedChild(of: parent, key: entry.item.identifier, item: entry.item, sourceIndex: index)
        }
    }

    /// The row at `path` when its parent is served page by page: found through the data
    /// source (``PlayableContentDataSource/indexOfChild(withIdentifier:inContainerAt:)``); nil
    /// when the parent is not paged or has no such row.
    private func pagedRow(at path: [String]) -> ContentEntry? {
        guard let key = path.last, let parentID = try? resolve(Array(path.dropLast())), withinDepth(of: parentID),
            state.withLock({ $0.tree[parentID].pagedCount != nil }),
            let index = pagedIndex(of: key, in: parentID), let entry = pagedChild(of: parentID, at: index),
            entry.item.identifier == key
        else { return nil }
        return withCountHints([entry])[0]
    }

    /// The rows below the container at `path` matching `query`, as the data
    /// source finds them, with content limits applied. The data source is called as in
    /// ``listChildren(of:kind:offset:maximum:prefetch:)``, off the threads tasks share.
    public func search(
        _ query: ContentQuery, below path: [String] = [], offset: Int = 0, maximum: Int? = nil
    ) async throws -> [ContentEntry] {
        try await withTaskExecutorPreference(DataSourceReads.shared) {
            try await find(query, below: path, offset: offset, maximum: maximum)
        }
    }

    private func find(_ query: ContentQuery, below path: [String], offset: Int, maximum: Int?) async throws
        -> [ContentEntry]
    {
        let id = try resolve(path)
        guard let dataSource = state.withLock({ $0.dataSource }), dataSource.supportsSearch else {
            throw ContentError.searchNotSupported
        }
        let indexPath = state.withLock { $0.tree.indexPath(of: id) }
        let found = try await dataSource.searchContent(matching: query, in: indexPath)
        // Only rows a remote may reach count: limits apply to what is shown.
        let wanted = min(context.itemLimit ?? Int.max, maximum.map { max(offset, 0) + max($0, 0) } ?? Int.max)
        var entries: [ContentEntry] = []
        for indexPath in found where entries.count < wanted {
            if let entry = entry(atIndexPath: indexPath) { entries.append(entry) }
        }
        forgetLeastRecentlyUsed()
        return Array(entries.dropFirst(max(offset, 0)))
    }

    /// Whether the data source can search.
    public var supportsSearch: Bool { state.withLock { $0.dataSource?.supportsSearch ?? false } }

    /// The row at `indexPath` as the data source numbers it now, reading
    /// containers on the way if needed; `nil` if there is none or it lies
    /// deeper than the content limits allow.
    public func entry(atIndexPath indexPath: IndexPath) -> ContentEntry? {
        var id = ContentTree.rootID
        for (position, index) in indexPath.enumerated() {
            guard withinDepth(of: id) else { return nil }
            if state.withLock({ $0.tree[id].children == nil }) {
                snapshot(id)
                startLoading(id)
            }
            if state.withLock({ $0.tree[id].pagedCount != nil }) {
                if position < indexPath.count - 1 {
                    // A container below a paged one, on the way: copied as a remote opens it.
                    guard let child = openChild(of: id, at: index) else { return nil }
                    id = child
                    continue
                }
                // A row of a container served page by page is read from the data source.
                guard let entry = pagedChild(of: id, at: index) else { return nil }
                state.withLock { $0.tree.touch(id) }
                return withCountHints([entry])[0]
            }
            guard let child = state.withLock({ $0.tree.child(of: id, atSourceIndex: index) }) else { return nil }
            id = child
        }
        state.withLock { $0.tree.touch(id) }
        return withCountHints([state.withLock { state in Self.entry(for: id, in: state) }])[0]
    }

    /// The item with `identifier`, from the data source, or from what has
    /// been read when the data source does not look identifiers up.
    public func contentItem(forIdentifier identifier: String) async throws -> ContentItem? {
        if let dataSource = state.withLock({ $0.dataSource }),
            let item = try await dataSource.contentItem(forIdentifier: identifier)
        {
            return item
        }
        return state.withLock { state in
            state.tree.nodes.lazy.compactMap { $0?.item }.first { $0.identifier == identifier }
        }
    }

    /// Asks the delegate to play the row at `path`; returns once playback has started.
    ///
    /// - Throws: ``ContentError/noSuchContent(_:)``, ``ContentError/notPlayable(_:)``,
    ///   ``ContentError/noDelegate``, or what the delegate threw.
    public func initiatePlayback(at path: [String]) async throws {
        let item: ContentItem?
        let indexPath: IndexPath
        let delegate: (any PlayableContentDelegate)?
        do {
            let id = try resolve(path)
            (item, indexPath, delegate) = state.withLock { state in
                (state.tree[id].item, state.tree.indexPath(of: id), state.delegate)
            }
        } catch {
            guard let row = pagedRow(at: path), let rowIndexPath = row.indexPath else { throw error }
            (item, indexPath, delegate) = (row.item, rowIndexPath, self.delegate)
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
        get { state.withLock { $0.customActions } }
        set { state.withLock { $0.customActions = newValue } }
    }

    /// The actions a remote may offer on `item` now: those of its ``ContentItem/actions``
    /// that are declared in ``customActions``, at most the context's ``PlayableContentManagerContext/actionLimit``.
    public func offeredActions(of item: ContentItem) -> [String] { actionOffer.actions(of: item) }

    /// What decides the actions offered on a row now, read once for the rows of a listing.
    public var actionOffer: ContentActionOffer {
        state.withLock { state in
            ContentActionOffer(declared: Set(state.customActions.map(\.identifier)), limit: state.context.actionLimit)
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

    // MARK: Sorting

    /// The most rows the manager sorts by reading their items, for a data source that cannot
    /// sort a search's results (``PlayableContentDataSource/sortedIndexPaths(_:by:)``): past it
    /// a sorted search fails with ``ContentError/sortNotSupported(_:)`` rather than reading
    /// the items of every match.
    public static let maximumRowsSortedInMemory = 5_000

    /// The children of the copied container `id` in the order `sort` gives: informative rows
    /// first, in their order, then the others as the data source sorts them, or as their items
    /// in the copy sort.
    private func sortedChildren(of id: Int, by sort: ContentSort) -> [Int] {
        guard let (dataSource, indexPath, children) = state.withLock({ state -> ((any PlayableContentDataSource)?, IndexPath, [Int])? in
            guard state.tree.exists(id) else { return nil }
            return (state.dataSource, state.tree.indexPath(of: id), state.tree[id].children ?? [])
        }) else { return [] }
        let (informative, others) = state.withLock { state in
            (children.filter { state.tree[$0].item?.isInformative == true },
             children.filter { state.tree[$0].item?.isInformative != true })
        }
        let count = dataSource.map { max(0, $0.numberOfChildItems(at: indexPath)) } ?? 0
        if count > 0, let sorted = dataSource?.sortedChildIndexes(at: indexPath, by: sort, in: 0..<count) {
            let wanted = Set(others)
            var seen: Set<Int> = []
            var order = state.withLock { state in
                sorted.compactMap { state.tree.child(of: id, atSourceIndex: $0) }.filter { wanted.contains($0) && seen.insert($0).inserted }
            }
            // Rows of the copy the data source did not place (it changed meanwhile) go last.
            order += others.filter { !seen.contains($0) }
            return informative + order
        }
        let items = state.withLock { state in others.map { state.tree[$0].item ?? ContentItem(identifier: "") } }
        return informative + sort.order(of: items).map { others[$0] }
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
            let id = try resolve(path)
            guard let dataSource = state.withLock({ $0.dataSource }), dataSource.supportsSearch else {
                throw ContentError.searchNotSupported
            }
            let indexPath = state.withLock { $0.tree.indexPath(of: id) }
            var found = try await dataSource.searchContent(matching: query, in: indexPath)
            let context = self.context
            if let depth = context.depthLimit { found = found.filter { $0.count <= depth } }
            if !sort.isNatural { found = try sorted(found, by: sort, in: dataSource) }
            if let limit = context.itemLimit, found.count > limit { found = Array(found.prefix(limit)) }
            let start = min(max(offset, 0), found.count)
            let end = maximum.map { min(found.count, start + max($0, 0)) } ?? found.count
            let entries = found[start..<end].compactMap { entry(atIndexPath: $0) }
            forgetLeastRecentlyUsed()
            return ContentSearchResult(entries: entries, totalCount: found.count)
        }
    }

    private func sorted(_ found: [IndexPath], by sort: ContentSort, in dataSource: any PlayableContentDataSource) throws
        -> [IndexPath]
    {
        if let sorted = dataSource.sortedIndexPaths(found, by: sort) { return sorted }
        guard found.count <= Self.maximumRowsSortedInMemory else {
            throw ContentError.sortNotSupported(
                "the search found \(found.count) rows, more than \(Self.maximumRowsSortedInMemory) to sort here; narrow it")
        }
        let items = found.map { entry(atIndexPath: $0)?.item ?? ContentItem(identifier: "") }
        return sort.order(of: items).map { found[$0] }
    }

    // MARK: Building rows

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
    private static func rows(of id: Int, in state: State, kind: ContentListingKind, sorted: [Int]? = nil)
        -> (ids: ArraySlice<Int>, hasLoadingRow: Bool, count: Int)
    {
        var order =
            sorted.map { $0.filter { state.tree.exists($0) && state.tree[$0].parent == id } }?[...]
            ?? state.tree.listingOrder(of: id)[...]
        // Only once a listing has given up waiting: until then the data source answers in time.
        var loading = state.tree[id].owesUpdate && !state.tree[id].isComplete
        if id == ContentTree.rootID, let tabs = state.context.tabLimit {
            // Informative rows stay; only the containers after the limit go.
            var containers = 0
            order = order.filter { child in
                guard state.tree[child].item?.isContainer == true else { return true }
                containers += 1
                return containers <= tabs
            }[...]
        }
        if let limit = state.context.itemLimit, order.count >= limit {
            order = order.prefix(limit)
            loading = false
        }
        switch kind {
        case .all: break
        case .containers: order = order.filter { state.tree[$0].item?.opensAsContainer == true }[...]
        case .items:
            order = order.filter { state.tree[$0].item?.opensAsContainer != true }[...]
            loading = false
        }
        return (order, loading, order.count + (loading ? 1 : 0))
    }

    private static func entry(for id: Int, in state: State) -> ContentEntry {
        let node = state.tree[id]
        let item = node.item ?? ContentItem(identifier: "", isContainer: true)
        var children: ContentEntry.ChildCounts?
        if item.isContainer {
            let blocked = state.context.depthLimit.map { node.depth >= $0 } ?? false
            if blocked {
                children = ContentEntry.ChildCounts(childCount: 0, itemCount: 0, containerCount: 0, isComplete: true)
            } else if let count = node.pagedCount {
                let shown = state.context.itemLimit.map { min(count, $0) } ?? count
                children = ContentEntry.ChildCounts(
                    childCount: shown, itemCount: node.pagesContainers ? 0 : shown,
                    containerCount: node.pagesContainers ? shown : 0, isComplete: node.isComplete)
            } else if node.children != nil {
                let all = rows(of: id, in: state, kind: .all)
                let containers =
                    all.ids.count == node.children!.count
                    ? node.containerCount + (all.hasLoadingRow ? 1 : 0) : rows(of: id, in: state, kind: .containers).count
                children = ContentEntry.ChildCounts(
                    childCount: all.count, itemCount: all.count - containers, containerCount: containers,
                    isComplete: node.isComplete)
            }
            // Not read yet: `withCountHints` asks the data source, outside the lock.
        }
        let parentShowsProgress = node.parent.map { state.tree[$0].displaysProgress } ?? false
        return ContentEntry(
            item: item, path: state.tree.path(of: id),
            indexPath: node.parent == nil ? IndexPath() : state.tree.indexPath(of: id),
            isNowPlaying: node.item.map { state.nowPlayingSet.contains($0.identifier) } ?? false,
            isLoadingPlaceholder: false, displaysPlaybackProgress: parentShowsProgress, children: children,
            depth: node.depth)
    }

    /// Gives containers not read yet the data source's count of their children
    /// as a hint, limits applied. Called without the lock held, so a data
    /// source may call back into the manager.
    private func withCountHints(_ entries: [ContentEntry]) -> [ContentEntry] {
        guard entries.contains(where: { $0.item.isContainer && $0.children == nil }),
            let (dataSource, limit) = state.withLock({ state in state.dataSource.map { ($0, state.context.itemLimit) } })
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

    private static func loadingEntry(parentPath: [String]) -> ContentEntry {
        ContentEntry(
            item: ContentItem(identifier: ContentTree.loadingKey, title: "Loading…"),
            path: parentPath + [ContentTree.loadingKey], indexPath: nil, isNowPlaying: false,
            isLoadingPlaceholder: true, displaysPlaybackProgress: false, children: nil, depth: parentPath.count + 1)
    }
}

/// Which children a listing shows.
public enum ContentListingKind: Sendable {
    /// Every child.
    case all
    /// Playable children that are not containers (tracks, streams).
    case items
    /// Children that open as containers to a media server: containers, and
    /// the informative and loading rows, which open onto nothing.
    case containers
}

/// A row as remotes see it: the item, where it is, and what the manager knows about it.
public struct ContentEntry: Sendable, Equatable {
    /// How many children a container shows, with content limits applied.
    public struct ChildCounts: Sendable, Equatable {
        public var childCount: Int
        /// Playable rows that are not containers; `nil` until the container has been read.
        public var itemCount: Int?
        /// Containers, informative and loading rows; `nil` until the container has been read.
        public var containerCount: Int?
        /// Whether the data source had finished loading the container when it was read.
        public var isComplete: Bool
    }

    public var item: ContentItem
    /// The keys from the root to the row; `[]` is the root.
    public var path: [String]
    /// Where the data source has the row; `nil` for the loading row.
    public var indexPath: IndexPath?
    /// The row's identifier is among ``PlayableContentManager/nowPlayingIdentifiers``.
    public var isNowPlaying: Bool
    /// The row stands for children still loading.
    public var isLoadingPlaceholder: Bool
    /// The row's container shows playback progress.
    public var displaysPlaybackProgress: Bool
    /// For a container: its children as listings show them.
    public var children: ChildCounts?
    /// 0 for the root, 1 for its children…
    public var depth: Int
}

/// A page of a container's children.
public struct ContentListing: Sendable, Equatable {
    public var entries: [ContentEntry]
    /// The number of rows in the whole listing (not only this page), limits applied.
    public var totalCount: Int
    /// False while the data source is still loading the container.
    public var isComplete: Bool
}

/// A page of a search's results and how many there are.
public struct ContentSearchResult: Sendable, Equatable {
    /// The rows of the page asked for.
    public var entries: [ContentEntry]
    /// The number of matches in all (not only this page) a remote may reach: within the depth
    /// limit, and at most the item limit while content limits are enforced.
    public var totalCount: Int
}

/// What remotes showing the tree must hear.
public enum ContentChange: Sendable, Equatable {
    /// The rows of these containers changed (or a container's own row):
    /// list them again. Each appears once per batch.
    case containersUpdated([[String]])
    /// These rows were marked or unmarked as playing.
    case nowPlayingChanged([[String]])
    /// The remote's context changed.
    case contextChanged(PlayableContentManagerContext)
}

/// The declared custom actions and the limit on how many a row offers, as they were when read
/// (see ``PlayableContentManager/actionOffer``).
public struct ContentActionOffer: Sendable {
    let declared: Set<String>
    let limit: Int?

    /// The actions offered on `item`: those of its ``ContentItem/actions`` that are declared,
    /// at most the limit.
    public func actions(of item: ContentItem) -> [String] {
        guard !item.actions.isEmpty else { return [] }
        let offered = item.actions.filter(declared.contains)
        return limit.map { Array(offered.prefix($0)) } ?? offered
    }
}
