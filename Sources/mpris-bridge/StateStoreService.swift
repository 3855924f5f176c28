import AsyncSupport
import CMalloc
import Logging
import MusicLibrary
import Playback
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// The player's saved state (``StateStore``): restored once the tree is published, every change
/// saved as it happens, and the last state written when the daemon stops.
///
/// Listed last in the service group, it is the first to stop: where a long track was left, then
/// the queue and its position, are written before anything that may hang.
struct StateStoreService: Service, CustomStringConvertible {
    let store: StateStore
    let player: QueuePlayer
    let resumePoints: LibraryResumePoints
    let logger: Logger
    /// Waited for: the library is open.
    let library: Milestone<ServedLibrary>
    /// Waited for: the tree first, as a head unit browses it as soon as it connects.
    let tree: Milestone<PublishedTree>
    /// Reached once the queue is restored (or the library queued).
    let ready: Milestone<Void>
    /// Whether a scan follows the start: on a first start it is what fills the queue, so remotes'
    /// commands stay held until it has (``LibraryRescan`` lets them go).
    let scansAtStart: Bool

    var description: String { "state store" }

    func run() async throws {
        // Each change is saved while this observation is kept: until the state is written last.
        let saving = try? await cancelWhenGracefulShutdown { try await restore() }
        let restored = saving != nil
        // Commands held until the queue was back run now, even if it could not be restored.
        if !restored { player.releaseRemoteCommands() }
        defer { withExtendedLifetime(saving) {} }
        try? await gracefulShutdown()
        logger.info("shutting down")
        try await shutdownStep("saving the state") { [player, resumePoints, store] in
            // Where a long track was left, then the queue (unless it was never restored: the saved
            // one stays as it is).
            await player.saveResumePoint()
            await resumePoints.close()
            await store.close(with: restored ? await player.snapshot : nil)
        }
    }

    /// Restores the saved queue (or queues the library) and starts saving each change; the
    /// returned observation keeps the saving going.
    private func restore() async throws -> Observation {
        let served = try await library.value()
        _ = try await tree.value()
        // A remote that queued something meanwhile keeps what it chose.
        if let snapshot = store.load(), await player.itemCount == 0 {
            await player.restore(snapshot, items: served.items.items(for: snapshot.addedOrder))
            let count = await player.itemCount
            logger.info("restored a queue of \(count) entries")
        }
        let saving = await player.observeChanges { [store] in store.save($0) }
        if await player.itemCount == 0 { await player.queueWholeLibrary(served, logger: logger) }
        let queued = await player.itemCount
        // An empty queue on a first start is filled by the scan that follows (a media key that
        // started the daemon then plays the new library); otherwise commands go on now.
        if queued > 0 || !scansAtStart || served.library.isReadOnly { player.releaseRemoteCommands() }
        // Building the queue freed more than it kept; give it back rather than hold it while idle.
        _ = malloc_trim(0)
        logger.info("ready: \(queued) entries queued")
        ready.reach()
        return saving
    }
}
