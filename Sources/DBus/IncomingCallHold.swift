import Dispatch
import Synchronization

extension Connection {
    /// Holds back the method calls that arrive from now on, until the hold is released.
    ///
    /// A service that takes its bus name before its objects exist (to be found sooner: the name
    /// is requested at once, the objects built and exported after) holds its calls meanwhile:
    /// a client that calls as soon as it sees the name gets its answer once the objects are
    /// exported, never `UnknownObject` or `UnknownMethod`. Hold, request the name, export,
    /// release:
    ///
    /// ```swift
    /// let hold = connection.holdIncomingCalls()
    /// let name = try await connection.requestName("org.example.Counter")
    /// try connection.export(counter, at: "/org/example/Counter")
    /// hold.release()
    /// ```
    ///
    /// Replies, errors and signals still arrive (the name's request is answered). The calls held
    /// are handled in their order of arrival when the last open hold ends, before any call that
    /// arrives later; beyond ``IncomingCallHold/maximumHeldCalls`` a call is answered
    /// `LimitsExceeded`. A hold dropped without ``IncomingCallHold/release()`` ends then.
    public func holdIncomingCalls() -> IncomingCallHold {
        // Queued before whatever the caller sends next (the name's request), so it is in force
        // before any call for that name can arrive.
        core.queue.async { [core] in core.callHolds += 1 }
        return IncomingCallHold(core: core)
    }
}

/// Method calls held back on a connection until ``release()``; see
/// ``Connection/holdIncomingCalls()``.
public final class IncomingCallHold: Sendable {
    /// The most calls held at once; one more is answered `LimitsExceeded`. A hold lasts while an
    /// app builds its objects, milliseconds, in which a client sends a few calls.
    public static let maximumHeldCalls = 1024

    private let core: ConnectionCore
    private let released = Atomic<Bool>(false)

    init(core: ConnectionCore) { self.core = core }

    deinit { release() }

    /// Ends this hold: once no other is open, the calls held are handled in their order.
    /// Idempotent.
    public func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        core.queue.async { [core] in core.endCallHold() }
    }
}

extension ConnectionCore {
    /// Keeps a call that arrived while a hold is open. On `queue`.
    func holdCall(_ call: Message) {
        guard heldCalls.count < IncomingCallHold.maximumHeldCalls else {
            return Replier(call: call, core: self, onQueue: true).error(
                DBusError(.limitsExceeded, "Too many calls while the service is starting; try again"))
        }
        heldCalls.append(call)
    }

    /// Ends one hold; the last one hands the calls held to the object server. On `queue`.
    func endCallHold() {
        callHolds -= 1
        guard callHolds == 0 else { return }
        let calls = heldCalls
        heldCalls = []
        for call in calls { ObjectServer.handle(call, core: self) }
    }
}
