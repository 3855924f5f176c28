import AsyncSupport
import Dispatch
import Synchronization

/// A connection to a message bus: the entry point for calling, subscribing and serving.
///
/// Every method is safe to call from any thread or task. Internally a thread of
/// the connection's own (``executor``) owns the libdbus connection and is woken only by socket
/// readiness, by libdbus's own timeouts and by work given to it, so an idle connection costs no CPU.
///
/// Losing the bus never ends the process: pending calls fail with
/// `org.freedesktop.DBus.Error.Disconnected`, signal streams finish with that
/// error, and ``events()`` reports ``ConnectionEvent/disconnected``.
/// The connection closes when ``close()`` is called or the last reference goes away.
public final class Connection: Sendable {
    let core: ConnectionCore

    /// The unique name the bus assigned, such as `:1.42`.
    public var uniqueName: BusName { BusName(trusted: core.uniqueName) }

    private init(core: ConnectionCore) { self.core = core }

    deinit { core.close() }

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`.
    public static func session() async throws -> Connection { try await connect(to: .session) }

    /// Connects to the system bus.
    public static func system() async throws -> Connection { try await connect(to: .system) }

    /// Connects to a bus and registers with it.
    public static func connect(to address: BusAddress) async throws -> Connection {
        Connection(core: try await ConnectionCore.open(address))
    }

    /// Whether the connection is still open.
    public var isConnected: Bool { core.isConnected }

    /// The connection's thread, as an executor: an actor that serves calls and sends signals
    /// (an app's player) answers a call on the thread that read it when this is its
    /// `unownedExecutor`, and an object exported with it (``export(_:at:ordering:executor:)-([Interface],_,_,_)``)
    /// runs its handlers there. Work given to it must not block.
    public var executor: ConnectionExecutor { core.queue }

    /// Closes the connection: pending calls fail with `Disconnected`, streams end. Idempotent.
    public func close() { core.close() }

    /// Sends a message that expects no reply, such as a signal. Returns once the
    /// message is queued; a message that cannot be sent because the bus is gone is dropped.
    /// Throws `InvalidArgs` for a body that cannot be put on the wire.
    public func send(_ message: Message) throws {
        try core.send(message)
    }

    /// Sends a method call and waits for its reply.
    ///
    /// - Parameters:
    ///   - message: the method call; its body is checked as it is marshalled.
    ///   - timeout: how long to wait; on expiry the call throws
    ///     `org.freedesktop.DBus.Error.NoReply`. Cancelling the task throws `CancellationError`.
    /// - Returns: the method-return message.
    /// - Throws: the remote error as a ``DBusError``, or `Disconnected` if the bus goes away.
    public func call(_ message: Message, timeout: Duration = .seconds(25)) async throws -> Message {
        precondition(message.kind == .methodCall, "call(_:) sends method calls")
        // The body is checked as it is marshalled, here; a bad one throws, unsent.
        return try await core.call(message, timeout: timeout)
    }

    /// Emits a signal from `path`.
    public func emitSignal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, body: [DBusValue] = [],
        destination: BusName? = nil
    ) throws {
        try send(.signal(path: path, interface: interface, member: member, body: body, destination: destination))
    }

    /// Announces that properties `changed` of `interface` changed on the object at `path` (an
    /// object of a subtree, whose interfaces are shared): one `PropertiesChanged`, with the
    /// values of those declared ``PropertyChangePolicy/emitsValue`` and the names of those
    /// declared ``PropertyChangePolicy/invalidates``; nothing for the others.
    public func emitPropertiesChanged(at path: ObjectPath, interface: Interface, changed: [MemberName]) throws {
        guard let message = interface.propertiesChanged(at: path, names: changed) else { return }
        try send(message)
    }

    /// A stream of what happens to the connection: names acquired and lost, and the loss of the bus.
    /// Each call returns a new, independent stream; it finishes after ``ConnectionEvent/disconnected``.
    public func events() -> AsyncStream<ConnectionEvent> { core.events() }

    /// Returns when the connection is closed or the bus is lost.
    public func waitUntilDisconnected() async { await core.waitUntilDisconnected() }
}

/// Something that happened to a ``Connection``.
public enum ConnectionEvent: Sendable, Equatable {
    /// The bus gave this connection a well-known name (never said of its unique name).
    case nameAcquired(BusName)
    /// This connection lost a name, for example to a replacement.
    case nameLost(BusName)
    /// The connection is closed or the bus went away. No event follows.
    case disconnected
}

/// The state behind a ``Connection``.
final class ConnectionCore: @unchecked Sendable {  // mutable state is touched on `queue` only; `objects` has its own lock
    /// The connection's thread (named as the queue it replaced, which every method here uses).
    let queue: ConnectionExecutor
    private var raw: RawConnection!
    let uniqueName: String
    let objects = ObjectRegistry()

    private struct PendingCall {
        let continuation: UnsafeContinuation<Message, any Error>
        let deadline: DispatchTime
        let member: String
        let timeout: Duration
    }

    private var pending: [UInt32: PendingCall] = [:]
    /// One timer of the loop for every pending call's deadline, armed only while calls are pending.
    private var timeoutTimer: Int?
    private var timerDeadline: DispatchTime?
    private var subscriptions: [Int: SignalSubscription] = [:]
    private var eventListeners: [Int: AsyncStream<ConnectionEvent>.Continuation] = [:]
    private var disconnectWaiters: [CheckedContinuation<Void, Never>] = []
    private var nextToken = 0
    private var disconnected = false
    /// Open ``IncomingCallHold``s, and the method calls they hold back, in arrival order.
    var callHolds = 0
    var heldCalls: [Message] = []
    /// What answers given at once took of this thread lately (``ObjectServer``).
    var atOnceBudget = AtOnceBudget()
    private let connected = Atomic<Bool>(true)

    private init(queue: ConnectionExecutor, uniqueName: String) {
        self.queue = queue
        self.uniqueName = uniqueName
    }

    static func open(_ address: BusAddress) async throws -> ConnectionCore {
        let queue = try ConnectionExecutor()
        return try await withUnsafeThrowingContinuation { continuation in
            queue.async {
                do {
                    // Weak: the core owns the raw connection, not the other way round.
                    weak var coreReference: ConnectionCore?
                    let raw = try RawConnection(address: address, loop: queue) { message in
                        coreReference?.receive(message)
                    }
                    let core = ConnectionCore(queue: queue, uniqueName: raw.uniqueName)
                    core.raw = raw
                    coreReference = core
                    raw.start()
                    continuation.resume(returning: core)
                } catch {
                    queue.stop()
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    var isConnected: Bool { connected.load(ordering: .relaxed) }

    func close() {
        queue.async { [self] in shutDown() }
    }

    // MARK: Sending

    /// Marshals `message` on the calling thread, throwing if it cannot go on the wire, and
    /// queues it. A message for a bus that is gone is dropped.
    func send(_ message: Message) throws {
        send(try OutgoingMessage(message))
    }

    /// Queues a marshalled message from any thread; on the connection's thread, with nothing
    /// enqueued before it, sends it at once (a signal of an actor running there).
    func send(_ outgoing: OutgoingMessage) {
        if queue.hasNothingEnqueued { return sendOnQueue(outgoing) }
        queue.async { [self] in sendOnQueue(outgoing) }
    }

    /// Sends a marshalled message at once, from the connection's queue (a reply written while
    /// the call is handled there): no block queued behind the messages still to dispatch.
    func sendOnQueue(_ outgoing: OutgoingMessage) {
        queue.preconditionIsCurrent()
        guard !disconnected else { return }
        _ = try? raw.send(outgoing)
    }

    func call(_ message: Message, timeout: Duration) async throws -> Message {
        let outgoing = try OutgoingMessage(message)
        let member = message.member?.rawValue ?? "call"
        let ticket = CallTicket()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                queue.async { [self] in
                    start(outgoing, member: member, timeout: timeout, ticket: ticket, continuation: continuation)
                }
            }
        } onCancel: {
            queue.async { [self] in
                ticket.cancelled = true
                if let serial = ticket.serial { finish(serial, with: .failure(CancellationError())) }
            }
        }
    }

    private func start(
        _ message: OutgoingMessage, member: String, timeout: Duration, ticket: CallTicket,
        continuation: UnsafeContinuation<Message, any Error>
    ) {
        guard !ticket.cancelled else { return continuation.resume(throwing: CancellationError()) }
        guard !disconnected else { return continuation.resume(throwing: DBusError.disconnected()) }
        let serial: UInt32
        do { serial = try raw.send(message) } catch { return continuation.resume(throwing: error) }
        ticket.serial = serial
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        pending[serial] = PendingCall(
            continuation: continuation, deadline: deadline, member: member, timeout: timeout)
        if timerDeadline.map({ deadline < $0 }) ?? true { armTimer(for: deadline) }
    }

    private func finish(_ serial: UInt32, with result: Result<Message, any Error>) {
        guard let call = pending.removeValue(forKey: serial) else { return }
        call.continuation.resume(with: result)
        if pending.isEmpty { disarmTimer() }
    }

    private func armTimer(for deadline: DispatchTime) {
        timerDeadline = deadline
        if let timeoutTimer {
            queue.setTimer(timeoutTimer, deadline: deadline.uptimeNanoseconds, enabled: true)
        } else {
            timeoutTimer = queue.addTimer(deadline: deadline.uptimeNanoseconds, interval: nil, enabled: true) {
                [weak self] in self?.expireOverdueCalls()
            }
        }
    }

    private func disarmTimer() {
        timerDeadline = nil
        if let timeoutTimer { queue.setTimer(timeoutTimer, deadline: nil, enabled: false) }
    }

    /// Fails every call whose deadline has passed, then re-arms for the earliest one left.
    private func expireOverdueCalls() {
        let now = DispatchTime.now()
        for (serial, call) in pending where call.deadline <= now {
            let (seconds, attoseconds) = call.timeout.components
            let text = Double(seconds) + Double(attoseconds) * 1e-18
            finish(serial, with: .failure(DBusError(.noReply, "No reply to \(call.member) within \(text) s")))
        }
        if let next = pending.values.map(\.deadline).min() { armTimer(for: next) } else { disarmTimer() }
    }

    // MARK: Receiving (on `queue`)

    private func receive(_ message: Message) {
        switch message.kind {
        case .methodReturn:
            if let serial = message.replySerial { finish(serial, with: .success(message)) }
        case .error:
            if let serial = message.replySerial, let error = message.carriedError { finish(serial, with: .failure(error)) }
        case .signal:
            receiveSignal(message)
        case .methodCall:
            if callHolds > 0 { holdCall(message) } else { ObjectServer.handle(message, core: self) }
        }
    }

    private func receiveSignal(_ message: Message) {
        if message.path?.rawValue == "/org/freedesktop/DBus/Local", message.member?.rawValue == "Disconnected" {
            shutDown()
            return
        }
        if message.sender == BusName.bus.rawValue, message.interface?.rawValue == "org.freedesktop.DBus",
            message.destination == uniqueName, case .string(let name)? = message.body.first,
            // The unique name is the connection's from Hello on: its NameAcquired, which the bus
            // sends right after Hello, would reach a listener or not depending on timing.
            name != uniqueName, let busName = BusName(rawValue: name)
        {
            switch message.member?.rawValue {
            case "NameAcquired": broadcast(.nameAcquired(busName))
            case "NameLost": broadcast(.nameLost(busName))
            default: break
            }
        }
        if !subscriptions.isEmpty { deliver(message) }
    }

    /// Hands `message` to the subscriptions it matches. Apart, so that a signal with no
    /// subscription (`NameAcquired` after `Hello`) never makes the runtime build a subscription's
    /// type, whose first generic requirement checked scans all the binary's protocol conformances.
    @inline(never)
    private func deliver(_ message: Message) {
        for subscription in subscriptions.values where subscription.rule.matches(message, senderOwner: subscription.senderOwner) {
            subscription.continuation.yield(message)
        }
    }

    // MARK: Signal subscriptions

    /// Registers a local subscription (on `queue`); returns its token.
    func addSubscription(_ subscription: SignalSubscription) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                guard !disconnected else { return continuation.resume(throwing: DBusError.disconnected()) }
                nextToken += 1
                subscriptions[nextToken] = subscription
                continuation.resume(returning: nextToken)
            }
        }
    }

    func removeSubscription(_ token: Int) {
        queue.async { [self] in subscriptions.removeValue(forKey: token) }
    }

    // MARK: Events

    func events() -> AsyncStream<ConnectionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectionEvent.self)
        queue.async { [self] in
            guard !disconnected else {
                continuation.yield(.disconnected)
                continuation.finish()
                return
            }
            nextToken += 1
            let token = nextToken
            eventListeners[token] = continuation
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                queue.async { self.eventListeners.removeValue(forKey: token) }
            }
        }
        return stream
    }

    private func broadcast(_ event: ConnectionEvent) {
        for listener in eventListeners.values { listener.yield(event) }
    }

    func waitUntilDisconnected() async {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                if disconnected { continuation.resume() } else { disconnectWaiters.append(continuation) }
            }
        }
    }

    // MARK: Shutdown

    /// Ends everything that waits on this connection, then closes libdbus's side. On `queue`; idempotent.
    private func shutDown() {
        guard !disconnected else { return }
        disconnected = true
        connected.store(false, ordering: .relaxed)
        let calls = pending
        pending = [:]
        for call in calls.values { call.continuation.resume(throwing: DBusError.disconnected()) }
        if let timeoutTimer { queue.removeTimer(timeoutTimer) }
        timeoutTimer = nil
        for subscription in subscriptions.values { subscription.continuation.finish(throwing: DBusError.disconnected()) }
        subscriptions = [:]
        broadcast(.disconnected)
        for listener in eventListeners.values { listener.finish() }
        eventListeners = [:]
        for waiter in disconnectWaiters { waiter.resume() }
        disconnectWaiters = []
        heldCalls = []
        objects.removeAll()
        raw.close()
        queue.stop()
    }
}

/// Tracks one call so that cancellation can find it. Touched on the connection's queue only.
private final class CallTicket: @unchecked Sendable {  // read and written on the connection's serial queue only
    var serial: UInt32?
    var cancelled = false
}
