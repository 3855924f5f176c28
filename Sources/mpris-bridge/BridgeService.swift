import AsyncSupport
import CMalloc
import DBus
import GStreamerPlayback
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
#if canImport(Glibc)
    import Glibc
#endif

/// Which message bus the daemon serves on.
enum BusKind: String, Sendable, CaseIterable {
    /// The user's desktop session (`DBUS_SESSION_BUS_ADDRESS`).
    case session
    /// The system bus: a car computer or a shared music box, with `dbus/mpris-bridge.conf` installed.
    case system
}

/// Everything `mpris-bridge` serves with, resolved from the command line and the environment.
struct ServeSettings: Sendable {
    var library: String
    var libraryWasGiven: Bool
    var playerName: String
    var bus: BusKind
    var audioSink: String
    var stateDirectory: String
    var cacheDirectory: String
    var scansAtStart: Bool
    var watchesLibrary: Bool
    /// Which tracks remember where they were left.
    var resumePolicy: ResumePolicy
    /// The ReplayGain mode asked for on the command line; nil keeps the saved one.
    var replayGain: AudioSession.ReplayGainMode?
    /// Whether to exit at once when the player's name already has an owner: a desktop shell
    /// runs the desktop entry's Exec each time the player is clicked, and the daemon has no
    /// window for it to bring forward.
    var unlessRunning = false
    /// Which tabs the media tree's root shows, and the content limits a car gets by default.
    var treeLayout: LibraryContent.Layout = .full
    /// The most rows the media tree keeps in memory (`--tree-cache-rows`).
    var treeCacheRows = Self.defaultTreeCacheRows
    /// Whether the player registers itself with BlueZ on the system bus (`--bluetooth`).
    var registersWithBluetooth = false

    var indexPath: String { cacheDirectory + "/index.sqlite" }

    /// The tree's rows are read from the index in microseconds, so the copy can be small:
    /// 10,000 rows (about 15 MB) keep a head unit's walk of 50,000 tracks under 80 MB.
    static let defaultTreeCacheRows = 10_000
}

/// The daemon: the library, the player and its MPRIS face, from start to graceful shutdown.
///
/// Start-up order is chosen for speed: connect, publish the player and own
/// the bus name first (clients can find it within milliseconds), then build
/// and publish the media tree from the index, then restore the saved queue,
/// then rescan the library in a child process. GStreamer is loaded when
/// something plays, or once ready to follow the audio outputs when the sink can choose one
/// (`autoaudiosink`, `pulsesink`).
struct BridgeService: Service {
    let settings: ServeSettings
    let logger: Logger

    struct BusLost: Error, CustomStringConvertible {
        var description: String { "lost the connection to the message bus" }
    }

    /// The unique name of the connection that owns this player's name on the bus, if any.
    static func runningPlayer(_ settings: ServeSettings) async throws -> BusName? {
        let connection = try await settings.bus == .system ? Connection.system() : Connection.session()
        defer { connection.close() }
        return try await connection.nameOwner(of: BusName(validating: "org.mpris.MediaPlayer2.\(settings.playerName)"))
    }

    func run() async throws {
        let connection = try await settings.bus == .system ? Connection.system() : Connection.session()
        defer { connection.close() }
        let commands = RemoteCommandCenter()
        let nowPlaying = NowPlayingInfoCenter()
        let audioSink = settings.audioSink
        // The library is opened once the name is owned (it checks the index first); until then
        // a URL cannot be resolved.
        let opened = OpenedLibrary()
        let playableTypes = Set(QueuePlayer.Configuration().supportedMIMETypes)
        // On the system bus, callers are other users: they may open only what the library holds.
        let libraryFilesOnly = settings.bus == .system
        // Where long tracks were left: read once the library is open.
        let resumePoints = LibraryResumePoints(policy: settings.resumePolicy, logger: logger)
        let store = StateStore(directory: settings.stateDirectory, logger: logger)
        // The outputs and ReplayGain: saved beside the queue, applied to the engine once made.
        let audio = AudioControl(audioSink: audioSink, replayGain: settings.replayGain, store: store, logger: logger)
        defer { audio.stop() }
        let player = QueuePlayer(
            commands: commands, nowPlaying: nowPlaying, logger: logger, resumePoints: resumePoints,
            makeEngine: { try audio.makeEngine() },
            resolve: { try opened.items().resolve($0, playableTypes: playableTypes, libraryFilesOnly: libraryFilesOnly) })
        await player.start()
        // The media tree's content arrives once the library is open; MPRIS Playlists follows it.
        // A container of more than 500 rows is paged (a page of it is read in a few
        // milliseconds, and the first page of a 4,000-album tab read whole took 100 ms).
        let content = PlayableContentManager(maximumCachedRows: settings.treeCacheRows, pagedContainerThreshold: 500)
        let service = try MPRISService(
            configuration: MPRISConfiguration(
                playerName: settings.playerName, identity: "mpris-bridge",
                // desktop/mpris-bridge.desktop, which Scripts/install puts where shells look.
                desktopEntry: "mpris-bridge",
                // Quit from a remote is a graceful shutdown, like SIGTERM.
                quit: { kill(getpid(), SIGTERM) },
                artworkCacheDirectory: settings.cacheDirectory + "/artwork", hasTrackList: true,
                playlistLocations: settings.treeLayout.playlistLocations),
            commands: commands, nowPlaying: nowPlaying, content: content, audioSession: audio.session)
        let name = try await service.publish(on: connection)
        logger.info(
            "serving \(settings.library) as \(name)",
            metadata: ["try": "playerctl -p \(settings.playerName) play | pause | next | metadata | status"])
        let library: MusicLibrary
        do {
            library = try MusicLibrary(root: settings.library, indexPath: settings.indexPath)
        } catch {
            // The index is a cache: without one the player still serves, with an empty library.
            logger.warning("\(error); serving an empty library until a restart can open it")
            library = try MusicLibrary(root: settings.library, indexPath: ":memory:")
        }
        if let recovery = library.indexRecovery { logger.warning("\(recovery)") }
        let scansAtStart = settings.scansAtStart && !library.isReadOnly
        let items = QueueItems(library: library)
        opened.set(items)
        if !settings.resumePolicy.isNone { resumePoints.open(library) }

        // The index's content revision the tree and the queue were built from (read before the
        // tracks, so a scan in between is not missed).
        let shownRevision = Mutex(try? library.contentRevision)
        // A rescan in a child process, then the tree, the playlists and the queue's entries
        // brought up to date; one at a time, whoever asks.
        let tree = Mutex<PublishedTree?>(nil)
        let refresh = LibraryRefresh { [settings, logger, scanArguments] in
            guard !library.isReadOnly else { throw ReadOnlyIndex(path: settings.indexPath) }
            try await ScanProcess(arguments: scanArguments).run()
            // Nothing changed since the tree was built (by this scan or another, such as
            // `mpris-bridge scan` in a terminal): the tree, the playlists and the queue stay as
            // they are, rather than being built again from 50,000 equal tracks.
            let revision = try? library.contentRevision
            // (A tree still saying "Indexing your music…" hears the outcome even so: an empty
            // folder changes nothing in the index.)
            let settled = tree.withLock { $0 }.map { $0.content.status != .indexing } ?? false
            if let revision, revision == shownRevision.withLock({ $0 }), settled {
                let count = (try? library.trackCount) ?? 0
                logger.info("the media tree shows the scan's \(count) tracks (the scan found nothing new)")
                return
            }
            shownRevision.withLock { $0 = revision }
            if await player.itemCount == 0 {
                await fillQueue(player, from: library, items: items)
            } else {
                // The entries are the tracks' paths: what they show is read again.
                items.forgetDescriptions()
                await player.refreshItemDescriptions()
            }
            try tree.withLock { $0 }?.update(from: library, folder: settings.library)
            logger.info("the media tree shows the scan's \((try? library.trackCount) ?? 0) tracks")
            // The tree and the queue were built anew beside the old ones: give back what the old
            // ones held rather than keep it while idle.
            _ = malloc_trim(0)
        }
        let published = try await publishTree(
            content, library: library, items: items, player: player, nowPlaying: nowPlaying,
            connection: connection, scansAtStart: scansAtStart, refresh: refresh, resumePoints: resumePoints, store: store)
        tree.withLock { $0 = published }
        // A place saved shows in the tree: the containers listing the track are read again, at
        // most once a second (the writer's pace), and remotes hear `Updated` for them.
        resumePoints.setOnWritten { [content = published.content, manager = published.manager] tracks in
            manager.beginUpdates()
            content.playbackProgressChanged(ofTracks: tracks)
            manager.endUpdates()
        }
        // The tree first, as a head unit browses it as soon as it connects; then the queue. A
        // remote that queued something meanwhile keeps what it chose.
        if let snapshot = store.load(), await player.itemCount == 0 {
            await player.restore(snapshot, items: items.items(for: snapshot.addedOrder))
            let count = await player.itemCount
            logger.info("restored a queue of \(count) entries")
        }
        await player.observeChanges { store.save($0) }
        if await player.itemCount == 0 { await fillQueue(player, from: library, items: items) }
        let queued = await player.itemCount
        // Building the queue freed more than it kept; give it back rather than hold it while idle.
        _ = malloc_trim(0)
        logger.info("ready: \(queued) entries queued")
        // Bluetooth once the queue is ready, so a car shows the track from its first look.
        let bluetooth = settings.registersWithBluetooth ? await registerWithBluetooth(service, connection) : nil
        // The outputs, once everything else is served: following them loads GStreamer.
        let outputs = Task.detached { audio.start() }
        defer { outputs.cancel() }
        let scan = Task { [settings] in
            if scansAtStart, await !rescan(refresh) { return }
            // Then the folder is followed: what is added, changed, moved or removed shows.
            if settings.watchesLibrary && !library.isReadOnly { await watchLibrary(refresh: refresh) }
        }
        defer { scan.cancel() }

        var busLost: BusLost?
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await gracefulShutdown() }
                group.addTask {
                    for await event in connection.events() where event == .disconnected { break }
                    throw BusLost()
                }
                try await group.next()
                group.cancelAll()
            }
            logger.info("shutting down")
        } catch let lost as BusLost {
            // Saved like any shutdown; the exit status then says it failed, so systemd restarts it.
            logger.error("\(lost): saving the state and exiting")
            busLost = lost
        }
        // Where a long track was left, then the queue: both before anything that may hang.
        await player.saveResumePoint()
        await resumePoints.close()
        await store.close(with: await player.snapshot)
        // The state is saved; the rest must not keep a stopping daemon alive (systemd would
        // wait 90 s before killing it).
        let step = ShutdownStep()
        let cleanUp = Task {
            await player.shutDown()
            step.name.withLock { $0 = "unregistering from Bluetooth" }
            await bluetooth?.stop()
            if let bluetooth, bluetooth.connection !== connection { bluetooth.connection.close() }
            step.name.withLock { $0 = "releasing the bus names" }
            await published.service.unpublish()
            await service.unpublish()
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(5))
            logger.error("shutting down took more than 5 s (\(step.name.withLock { $0 })); exiting anyway")
            exit(1)
        }
        await cleanUp.value
        deadline.cancel()
        if let busLost { throw busLost }
    }

    /// Registers the player with BlueZ on the system bus (`connection` itself when serving
    /// there), or says in the log why not; nil without a system bus.
    private func registerWithBluetooth(_ service: MPRISService, _ connection: Connection) async
        -> BluetoothRegistration?
    {
        let system: Connection
        do {
            system = settings.bus == .system ? connection : try await Connection.system()
        } catch {
            logger.warning("--bluetooth: no system bus (\(error)); the player is not offered over Bluetooth")
            return nil
        }
        let registration = BluetoothRegistration(service: service, connection: system) { [logger] event in
            switch event {
            case .registered(let adapter): logger.info("registered with Bluetooth adapter \(adapter)")
            case .unregistered(let adapter): logger.info("unregistered from Bluetooth adapter \(adapter)")
            case .lost(let adapter): logger.info("Bluetooth adapter \(adapter) is gone")
            case .failed(let adapter, let reason):
                logger.warning("Bluetooth adapter \(adapter) refused the player: \(reason)")
            case .unavailable(let reason): logger.warning("BlueZ (org.bluez) is unavailable: \(reason)")
            }
        }
        do {
            try registration.start()
        } catch {
            logger.warning("--bluetooth: \(error)")
            return nil
        }
        return registration
    }

    private var scanArguments: [String] {
        ["scan", "--library", settings.library, "--cache-dir", settings.cacheDirectory, "--quiet", "--no-notify"]
    }

    /// Rescans after each burst of changes in the music folder, until cancelled.
    private func watchLibrary(refresh: LibraryRefresh) async {
        let watch: LibraryWatch
        do {
            watch = try LibraryWatch(root: settings.library)
        } catch {
            logger.warning("\(error); changes show after a restart or a Rescan")
            return
        }
        defer { watch.stop() }
        if watch.unwatchedFolders > 0 {
            logger.warning(
                "\(watch.unwatchedFolders) folders of the library are past the system's inotify limit (fs.inotify.max_user_watches): their changes show after a Rescan")
        }
        logger.info("following changes in \(settings.library)")
        for await _ in watch.changes() {
            guard await rescan(refresh) else { return }
        }
    }

    /// Rescans, logging a failure; false once the daemon is stopping.
    private func rescan(_ refresh: LibraryRefresh) async -> Bool {
        do {
            try await refresh.rescan()
        } catch is CancellationError {
            return false
        } catch {
            logger.error("\(error)")
        }
        return true
    }

    /// A first start (or an emptied queue): queue the whole library, stopped at its first track.
    private func fillQueue(_ player: QueuePlayer, from library: MusicLibrary, items: QueueItems) async {
        let ids = (try? library.trackIDsInOrder()) ?? []
        guard !ids.isEmpty else { return }
        await player.replaceQueue(with: ids.map(items.item(forTrack:)), play: false)
        logger.info("queued the library's \(ids.count) tracks")
    }

    /// The setting in `state.sqlite` that keeps the Recent tab: its identifiers as a JSON array.
    static let recentKey = "recently_played"

    /// Builds the browsable tree of the library and publishes it as the media server
    /// `org.gnome.UPnP.MediaServer2.<name>`; its playable containers become MPRIS playlists.
    private func publishTree(
        _ manager: PlayableContentManager, library: MusicLibrary, items: QueueItems,
        player: QueuePlayer, nowPlaying: NowPlayingInfoCenter, connection: Connection, scansAtStart: Bool,
        refresh: LibraryRefresh, resumePoints: LibraryResumePoints, store: StateStore
    ) async throws -> PublishedTree {
        let artwork: @Sendable (Track) -> MediaItemArtwork? = { items.artwork(for: $0) }
        let progress: @Sendable (Track) -> Double? = { resumePoints.progress(of: $0) }
        let rowActions = ContentPlayer.actions.map(\.identifier)
        let content: LibraryContent
        do {
            content = try LibraryContent(
                library: library, libraryName: settings.library, artwork: artwork, resumePolicy: settings.resumePolicy,
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
            content: content, player: player, items: { items }, logger: logger, refresh: { try await refresh.rescan() })
        manager.delegate = delegate
        manager.customActions = ContentPlayer.actions
        manager.dataSource = content
        // The playing track's rows are marked in every tab, as the queue moves on.
        // What starts playing goes first in the Recent tab, saved beside the queue. Showing it
        // reads rows from the index, so it is done on a task of its own, in order, never in the
        // player's command sequence that publishes the change.
        let (played, playedContinuation) = AsyncStream.makeStream(of: [String].self, bufferingPolicy: .bufferingNewest(16))
        Task { [store] in
            for await identifiers in played {
                manager.beginUpdates()
                let recent = content.notePlayed(identifiers)
                manager.endUpdates()
                if let recent, let json = try? JSONEncoder().encode(recent) {
                    store.saveSetting(Self.recentKey, String(decoding: json, as: UTF8.self))
                }
            }
        }
        let nowPlayingObservation = nowPlaying.observe { update in
            let newItem = update.previous?.identifier != update.current?.identifier
            let starts =
                update.current?.playbackState == .playing && (newItem || update.previous?.playbackState != .playing)
            guard newItem || starts else { return }
            let identifiers = delegate.nowPlaying(queueIdentifier: update.current?.identifier)
            if newItem { manager.nowPlayingIdentifiers = identifiers }
            if starts { playedContinuation.yield(identifiers) }
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
            service: service, manager: manager, content: content, nowPlayingObservation: nowPlayingObservation)
    }
}

/// The media tree as published, for updates after a rescan and for shutdown.
struct PublishedTree: Sendable {
    let service: MediaTreeService
    let manager: PlayableContentManager
    let content: LibraryContent
    /// Marks the playing track's rows and fills the Recent tab, for as long as the tree is served.
    let nowPlayingObservation: Observation

    /// Shows a rescan's result: remotes hear once per container that changed.
    func update(from library: MusicLibrary, folder: String) throws {
        manager.beginUpdates()
        defer { manager.endUpdates() }
        try content.update(from: library)
        content.setStatus(content.isEmpty ? .unavailable("No music found in \(folder)") : .ready)
    }
}

/// A rescan asked for while the index cannot be written (a full or read-only cache disk).
struct ReadOnlyIndex: Error, CustomStringConvertible {
    let path: String
    var description: String { "the index \(path) cannot be written: the library is served as it was last indexed" }
}

/// What the shutdown is doing, for the log if it takes too long.
private final class ShutdownStep: Sendable {
    let name = Mutex("stopping playback")
}

/// The queue entries' factory, once the library is open.
private final class OpenedLibrary: Sendable {
    private let value = Mutex<QueueItems?>(nil)

    struct NotYetOpen: Error, CustomStringConvertible {
        var description: String { "the music library is still being opened" }
    }

    func set(_ items: QueueItems) { value.withLock { $0 = items } }

    func items() throws -> QueueItems {
        guard let items = value.withLock({ $0 }) else { throw NotYetOpen() }
        return items
    }
}
