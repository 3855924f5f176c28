import Logging
import MediaRemote
import MusicLibrary
import Playback
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Plays what a remote picks in the media tree (or activates as an MPRIS
/// playlist): the container's tracks become the play queue, from the one picked.
///
/// It keeps ``PlayableContentManager/nowPlayingIdentifiers`` true as the
/// queue moves on: the container played from, while its entries play, and
/// the track playing, which marks its rows in every tab.
final class ContentPlayer: PlayableContentDelegate {
    private let content: LibraryContent
    private let player: QueuePlayer
    private let items: @Sendable () throws -> QueueItems
    private let logger: Logger
    /// What was last started from the tree: the container and its entries by queue identifier.
    private let played = Mutex<(container: String, entries: [String: String])?>(nil)

    struct PlaybackDidNotStart: Error, CustomStringConvertible {
        let what: String
        let status: String
        var description: String { "\(what) did not start playing (\(status))" }
    }

    private let refresh: @Sendable () async throws -> Void

    init(
        content: LibraryContent, player: QueuePlayer, items: @escaping @Sendable () throws -> QueueItems, logger: Logger,
        refresh: @escaping @Sendable () async throws -> Void
    ) {
        self.content = content
        self.player = player
        self.items = items
        self.logger = logger
        self.refresh = refresh
    }

    /// A remote's `Rescan`: the library's rescan, after which the tree shows what it found.
    func playableContentManagerRefreshContent(_ manager: PlayableContentManager) async throws {
        logger.info("rescanning the library, as a remote asked")
        try await refresh()
    }

    func playableContentManager(_ manager: PlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath)
        async throws
    {
        guard let playback = content.playback(forItemAt: indexPath) else {
            throw ContentError.notPlayable(content.contentItem(at: indexPath)?.title ?? "\(indexPath)")
        }
        let items = try self.items()
        var queued: [QueueItem] = []
        var identifiers: [String: String] = [:]
        for entry in playback.entries {
            let item: QueueItem
            switch entry.media {
            case .track(let id): item = items.item(forTrack: id)
            case .stream(let url, let title): item = items.streamItem(url, title: title)
            }
            queued.append(item)
            identifiers[item.identifier] = entry.identifier
        }
        played.withLock { $0 = (playback.containerIdentifier, identifiers) }
        let status = await player.replaceQueue(with: queued, startingAt: playback.startIndex, play: true)
        let title = queued[playback.startIndex].info.title ?? queued[playback.startIndex].url.lastPathComponent
        guard status == .success, await player.playbackState == .playing else {
            throw PlaybackDidNotStart(what: title, status: "\(status)")
        }
        logger.info("playing \(title) from \(playback.containerIdentifier), as a remote asked")
        manager.nowPlayingIdentifiers = nowPlaying(queueIdentifier: queued[playback.startIndex].identifier)
    }

    /// The custom actions the tree's playable rows offer.
    static let actions = [
        ContentAction(identifier: "play-next", title: "Play next"),
        ContentAction(identifier: "add-to-queue", title: "Add to queue"),
    ]

    /// A row's `play-next` or `add-to-queue`: a container's tracks and streams (what playing it
    /// would queue), or the one track, put after the current entry or at the end of the queue;
    /// what plays goes on.
    func playableContentManager(
        _ manager: PlayableContentManager, performAction action: String, onContentItemAt indexPath: IndexPath
    ) async throws {
        let placement: QueuePlayer.QueuePlacement
        switch action {
        case "play-next": placement = .next
        case "add-to-queue": placement = .last
        default: throw ContentError.actionNotAvailable(action)
        }
        guard let playback = content.playback(forItemAt: indexPath), let row = content.contentItem(at: indexPath) else {
            throw ContentError.noSuchContent("\(indexPath)")
        }
        let items = try self.items()
        let entries = row.isContainer ? playback.entries[...] : playback.entries[playback.startIndex...].prefix(1)
        let queued = entries.map { entry in
            switch entry.media {
            case .track(let id): items.item(forTrack: id)
            case .stream(let url, let title): items.streamItem(url, title: title)
            }
        }
        let status = await player.enqueue(Array(queued), at: placement)
        guard status == .success else { throw CommandFailed(action: action, status: "\(status)") }
        logger.info("queued \(queued.count) entries (\(action)) from \(row.identifier), as a remote asked")
    }

    /// A head unit asks for a queue ready to play when it connects: the restored
    /// queue is that already, so there is nothing to do.
    func playableContentManager(
        _ manager: PlayableContentManager, initializePlaybackQueueWithContentItems items: [ContentItem]?
    ) async throws {}

    func playableContentManager(_ manager: PlayableContentManager, didUpdate context: PlayableContentManagerContext) {
        logger.info(
            "remote context: endpoint \(context.endpointAvailable ? "connected" : "absent"), limits \(context.contentLimitsEnforced ? "\(context.enforcedContentItemsCount) rows, depth \(context.enforcedContentTreeDepth)" : "off")")
    }

    /// The identifiers to mark while the queue entry `queueIdentifier` plays.
    func nowPlaying(queueIdentifier: String?) -> [String] {
        guard let queueIdentifier else { return [] }
        let base = queueIdentifier.savedTrackID
        let row =
            base.hasPrefix("http://") || base.hasPrefix("https://")
            ? URL(string: base).map(LibraryContent.identifier(ofStream:)) ?? base
            : LibraryContent.identifier(ofTrack: base)
        guard let (container, entries) = played.withLock({ $0 }),
            let entry = entries[queueIdentifier] ?? entries[base]
        else { return [row] }
        return entry == row ? [container, row] : [container, entry, row]
    }
}

/// A custom action the player refused (the queue is full, say).
struct CommandFailed: Error, CustomStringConvertible {
    let action: String
    let status: String
    var description: String { "\(action) failed: \(status)" }
}
