import AsyncSupport
import MPRIS
import MediaRemote
import MusicLibrary
import Synchronization

/// The media tree as published, for updates after a rescan and for shutdown.
final class PublishedTree: Sendable {
    let service: MediaTreeService
    let manager: PlayableContentManager
    let content: LibraryContent
    /// The index's content revision the tree and the queue were built from (read before the
    /// tracks, so a scan in between is not missed); nil when it could not be read.
    let shownRevision: Mutex<Int?>
    /// Marks the playing track's rows and fills the Recent tab, for as long as the tree is served.
    let nowPlayingObservation: Observation

    init(
        service: MediaTreeService, manager: PlayableContentManager, content: LibraryContent, shownRevision: Int?,
        nowPlayingObservation: Observation
    ) {
        self.service = service
        self.manager = manager
        self.content = content
        self.shownRevision = Mutex(shownRevision)
        self.nowPlayingObservation = nowPlayingObservation
    }

    /// Shows a rescan's result: remotes hear once per container that changed.
    func update(from library: MusicLibrary, folder: String) throws {
        // Read before the batch: while it is open, remotes' calls for rows not read yet wait.
        let update = try content.prepareUpdate(from: library)
        manager.beginUpdates()
        defer { manager.endUpdates() }
        content.apply(update)
        content.setStatus(content.isEmpty ? .unavailable("No music found in \(folder)") : .ready)
    }
}
