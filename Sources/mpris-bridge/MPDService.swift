import Logging
import MPD
import MediaRemote
import MusicLibrary
import Playback
import ServiceLifecycle

/// The player and library's MPD face: loopback TCP (port 6600 by default) and a Unix socket in
/// the runtime folder, listening once the library is open (as mpd listens once its database is
/// loaded), so the first `lsinfo` is answered from the index.
struct MPDService: Service, CustomStringConvertible {
    let settings: MPDSettings
    let logger: Logger
    let commands: RemoteCommandCenter
    let nowPlaying: NowPlayingInfoCenter
    let player: QueuePlayer
    let audio: AudioControl
    let refresh: LibraryRefresh
    let changes: MPDChanges
    let playableTypes: Set<String>
    let libraryFilesOnly: Bool
    /// Waited for: the index the database commands read.
    let library: Milestone<ServedLibrary>

    var description: String { "mpd" }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await serve() }
        } catch is CancellationError {
            return
        } catch {
            // A port taken (by a real mpd, say) costs MPD clients, not the player's other faces.
            logger.error("MPD clients cannot reach the player: \(error)")
            try? await gracefulShutdown()
        }
    }

    private func serve() async throws {
        let served = try await library.value()
        let items = served.items
        let environment = MPDCommands.Environment(
            commands: commands, nowPlaying: nowPlaying, player: player, audioSession: audio.session,
            library: served.library, queueItem: { items.item(forTrack: $0) },
            resolveURL: { [playableTypes, libraryFilesOnly] url in
                try items.resolve(url, playableTypes: playableTypes, libraryFilesOnly: libraryFilesOnly)
            },
            rescan: { [refresh] in try await refresh.rescan() })
        let handler = await MPDCommands(environment: environment, changes: changes, logger: logger)
        if let host = settings.server.tcpHost, !MPDSettings.isLoopback(host) {
            logger.warning("MPD clients on other machines can reach the player at \(host): set --mpd-password-file")
        }
        let server = MPDServer(configuration: settings.server, handler: handler, logger: logger)
        // It logs where it listens, with the port chosen when asked for any (`--mpd-port 0`).
        try await server.run()
    }
}

/// Where and to whom the MPD face listens, from the command line.
struct MPDSettings: Sendable {
    var server: MPDServerConfiguration

    /// Whether `host` names this machine's loopback interface only.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
