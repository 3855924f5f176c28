import DBus
import Logging
import MPD
import MPRIS
import MediaRemote
import MusicLibrary
import Playback
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon: the library, the player and its MPRIS face, as services in one service group.
///
/// The player's bus name is owned first, before the services are built, with the
/// connection's calls held until the player's objects are exported (``ownPlayerName(_:on:)``):
/// clients find the player within milliseconds, and a call that comes at once is answered as
/// soon as the player can. The group starts every service at once; milestones order their
/// start, chosen for speed: the player takes its commands, then publishes its objects (the
/// calls held are handled), then the tree opens the library and publishes itself, then the saved
/// queue is restored (the daemon is ready), then Bluetooth registers, the outputs are followed
/// and the library is rescanned and followed. GStreamer is loaded when something plays, or
/// once ready to follow the audio outputs when the sink can choose one (`autoaudiosink`,
/// `pulsesink`).
///
/// On SIGTERM, SIGINT, a remote's Quit or the loss of the bus, the group stops the services
/// one at a time in the reverse order of their listing: the state is saved first, then
/// playback stops, and the bus connection is closed last. A stop that takes longer than
/// ``shutdownDeadline`` is cut short (``shutdownStep(_:_:)``), and the exit status says so.
enum Daemon {
    /// How long a graceful shutdown may take before the services are cancelled: a stopping
    /// daemon is not kept alive by a bus or a bluetoothd that does not answer (systemd would
    /// wait 90 s before killing it).
    static let shutdownDeadline = Duration.seconds(5)
    /// How long the services may take to end once cancelled, before the group ends the process;
    /// they give up waiting at once (``valueUnlessCancelled(of:)``).
    static let cancellationDeadline = Duration.seconds(2)

    /// Connects to the message bus `bus`.
    static func connect(_ bus: BusKind) async throws -> Connection {
        try await bus == .system ? Connection.system() : Connection.session()
    }

    /// The unique name of the connection that owns the name of the player called `playerName`
    /// on the bus, if any.
    static func runningPlayer(_ playerName: String, on connection: Connection) async throws -> BusName? {
        try await connection.nameOwner(of: BusName(validating: "org.mpris.MediaPlayer2.\(playerName)"))
    }

    /// Owns `org.mpris.MediaPlayer2.<name>` (or its instance name, when another player has it)
    /// before the player exists, with every call to the connection held until ``PlayerService``
    /// has exported the player's objects: no call reaches a path that is not there yet.
    static func ownPlayerName(_ playerName: String, on connection: Connection) async throws -> OwnedPlayerName {
        let calls = connection.holdIncomingCalls()
        let name = try await connection.requestName(
            BusName(validating: "org.mpris.MediaPlayer2.\(playerName)"), orInstanceFallbackFor: getpid())
        return OwnedPlayerName(name: name, calls: calls)
    }

    /// The daemon's services on `connection`, ready to run; SIGTERM and SIGINT stop them gracefully.
    static func serviceGroup(
        settings: ServeSettings, connection: Connection, playerName: OwnedPlayerName, logger: Logger
    ) throws -> ServiceGroup {
        let commands = RemoteCommandCenter()
        let nowPlaying = NowPlayingInfoCenter()
        let playbackStarted = Milestone<Void>()
        let nameOwned = Milestone<Void>()
        // The library is opened once the name is owned (it checks the index first); until then
        // a URL cannot be resolved.
        let library = Milestone<ServedLibrary>()
        let tree = Milestone<PublishedTree>()
        let ready = Milestone<Void>()
        let playableTypes = Set(QueuePlayer.Configuration().supportedMIMETypes)
        // On the system bus, callers are other users: they may open only what the library holds.
        let libraryFilesOnly = settings.bus == .system
        // Where long tracks were left: read once the library is open.
        let resumePoints = LibraryResumePoints(policy: settings.resumePolicy, logger: logger)
        let store = StateStore(directory: settings.stateDirectory, logger: logger)
        // The outputs and ReplayGain: saved beside the queue, applied to the engine once made.
        let audio = AudioControl(audioSink: settings.audioSink, replayGain: settings.replayGain, store: store, logger: logger)
        // The player runs on the bus connection's thread, as the Player object's handlers do (below):
        // a PlayPause is read, decided, shown and signalled there, with no thread woken between.
        let player = QueuePlayer(
            commands: commands, nowPlaying: nowPlaying, logger: logger, resumePoints: resumePoints,
            executor: connection.executor, makeEngine: { try audio.makeEngine() },
            resolve: { try library.items().resolve($0, playableTypes: playableTypes, libraryFilesOnly: libraryFilesOnly) })
        // The name is owned before the saved queue is back: a remote's command meanwhile (a
        // media key that started the daemon) waits for the queue instead of finding it empty.
        player.holdRemoteCommands(for: .seconds(10))
        // The media tree's content arrives once the library is open; MPRIS Playlists follows it.
        // A container of more than 500 rows is paged (a page of it is read in a few
        // milliseconds, and the first page of a 4,000-album tab read whole took 100 ms).
        let content = PlayableContentManager(maximumCachedRows: settings.treeCacheRows, pagedContainerThreshold: 500)
        var mprisConfiguration = MPRISConfiguration(
            playerName: settings.playerName, identity: "mpris-bridge",
            // desktop/mpris-bridge.desktop, which Scripts/install puts where shells look.
            desktopEntry: "mpris-bridge",
            // Quit from a remote is a graceful shutdown, like SIGTERM.
            quit: { kill(getpid(), SIGTERM) },
            artworkCacheDirectory: settings.cacheDirectory + "/artwork", hasTrackList: true,
            playlistLocations: settings.treeLayout.playlistLocations)
        mprisConfiguration.commandExecutor = connection.executor
        let mpris = try MPRISService(
            configuration: mprisConfiguration,
            commands: commands, nowPlaying: nowPlaying, content: content, audioSession: audio.session)
        // A rescan in a child process, then the tree, the playlists and the queue's entries
        // brought up to date; one at a time, whoever asks.
        // Idle MPD clients hear of every change, a rescan's included.
        let mpdChanges = MPDChanges()
        // What starting, a rescan or playback touched, given back once quiet.
        let residentMemory = ResidentMemory(nowPlaying: nowPlaying, releaseOutput: { await audio.releaseOutput() })
        let rescan = LibraryRescan(
            settings: settings, logger: logger, player: player, library: library, tree: tree, mpdChanges: mpdChanges,
            residentMemory: residentMemory)
        let refresh = LibraryRefresh { try await rescan.run() }

        // Stopped in the reverse order: the state is written first, then playback stops (the
        // sound stops at once), then the rest stops before what it depends on.
        var services: [any Service] = [
            BusService(connection: connection, logger: logger),
            OutputsService(audio: audio, ready: ready),
            PlayerService(
                mpris: mpris, connection: connection, settings: settings, logger: logger, ownedName: playerName,
                playbackStarted: playbackStarted, nameOwned: nameOwned),
            TreeService(
                settings: settings, logger: logger, connection: connection, player: player, nowPlaying: nowPlaying,
                manager: content, store: store, resumePoints: resumePoints, refresh: refresh, nameOwned: nameOwned,
                library: library, tree: tree),
            LibraryRefreshService(settings: settings, logger: logger, refresh: refresh, library: library, ready: ready),
        ]
        if let mpd = settings.mpd {
            services.append(
                MPDService(
                    settings: mpd, logger: logger, commands: commands, nowPlaying: nowPlaying, player: player, audio: audio,
                    refresh: refresh, changes: mpdChanges, playableTypes: playableTypes,
                    libraryFilesOnly: libraryFilesOnly, library: library))
        }
        if settings.registersWithBluetooth {
            services.append(
                BluetoothService(mpris: mpris, connection: connection, settings: settings, logger: logger, ready: ready))
        }
        services.append(ResidentMemoryService(memory: residentMemory, ready: ready))
        services.append(PlaybackService(player: player, started: playbackStarted))
        services.append(
            StateStoreService(
                store: store, player: player, resumePoints: resumePoints, logger: logger, library: library, tree: tree,
                ready: ready, scansAtStart: settings.scansAtStart))
        var configuration = ServiceGroupConfiguration(
            services: services.map {
                // A service that fails (the bus lost, the name not published) stops the others
                // gracefully, so the state is still saved; the group then throws its error.
                ServiceGroupConfiguration.ServiceConfiguration(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup)
            },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownDeadline
        configuration.maximumCancellationDuration = cancellationDeadline
        return ServiceGroup(configuration: configuration)
    }
}

/// The player's bus name, owned before its objects exist, and the hold on the connection's
/// calls that ``PlayerService`` releases once they are exported.
struct OwnedPlayerName: Sendable {
    let name: BusName
    let calls: IncomingCallHold
}
