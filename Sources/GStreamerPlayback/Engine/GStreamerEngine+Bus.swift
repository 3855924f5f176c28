#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Playback
import Synchronization

/// The bus thread's side: each message becomes events and the completion of the calls
/// waiting for it, under the control lock.
extension GStreamerEngine {
    func handle(_ message: BusMessage) {
        control.withLock { control in
            if case .marker(let generation) = message {
                control.busGeneration = generation
                if generation == control.run.generation && !control.isActive {
                    report(.stopped, &control)
                }
                return
            }
            // Messages of a pipeline run that has been torn down since.
            guard control.busGeneration == control.run.generation else { return }
            switch message {
            case .marker:
                break
            case .stateChanged(_, let new, _):
                // Events before waiters: a call returns after the events of what it waited for.
                if control.reported.quietSeeks == 0 && control.isActive {
                    if new == .playing { report(.playing, &control) }
                    if new == .paused { report(.paused, &control) }
                }
                resolve(&control) { condition in condition == .reached(new) }
            case .asyncDone(let sequence):
                let duration = playbin.duration
                if control.reported.mustReportDuration || duration != control.reported.duration {
                    control.reported.mustReportDuration = false
                    control.reported.duration = duration
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
                let merged = control.reported.tags.merging(tags)
                if merged != control.reported.tags {
                    control.reported.tags = merged
                    continuation.yield(.tagsChanged(merged))
                }
            case .buffering(let percent):
                buffering(percent, &control)
            case .durationChanged:
                // Parsers post these while prerolling, before the item is announced (ASYNC_DONE
                // reports it then), and a next item being prepared posts them before it plays
                // (its STREAM_START reports it).
                guard control.run.streamStarts > 0, !control.reported.mustReportDuration,
                    handover.withLock({ $0.pending.isEmpty })
                else { return }
                let duration = playbin.duration
                if duration != control.reported.duration {
                    control.reported.duration = duration
                    continuation.yield(.durationChanged(duration))
                }
            case .clockLost:
                if control.target == .playing && !control.run.isHeldForBuffering {
                    playbin.setState(.paused)
                    playbin.setState(.playing)
                }
            case .latency:
                playbin.recalculateLatency()
            case .stateRequested(let requested):
                interruption(requesting: requested, &control)
            }
        }
    }

    func streamStarted(_ control: inout Control) {
        control.run.streamStarts += 1
        if control.run.streamStarts == 1 {
            if let url = control.run.announcement {
                control.run.announcement = nil
                continuation.yield(.streamStarted(url))
            }
            return
        }
        // A later stream start in the same run is a gapless hand-over, or a new chain of the
        // same stream (chained Ogg), which has no URL waiting.
        guard let next = handover.withLock({ $0.pending.isEmpty ? nil : $0.pending.removeFirst() }) else { return }
        setCurrent(next, &control)
        control.reported.tags = StreamTags()
        continuation.yield(.streamStarted(next))
        let duration = playbin.duration
        control.reported.duration = duration
        continuation.yield(.durationChanged(duration))
    }

    func failed(_ failure: PipelineError, _ control: inout Control) {
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

    func stopAfterFailure(_ control: inout Control) {
        teardown(&control)
        control.isActive = false
        setCurrent(nil, &control)
        control.target = .stopped
    }

    /// The URL the caller gave for the URI GStreamer names (which may escape differently).
    func url(of failure: PipelineError, in control: Control) -> URL? {
        guard let uri = failure.uri, let reported = URL(string: uri) else { return control.current }
        let candidates = [control.current].compactMap { $0 } + handover.withLock { $0.pending }
        return candidates.first { candidate in
            candidate.absoluteString == uri || (candidate.isFileURL && reported.isFileURL && candidate.path == reported.path)
        } ?? reported
    }

    /// Usual GStreamer practice: hold the pipeline paused while buffering is below 100 % if
    /// PLAYING is wanted, and resume at 100 %.
    func buffering(_ percent: Int, _ control: inout Control) {
        if percent != control.run.bufferingPercent { continuation.yield(.buffering(percent: percent)) }
        control.run.bufferingPercent = percent
        guard control.target == .playing else { return }
        if percent < 100 && !control.run.isHeldForBuffering {
            control.run.isHeldForBuffering = true
            playbin.setState(.paused)
        } else if percent >= 100 && control.run.isHeldForBuffering {
            control.run.isHeldForBuffering = false
            playbin.setState(.playing)
        }
    }

    /// The sound server corked the output for a more important stream (it asks for PAUSED) or
    /// uncorked it (PLAYING). Only playback that the engine paused for it is given back, and
    /// only as an event: resuming is the consumer's choice (the listener may have paused).
    func interruption(requesting requested: PipelineState, _ control: inout Control) {
        switch requested {
        case .paused:
            guard control.isActive, control.target == .playing else { return }
            control.target = .paused
            control.run.isInterrupted = true
            control.run.isHeldForBuffering = false
            playbin.setState(.paused)
            continuation.yield(.interruption(.began))
        case .playing:
            guard control.run.isInterrupted else { return }
            control.run.isInterrupted = false
            continuation.yield(.interruption(.ended))
        default:
            break
        }
    }

    func report(_ state: EngineState, _ control: inout Control) {
        guard state != control.reported.state else { return }
        control.reported.state = state
        continuation.yield(.stateChanged(state))
    }

    func resolve(_ control: inout Control, where matches: (Waiter.Condition) -> Bool) {
        let (done, remaining) = (
            control.waiters.filter { matches($0.condition) }, control.waiters.filter { !matches($0.condition) }
        )
        control.waiters = remaining
        for waiter in done { waiter.finish(.done) }
    }
}
