import Synchronization

/// Holds the tasks that wait on it until it is opened, then lets every waiter through, those
/// already waiting and those that come later. Opening twice does nothing. For tests that need a
/// handler or a data source to stop at a known point until the test lets it go on.
public final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    /// One element each time a task arrives at ``wait()``, open or not: how a test learns that
    /// the code it holds has reached the gate.
    public let arrivals: AsyncStream<Void>
    private let arrivalsContinuation: AsyncStream<Void>.Continuation

    public init() { (arrivals, arrivalsContinuation) = AsyncStream.makeStream() }

    /// Returns once the gate is open (at once if it is already).
    public func wait() async {
        arrivalsContinuation.yield()
        await withCheckedContinuation { continuation in
            let proceed = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if proceed { continuation.resume() }
        }
    }

    /// Opens the gate: lets through every task waiting and every later one.
    public func open() {
        let waiters = state.withLock { state in
            defer {
                state.open = true
                state.waiters = []
            }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
