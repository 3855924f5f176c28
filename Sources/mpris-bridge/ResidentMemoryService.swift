import Playback
import ServiceLifecycle

/// The daemon's resident memory given back while it is quiet (``ResidentMemory``): once it is
/// ready, then each time playback stops or pauses.
struct ResidentMemoryService: Service, CustomStringConvertible {
    let memory: ResidentMemory
    /// Waited for: what starting touched is given back once the daemon is ready.
    let ready: Milestone<Void>

    var description: String { "resident memory" }

    func run() async throws {
        guard (try? await cancelWhenGracefulShutdown { [ready] in try await ready.value() }) != nil else { return }
        memory.trimWhenQuiet()
        let following = memory.followPlayback()
        defer { withExtendedLifetime(following) {} }
        try? await gracefulShutdown()
        memory.cancelTrim()
    }
}
