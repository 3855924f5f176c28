import AsyncSupport
import Synchronization

/// Holds the commands remotes send to a ``QueuePlayer`` until it has its queue: they wait in
/// their order and then run in it.
///
/// A daemon publishes its player (and owns its bus name) before it has restored the saved
/// queue, so that clients find it within milliseconds. A command arriving in between (a media
/// key that started the daemon through D-Bus activation) would find an empty queue and do
/// nothing; held, it acts on the restored queue.
final class RemoteCommandHold: Sendable {
    private struct State {
        /// The turn that keeps the gate closed while held; nil once open.
        var closing: Turn?
        var isOpen = true
        /// Called once the gate opens.
        var onOpen: (@Sendable () -> Void)?
    }

    /// One place at a time: a command passes the gate in its turn, and passes its turn on as it
    /// takes its place in the player's order (`Turn.held`), so the order is kept.
    private let gate = TurnQueue(width: 1)
    private let state = Mutex(State())

    /// Whether commands are being held.
    var isHolding: Bool { !state.withLock { $0.isOpen } }

    /// Closes the gate until ``open()`` or until `timeout` passes: a queue that never comes
    /// (a library that cannot be opened) does not keep commands waiting beyond it. `onOpen` is
    /// called as it opens.
    func close(for timeout: Duration, onOpen: @escaping @Sendable () -> Void) {
        let closing = gate.reserve()
        let closed = state.withLock { state -> Bool in
            guard state.isOpen else { return false }
            state.isOpen = false
            state.closing = closing
            state.onOpen = onOpen
            return true
        }
        guard closed else {
            closing.pass()
            return
        }
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.open()
        }
    }

    /// Opens the gate: the commands held go on in their order. Opening twice does nothing.
    func open() {
        let (closing, onOpen) = state.withLock { state in
            state.isOpen = true
            defer {
                state.closing = nil
                state.onOpen = nil
            }
            return (state.closing, state.onOpen)
        }
        onOpen?()
        closing?.pass()
    }

    /// Runs `command` once the gate is open, in the order of arrival; at once when it is open.
    func pass<Result: Sendable>(_ command: () async -> Result) async -> Result {
        guard !state.withLock({ $0.isOpen }) else { return await command() }
        let turn = gate.reserveTakingOver()
        await turn.wait()
        // The player takes this turn over as it takes the command's place (`reserveTakingOver`),
        // so the next held command enters only after this one has its place.
        return await Turn.$held.withValue(turn) {
            defer { turn.pass() }
            return await command()
        }
    }
}
