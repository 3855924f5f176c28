import Playback
import ServiceLifecycle

/// Playback: the queue player's commands added when the daemon starts (``started``), and
/// playback stopped when it stops.
///
/// Listed just before the state store, it stops right after the state is written: the sound
/// stops at once, before the names are released.
struct PlaybackService: Service, CustomStringConvertible {
    let player: QueuePlayer
    /// Reached once the player has its command targets, which its MPRIS face publishes.
    let started: Milestone<Void>

    var description: String { "playback" }

    func run() async throws {
        await player.start()
        started.reach()
        try? await gracefulShutdown()
        try await shutdownStep("stopping playback") { [player] in await player.shutDown() }
    }
}
