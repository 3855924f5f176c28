import DBus
import Logging
import MPRIS
import ServiceLifecycle

/// The player's MPRIS face: `org.mpris.MediaPlayer2.<name>`, published once the queue player
/// has its commands.
///
/// The name is owned before this service starts (``Daemon/ownPlayerName(_:on:)``), so clients
/// find the player within milliseconds; the calls that come meanwhile are held until its
/// objects are exported here, then answered. The library is opened after that
/// (``nameOwned``, ``TreeService``). Stopping, it releases the name.
struct PlayerService: Service, CustomStringConvertible {
    let mpris: MPRISService
    let connection: Connection
    let settings: ServeSettings
    let logger: Logger
    /// The bus name, already owned, and the calls held until the objects are exported.
    let ownedName: OwnedPlayerName
    /// Waited for: `CanControl` is fixed when published, from the commands the player offers.
    let playbackStarted: Milestone<Void>
    /// Reached once the player's objects are exported under its bus name.
    let nameOwned: Milestone<Void>

    var description: String { "player" }

    func run() async throws {
        // Released once the objects are exported, or as this service gives up (a shutdown
        // before the start, a failure), so no call waits for good.
        defer { ownedName.calls.release() }
        do {
            try await cancelWhenGracefulShutdown { [playbackStarted] in try await playbackStarted.value() }
        } catch is CancellationError {
            return
        }
        let name = ownedName.name
        try await mpris.publish(on: connection, owning: name)
        ownedName.calls.release()
        logger.info(
            "serving \(settings.library) as \(name)",
            metadata: ["try": "playerctl -p \(settings.playerName) play | pause | next | metadata | status"])
        nameOwned.reach()
        try? await gracefulShutdown()
        try await shutdownStep("releasing the player's bus name") { [mpris] in await mpris.unpublish() }
    }
}
