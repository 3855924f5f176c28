#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import AsyncSupport
import Playback
import Synchronization

/// The GStreamer implementation of ``PlaybackEngine``, on `playbin` (playbin2).
///
/// playbin rather than playbin3: on GStreamer 1.22 both hand over gaplessly in a quick trial,
/// but playbin3 is still marked experimental there, and everything below (one uridecodebin per
/// item, what a seek does once the next item is prepared, when STREAM_START is posted) was
/// verified on playbin.
///
/// How it works, in short:
/// - One bus thread reads every message, blocked without a timeout (a paused engine makes no
///   wake-ups), and turns messages into ``PlaybackEvent``s and into the completion of the call
///   that waits for them (ASYNC_DONE completes a load or a seek, a state change completes
///   play or pause, an ERROR fails the waiting call).
/// - Calls run one at a time through a FIFO queue, on the engine's own thread, never on the
///   threads Swift's tasks share: a state change to NULL waits for the streaming threads to
///   stop (a stalled network source may take seconds). Every state change happens under one
///   lock, so the bus thread's own changes (buffering, errors) never interleave with a call's.
/// - Each teardown of the pipeline starts a new *generation* and posts a marker on the bus;
///   messages before the current generation's marker belong to a torn-down run and are ignored.
/// - `about-to-finish` asks the provider and sets the next URI synchronously; the URL waits in
///   a list until its STREAM_START, which announces it. playbin cannot seek an item once the
///   next one is prepared, so a seek or rate change then reloads the current item at the
///   position (a few milliseconds) and the provider is asked again.
public final class GStreamerEngine: PlaybackEngine {
    public let events: AsyncStream<PlaybackEvent>
    let continuation: AsyncStream<PlaybackEvent>.Continuation
    let playbin: Playbin
    private let commands = TurnQueue(width: 1)
    /// Where the calls run: their state changes block their thread.
    private let ownThread = BlockingExecutor(label: "gstreamer-engine", width: 1)
    /// Everything the calls and the bus thread share. GStreamer state changes are made while
    /// holding it; no GStreamer streaming thread ever takes it (they only take `handover`).
    let control = Mutex(Control())
    /// What the `about-to-finish` handler uses, on a streaming thread. An object of its own:
    /// the handler must not hold the engine, whose release would then stop the pipeline from
    /// a streaming thread.
    let handover = HandoverState()

    /// How long a seek may take before the engine assumes playbin lost it and reloads the item.
    private static let seekTimeout: Duration = .seconds(5)
    /// How long to wait for the ERROR message after a state change failed at once.
    private static let failureReportTimeout: Duration = .seconds(2)

    /// Creates an engine with its pipeline and bus thread; nothing is loaded.
    ///
    /// - Parameters:
    ///   - audioSink: A gst-launch description of the output, such as
    ///     `"autoaudiosink"` (the default) or `"fakesink sync=true"` (tests, headless).
    ///   - networkTimeout: How long a stream's server may keep the engine waiting (to answer,
    ///     or mid-stream for more data) before the item fails with a
    ///     ``PlaybackError/Kind/network`` error; whole seconds, at least 1.
    /// - Throws: ``PlaybackError/Kind/invalidArgument`` with GStreamer's parse error for a bad
    ///   description; ``PlaybackError/Kind/other`` if GStreamer cannot start. Initialises
    ///   GStreamer once per process.
    ///   - replayGain: The ReplayGain mode to start with (see ``setReplayGain(_:)``); off if
    ///     GStreamer lacks the ReplayGain elements.
    ///   - output: The output to play through (see ``selectOutput(_:)``); nil, or an audio sink
    ///     that cannot choose, plays through the sink's own choice.
    public init(
        audioSink: String = "autoaudiosink", networkTimeout: Duration = .seconds(5),
        replayGain: ReplayGainMode = .off, output: AudioOutput? = nil
    ) throws(PlaybackError) {
        playbin = try Playbin(audioSink: audioSink, networkTimeout: networkTimeout)
        let replayGain = Self.hasReplayGain ? replayGain : .off
        control.withLock { $0.replayGain = replayGain }
        if let output, playbin.canSelectOutput { playbin.selectOutput(output.device) }
        (events, continuation) = AsyncStream.makeStream(of: PlaybackEvent.self)
        let continuation = self.continuation
        playbin.onVolumeChangedOutside { continuation.yield(.volumeChanged($0)) }
        let handover = self.handover
        playbin.start(
            onMessage: { [weak self] message in self?.handle(message) },
            nextURI: { flushCount in handover.nextURI(flushCount: flushCount) })
    }

    deinit {
        playbin.shutdown()
        let waiters = control.withLock { control in
            defer { control.waiters.removeAll() }
            return control.waiters
        }
        for waiter in waiters { waiter.finish(.failed(Self.stopped(nil))) }
        continuation.finish()
    }

    /// The kernel id of the bus thread (tests check that it sleeps while paused).
    var busThreadID: Int32? { playbin.busThreadID }

    /// Calls `observer` for each buffer that reaches the output, with its timestamps by the
    /// pipeline clock, on a streaming thread (tests measure rates and gaps with it). Call before
    /// loading.
    func observeOutput(_ observer: @escaping @Sendable (OutputBuffer) -> Void) {
        playbin.observeOutput(observer)
    }

    // MARK: - PlaybackEngine

    public func load(_ url: URL) async throws(PlaybackError) {
        guard let scheme = url.scheme?.lowercased(), ["file", "http", "https"].contains(scheme) else {
            throw PlaybackError(
                kind: .invalidArgument, url: url, message: "Only file, http and https URLs can be played")
        }
        try await perform { () throws(PlaybackError) in
            try await preroll(url, announcing: true, at: nil)
        }
    }

    public func play() async throws(PlaybackError) {
        try await perform { () throws(PlaybackError) in
            let (isActive, current) = try withControl { control throws(PlaybackError) in
                (control.isActive, control.current)
            }
            guard let current else { throw Self.notLoaded }
            if !isActive {
                try await preroll(current, announcing: false, at: nil)
            } else if let released = control.withLock({ $0.released }) {
                try await restore(current, released)
            }
            try await start(.playing)
        }
    }

    public func pause() async throws(PlaybackError) {
        try await perform { () throws(PlaybackError) in
            let (isActive, current) = try withControl { control throws(PlaybackError) in
                (control.isActive, control.current)
            }
            guard let current else { throw Self.notLoaded }
            if !isActive {
                try await preroll(current, announcing: false, at: nil)
            } else if control.withLock({ $0.released == nil }) {
                try await start(.paused)
            }
        }
    }

    public func stop() async {
        try? await perform { () throws(PlaybackError) in
            try withControl { control throws(PlaybackError) in
                teardown(&control)
                control.isActive = false
                control.target = .stopped
            }
        }
    }

    public func seek(to position: Duration) async throws(PlaybackError) {
        guard position >= .zero else {
            throw PlaybackError(kind: .invalidArgument, url: nil, message: "Cannot seek to a negative position \(position)")
        }
        try await perform { () throws(PlaybackError) in
            let rate = try withControl { control throws(PlaybackError) -> Double? in
                guard control.isActive else { throw Self.notLoaded }
                if let duration = control.released?.duration ?? playbin.duration, position > duration {
                    throw PlaybackError(
                        kind: .invalidArgument, url: control.current,
                        message: "Cannot seek to \(position), past the end (\(duration))")
                }
                // Released: the position is where the pipeline will be made again.
                if control.released != nil {
                    control.released?.position = position
                    return nil
                }
                return control.rate
            }
            guard let rate else { return }
            try await seekCurrent(to: position, rate: rate, reloadingIfLost: true)
        }
    }

    public func setRate(_ rate: Double) async throws(PlaybackError) {
        guard rate.isFinite, rate > 0 else {
            throw PlaybackError(kind: .invalidArgument, url: nil, message: "Invalid playback rate \(rate): must be above 0")
        }
        try await perform { () throws(PlaybackError) in
            let applies = try withControl { control throws(PlaybackError) in
                // Released, the rate applies when the pipeline is made again (Playbin.rate).
                guard control.isActive, control.released == nil, control.rate != rate else {
                    setRate(rate, &control)
                    return false
                }
                return true
            }
            guard applies else { return }
            try await seekCurrent(to: playbin.position ?? .zero, rate: rate, reloadingIfLost: true)
        }
    }

    public var volume: Double {
        get { playbin.volume }
        set {
            guard !newValue.isNaN else { return }
            playbin.volume = min(max(newValue, 0), 10)
        }
    }

    public var isMuted: Bool {
        get { playbin.isMuted }
        set { playbin.isMuted = newValue }
    }

    public var position: Duration? {
        let (isActive, released) = control.withLock { ($0.isActive, $0.released) }
        guard isActive else { return nil }
        return released.map(\.position) ?? playbin.position
    }

    public var duration: Duration? {
        let (isActive, released) = control.withLock { ($0.isActive, $0.released) }
        guard isActive else { return nil }
        return released.map(\.duration) ?? playbin.duration
    }

    /// The playback rate that applies to what plays and to the next items (1 = normal speed).
    public var rate: Double { control.withLock { $0.rate } }

    /// The URL of the current item: the last one loaded, or the last one handed over once it
    /// started. Stays after ``stop()``; nil when nothing is loaded or after an error.
    public var currentURL: URL? { control.withLock { $0.current } }

    /// The ReplayGain mode in use (``ReplayGainMode/off`` at first).
    public var replayGain: ReplayGainMode { control.withLock { $0.replayGain } }

    /// Whether GStreamer has the ReplayGain elements (`rgvolume`, `rglimiter`, from
    /// gstreamer1.0-plugins-good) that ``setReplayGain(_:)`` needs.
    public static var hasReplayGain: Bool { Playbin.hasReplayGain }

    /// Evens out the loudness of items by their ReplayGain tags (items without them play as
    /// they are), from now on. Between track and album the gain changes at once, while
    /// playing (what is already queued for the output, up to 2 s on PulseAudio, plays at the old gain);
    /// turning it on or off reloads the current item at its position (milliseconds), or, for a
    /// stream that cannot seek, applies from the next item. Gapless hand-overs are unchanged:
    /// each item's tags set its gain as it starts.
    ///
    /// - Throws: ``PlaybackError/Kind/unsupported`` without the ReplayGain elements (nothing
    ///   changes), or an error of reloading the current item.
    public func setReplayGain(_ mode: ReplayGainMode) async throws(PlaybackError) {
        guard mode == .off || Self.hasReplayGain else {
            throw PlaybackError(
                kind: .unsupported, url: nil,
                message: "ReplayGain needs GStreamer's rgvolume and rglimiter (gstreamer1.0-plugins-good)")
        }
        try await perform { () throws(PlaybackError) in
            let reload = try withControl { control throws(PlaybackError) -> (URL, EngineState)? in
                let old = control.replayGain
                control.replayGain = mode
                // Released, the pipeline made again has the new filter (preroll renews it).
                guard control.isActive, control.released == nil, old != mode, let current = control.current,
                    playbin.isSeekable
                else { return nil }
                if old != .off, mode != .off, playbin.setReplayGainAlbumMode(mode == .album) { return nil }
                return (current, control.target)
            }
            guard let (url, target) = reload else { return }
            try await self.reload(url, at: playbin.position ?? .zero, restoring: target)
        }
    }

    /// Whether ``selectOutput(_:)`` can choose the output: the audio sink is `autoaudiosink` or
    /// `pulsesink`, which play through the sound server's sinks that ``AudioOutputMonitor``
    /// finds. Another description (`fakesink`, an ALSA device) fixes the output.
    public var canSelectOutput: Bool { playbin.canSelectOutput }

    /// Whether an engine made with `audioSink` (a gst-launch description) can choose its
    /// output (see ``canSelectOutput``), without making one; false for a description that does
    /// not parse.
    public static func canSelectOutput(audioSink: String) -> Bool { Playbin.canSelectOutput(audioSink: audioSink) }

    /// Plays through `output` from now on; nil goes back to the system's default output. While
    /// playing, a chosen output takes the stream over without stopping it (the position goes
    /// on; the sound server drops what the old output had buffered, a few hundred
    /// milliseconds); going back to the default reloads the current item at its position.
    /// Items loaded later play there too.
    ///
    /// - Throws: ``PlaybackError/Kind/unsupported`` when ``canSelectOutput`` is false (nothing
    ///   changes), or an error of reloading the current item.
    public func selectOutput(_ output: AudioOutput?) async throws(PlaybackError) {
        guard canSelectOutput else {
            throw PlaybackError(
                kind: .unsupported, url: nil,
                message: "This audio sink plays to a fixed output; use autoaudiosink or pulsesink to choose one")
        }
        try await perform { () throws(PlaybackError) in
            let reload = try withControl { control throws(PlaybackError) -> (URL, EngineState)? in
                playbin.selectOutput(output?.device)
                // A sink keeps the server's default it started with: a new one follows the default.
                // Released, the sink made again connects to the default then.
                guard output == nil, control.isActive, control.released == nil, let current = control.current,
                    playbin.isSeekable
                else {
                    return nil
                }
                return (current, control.target)
            }
            guard let (url, target) = reload else { return }
            try await self.reload(url, at: playbin.position ?? .zero, restoring: target)
        }
    }

    public func setSuccessorProvider(_ provider: (@Sendable (_ item: URL) -> URL?)?) {
        handover.withLock { $0.provider = provider }
    }

    // MARK: - Commands

    /// Runs `body` after every earlier call. A call whose task is cancelled (a later command
    /// superseded it) does not start, or ends its wait on the pipeline, and stops the engine as
    /// ``stop()`` does before it throws ``PlaybackError/Kind/superseded``.
    func perform(_ body: () async throws(PlaybackError) -> Void) async throws(PlaybackError) {
        try await withTaskExecutorPreference(ownThread) { () async throws(PlaybackError) in
            try await commands.run { () async throws(PlaybackError) in
                do throws(PlaybackError) {
                    try await body()
                } catch {
                    if error.kind == .superseded {
                        // On the engine's thread, like every state change: a teardown may block.
                        control.withLock { control in
                            teardown(&control)
                            control.isActive = false
                            control.target = .stopped
                        }
                    }
                    throw error
                }
            }
        }
    }

    /// Runs `body` under the control lock, unless the call's task was cancelled.
    func withControl<Result: Sendable>(
        _ body: (inout Control) throws(PlaybackError) -> Result
    ) throws(PlaybackError) -> Result {
        try control.withLock { (control: inout Control) throws(PlaybackError) -> Result in
            guard !Task.isCancelled else { throw Self.superseded(control.current) }
            return try body(&control)
        }
    }

    /// Loads `url` into a fresh pipeline run and waits until it is prerolled (paused), then
    /// seeks to `position` if given. The rate applies from the first segment (Playbin.rate).
    func preroll(
        _ url: URL, announcing: Bool, at position: Duration?
    ) async throws(PlaybackError) {
        let (waiter, rate) = try withControl { control throws(PlaybackError) in
            teardown(&control)
            // Closed while released (`releaseOutput()`).
            playbin.openMainLoopKeeper()
            playbin.renewAudioFilter(replayGain: control.replayGain)
            setCurrent(url, &control)
            control.isActive = true
            control.target = .paused
            if announcing {
                control.run.announcement = url
                control.reported.tags = StreamTags()
                control.reported.mustReportDuration = true
            }
            if (position ?? .zero) > .zero {
                // A hand-over prepared before the seek below would make playbin lose the seek.
                awaitFlush()
            }
            playbin.setURI(url.absoluteString)
            let waiter = register(.prerolled, in: &control)
            switch playbin.setState(.paused) {
            case .failure: waiter.expectsFailure = true
            case .noPreroll: waiter.finish(.done)  // a live source: nothing to preroll
            case .success, .async: break
            }
            return (waiter, control.rate)
        }
        try await wait(for: waiter, url: url)
        // The stream starts at the engine's rate already (see Playbin.rate).
        if let position, position > .zero {
            try await seekCurrent(to: position, rate: rate, reloadingIfLost: false)
        }
    }

    /// Moves a prerolled pipeline to `state` (playing or paused) and waits until it is there.
    /// While network buffering is below 100 %, PLAYING is reached only once it is done.
    private func start(_ state: EngineState) async throws(PlaybackError) {
        let waiter = try withControl { control throws(PlaybackError) -> Waiter? in
            guard control.isActive else { throw Self.notLoaded }
            control.target = state
            // The listener decided: an interruption under way no longer resumes anything.
            control.run.isInterrupted = false
            let pipelineState: PipelineState = state == .playing ? .playing : .paused
            if state == .paused { control.run.isHeldForBuffering = false }
            let (current, pending) = playbin.state
            if current == pipelineState && pending == .voidPending { return nil }
            let waiter = register(.reached(pipelineState), in: &control)
            if state == .playing && control.run.bufferingPercent < 100 {
                control.run.isHeldForBuffering = true
            } else if playbin.setState(pipelineState) == .failure {
                waiter.expectsFailure = true
            }
            return waiter
        }
        if let waiter { try await wait(for: waiter, url: currentURL) }
    }

    /// A flushing accurate seek of the current item, at `rate`; returns once it completed.
    ///
    /// If playbin already prepared the next item (it then cannot seek the current one), or the
    /// seek got lost, reloads the current item at `position` instead and restores playing or
    /// paused (when `reloadingIfLost`).
    private func seekCurrent(
        to position: Duration, rate: Double, reloadingIfLost: Bool
    ) async throws(PlaybackError) {
        enum Plan: Sendable {
            case wait(Waiter)
            case reload(URL, EngineState)
        }
        // A flushing seek while playing passes through PAUSED: not a change worth reporting.
        try withControl { control throws(PlaybackError) in control.reported.quietSeeks += 1 }
        defer { control.withLock { $0.reported.quietSeeks -= 1 } }
        let plan = try withControl { control throws(PlaybackError) -> Plan in
            guard control.isActive, let current = control.current else { throw Self.notLoaded }
            guard handover.withLock({ !$0.pending.isEmpty }) || playbin.isSeekable else {
                throw PlaybackError(kind: .notSeekable, url: current, message: "This stream cannot seek")
            }
            // Checked and armed under one lock: a hand-over is either prepared already (then
            // reload) or waits for this seek's flush.
            let prepared = handover.withLock { handover in
                if !handover.pending.isEmpty { return true }
                handover.flushAwaited = playbin.flushCount
                handover.missedDrain = false
                return false
            }
            if prepared {
                guard reloadingIfLost else {
                    throw PlaybackError(kind: .other, url: current, message: "The next item was prepared during the seek")
                }
                setRate(rate, &control)
                return .reload(current, control.target)
            }
            playbin.rate = rate
            let sequence = playbin.seek(to: position, rate: rate)
            let accepted = sequence != nil
            let missed = handover.withLock { handover in
                if !accepted { handover.flushAwaited = nil }
                return handover.missedDrain
            }
            guard let sequence else {
                playbin.rate = control.rate
                if missed && reloadingIfLost {
                    setRate(rate, &control)
                    return .reload(current, control.target)
                }
                throw PlaybackError(kind: .notSeekable, url: current, message: "The stream refused to seek")
            }
            setRate(rate, &control)
            // Registered under the lock the bus thread takes: no ASYNC_DONE is handled between
            // the seek and this. One still queued from before the seek (a buffering resume,
            // say) does not end it: it is numbered before the seek.
            return .wait(register(.seekDone(after: sequence), in: &control))
        }
        switch plan {
        case .wait(let waiter):
            switch await waiter.outcome(within: Self.seekTimeout) {
            case .done: return
            case .failed(let error): throw error
            case .timedOut:
                let target = try withControl { control throws(PlaybackError) in
                    control.waiters.removeAll { $0 === waiter }
                    return (control.current, control.target)
                }
                guard reloadingIfLost, let current = target.0 else {
                    throw PlaybackError(kind: .other, url: target.0, message: "The seek did not complete")
                }
                try await reload(current, at: position, restoring: target.1)
            }
        case .reload(let url, let target):
            try await reload(url, at: position, restoring: target)
        }
    }

    /// Plays `url` again from `position`, in `state`, without announcing it as a new stream.
    private func reload(
        _ url: URL, at position: Duration, restoring state: EngineState
    ) async throws(PlaybackError) {
        try withControl { control throws(PlaybackError) in control.reported.quietSeeks += 1 }
        defer { control.withLock { $0.reported.quietSeeks -= 1 } }
        try await preroll(url, announcing: false, at: position)
        if state == .playing { try await start(.playing) }
    }

    /// Waits for `waiter`; a state change that failed at once gets a bounded wait for its ERROR.
    private func wait(for waiter: Waiter, url: URL?) async throws(PlaybackError) {
        let timeout = waiter.expectsFailure ? Self.failureReportTimeout : nil
        switch await waiter.outcome(within: timeout) {
        case .done: return
        case .failed(let error): throw error
        case .timedOut:
            let error = PlaybackError(kind: .other, url: url, message: "GStreamer could not start the pipeline")
            control.withLock { control in
                control.waiters.removeAll { $0 === waiter }
                stopAfterFailure(&control)
            }
            throw error
        }
    }

    /// Stops the pipeline and starts a new generation; called with the control lock held.
    func teardown(_ control: inout Control) {
        playbin.setState(.null)
        control.released = nil
        handover.withLock { handover in
            handover.pending.removeAll()
            handover.flushAwaited = nil
            handover.missedDrain = false
            handover.refused = nil
        }
        control.run = PipelineRun(generation: control.run.generation + 1)
        playbin.postMarker(control.run.generation)
        let abandoned = control.waiters
        control.waiters.removeAll()
        for waiter in abandoned { waiter.finish(.failed(Self.stopped(control.current))) }
    }

    /// Makes `about-to-finish` hand nothing over until a flushing seek issued after this call
    /// has flushed: playbin cannot seek an item once it prepared the next one. A drain after
    /// the flush belongs to the data after the seek, and hands over as usual.
    private func awaitFlush() {
        handover.withLock { handover in
            handover.flushAwaited = playbin.flushCount
            handover.missedDrain = false
        }
    }

    /// Sets the rate of what plays next (a seek applies it to what plays now).
    private func setRate(_ rate: Double, _ control: inout Control) {
        control.rate = rate
        playbin.rate = rate
    }

    /// Sets the current item, which the `about-to-finish` handler sees as well.
    func setCurrent(_ url: URL?, _ control: inout Control) {
        control.current = url
        handover.withLock { $0.current = url }
    }

    func register(_ condition: Waiter.Condition, in control: inout Control) -> Waiter {
        let waiter = Waiter(condition)
        control.waiters.append(waiter)
        return waiter
    }

    // MARK: - Errors

    static let notLoaded = PlaybackError(kind: .notLoaded, url: nil, message: "Nothing is loaded")

    /// What a call still waiting when the pipeline is torn down (after a failure) throws.
    static func stopped(_ url: URL?) -> PlaybackError {
        PlaybackError(kind: .other, url: url, message: "Interrupted: the pipeline was stopped")
    }

    static func superseded(_ url: URL?) -> PlaybackError {
        PlaybackError(kind: .superseded, url: url, message: "Superseded by a later command")
    }
}
