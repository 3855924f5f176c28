import ServiceLifecycle

/// Follows the audio outputs (``AudioControl``), once everything else is served: following
/// them loads GStreamer and the sound server's client library. Stopping, it stops following.
struct OutputsService: Service, CustomStringConvertible {
    let audio: AudioControl
    /// Waited for: the daemon is ready.
    let ready: Milestone<Void>

    var description: String { "outputs" }

    func run() async throws {
        guard (try? await cancelWhenGracefulShutdown { [ready] in try await ready.value() }) != nil else { return }
        audio.start()
        try? await gracefulShutdown()
        try await shutdownStep("no longer following the audio outputs") { [audio] in audio.stop() }
    }
}
