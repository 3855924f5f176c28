import AsyncSupport
import DBus
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Who the player is, as MPRIS clients show it.
public struct MPRISConfiguration: Sendable {
    /// The last element of the bus name `org.mpris.MediaPlayer2.<playerName>`:
    /// letters, digits, `_` and `-`, not starting with a digit.
    public var playerName: String
    /// The name people see ("Music Box").
    public var identity: String
    /// The desktop file's basename without `.desktop`, if the app has one.
    public var desktopEntry: String?
    /// Brings the app's window to the front; `CanRaise` is true when set.
    public var raise: (@Sendable () async -> Void)?
    /// Quits the app; `CanQuit` is true when set.
    public var quit: (@Sendable () async -> Void)?
    /// Where artwork images are cached; `nil` is `$XDG_CACHE_HOME/mpris-bridge/artwork`.
    public var artworkCacheDirectory: String?
    /// Whether the play queue (`NowPlayingInfoCenter.playbackQueue`) is
    /// published as MPRIS `org.mpris.MediaPlayer2.TrackList`; `HasTrackList`
    /// says so. Default false: an app without a queue shows no track list.
    public var hasTrackList: Bool
    /// The containers of the content tree whose playable child containers
    /// (albums, playlists) are published as MPRIS `org.mpris.MediaPlayer2.Playlists`,
    /// as index paths of the `PlayableContentManager` given to the service
    /// (`[[1], [3]]`: the children of the second and fourth tabs), in the
    /// order their playlists are listed. The interface is exported only when
    /// this is not empty and the service has a content manager. Default: none.
    public var playlistLocations: [IndexPath]
    /// `CanControl`, fixed at publication. Default nil: true only if the command centre then
    /// offers a command. An app that adds its targets after publishing sets it to true.
    public var canControl: Bool? = nil
    /// Where remotes' commands (method calls and property writes) are handled: nil for
    /// Swift's global executor. An app whose command targets run on one queue (its main
    /// queue, as iOS apps' do) gives an executor of that queue, so a command reaches its
    /// targets without a hop through another thread. Reads never wait for it.
    public var commandExecutor: (any TaskExecutor)? = nil
    /// Whether radio mode (a like, dislike or bookmark command offered) withdraws the
    /// previous-track command: `CanGoPrevious` false and `Previous` without effect, as iOS's
    /// lock screen shows radio-style controls. Default true. An app whose previous-track command
    /// should still reach it from remotes, as it does on iOS from headsets and cars, sets false;
    /// `org.mprisbridge.Player1.RadioMode` still says radio mode either way.
    public var radioModeHidesPrevious: Bool = true

    /// Describes a player; only the bus name and the identity are required.
    public init(
        playerName: String, identity: String, desktopEntry: String? = nil,
        raise: (@Sendable () async -> Void)? = nil, quit: (@Sendable () async -> Void)? = nil,
        artworkCacheDirectory: String? = nil, hasTrackList: Bool = false, playlistLocations: [IndexPath] = []
    ) {
        self.playerName = playerName
        self.identity = identity
        self.desktopEntry = desktopEntry
        self.raise = raise
        self.quit = quit
        self.artworkCacheDirectory = artworkCacheDirectory
        self.hasTrackList = hasTrackList
        self.playlistLocations = playlistLocations
    }
}

/// Publishes an app's `RemoteCommandCenter` and `NowPlayingInfoCenter` (from `MediaRemote`)
/// on D-Bus as an MPRIS 2.2 media player, so media keys, `playerctl`, desktop
/// shells and head units control it.
///
/// ```swift
/// let service = try MPRISService(
///     configuration: MPRISConfiguration(playerName: "musicbox", identity: "Music Box"),
///     commands: commands, nowPlaying: nowPlaying)
/// let name = try await service.publish(on: try await Connection.session())
/// ```
///
/// On `/org/mpris/MediaPlayer2` it serves `org.mpris.MediaPlayer2`,
/// `org.mpris.MediaPlayer2.Player`, the project's extension interface
/// `org.mprisbridge.Player1`; with ``MPRISConfiguration/hasTrackList``,
/// `org.mpris.MediaPlayer2.TrackList` for the play queue; and with a content
/// manager and ``MPRISConfiguration/playlistLocations``,
/// `org.mpris.MediaPlayer2.Playlists` for the playable containers found
/// there (activating one asks the manager's delegate to play it). Every property
/// follows the two centres: a command enabled or disabled, a new now-playing
/// value or volume each become one `PropertiesChanged` per interface, with
/// only what changed; a jump of the position becomes `Seeked`; a change of
/// the queue becomes one TrackList signal. `Position` is computed at every read.
///
/// Commands from remotes go to the app's targets; an unavailable command has
/// no effect, and a failure status comes back to the remote as a
/// ``CommandError``.
public final class MPRISService: Sendable {
    /// The object path of every MPRIS player.
    public static let objectPath: ObjectPath = "/org/mpris/MediaPlayer2"

    /// The app's commands, offered to remotes.
    public let commands: RemoteCommandCenter
    /// What the app is playing, shown to remotes.
    public let nowPlaying: NowPlayingInfoCenter
    /// The bus name asked for: `org.mpris.MediaPlayer2.<playerName>`.
    public let requestedName: BusName
    /// The app's browsable content, whose playable containers at
    /// ``MPRISConfiguration/playlistLocations`` are offered as playlists.
    public let content: PlayableContentManager?
    /// The app's outputs and ReplayGain, if it offers them.
    public let audioSession: AudioSession?

    /// `Identity`: the name people see, which a Bluetooth registration passes on.
    let identity: String
    private let root: RootInterface
    private let player: PlayerInterface
    private let extensions: ExtensionInterface
    private let trackList: TrackListInterface?
    private let canControl: Bool?
    private let commandExecutor: (any TaskExecutor)?
    private let playlists: PlaylistsInterface?
    private let artwork: ArtworkCache
    private let state = Mutex(Published())

    private struct Published {
        var connection: Connection?
        var busName: BusName?
        var observations: [Observation] = []
    }

    /// Builds the interfaces. Throws `InvalidArgs` when `playerName` cannot end a bus name.
    ///
    /// - Parameters:
    ///   - configuration: who the player is: its bus name, identity and optional interfaces.
    ///   - commands: the app's commands, offered to remotes as the `Can…` properties and methods.
    ///   - nowPlaying: what the app plays, shown as `Metadata`, `PlaybackStatus` and the rest.
    ///   - content: the app's content tree; with
    ///     ``MPRISConfiguration/playlistLocations`` it makes the Playlists interface.
    ///   - audioSession: the app's outputs and ReplayGain, served on `org.mprisbridge.Player1`;
    ///     without one, those properties keep their defaults and choosing is refused.
    public init(
        configuration: MPRISConfiguration, commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter,
        content: PlayableContentManager? = nil, audioSession: AudioSession? = nil
    ) throws {
        requestedName = try BusName(validating: "org.mpris.MediaPlayer2.\(configuration.playerName)")
        self.commands = commands
        self.nowPlaying = nowPlaying
        self.content = content
        self.audioSession = audioSession
        identity = configuration.identity
        canControl = configuration.canControl
        commandExecutor = configuration.commandExecutor
        root = RootInterface(configuration: configuration, commands: commands)
        player = PlayerInterface(
            commands: commands, nowPlaying: nowPlaying, radioModeHidesPrevious: configuration.radioModeHidesPrevious)
        extensions = ExtensionInterface(commands: commands, nowPlaying: nowPlaying, audioSession: audioSession)
        let artwork = ArtworkCache(
            directory: configuration.artworkCacheDirectory
                ?? ArtworkCache.defaultDirectory(environment: Self.environment(["XDG_CACHE_HOME", "HOME"])))
        self.artwork = artwork
        trackList =
            configuration.hasTrackList
            ? TrackListInterface(
                commands: commands, nowPlaying: nowPlaying, artURL: { artwork.url(for: $0) })
            : nil
        playlists =
            if let content, !configuration.playlistLocations.isEmpty {
                PlaylistsInterface(
                    content: content, locations: configuration.playlistLocations,
                    artURL: { artwork.url(for: $0) })
            } else {
                nil
            }
    }

    /// The Player interface, for a registration that exports it elsewhere too (Bluetooth).
    var playerInterface: PlayerInterface { player }

    /// The bus name owned after ``publish(on:)``: the requested name, or
    /// `…<playerName>.instance<pid>` when another process had it (with the connection's
    /// unique name added when that was taken too, see
    /// `Connection.requestName(_:orInstanceFallbackFor:)` in `DBus`).
    public var busName: BusName? { state.withLock { $0.busName } }

    /// Exports the player on `connection` and takes its bus name.
    ///
    /// `CanControl` is fixed here (constant, as the specification says): the
    /// configuration's ``MPRISConfiguration/canControl``, or else false only if
    /// the app offers no command at all, so configure the command centre first.
    /// With playlists, the first listing is read before the name is taken
    /// (waiting at most the manager's
    /// `PlayableContentManager.loadingDeadline` for each location). Returns the name owned.
    @discardableResult
    public func publish(on connection: Connection) async throws -> BusName {
        // Objects first, then the name, so no call arrives before they exist.
        try await export(on: connection)
        do {
            let name = try await connection.requestName(requestedName, orInstanceFallbackFor: getpid())
            state.withLock { $0.busName = name }
            return name
        } catch {
            await unpublish()
            throw error
        }
    }

    /// Exports the player on `connection` under `name`, a bus name the app already owns there
    /// (``requestedName``, or its instance name from
    /// `Connection.requestName(_:orInstanceFallbackFor:)`); ``unpublish()`` releases it.
    ///
    /// For an app that takes its name first, to be found sooner, and builds its player after:
    /// it holds the connection's calls from before its request of the name
    /// (`Connection.holdIncomingCalls()`) and releases them once this returns, so no call
    /// reaches the player's path before it is exported. Otherwise as ``publish(on:)``.
    public func publish(on connection: Connection, owning name: BusName) async throws {
        try await export(on: connection)
        state.withLock { $0.busName = name }
    }

    /// Follows the centres and exports the objects; nothing is left published if it throws.
    private func export(on connection: Connection) async throws {
        player.setCanControl(canControl ?? commands.hasAvailableCommand)
        refresh()
        let player = self.player
        var observations = [
            commands.observeChanges { [weak self] in self?.refresh() },
            nowPlaying.observe { [weak self] update in
                // A publication touches only the Player's now-playing properties.
                self?.refreshNowPlaying()
                if update.isPositionJump, let current = update.current {
                    player.seeked.emit(current.elapsedPlaybackTime.microseconds)
                }
            },
        ]
        if let audioSession {
            let extensions = self.extensions
            observations.append(audioSession.observe { extensions.refreshAudioSession() })
            extensions.refreshAudioSession()
        }
        if let trackList {
            // Observing before the first refresh, so no change of the queue falls in between.
            observations.append(nowPlaying.observeQueue { _ in trackList.refreshQueue() })
            trackList.refreshQueue()
        }
        await playlists?.start()
        let interfaces =
            [root.interface, player.interface, extensions.interface]
            + [trackList?.interface, playlists?.interface].compactMap { $0 }
        do {
            try connection.export(interfaces, at: Self.objectPath, executor: commandExecutor)
        } catch {
            // Nothing was published: stop following the centres and the content again.
            for observation in observations { observation.cancel() }
            playlists?.stop()
            throw error
        }
        state.withLock {
            $0.connection = connection
            $0.observations = observations
        }
    }

    /// Releases the bus name and removes the objects; the centres are no longer observed.
    public func unpublish() async {
        let published = state.withLock { state in
            let published = state
            state = Published()
            return published
        }
        for observation in published.observations { observation.cancel() }
        playlists?.stop()
        guard let connection = published.connection else { return }
        if let name = published.busName { _ = try? await connection.releaseName(name) }
        connection.unexport(at: Self.objectPath)
    }

    private func refresh() {
        root.refresh()
        player.refresh(artURL: artURL)
        extensions.refresh()
        extensions.refreshNowPlaying()
        trackList?.refreshCommands()
    }

    private func refreshNowPlaying() {
        player.refreshNowPlaying(artURL: artURL)
        extensions.refreshNowPlaying()
    }

    private func artURL(for artwork: MediaItemArtwork) -> URL? {
        self.artwork.url(for: artwork)
    }

    static func environment(_ names: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }
}
