#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Playback

/// What the calls and the bus thread share, under `GStreamerEngine.control`.
///
/// One lock, not one per group: a call's GStreamer state change and the bookkeeping that
/// says what it expects (a new run, a waiter) must be seen by the bus thread together, and
/// the bus thread's own changes (buffering holds, a failure's teardown) must not interleave
/// with a call's.
struct Control: Sendable {
    /// The current item; kept after `stop()`, cleared by an error.
    var current: URL?
    /// Whether the pipeline holds `current` (false when stopped, after an error, or empty).
    var isActive = false
    /// What the caller asked for last.
    var target: EngineState = .stopped
    var rate = 1.0
    /// Applies from each run's start (its audio filter); track and album switch live.
    var replayGain: ReplayGainMode = .off
    /// The pipeline's run since its last teardown.
    var run = PipelineRun(generation: 0)
    /// The last teardown marker the bus thread saw: messages before the current run's marker
    /// belong to a torn-down run.
    var busGeneration = 0
    /// What the events have told the player so far.
    var reported = Reported()
    /// Calls waiting for the bus.
    var waiters: [Waiter] = []
    /// Set while the current item is paused with its pipeline torn down
    /// (`GStreamerEngine.releaseOutput()`): `isActive` stays true and `target` paused, and
    /// play, seek and the position use this until the pipeline is made again.
    var released: ReleasedItem?
}

/// Where a paused item whose pipeline was released stands.
struct ReleasedItem: Sendable {
    var position: Duration
    var duration: Duration?
}

/// One run of the pipeline, from a teardown to the next: everything here starts afresh.
struct PipelineRun: Sendable {
    /// Numbers the run; its marker on the bus tells the bus thread where it starts.
    let generation: Int
    var bufferingPercent = 100
    /// Paused by the engine because buffering is below 100 % while PLAYING is wanted.
    var isHeldForBuffering = false
    /// Paused by the engine because the sound server corked the output; cleared by the end
    /// of the interruption or by any call that changes the state.
    var isInterrupted = false
    /// The URL to announce at the run's first STREAM_START (after a load).
    var announcement: URL?
    var streamStarts = 0
}

/// What the engine's events have said, so that each change is said once.
struct Reported: Sendable {
    /// Seeks (and reloads) in progress: the state changes they pass through are not reported.
    var quietSeeks = 0
    var state: EngineState = .stopped
    var duration: Duration?
    /// The next ASYNC_DONE reports the duration even if unchanged (a new item was loaded).
    var mustReportDuration = false
    var tags = StreamTags()
}
