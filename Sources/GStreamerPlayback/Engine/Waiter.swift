import Playback
import Synchronization

/// A call waiting for the bus thread to see something.
final class Waiter: Sendable {
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

    /// Waits for the outcome, or `.timedOut` after `timeout` (nil waits for ever); a cancelled
    /// task's wait ends at once, failed as superseded.
    func outcome(within timeout: Duration?) async -> Outcome {
        await withTaskCancellationHandler {
            await waitForOutcome(within: timeout)
        } onCancel: {
            finish(.failed(GStreamerEngine.superseded(nil)))
        }
    }

    private func waitForOutcome(within timeout: Duration?) async -> Outcome {
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
