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
    private let continuation: AsyncStream<PlaybackEvent>.Continuation
    private let playbin: Playbin
    private let commands = TurnQueue(width: 1)
    /// Where the calls run: their state changes block their thread.
    private let ownThread = BlockingExecutor(label: "gstreamer-engine", width: 1)
    /// Everything the calls and the bus thread share. GStreamer state changes are made while
    /// holding it; no GStreamer streaming thread ever takes it (they only take `handover`).
    private let control = Mutex(Control())
    /// What the `about-to-finish` handler uses, on a streaming thread. An object of its own:
    /// the handler must not hold the engine, whose release would then stop the pipeline from
    /// a streaming thread.
    private let handover = HandoverState()

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
    public init(audioSink: String = "autoaudiosink", networkTimeout: Duration = .seconds(5)) throws(PlaybackError) {
        playbin = try Playbin(audioSink: audioSink, networkTimeout: networkTimeout)
        (events, continuation) = AsyncStream.makeStream(of: PlaybackEvent.self)
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
        for waiter in waiters { waiter.finish(.failed(Self.interrupted(nil))) }
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
        try await perform(superseding: true) { epoch throws(PlaybackError) in
            try await preroll(url, announcing: true, at: nil, epoch: epoch)
        }
    }

    public func play() async throws(PlaybackError) {
        try await perform(superseding: false) { epoch throws(PlaybackError) in
            let (isActive, current) = try withControl(epoch) { control throws(PlaybackError) in
                (control.isActive, control.current)
            }
            guard let current else { throw Self.notLoaded }
            if !isActive { try await preroll(current, announcing: false, at: nil, epoch: epoch) }
            try await start(.playing, epoch: epoch)
        }
    }

    public func pause() async throws(PlaybackError) {
        try await perform(superseding: false) { epoch throws(PlaybackError) in
            let (isActive, current) = try withControl(epoch) { control throws(PlaybackError) in
                (control.isActive, control.current)
            }
            guard let current else { throw Self.notLoaded }
            if !isActive {
                try await preroll(current, announcing: false, at: nil, epoch: epoch)
            } else {
                try await start(.paused, epoch: epoch)
            }
        }
    }

    public func stop() async {
        try? await perform(superseding: true) { epoch throws(PlaybackError) in
            try withControl(epoch) { control throws(PlaybackError) in
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
        try await perform(superseding: false) { epoch throws(PlaybackError) in
            let rate = try withControl(epoch) { control throws(PlaybackError) in
                guard control.isActive else { throw Self.notLoaded }
                if let duration = playbin.duration, position > duration {
                    throw PlaybackError(
                        kind: .invalidArgument, url: control.current,
                        message: "Cannot seek to \(position), past the end (\(duration))")
                }
                return control.rate
            }
            try await seekCurrent(to: position, rate: rate, epoch: epoch, reloadingIfLost: true)
        }
    }

    public func setRate(_ rate: Double) async throws(PlaybackError) {
        guard rate.isFinite, rate > 0 else {
            throw PlaybackError(kind: .invalidArgument, url: nil, message: "Invalid playback rate \(rate): must be above 0")
        }
        try await perform(superseding: false) { epoch throws(PlaybackError) in
            let applies = try withControl(epoch) { control throws(PlaybackError) in
                guard control.isActive, control.rate != rate else {
                    setRate(rate, &control)
                    return false
                }
                return true
            }
            guard applies else { return }
            try await seekCurrent(to: playbin.position ?? .zero, rate: rate, epoch: epoch, reloadingIfLost: true)
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
        guard control.withLock({ $0.isActive }) else { return nil }
        return playbin.position
    }

    public var duration: Duration? {
        guard control.withLock({ $0.isActive }) else { return nil }
        return playbin.duration
    }

    /// The playback rate that applies to what plays and to the next items (1 = normal speed).
    public var rate: Double { control.withLock { $0.rate } }

    /// The URL of the current item: the last one loaded, or the last one handed over once it
    /// started. Stays after ``stop()``; nil when nothing is loaded or after an error.
    public var currentURL: URL? { control.withLock { $0.current } }

    public func setSuccessorProvider(_ provider: (@Sendable (_ item: URL) -> URL?)?) {
        handover.withLock { $0.provider = provider }
    }

    // MARK: - Commands

    /// Runs `body` after every earlier call, unless a later `stop()`/`load(_:)` supersedes this
    /// one first. A superseding call interrupts the waits of every earlier call.
    private func perform(
        superseding: Bool, _ body: (_ epoch: Int) async throws(PlaybackError) -> Void
    ) async throws(PlaybackError) {
        let (epoch, interrupted) = control.withLock { control in
            guard superseding else { return (control.epoch, [Waiter]()) }
            control.epoch += 1
            defer { control.waiters.removeAll() }
            return (control.epoch, control.waiters)
        }
        for waiter in interrupted { waiter.finish(.failed(Self.interrupted(nil))) }
        try await withTaskExecutorPreference(ownThread) { () async throws(PlaybackError) in
            try await commands.run { () async throws(PlaybackError) in try await body(epoch) }
        }
    }

    /// Runs `body` under the control lock if no later `stop()`/`load(_:)` superseded the call.
    private func withControl<Result: Sendable>(
        _ epoch: Int, _ body: (inout Control) throws(PlaybackError) -> Result
    ) throws(PlaybackError) -> Result {
        try control.withLock { (control: inout Control) throws(PlaybackError) -> Result in
            guard control.epoch == epoch else { throw Self.interrupted(control.current) }
            return try body(&control)
        }
    }

    /// Loads `url` into a fresh pipeline run and waits until it is prerolled (paused), then
    /// seeks to `position` if given. The rate applies from the first segment (Playbin.rate).
    private func preroll(
        _ url: URL, announcing: Bool, at position: Duration?, epoch: Int
    ) async throws(PlaybackError) {
        let (waiter, rate) = try withControl(epoch) { control throws(PlaybackError) in
            teardown(&control)
            playbin.renewTempoFilter()
            setCurrent(url, &control)
            control.isActive = true
            control.target = .paused
            if announcing {
                control.announcement = url
                control.tags = StreamTags()
                control.mustReportDuration = true
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
            try await seekCurrent(to: position, rate: rate, epoch: epoch, reloadingIfLost: false)
        }
    }

    /// Moves a prerolled pipeline to `state` (playing or paused) and waits until it is there.
    /// While network buffering is below 100 %, PLAYING is reached only once it is done.
    private func start(_ state: EngineState, epoch: Int) async throws(PlaybackError) {
        let waiter = try withControl(epoch) { control throws(PlaybackError) -> Waiter? in
            guard control.isActive else { throw Self.notLoaded }
            control.target = state
            let pipelineState: PipelineState = state == .playing ? .playing : .paused
            if state == .paused { control.isHeldForBuffering = false }
            let (current, pending) = playbin.state
            if current == pipelineState && pending == .voidPending { return nil }
            let waiter = register(.reached(pipelineState), in: &control)
            if state == .playing && control.bufferingPercent < 100 {
                control.isHeldForBuffering = true
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
        to position: Duration, rate: Double, epoch: Int, reloadingIfLost: Bool
    ) async throws(PlaybackError) {
        enum Plan: Sendable {
            case wait(Waiter)
            case reload(URL, EngineState)
        }
        // A flushing seek while playing passes through PAUSED: not a change worth reporting.
        try withControl(epoch) { control throws(PlaybackError) in control.quietSeeks += 1 }
        defer { control.withLock { $0.quietSeeks -= 1 } }
        let plan = try withControl(epoch) { control throws(PlaybackError) -> Plan in
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
                let target = try withControl(epoch) { control throws(PlaybackError) in
                    control.waiters.removeAll { $0 === waiter }
                    return (control.current, control.target)
                }
                guard reloadingIfLost, let current = target.0 else {
                    throw PlaybackError(kind: .other, url: target.0, message: "The seek did not complete")
                }
                try await reload(current, at: position, restoring: target.1, epoch: epoch)
            }
        case .reload(let url, let target):
            try await reload(url, at: position, restoring: target, epoch: epoch)
        }
    }

    /// Plays `url` again from `position`, in `state`, without announcing it as a new stream.
    private func reload(
        _ url: URL, at position: Duration, restoring state: EngineState, epoch: Int
    ) async throws(PlaybackError) {
        try withControl(epoch) { control throws(PlaybackError) in control.quietSeeks += 1 }
        defer { control.withLock { $0.quietSeeks -= 1 } }
        try await preroll(url, announcing: false, at: position, epoch: epoch)
        if state == .playing { try await start(.playing, epoch: epoch) }
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
    private func teardown(_ control: inout Control) {
        control.generation += 1
        playbin.setState(.null)
        handover.withLock { handover in
            handover.pending.removeAll()
            handover.flushAwaited = nil
            handover.missedDrain = false
            handover.refused = nil
        }
        playbin.postMarker(control.generation)
        control.bufferingPercent = 100
        control.isHeldForBuffering = false
        control.streamStarts = 0
        control.announcement = nil
        let abandoned = control.waiters
        control.waiters.removeAll()
        for waiter in abandoned { waiter.finish(.failed(Self.interrupted(control.current))) }
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
    private func setCurrent(_ url: URL?, _ control: inout Control) {
        control.current = url
        handover.withLock { $0.current = url }
    }

    private func register(_ condition: Waiter.Condition, in control: inout Control) -> Waiter {
        let waiter = Waiter(condition)
        control.waiters.append(waiter)
        return waiter
    }

    // MARK: - The bus thread

    private func handle(_ message: BusMessage) {
        control.withLock { control in
            if case .marker(let generation) = message {
                control.busGeneration = generation
                if generation == control.generation && !control.isActive {
                    report(.stopped, &control)
                }
                return
            }
            // Messages of a pipeline run that has been torn down since.
            guard control.busGeneration == control.generation else { return }
            switch message {
            case .marker:
                break
            case .stateChanged(_, let new, _):
                // Events before waiters: a call returns after the events of what it waited for.
                if control.quietSeeks == 0 && control.isActive {
                    if new == .playing { report(.playing, &control) }
                    if new == .paused { report(.paused, &control) }
                }
                resolve(&control) { condition in condition == .reached(new) }
            case .asyncDone(let sequence):
                let duration = playbin.duration
                if control.mustReportDuration || duration != control.reportedDuration {
                    control.mustReportDuration = false
                    control.reportedDuration = duration
                    continuation.yield(.durationChanged(duration))
                }
                resolve(&control) { condition in
                    switch condition {
                    case .prerolled: true
                    // Sequence numbers wrap: "after" is a positive signed distance.
                    case .seekDone(let seek): Int32(bitPattern: sequence &- seek) > 0
                    case .reached: false
                    }
                }
            case .streamStarted:
                streamStarted(&control)
            case .endOfStream:
                if let refused = handover.withLock({ $0.refused }) {
                    stopAfterFailure(&control)
                    continuation.yield(.error(refused))
                } else {
                    continuation.yield(.endOfStream)
                }
            case .error(let failure):
                failed(failure, &control)
            case .tags(let tags):
                let merged = control.tags.merging(tags)
                if merged != control.tags {
                    control.tags = merged
                    continuation.yield(.tagsChanged(merged))
                }
            case .buffering(let percent):
                buffering(percent, &control)
            case .durationChanged:
                // Parsers post these while prerolling, before the item is announced (ASYNC_DONE
                // reports it then), and a next item being prepared posts them before it plays
                // (its STREAM_START reports it).
                guard control.streamStarts > 0, !control.mustReportDuration,
                    handover.withLock({ $0.pending.isEmpty })
                else { return }
                let duration = playbin.duration
                if duration != control.reportedDuration {
                    control.reportedDuration = duration
                    continuation.yield(.durationChanged(duration))
                }
            case .clockLost:
                if control.target == .playing && !control.isHeldForBuffering {
                    playbin.setState(.paused)
                    playbin.setState(.playing)
                }
            case .latency:
                playbin.recalculateLatency()
            }
        }
    }

    private func streamStarted(_ control: inout Control) {
        control.streamStarts += 1
        if control.streamStarts == 1 {
            if let url = control.announcement {
                control.announcement = nil
                continuation.yield(.streamStarted(url))
            }
            return
        }
        // A later stream start in the same run is a gapless hand-over, or a new chain of the
        // same stream (chained Ogg), which has no URL waiting.
        guard let next = handover.withLock({ $0.pending.isEmpty ? nil : $0.pending.removeFirst() }) else { return }
        setCurrent(next, &control)
        control.tags = StreamTags()
        continuation.yield(.streamStarted(next))
        let duration = playbin.duration
        control.reportedDuration = duration
        continuation.yield(.durationChanged(duration))
    }

    private func failed(_ failure: PipelineError, _ control: inout Control) {
        let url = url(of: failure, in: control)
        let error = PlaybackError(failure, url: url)
        // An item prepared for a gapless hand-over fails while the current one still plays:
        // that is not the failure of a call about the current item.
        let isNextItem = url != nil && url != control.current && handover.withLock { $0.pending.contains(url!) }
        let waiting = control.waiters
        let current = control.current
        control.waiters.removeAll()
        stopAfterFailure(&control)
        if waiting.isEmpty || isNextItem {
            let stopped = PlaybackError(
                kind: .other, url: current, message: "Stopped because the next item failed: \(error)")
            for waiter in waiting { waiter.finish(.failed(stopped)) }
            continuation.yield(.error(error))
        } else {
            for waiter in waiting { waiter.finish(.failed(error)) }
        }
    }

    private func stopAfterFailure(_ control: inout Control) {
        teardown(&control)
        control.isActive = false
        setCurrent(nil, &control)
        control.target = .stopped
    }

    /// The URL the caller gave for the URI GStreamer names (which may escape differently).
    private func url(of failure: PipelineError, in control: Control) -> URL? {
        guard let uri = failure.uri, let reported = URL(string: uri) else { return control.current }
        let candidates = [control.current].compactMap { $0 } + handover.withLock { $0.pending }
        return candidates.first { candidate in
            candidate.absoluteString == uri || (candidate.isFileURL && reported.isFileURL && candidate.path == reported.path)
        } ?? reported
    }

    /// Usual GStreamer practice: hold the pipeline paused while buffering is below 100 % if
    /// PLAYING is wanted, and resume at 100 %.
    private func buffering(_ percent: Int, _ control: inout Control) {
        if percent != control.bufferingPercent { continuation.yield(.buffering(percent: percent)) }
        control.bufferingPercent = percent
        guard control.target == .playing else { return }
        if percent < 100 && !control.isHeldForBuffering {
            control.isHeldForBuffering = true
            playbin.setState(.paused)
        } else if percent >= 100 && control.isHeldForBuffering {
            control.isHeldForBuffering = false
            playbin.setState(.playing)
        }
    }

    private func report(_ state: EngineState, _ control: inout Control) {
        guard state != control.reportedState else { return }
        control.reportedState = state
        continuation.yield(.stateChanged(state))
    }

    private func resolve(_ control: inout Control, where matches: (Waiter.Condition) -> Bool) {
        let (done, remaining) = (
            control.waiters.filter { matches($0.condition) }, control.waiters.filter { !matches($0.condition) }
        )
        control.waiters = remaining
        for waiter in done { waiter.finish(.done) }
    }

    // MARK: - Errors

    private static let notLoaded = PlaybackError(kind: .notLoaded, url: nil, message: "Nothing is loaded")

    private static func interrupted(_ url: URL?) -> PlaybackError {
        PlaybackError(kind: .other, url: url, message: "Interrupted by a later stop() or load()")
    }
}

// MARK: - State

/// What the calls and the bus thread share, under `GStreamerEngine.control`.
private struct Control: Sendable {
    /// Bumped by each `stop()`/`load()` call: earlier calls are superseded.
    var epoch = 0
    /// Bumped by each teardown of the pipeline; its marker tells the bus thread where it starts.
    var generation = 0
    /// The last marker the bus thread saw.
    var busGeneration = 0
    /// The current item; kept after `stop()`, cleared by an error.
    var current: URL?
    /// Whether the pipeline holds `current` (false when stopped, after an error, or empty).
    var isActive = false
    /// What the caller asked for last.
    var target: EngineState = .stopped
    var rate = 1.0
    var bufferingPercent = 100
    /// Paused by the engine because buffering is below 100 % while PLAYING is wanted.
    var isHeldForBuffering = false
    /// The URL to announce at the first STREAM_START of this generation (after a load).
    var announcement: URL?
    var streamStarts = 0
    /// Seeks (and reloads) in progress: the state changes they pass through are not reported.
    var quietSeeks = 0
    var reportedState: EngineState = .stopped
    var reportedDuration: Duration?
    var mustReportDuration = false
    var tags = StreamTags()
    /// Calls waiting for the bus.
    var waiters: [Waiter] = []
}

/// The hand-over state, shared by the engine and the `about-to-finish` handler.
private final class HandoverState: Sendable {
    private let state = Mutex(Handover())

    func withLock<Result: Sendable>(_ body: (inout Handover) -> Result) -> Result {
        state.withLock { body(&$0) }
    }

    /// The URI to hand over now, if any. On a GStreamer streaming thread, at `about-to-finish`;
    /// `flushCount` is the output's FLUSH_STOP count at that moment.
    func nextURI(flushCount: Int) -> String? {
        withLock { handover in
            if let awaited = handover.flushAwaited {
                guard flushCount > awaited else {
                    // Drained before the seek's flush: the seek restarts the data, which drains again.
                    handover.missedDrain = true
                    return nil
                }
                handover.flushAwaited = nil
            }
            // The item about to finish: a short item prepared as next can finish reading before
            // it starts playing.
            guard let finishing = handover.pending.last ?? handover.current else { return nil }
            guard let next = handover.provider?(finishing) else { return nil }
            // A missing file would fail as soon as it is prepared, cutting the current item
            // short: refuse it here, and report it when the current item has ended.
            if next.isFileURL && !FileManager.default.isReadableFile(atPath: next.path) {
                let reason = FileManager.default.fileExists(atPath: next.path) ? "Cannot read the file" : "No such file"
                handover.refused = PlaybackError(
                    kind: .notFound, url: next, message: "Resource not found: \(reason) \"\(next.path)\"")
                return nil
            }
            handover.pending.append(next)
            return next.absoluteString
        }
    }
}

/// What the engine and the `about-to-finish` handler share, under `HandoverState`.
private struct Handover: Sendable {
    /// What plays after an item, told which one (``PlaybackEngine/setSuccessorProvider(_:)``).
    var provider: (@Sendable (URL) -> URL?)?
    /// The current item (as in `Control`).
    var current: URL?
    /// A next item refused at `about-to-finish` (a missing file): reported when the current one ends.
    var refused: PlaybackError?
    /// URLs given to playbin at `about-to-finish` whose STREAM_START has not come yet, in order.
    var pending: [URL] = []
    /// While set (a seek is being issued), a drain hands nothing over until the flush count
    /// exceeds this: playbin would lose a seek issued after it prepared the next item.
    var flushAwaited: Int?
    /// A drain came while a flush was awaited.
    var missedDrain = false
}

/// A call waiting for the bus thread to see something.
private final class Waiter: Sendable {
    enum Condition: Sendable, Equatable {
        /// ASYNC_DONE: prerolled after a load.
        case prerolled
        /// An ASYNC_DONE numbered after the seek event with this sequence number: the seek's.
        case seekDone(after: UInt32)
        /// The pipeline reached this state.
        case reached(PipelineState)
    }

    enum Outcome: Sendable {
        case done
        case failed(PlaybackError)
        case timedOut
    }

    let condition: Condition
    private let state = Mutex<(outcome: Outcome?, continuation: CheckedContinuation<Outcome, Never>?)>((nil, nil))
    private let failureExpected = Atomic<Bool>(false)

    init(_ condition: Condition) { self.condition = condition }

    /// Set when the state change failed at once: the ERROR should follow promptly.
    var expectsFailure: Bool {
        get { failureExpected.load(ordering: .relaxed) }
        set { failureExpected.store(newValue, ordering: .relaxed) }
    }

    /// Completes the wait; only the first outcome counts.
    func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }

    /// Waits for the outcome, or `.timedOut` after `timeout` (nil waits for ever).
    func outcome(within timeout: Duration?) async -> Outcome {
        let timer = timeout.map { timeout in
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { self?.finish(.timedOut) }
            }
        }
        defer { timer?.cancel() }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}


extension PlaybackError {
    /// The engine's reading of a GStreamer error about `url`.
    init(_ failure: PipelineError, url: URL?) {
        let isRemote = ["http", "https"].contains(url?.scheme?.lowercased() ?? "")
        let kind: Kind =
            switch failure.category {
            case .notFound: .notFound
            case .input: isRemote ? .network : .notFound
            case .output: .outputDevice
            case .decode: .unsupported
            case .other: isRemote ? .network : .other
            }
        var message = failure.message
        if message.hasSuffix(".") { message.removeLast() }
        // libsoup 3 reports a refused or lost connection as a bare "Internal data stream error".
        if kind == .network { message = "Network error: " + message }
        if !failure.detail.isEmpty { message += ": " + failure.detail }
        self.init(kind: kind, url: url, message: message)
    }
}
