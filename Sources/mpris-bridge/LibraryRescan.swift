import CMalloc
import Logging
import MPD
import MusicLibrary
import Playback
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One rescan of the library, as ``LibraryRefresh`` runs them: the index brought up to date
/// in a child process (``ScanProcess``), then the tree, the playlists and the queue's entries.
struct LibraryRescan: Sendable {
    let settings: ServeSettings
    let logger: Logger
    let player: QueuePlayer
    let library: Milestone<ServedLibrary>
    let tree: Milestone<PublishedTree>
    /// Told when the library's content changed, for idle MPD clients.
    let mpdChanges: MPDChanges
    /// Trimmed once the rescan is over, whatever it found.
    let residentMemory: ResidentMemory

    func run() async throws {
        defer { residentMemory.trimWhenQuiet() }
        // A first start's commands wait for the queue this fills (StateStoreService); whatever
        // the scan's outcome, they go on after it.
        defer { player.releaseRemoteCommands() }
        let served = try await library.value()
        let tree = try await tree.value()
        let library = served.library
        guard !library.isReadOnly else { throw ReadOnlyIndex(path: settings.indexPath) }
        try await ScanProcess(arguments: settings.scanArguments).run()
        // Nothing changed since the tree was built (by this scan or another, such as
        // `mpris-bridge scan` in a terminal): the tree, the playlists and the queue stay as
        // they are, rather than being built again from 50,000 equal tracks.
        let revision = try? library.contentRevision
        // (A tree still saying "Indexing your music…" hears the outcome even so: an empty
        // folder changes nothing in the index.)
        let settled = tree.content.status != .indexing
        if let revision, revision == tree.shownRevision.withLock({ $0 }), settled {
            let count = (try? library.trackCount) ?? 0
            logger.info("the media tree shows the scan's \(count) tracks (the scan found nothing new)")
            return
        }
        tree.shownRevision.withLock { $0 = revision }
        if await player.itemCount == 0 {
            await player.queueWholeLibrary(served, logger: logger)
        } else {
            // The entries are the tracks' paths: what they show is read again.
            served.items.forgetDescriptions()
            await player.refreshItemDescriptions()
        }
        try tree.update(from: library, folder: settings.library)
        mpdChanges.libraryChanged()
        logger.info("the media tree shows the scan's \((try? library.trackCount) ?? 0) tracks")
        // The tree and the queue were built anew beside the old ones: give back what the old
        // ones held rather than keep it while idle.
        _ = malloc_trim(0)
    }
}

/// A rescan asked for while the index cannot be written (a full or read-only cache disk).
struct ReadOnlyIndex: Error, CustomStringConvertible {
    let path: String
    var description: String { "the index \(path) cannot be written: the library is served as it was last indexed" }
}

extension QueuePlayer {
    /// A first start (or an emptied queue): queues the whole library, stopped at its first track.
    /// The index is read off the player's executor (the bus connection's thread in the daemon).
    nonisolated func queueWholeLibrary(_ served: ServedLibrary, logger: Logger) async {
        let ids = (try? served.library.trackIDsInOrder()) ?? []
        guard !ids.isEmpty else { return }
        await replaceQueue(with: ids.map(served.items.item(forTrack:)), play: false)
        logger.info("queued the library's \(ids.count) tracks")
    }
}
