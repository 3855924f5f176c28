import AsyncSupport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reading containers from the data source: snapshots, loads, and the listings waiting for them.
extension PlayableContentManager {
    /// What the data source has in the container at `indexPath` now: its rows, or for a large
    /// uniform container only their number (served page by page).
    func read(_ dataSource: any PlayableContentDataSource, at indexPath: IndexPath) -> ContentTree.ContainerRead {
        let count = max(0, dataSource.numberOfChildItems(at: indexPath))
        if let kind = dataSource.uniformChildKind(at: indexPath),
            count > pagedContainerThreshold || (kind == .items && dataSource.readsChildItemsFromMemory(at: indexPath))
        {
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

    /// Where a read of the data source for the copy starts: the data source, where it has
    /// container `id`, and the update epoch the read must end in to be copied. Nil while a batch
    /// of updates is open (the copy's index paths may be out of date), or when `id` is gone.
    private func readStart(of id: ContentTree.NodeID) -> (source: any PlayableContentDataSource, indexPath: IndexPath, epoch: UInt64)? {
        state.withLock { state in
            guard !state.isUpdating, let source = state.dataSource, state.cache.tree.exists(id) else { return nil }
            return (source, state.cache.tree.indexPath(of: id), state.updateEpoch)
        }
    }

    /// Whether a read started in `epoch` may be copied: no batch of updates began since, and
    /// none is being read.
    static func isCurrent(_ epoch: UInt64, in state: State) -> Bool { !state.isUpdating && state.updateEpoch == epoch }

    /// Reads the container `id` from the data source as it is now, without
    /// waiting for loading; the node stays incomplete.
    func snapshot(_ id: ContentTree.NodeID) {
        guard let start = readStart(of: id) else { return }
        // A data source with nothing to wait for is read once, complete.
        if start.source.loadsChildItemsAtOnce { return startLoading(id) }
        let read = read(start.source, at: start.indexPath)
        state.withLock { state in
            if Self.isCurrent(start.epoch, in: state) { state.cache.mergeSnapshot(read, into: id) }
        }
    }

    /// Starts loading container `id` unless it is loaded or loading.
    func startLoading(_ id: ContentTree.NodeID) {
        let start = state.withLock { state -> (source: any PlayableContentDataSource, indexPath: IndexPath, epoch: UInt64)? in
            guard !state.isUpdating, let source = state.dataSource, state.cache.tree.exists(id),
                !state.cache.tree[id].isComplete, state.cache.loading.insert(id).inserted
            else { return nil }
            return (source, state.cache.tree.indexPath(of: id), state.updateEpoch)
        }
        guard let start else { return }
        // Read at once: the caller is about to use the container (so nothing is forgotten here;
        // the call forgets what it must when it is done).
        if start.source.loadsChildItemsAtOnce {
            return finishLoading(id, read: read(start.source, at: start.indexPath), at: start.indexPath, epoch: start.epoch)
        }
        Task(executorPreference: DataSourceReads.shared) { [self] in
            try? await start.source.beginLoadingChildItems(at: start.indexPath)
            finishLoading(id, read: read(start.source, at: start.indexPath), at: start.indexPath, epoch: start.epoch)
            forgetLeastRecentlyUsed()
        }
    }

    /// Merges what loading container `id` read, complete, unless a batch of updates began
    /// since the read started (the batch's own reading brings the copy up to date), and wakes
    /// the listings waiting for it: true when the copy took it.
    private func finishLoading(_ id: ContentTree.NodeID, read: ContentTree.ContainerRead, at indexPath: IndexPath, epoch: UInt64) {
        let (waiters, changed, loaded) = state.withLock { state -> ([CheckedContinuation<Bool, Never>], [[String]], Bool) in
            state.cache.loading.remove(id)
            let waiters = state.waiters.removeValue(forKey: id).map { Array($0.values) } ?? []
            guard Self.isCurrent(epoch, in: state) else { return (waiters, [], false) }
            let merged = state.cache.merge(read, into: id, complete: true, expectedIndexPath: indexPath)
            return (waiters, merged.changed, state.cache.tree.exists(id) && state.cache.tree[id].isComplete)
        }
        for waiter in waiters { waiter.resume(returning: loaded) }
        announce(changed)
    }

    /// Waits until container `id` is loaded or the deadline passes; true when loaded.
    func waitForLoad(_ id: ContentTree.NodeID) async -> Bool {
        startLoading(id)
        return await withCheckedContinuation { continuation in
            let registration = state.withLock { state -> (Int, Duration)? in
                guard state.cache.loading.contains(id) else { return nil }
                let token = state.nextWaiter
                state.nextWaiter += 1
                state.waiters[id, default: [:]][token] = continuation
                return (token, state.loadingDeadline)
            }
            guard let (token, deadline) = registration else {
                return continuation.resume(returning: state.withLock { $0.cache.tree.node(id)?.isComplete ?? false })
            }
            Task {
                try? await Task.sleep(for: deadline)
                let expired = state.withLock { state in
                    let waiter = state.waiters[id]?.removeValue(forKey: token)
                    if state.waiters[id]?.isEmpty == true { state.waiters[id] = nil }
                    return waiter
                }
                expired?.resume(returning: false)
            }
        }
    }

    /// Waits until no batch of updates is open or being read, or the loading deadline passes.
    func waitUntilUpdated() async {
        await withCheckedContinuation { continuation in
            let registration = state.withLock { state -> (Int, Duration)? in
                guard state.isUpdating else { return nil }
                let token = state.nextWaiter
                state.nextWaiter += 1
                state.updateWaiters[token] = continuation
                return (token, state.loadingDeadline)
            }
            guard let (token, deadline) = registration else { return continuation.resume() }
            Task {
                try? await Task.sleep(for: deadline)
                state.withLock { $0.updateWaiters.removeValue(forKey: token) }?.resume()
            }
        }
    }
}
