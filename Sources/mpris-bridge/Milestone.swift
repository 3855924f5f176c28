import Synchronization

/// A value one of the daemon's services makes while it starts (the bus name owned, the library
/// opened, the tree published, the queue ready) and others wait for before their own start.
///
/// Services run side by side in the service group; a milestone is what orders their start-up.
/// It is reached once; waiting after that returns at once.
final class Milestone<Value: Sendable>: Sendable {
    private let state = Mutex(State())

    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter = 0
    }

    /// The value, once reached; nil until then.
    var reached: Value? { state.withLock { $0.value } }

    /// Reaches the milestone: every waiter gets `value`. Only the first call counts.
    func reach(_ value: Value) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.value == nil else { return [] }
            state.value = value
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// Waits until the milestone is reached. Throws `CancellationError` if the task is
    /// cancelled first.
    func value() async throws -> Value {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Checked under the lock that the cancellation handler takes: a cancellation
                // either comes before (and is seen here) or finds the waiter registered.
                let outcome = state.withLock { state -> Result<Value, any Error>? in
                    if let value = state.value { return .success(value) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}

extension Milestone where Value == Void {
    func reach() { reach(()) }
}
