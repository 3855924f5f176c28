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

    init(service: MediaTreeService, manager: PlayableContentManager, content: LibraryContent, shownRevision: Int?) {
        self.service = service
        self.manager = manager
        self.content = content
        self.shownRevision = Mutex(shownRevision)
    }

    /// Shows a rescan's result: remotes hear once per container that changed.
    func update(from library: MusicLibrary, folder: String) throws {
        manager.beginUpdates()
        defer { manager.endUpdates() }
        try content.update(from: library)
        content.setStatus(content.isEmpty ? .unavailable("No music found in \(folder)") : .ready)
    }
}
