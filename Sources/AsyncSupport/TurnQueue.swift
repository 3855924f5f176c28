import Synchronization

/// Turns taken in arrival order: at most `width` holders at a time, the others waiting, first
/// come first served. With a width of 1 it is an async serial queue: what an engine's calls, a
/// player's commands and a D-Bus object's method calls each need.
///
/// A place in line is taken synchronously (``reserve()``), so the order is the order of the
/// calls even when the work then runs on a task of its own; ``Turn/wait()`` returns once the
/// place comes up, and ``Turn/pass()`` gives it to the next (a holder may pass early, once the
/// order no longer matters to it).
///
/// Orders chain: work that holds a turn in one queue (a D-Bus object's call) and is carried on
/// into another (a player's commands) runs with that turn as ``Turn/held``; the later queue
/// takes its place with ``reserveTakingOver()``, which passes the held turn, so the first
/// queue's next holder starts while the order of the two is kept.
public final class TurnQueue: Sendable {
    private struct State {
        var holders = 0
        /// Places not yet come up, oldest first from `head`.
        var waiting: [Turn] = []
        var head = 0
    }

    private let width: Int
    private let state = Mutex(State())

    /// - Parameter width: how many may hold a turn at once, at least 1.
    public init(width: Int) {
        self.width = max(1, width)
    }

    /// Takes the next place in line. Pass the turn once done with it (or abandon the place):
    /// the queue stops until it is passed.
    public func reserve() -> Turn {
        let turn = Turn(queue: self)
        let comesUp = state.withLock { state in
            guard state.holders < width, state.head == state.waiting.count else {
                state.waiting.append(turn)
                return false
            }
            state.holders += 1
            return true
        }
        if comesUp { turn.comeUp() }
        return turn
    }

    /// Takes the next place in line for work that holds ``Turn/held`` in an earlier queue, then
    /// passes that turn: from here this queue keeps the work's order, and the earlier queue's
    /// next holder may start. The place comes first, so nothing can overtake the work between
    /// the two queues.
    public func reserveTakingOver() -> Turn {
        let turn = reserve()
        Turn.held?.pass()
        return turn
    }

    /// Runs `body` in its turn, in the caller's task, and passes the turn when it returns.
    public func run<Result, Failure: Error>(_ body: () async throws(Failure) -> Result) async throws(Failure) -> Result {
        let turn = reserve()
        await turn.wait()
        defer { turn.pass() }
        return try await body()
    }

    /// A holder passed its turn: the oldest waiting place comes up, or a holder's slot frees.
    fileprivate func passed() {
        let next = state.withLock { state -> Turn? in
            guard state.head < state.waiting.count else {
                state.holders -= 1
                state.waiting = []
                state.head = 0
                return nil
            }
            let turn = state.waiting[state.head]
            state.head += 1
            // Now and then drop the places already come up, so the array does not keep them.
            if state.head >= 64 && state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return turn
        }
        next?.comeUp()
    }
}

/// One place in a ``TurnQueue``'s line.
public final class Turn: Sendable {
    private enum Phase {
        case waitingInLine
        case up
        case passed
    }

    private let queue: TurnQueue
    private let state = Mutex<(phase: Phase, waiter: CheckedContinuation<Void, Never>?)>((.waitingInLine, nil))

    fileprivate init(queue: TurnQueue) { self.queue = queue }

    /// The turn the current task holds while it carries work on to a later queue, which takes
    /// the work's place with ``TurnQueue/reserveTakingOver()``; nil when the task holds none.
    /// Whoever runs work in its turn sets it (a serial D-Bus object does, for its handlers).
    @TaskLocal public static var held: Turn?

    /// Returns once this place has come up (at once if it has, or was passed).
    public func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                guard state.phase == .waitingInLine else { return true }
                state.waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Gives the turn to the next place. Passing twice does nothing; passing a place that has
    /// not come up yet gives its turn away as soon as it comes up.
    public func pass() {
        let (passesNow, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            defer { state.waiter = nil }
            switch state.phase {
            case .passed: return (false, nil)
            case .up:
                state.phase = .passed
                return (true, nil)
            case .waitingInLine:
                state.phase = .passed
                return (false, state.waiter)
            }
        }
        waiter?.resume()
        if passesNow { queue.passed() }
    }

    /// The queue gave this place its turn.
    fileprivate func comeUp() {
        let (abandoned, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            defer { state.waiter = nil }
            guard state.phase == .waitingInLine else { return (true, nil) }
            state.phase = .up
            return (false, state.waiter)
        }
        if abandoned {
            queue.passed()
        } else {
            waiter?.resume()
        }
    }
}
