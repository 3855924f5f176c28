import AsyncSupport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Batches of updates and reloads: the copy read again, and remotes told once per changed container.
extension PlayableContentManager {
    /// Starts a batch of changes to the data source. Batches nest; remotes
    /// hear of them when the outermost one ends.
    ///
    /// From here until the outermost batch has ended and its changes are read, the data source's
    /// index paths may no longer match the manager's copy, so the manager reads nothing from it
    /// for its copy: listings of what it holds are answered from it, a listing of a container
    /// not read yet waits for the batch (at most ``loadingDeadline``), and a synchronous call that
    /// needs a container not read yet throws ``ContentError/noSuchContent(_:)`` saying to ask again.
    public func beginUpdates() {
        state.withLock { state in
            if !state.batch.isOpen { state.updateEpoch &+= 1 }
            state.batch.begin()
        }
    }

    /// Ends a batch: re-reads every container read so far (the data source
    /// must answer from memory by now) and tells observers once, with each
    /// container whose rows changed.
    public func endUpdates() {
        let ending = state.withLock { state -> Bool in
            guard state.batch.end() else { return false }
            state.batchesBeingRead += 1
            return true
        }
        guard ending else { return }
        let changed = rereadAll()
        typealias Ended = (
            pending: [[String]], reload: Bool, waiters: [CheckedContinuation<Void, Never>], owed: Set<ContentTree.NodeID>
        )
        let (pending, reload, waiters, owed) = state.withLock { state -> Ended in
            state.batchesBeingRead -= 1
            state.updateEpoch &+= 1
            let reload = state.reloadRequested
            state.reloadRequested = false
            // Another batch began meanwhile: its end wakes the waiting calls.
            guard !state.isUpdating else { return (state.batch.takeHeld(), reload, [], []) }
            let waiters = Array(state.updateWaiters.values)
            let owed = state.owedAfterUpdates
            state.updateWaiters = [:]
            state.owedAfterUpdates = []
            return (state.batch.takeHeld(), reload, waiters, owed)
        }
        let all = Self.unique(pending + changed)
        if !all.isEmpty { notify(.containersUpdated(all)) }
        for waiter in waiters { waiter.resume() }
        for id in owed { startLoading(id) }
        if reload { reloadData() }
    }

    /// The identifiers of the containers (`""` for the root) holding, among the rows the
    /// manager has read, a row whose identifier is one of `identifiers`: what a data source
    /// names in ``PlayableContentDataSource/changedContainerIdentifiers()`` when those rows
    /// changed, so that a batch reads again only their containers. A scan of the copy, no read
    /// of the data source.
    public func containerIdentifiers(holding identifiers: Set<String>) -> Set<String> {
        state.withLock { $0.cache.containerIdentifiers(holding: identifiers) }
    }

    /// Reloads everything read so far, asking the data source to load each
    /// container again, and tells observers once per container that changed.
    /// Inside a batch it runs when the batch ends. The returned task ends
    /// when the reload is complete.
    @discardableResult
    public func reloadData() -> Task<Void, Never> {
        let deferred = state.withLock { state -> Bool in
            if state.batch.isOpen { state.reloadRequested = true }
            return state.batch.isOpen
        }
        guard !deferred else { return Task {} }
        return Task(executorPreference: DataSourceReads.shared) { [self] in
            var changed: [[String]] = []
            var queue = [ContentTree.rootID]
            var next = 0
            while next < queue.count {
                let id = queue[next]
                next += 1
                guard let (dataSource, indexPath) = readPlace(of: id) else { continue }
                let epoch = state.withLock { $0.updateEpoch }
                try? await dataSource.beginLoadingChildItems(at: indexPath)
                let read = read(dataSource, at: indexPath)
                // A batch of updates that began meanwhile reads the copy again itself.
                let merged = state.withLock { state in
                    Self.isCurrent(epoch, in: state)
                        ? state.cache.merge(read, into: id, complete: true, expectedIndexPath: indexPath) : (changed: [], readChildren: [])
                }
                changed += merged.changed
                queue += merged.readChildren
            }
            if let dataSource = state.withLock({ $0.dataSource }) { changed += changedForgottenContainers(dataSource) }
            forgetLeastRecentlyUsed()
            announce(Self.unique(changed))
        }
    }

    /// The data source and where it has container `id`, when `id` is a container still read in
    /// the copy.
    private func readPlace(of id: ContentTree.NodeID) -> ((any PlayableContentDataSource), IndexPath)? {
        state.withLock { state in
            guard let source = state.dataSource, let node = state.cache.tree.node(id), node.children != nil else { return nil }
            return (source, state.cache.tree.indexPath(of: id))
        }
    }

    private func rereadAll() -> [[String]] {
        defer { forgetLeastRecentlyUsed() }
        guard let dataSource = state.withLock({ $0.dataSource }) else { return [] }
        if let named = dataSource.changedContainerIdentifiers() { return reread(named, from: dataSource) }
        var changed: [[String]] = []
        var queue = [ContentTree.rootID]
        var next = 0
        while next < queue.count {
            let id = queue[next]
            next += 1
            guard let (_, indexPath) = readPlace(of: id) else { continue }
            // Read without the lock: a data source may call back into the manager, or answer
            // on another thread (an app's, on its main queue) that is waiting for the manager.
            let read = read(dataSource, at: indexPath)
            let merged = state.withLock { state in
                state.cache.merge(read, into: id, complete: false, expectedIndexPath: indexPath)
            }
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
            state.cache.tree.readContainers().filter { named.contains(state.cache.tree[$0].item?.identifier ?? "") }
        }
        var changed: [[String]] = []
        for id in containers {
            guard let (_, indexPath) = readPlace(of: id) else { continue }
            let read = read(dataSource, at: indexPath)
            changed +=
                state.withLock { state in
                    state.cache.merge(read, into: id, complete: false, expectedIndexPath: indexPath)
                }.changed
        }
        return changed + changedForgottenContainers(dataSource, among: named)
    }

    /// The forgotten containers whose rows differ from when they were forgotten (or that are
    /// gone), read from the data source as they are now; their fingerprints are brought up to
    /// date. A container read into the copy again since is left to the copy.
    ///
    /// With `named`, only the forgotten containers whose identifier it holds are checked.
    private func changedForgottenContainers(_ dataSource: any PlayableContentDataSource, among named: Set<String>? = nil)
        -> [[String]]
    {
        let forgotten = state.withLock { $0.cache.forgottenContainers(among: named) }
        guard !forgotten.isEmpty else { return [] }
        // Reads of containers on the way, shared within this pass.
        var reads: [IndexPath: ContentTree.ContainerRead] = [:]
        var changed: [[String]] = []
        for (path, fingerprint) in forgotten {
            let cachedAgain = state.withLock { state in
                guard state.cache.isCopied(path) else { return false }
                state.cache.forgotten[path] = nil
                return true
            }
            if cachedAgain { continue }
            guard let indexPath = indexPath(ofForgotten: path, in: dataSource, reads: &reads) else {
                changed.append(path)
                state.withLock { _ = $0.cache.forgotten.removeValue(forKey: path) }
                continue
            }
            let read = reads[indexPath] ?? read(dataSource, at: indexPath)
            let now =
                read.pagedCount != nil
                ? ContentCache.pagedFingerprint
                : ContentTree.fingerprint(
                    keys: ContentTree.keys(of: read.items.lazy.map(\.item)), items: read.items.lazy.map(\.item),
                    displaysProgress: read.displaysProgress)
            // A paged container's rows were never held to compare: it changed when named.
            if now != fingerprint || now == ContentCache.pagedFingerprint {
                changed.append(path)
                state.withLock { $0.cache.forgotten[path] = now }
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
        var cached: ContentTree.NodeID? = ContentTree.rootID
        var indexPath = IndexPath()
        for key in path {
            if let current = cached {
                let step = state.withLock { $0.cache.step(from: current, to: key) }
                if step.isRead, let child = step.child {
                    cached = child.id
                    indexPath = child.indexPath
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

    static func unique(_ paths: [[String]]) -> [[String]] {
        var seen: Set<[String]> = []
        return paths.filter { seen.insert($0).inserted }
    }
}
