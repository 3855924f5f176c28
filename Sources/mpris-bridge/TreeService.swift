import DBus
import Dispatch
import Logging
import MPRIS
import MediaRemote
import MusicLibrary
import Playback
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The library and its media tree: the index opened once the player's name is owned, the tree
/// built from it and published as the media server `org.gnome.UPnP.MediaServer2.<name>` (its
/// playable containers are the MPRIS playlists). Stopping, it releases that name.
struct TreeService: Service, CustomStringConvertible {
    let settings: ServeSettings
    let logger: Logger
    let connection: Connection
    let player: QueuePlayer
    let nowPlaying: NowPlayingInfoCenter
    let manager: PlayableContentManager
    let store: StateStore
    let resumePoints: LibraryResumePoints
    let refresh: LibraryRefresh
    /// Waited for: the library is opened once the player can be found on the bus.
    let nameOwned: Milestone<Void>
    /// Reached once the library is open.
    let library: Milestone<ServedLibrary>
    /// Reached once the tree is published.
    let tree: Milestone<PublishedTree>

    var description: String { "tree" }

    /// The setting in `state.sqlite` that keeps the Recent tab: its identifiers as a JSON array.
    static let recentKey = "recently_played"
    /// How long after a start the Recent tab shows it: by then the engine has started (a resume
    /// takes 2 ms) and the remote that asked has heard the change, so the tab's index reads and
    /// its thread compete with neither on a machine of two cores.
    static let recentTabDelay = DispatchTimeInterval.milliseconds(50)

    func run() async throws {
        let published: PublishedTree
        do {
            published = try await cancelWhenGracefulShutdown { try await start() }
        } catch is CancellationError {
            return
        }
        try? await gracefulShutdown()
        try await shutdownStep("releasing the media tree's bus name") { await published.service.unpublish() }
    }

    private func start() async throws -> PublishedTree {
        try await nameOwned.value()
        let library: MusicLibrary
        do {
            library = try MusicLibrary(root: settings.library, indexPath: settings.indexPath)
        } catch {
            // The index is a cache: without one the player still serves, with an empty library.
            logger.warning("\(error); serving an empty library until a restart can open it")
            library = try MusicLibrary(root: settings.library, indexPath: ":memory:")
        }
        if let recovery = library.indexRecovery { logger.warning("\(recovery)") }
        let items = QueueItems(library: library)
        self.library.reach(ServedLibrary(library: library, items: items))
        if !settings.resumePolicy.isNone { resumePoints.open(library) }
        // Read before the tracks, so a scan in between is not missed.
        let revision = try? library.contentRevision
        let published = try await publish(library: library, items: items, revision: revision)
        // A place saved shows in the tree: the containers listing the track are read again, at
        // most once a second (the writer's pace), and remotes hear `Updated` for them.
        resumePoints.setOnWritten { [content = published.content, manager] tracks in
            manager.beginUpdates()
            content.playbackProgressChanged(ofTracks: tracks)
            manager.endUpdates()
        }
        tree.reach(published)
        return published
    }

    /// Builds the browsable tree of the library and publishes it.
    private func publish(library: MusicLibrary, items: QueueItems, revision: Int?) async throws -> PublishedTree {
        let scansAtStart = settings.scansAtStart && !library.isReadOnly
        let artwork: @Sendable (Track) -> MediaItemArtwork? = { items.artwork(for: $0) }
        let progress: @Sendable (Track) -> Double? = { [resumePoints] in resumePoints.progress(of: $0) }
        let rowActions = ContentPlayer.actions.map(\.identifier)
        let content: LibraryContent
        do {
            // Covers by where they come from: the tree makes its rows from columns of every
            // track's fields, read once per tree, not from tracks read per page.
            content = try LibraryContent(
                library: library, libraryName: settings.library, coverArtwork: { items.artwork(of: $0) },
                resumePolicy: settings.resumePolicy,
                playbackProgress: progress, layout: settings.treeLayout, rowActions: rowActions)
        } catch {
            logger.warning("\(error); the media tree is empty until a rescan can read the index")
            content = LibraryContent(
                tracks: [], playlists: [], libraryName: settings.library, artwork: artwork,
                resumePolicy: settings.resumePolicy, playbackProgress: progress, layout: settings.treeLayout,
                rowActions: rowActions)
        }
        if let saved = store.setting(Self.recentKey), let recent = try? JSONDecoder().decode([String].self, from: Data(saved.utf8)) {
            content.setRecentlyPlayed(recent)
        }
        if settings.treeLayout == .car {
            // Android Automotive's defaults for a browse service: four tabs always, and while
            // driving 21 rows, three levels and 120 characters. A head unit may set its own.
            manager.updateContext {
                $0.maximumTabCount = 4
                $0.enforcedContentItemsCount = 21
                $0.enforcedContentTreeDepth = 3
                $0.enforcedTextLength = 120
            }
        }
        if content.isEmpty {
            content.setStatus(scansAtStart ? .indexing : .unavailable("No music found in \(settings.library)"))
        }
        let delegate = ContentPlayer(
            content: content, player: player, items: { items }, logger: logger,
            refresh: { [refresh] in try await refresh.rescan() })
        manager.delegate = delegate
        manager.customActions = ContentPlayer.actions
        manager.dataSource = content
        // The playing track's rows are marked in every tab, as the queue moves on.
        // What starts playing goes first in the Recent tab, saved beside the queue. Showing it
        // reads rows from the index, so it is done on a task of its own, in order, never in the
        // player's command sequence that publishes the change; and later (``recentTabDelay``),
        // so that neither that task's thread nor its reads compete with the start.
        let (played, playedContinuation) = AsyncStream.makeStream(of: [String].self, bufferingPolicy: .bufferingNewest(16))
        let startsToShow = StartsToShow()
        Task { [store, manager] in
            for await identifiers in played {
                manager.beginUpdates()
                let recent = content.notePlayed(identifiers)
                manager.endUpdates()
                if let recent, let json = try? JSONEncoder().encode(recent) {
                    store.saveSetting(Self.recentKey, String(decoding: json, as: UTF8.self))
                }
            }
        }
        let nowPlayingObservation = nowPlaying.observe { [manager] update in
            let newItem = update.previous?.identifier != update.current?.identifier
            let starts =
                update.current?.playbackState == .playing && (newItem || update.previous?.playbackState != .playing)
            guard newItem || starts else { return }
            let identifiers = delegate.nowPlaying(queueIdentifier: update.current?.identifier)
            if newItem { manager.nowPlayingIdentifiers = identifiers }
            guard starts, startsToShow.add(identifiers) else { return }
            // A Dispatch timer, not a task: a task would wake one of Swift's threads now.
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.recentTabDelay) {
                for identifiers in startsToShow.take() { playedContinuation.yield(identifiers) }
            }
        }
        let service = try MediaTreeService(
            name: settings.playerName, displayName: "mpris-bridge: \(settings.library)", content: manager,
            artworkCacheDirectory: settings.cacheDirectory + "/artwork")
        do {
            try await service.publish(on: connection)
        } catch {
            logger.warning("the media tree is not served: \(error)")
        }
        return PublishedTree(
            service: service, manager: manager, content: content, shownRevision: revision,
            nowPlayingObservation: nowPlayingObservation)
    }
}

/// The starts the Recent tab is yet to show, in order, until its timer takes them.
private final class StartsToShow: Sendable {
    private let starts = Mutex<[[String]]>([])

    /// Adds a start; true if it is the first waiting (the caller then arms the timer).
    func add(_ identifiers: [String]) -> Bool {
        starts.withLock { starts in
            starts.append(identifiers)
            return starts.count == 1
        }
    }

    func take() -> [[String]] {
        starts.withLock { starts in
            defer { starts = [] }
            return starts
        }
    }
}
