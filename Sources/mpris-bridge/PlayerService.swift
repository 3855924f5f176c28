import DBus
import Logging
import MPRIS
import ServiceLifecycle

/// The player's MPRIS face: `org.mpris.MediaPlayer2.<name>`, published once the queue player
/// has its commands.
///
/// Owning the name comes first in the daemon's start (``nameOwned``), so clients find the
/// player within milliseconds; the library is opened after it (``TreeService``). Stopping, it
/// releases the name.
struct PlayerService: Service, CustomStringConvertible {
    let mpris: MPRISService
    let connection: Connection
    let settings: ServeSettings
    let logger: Logger
    /// Waited for: `CanControl` is fixed when published, from the commands the player offers.
    let playbackStarted: Milestone<Void>
    /// Reached once the player's objects are exported and its bus name owned.
    let nameOwned: Milestone<Void>

    var description: String { "player" }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { [playbackStarted] in try await playbackStarted.value() }
        } catch is CancellationError {
            return
        }
        // The objects are exported before the name is requested, so no call arrives before them.
        let name = try await mpris.publish(on: connection)
        logger.info(
            "serving \(settings.library) as \(name)",
            metadata: ["try": "playerctl -p \(settings.playerName) play | pause | next | metadata | status"])
        nameOwned.reach()
        try? await gracefulShutdown()
        try await shutdownStep("releasing the player's bus name") { [mpris] in await mpris.unpublish() }
    }
}
