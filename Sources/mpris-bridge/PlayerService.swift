import DBus
import Logging
import MPRIS
import Playback
import ServiceLifecycle

/// The player and its MPRIS face: the queue player's commands, published as
/// `org.mpris.MediaPlayer2.<name>`.
///
/// Owning the name comes first in the daemon's start (``nameOwned``), so clients find the
/// player within milliseconds; the library is opened after it (``TreeService``). Stopping, it
/// stops playback, then releases the name.
struct PlayerService: Service, CustomStringConvertible {
    let player: QueuePlayer
    let mpris: MPRISService
    let connection: Connection
    let settings: ServeSettings
    let logger: Logger
    /// Reached once the player's objects are exported and its bus name owned.
    let nameOwned: Milestone<Void>

    var description: String { "player" }

    func run() async throws {
        await player.start()
        // The objects are exported before the name is requested, so no call arrives before them.
        let name = try await mpris.publish(on: connection)
        logger.info(
            "serving \(settings.library) as \(name)",
            metadata: ["try": "playerctl -p \(settings.playerName) play | pause | next | metadata | status"])
        nameOwned.reach()
        try? await gracefulShutdown()
        try await shutdownStep("stopping playback") { [player] in await player.shutDown() }
        try await shutdownStep("releasing the player's bus name") { [mpris] in await mpris.unpublish() }
    }
}
