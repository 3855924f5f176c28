import GStreamerPlayback
import Logging
import MediaRemote
import Playback
import Synchronization

/// The daemon's audio session: the outputs GStreamer's device monitor finds, the one chosen and
/// the ReplayGain mode, published through `AudioSession` (and so on `org.mprisbridge.Player1`),
/// applied to the engine, and kept in the state folder across restarts.
///
/// The engine is made by the player on first play (``makeEngine()``); until then a choice is
/// only recorded, and the engine starts with it.
final class AudioControl: Sendable {
    let session = AudioSession()
    private let audioSink: String
    private let store: StateStore
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var engine: GStreamerEngine?
        var outputs: [AudioOutput] = []
        /// The output chosen (by its identifier), kept while it is away (unplugged headphones):
        /// it is used again when it comes back.
        var chosen: String?
        var monitor: AudioOutputMonitor?
    }

    /// The settings' names in the state database.
    static let replayGainKey = "replay_gain"
    static let outputKey = "output_route"

    /// - Parameter replayGain: the mode asked for on the command line, which replaces the saved
    ///   one; nil keeps the saved one (off at first).
    init(audioSink: String, replayGain: AudioSession.ReplayGainMode?, store: StateStore, logger: Logger) {
        self.audioSink = audioSink
        self.store = store
        self.logger = logger
        // Nothing here loads GStreamer: the bus name and the tree come first (see `start()`).
        let saved = store.setting(Self.replayGainKey).flatMap(AudioSession.ReplayGainMode.init(rawValue:))
        if let replayGain, replayGain != saved { store.saveSetting(Self.replayGainKey, replayGain.rawValue) }
        session.replayGain = replayGain ?? saved ?? .off
        session.setReplayGainHandler { [weak self] mode in try await self?.applyReplayGain(mode) }
        let chosen = store.setting(Self.outputKey)
        state.withLock { $0.chosen = chosen }
        // Until the outputs are known, the one in use is the one chosen.
        session.currentOutputRoute = chosen
    }

    /// Starts following the outputs, when the audio sink can choose one (`autoaudiosink` or
    /// `pulsesink`); with another the output is fixed and remotes cannot choose. This loads
    /// GStreamer and the sound server's client library: call it once the daemon is ready.
    func start() {
        guard GStreamerEngine.canSelectOutput(audioSink: audioSink) else {
            logger.info("the audio sink \"\(audioSink)\" fixes the output: remotes cannot choose one")
            return
        }
        do {
            let monitor = try AudioOutputMonitor { [weak self] outputs in self?.outputsChanged(outputs) }
            state.withLock { $0.monitor = monitor }
            let outputs = monitor.outputs
            outputsChanged(outputs)
            session.setOutputRouteHandler { [weak self] route in try await self?.select(route?.identifier) }
            logger.info("audio outputs: \(outputs.map { "\($0.name) (\($0.identifier))" }.joined(separator: ", "))")
        } catch {
            logger.warning("cannot follow the audio outputs: \(error)")
        }
    }

    /// Stops following the outputs.
    func stop() {
        let monitor = state.withLock { state in defer { state.monitor = nil }; return state.monitor }
        monitor?.stop()
    }

    /// The player's engine factory: an engine with the chosen output and ReplayGain mode.
    func makeEngine() throws -> any PlaybackEngine {
        let (output, mode) = state.withLock { state in
            (state.outputs.first { $0.identifier == state.chosen }, session.replayGain)
        }
        if mode != .off, !GStreamerEngine.hasReplayGain {
            logger.warning("ReplayGain is off: GStreamer has no rgvolume or rglimiter (gstreamer1.0-plugins-good)")
        }
        let engine = try GStreamerEngine(audioSink: audioSink, replayGain: ReplayGainMode(mode), output: output)
        state.withLock { $0.engine = engine }
        return engine
    }

    /// Releases the engine's audio output and pipeline while it stays paused (see
    /// `GStreamerEngine.releaseOutput()`); true if it did.
    func releaseOutput() async -> Bool {
        guard let engine = state.withLock({ $0.engine }) else { return false }
        let released = await engine.releaseOutput()
        if released { logger.debug("paused: the audio output is released until playing again") }
        return released
    }

    private func applyReplayGain(_ mode: AudioSession.ReplayGainMode) async throws {
        if let engine = state.withLock({ $0.engine }) {
            try await engine.setReplayGain(ReplayGainMode(mode))
        } else if mode != .off, !GStreamerEngine.hasReplayGain {
            throw AudioSession.RequestError.notSupported(
                "GStreamer has no rgvolume or rglimiter (install gstreamer1.0-plugins-good)")
        }
        store.saveSetting(Self.replayGainKey, mode.rawValue)
        logger.info("ReplayGain: \(mode.rawValue)")
    }

    /// A remote chose `identifier` (nil: the system's default).
    private func select(_ identifier: String?) async throws {
        let (engine, output) = state.withLock { state in
            (state.engine, identifier.flatMap { id in state.outputs.first { $0.identifier == id } })
        }
        if let engine { try await engine.selectOutput(output) }
        state.withLock { $0.chosen = identifier }
        store.saveSetting(Self.outputKey, identifier)
        logger.info("playing through \(output?.name ?? "the system's default output")")
    }

    /// The monitor's news, on its thread: the list shown, and a chosen output that came back
    /// taken again.
    private func outputsChanged(_ outputs: [AudioOutput]) {
        let (engine, chosen, returning) = state.withLock { state -> (GStreamerEngine?, AudioOutput?, AudioOutput?) in
            let wasListed = state.outputs.contains { $0.identifier == state.chosen }
            state.outputs = outputs
            let chosen = outputs.first { $0.identifier == state.chosen }
            return (state.engine, chosen, wasListed ? nil : chosen)
        }
        session.outputRoutes = outputs.map { AudioSession.OutputRoute(identifier: $0.identifier, name: $0.name) }
        session.currentOutputRoute = chosen?.identifier
        if let engine, let returning {
            let logger = self.logger
            Task {
                do {
                    try await engine.selectOutput(returning)
                    logger.info("\(returning.name) is back: playing through it")
                } catch {
                    logger.warning("cannot play through \(returning.name) again: \(error)")
                }
            }
        }
    }
}

extension ReplayGainMode {
    /// The engine's setting for the mode the session shows remotes.
    init(_ mode: AudioSession.ReplayGainMode) {
        switch mode {
        case .off: self = .off
        case .track: self = .track
        case .album: self = .album
        }
    }
}
