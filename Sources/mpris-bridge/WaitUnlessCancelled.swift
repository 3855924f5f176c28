import Synchronization

/// Waits for `task` unless the waiting task is cancelled first: nil then, and `task` goes on.
///
/// Awaiting a task's value cannot be cut short; this can. A stopping service waits this way
/// for work that may never end (a bus that does not answer, an engine stuck in a state change),
/// so that the service group's deadline bounds it.
func valueUnlessCancelled<Success: Sendable>(of task: Task<Success, Never>) async -> Success? {
    let waiter = Waiter<Success>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            guard waiter.wait(continuation) else { return continuation.resume(returning: nil) }
            Task { waiter.resume(with: await task.value) }
        }
    } onCancel: {
        waiter.resume(with: nil)
    }
}

/// One continuation, resumed once: by the task's end or by the cancellation, whichever is first.
private final class Waiter<Success: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Success?, Never>)
        case done
    }

    private let state = Mutex(State.idle)

    /// Keeps `continuation`; false when the wait is already over (cancelled before it began).
    func wait(_ continuation: CheckedContinuation<Success?, Never>) -> Bool {
        state.withLock { state in
            guard case .idle = state else { return false }
            state = .waiting(continuation)
            return true
        }
    }

    func resume(with value: Success?) {
        let continuation = state.withLock { state -> CheckedContinuation<Success?, Never>? in
            defer { state = .done }
            guard case .waiting(let continuation) = state else { return nil }
            return continuation
        }
        continuation?.resume(returning: value)
    }
}
