import AsyncSupport
import Dispatch
import Synchronization

/// In what order an exported object's method calls run.
public enum CallOrdering: Sendable {
    /// One at a time, in the order they arrived; a call's handler starts when the previous one
    /// has replied, or earlier once that one's work has its place in a later order: a handler
    /// runs holding its turn as `AsyncSupport.Turn.held`, which a queue that takes the work over
    /// in order passes (`TurnQueue.reserveTakingOver()`), so a long command queued in an app's
    /// own order does not hold the next call.
    case serial
    /// Calls run alongside each other as they arrive, at most
    /// ``CallOrdering/maximumConcurrentCalls`` at a time per object (or
    /// subtree); the rest wait their turn in arrival order. The bound keeps
    /// what a flood of calls costs (each running handler holds its reply)
    /// from growing with the flood.
    case concurrent

    /// How many calls of one object exported `.concurrent` run at once.
    public static let maximumConcurrentCalls = 32
}

/// Who is calling, available to a method handler as ``MethodCallContext/current``.
public struct MethodCallContext: Sendable {
    /// The caller's unique bus name.
    public let sender: String?
    /// The object path that was called.
    public let path: ObjectPath
    public let interface: InterfaceName
    public let member: MemberName

    init(sender: String?, path: ObjectPath, interface: InterfaceName, member: MemberName) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
    }

    /// The context of the method call the current task is handling, or nil outside a handler.
    @TaskLocal public static var current: MethodCallContext?
}

extension Connection {
    /// Exports interfaces as one object at `path`.
    ///
    /// Export objects before requesting a bus name, so that no call can arrive
    /// at a path that is not there yet; or, to own the name sooner, hold the calls from
    /// before the request until the objects are exported (``holdIncomingCalls()``).
    ///
    /// `executor` is where the object's method handlers (and property setters) run: nil for
    /// Swift's global executor; an app whose handlers must run on one queue (its main queue)
    /// gives an executor of that queue, so a call reaches them without a hop through another thread.
    /// - Throws: `ObjectPathInUse` if something is exported there already;
    ///   `InvalidArgs` if two interfaces share a name or one claims a standard
    ///   `org.freedesktop.DBus.*` interface.
    public func export(
        _ interfaces: [Interface], at path: ObjectPath, ordering: CallOrdering = .serial,
        executor: (any TaskExecutor)? = nil
    ) throws {
        try ObjectServer.checkNames(interfaces.map(\.name))
        try core.objects.add(path: path, interfaces: interfaces, ordering: ordering, executor: executor)
        for interface in interfaces { interface.attach(to: core, at: path) }
    }

    /// Exports one interface as an object at `path`; see ``export(_:at:ordering:executor:)-([Interface],_,_,_)``.
    public func export(
        _ interface: Interface, at path: ObjectPath, ordering: CallOrdering = .serial, executor: (any TaskExecutor)? = nil
    ) throws {
        try export([interface], at: path, ordering: ordering, executor: executor)
    }

    /// Removes the object at `path`. Calls already running finish; new ones get `UnknownObject`.
    public func unexport(at path: ObjectPath) {
        for interface in core.objects.remove(path: path) { interface.detach(from: core, at: path) }
    }

    /// Serves every path at and below `root` from two functions, so a tree of
    /// any size costs nothing until a node is called.
    ///
    /// - Parameters:
    ///   - root: the path of the subtree's root, which the subtree includes.
    ///   - ordering: how calls to each object of the subtree are ordered (concurrent by default).
    ///   - children: the names of the direct children of a path in the subtree,
    ///     for introspection. Names that are not valid path elements are skipped.
    ///   - object: the interfaces of the object at a path, or nil if there is no object there.
    ///     Properties changes of these interfaces are not announced automatically
    ///     (the objects are virtual); send ``Message/propertiesChanged(path:interface:changed:invalidated:)``
    ///     with ``Connection/send(_:)``, and other signals with ``Connection/emitSignal(path:interface:member:body:destination:)``.
    ///
    /// Both run on the connection's queue for every call into the subtree: they
    /// must be quick and must not block. Objects exported with ``export(_:at:ordering:executor:)-([Interface],_,_,_)``
    /// inside the subtree take precedence.
    public func exportSubtree(
        at root: ObjectPath, ordering: CallOrdering = .concurrent,
        children: @escaping @Sendable (ObjectPath) -> [String],
        object: @escaping @Sendable (ObjectPath) -> [Interface]?
    ) throws {
        try core.objects.addSubtree(
            SubtreeRegistration(root: root, children: children, object: object, jobs: JobRunner(ordering)))
    }

    /// Removes the subtree at `root`.
    public func unexportSubtree(at root: ObjectPath) {
        core.objects.removeSubtree(root: root)
    }
}

struct SubtreeRegistration: Sendable {
    let root: ObjectPath
    let children: @Sendable (ObjectPath) -> [String]
    let object: @Sendable (ObjectPath) -> [Interface]?
    let jobs: JobRunner
}

/// How much of the connection's thread answers given at once may take: at most `share` of
/// every `window`. The thread reads calls in order; a flood of calls that memory answers would
/// keep it from the calls behind them (a player's command among them), so past the share they
/// run as tasks, which it hands out in microseconds.
struct AtOnceBudget {
    static let window: UInt64 = 20_000_000
    static let share: UInt64 = 10_000_000
    private var windowStart: UInt64 = 0
    private var spent: UInt64 = 0

    /// Whether an answer may be given at once at `now` (monotonic nanoseconds).
    mutating func allows(at now: UInt64) -> Bool {
        if now &- windowStart >= Self.window {
            windowStart = now
            spent = 0
        }
        return spent < Self.share
    }

    /// Counts what an answer given at once took.
    mutating func spend(from start: UInt64, to end: UInt64) { spent &+= end &- start }
}

/// Runs method handlers in a chosen order.
final class JobRunner: Sendable {
    /// A handler's run.
    typealias Job = @Sendable () async -> Void
    private let ordering: CallOrdering
    /// One turn at a time on a serial object, `maximumConcurrentCalls` on a concurrent one.
    private let turns: TurnQueue
    /// Where the handlers run; nil for Swift's global executor.
    private let executor: (any TaskExecutor)?
    /// The executor when it is a connection's thread, whose calls start there at once.
    private let connectionThread: ConnectionExecutor?

    init(_ ordering: CallOrdering, executor: (any TaskExecutor)? = nil) {
        self.ordering = ordering
        self.executor = executor
        connectionThread = executor as? ConnectionExecutor
        turns = TurnQueue(width: ordering == .serial ? 1 : CallOrdering.maximumConcurrentCalls)
    }

    /// Whether calls may run side by side (``CallOrdering/concurrent``): then one answered at
    /// once, before the earlier ones finish, breaks no order the object promises.
    var isConcurrent: Bool { ordering == .concurrent }

    /// Runs `job` on a task of its own once its turn comes, in the order of the calls to `submit`.
    ///
    /// Submitted on the thread the handlers run on (a call to an object served by the
    /// connection's own thread, read there), the task starts at once and runs there until it
    /// first waits: enqueued, it would run on that same thread one trip through the loop's
    /// queue later (for a `PlayPause` after a quiet spell, about 30 µs of the 230 before its
    /// signal went out).
    func submit(_ job: @escaping Job) {
        let turn = turns.reserve()
        let serial = ordering == .serial
        let operation: @Sendable () async -> Void = {
            await turn.wait()
            // On a serial object the handler holds its turn, for a later order to take over.
            await Turn.$held.withValue(serial ? turn : nil) { await job() }
            turn.pass()
        }
        if let connectionThread, connectionThread.isCurrent {
            Task.immediate(executorPreference: connectionThread, operation: operation)
        } else {
            Task(executorPreference: executor, operation: operation)
        }
    }
}

/// The objects a connection exports. Written from any thread, read on the connection's queue.
final class ObjectRegistry: Sendable {
    struct Object: Sendable {
        let interfaces: [Interface]
        let jobs: JobRunner
    }

    private struct State {
        var objects: [ObjectPath: Object] = [:]
        var subtrees: [ObjectPath: SubtreeRegistration] = [:]
    }

    private let state = Mutex(State())

    func add(path: ObjectPath, interfaces: [Interface], ordering: CallOrdering, executor: (any TaskExecutor)?) throws {
        try state.withLock { state in
            guard state.objects[path] == nil else {
                throw DBusError(.objectPathInUse, "An object is already exported at '\(path)'")
            }
            state.objects[path] = Object(interfaces: interfaces, jobs: JobRunner(ordering, executor: executor))
        }
    }

    func remove(path: ObjectPath) -> [Interface] {
        state.withLock { $0.objects.removeValue(forKey: path) }?.interfaces ?? []
    }

    func addSubtree(_ subtree: SubtreeRegistration) throws {
        try state.withLock { state in
            guard state.subtrees[subtree.root] == nil else {
                throw DBusError(.objectPathInUse, "A subtree is already exported at '\(subtree.root)'")
            }
            state.subtrees[subtree.root] = subtree
        }
    }

    func removeSubtree(root: ObjectPath) {
        _ = state.withLock { $0.subtrees.removeValue(forKey: root) }
    }

    func removeAll() {
        // Calls already running finish; their replies go to a connection that may be closing.
        state.withLock { $0 = State() }
    }

    /// The object at `path`: an exported one, or one a subtree provides.
    func object(at path: ObjectPath) -> Object? {
        let (exact, subtree) = state.withLock { state in
            (state.objects[path], state.objects[path] == nil ? Self.subtree(containing: path, in: state) : nil)
        }
        if let exact { return exact }
        guard let subtree, let interfaces = subtree.object(path) else { return nil }
        return Object(interfaces: interfaces, jobs: subtree.jobs)
    }

    /// Names of the direct children of `path`, for introspection.
    func children(of path: ObjectPath) -> [String] {
        let (roots, subtree) = state.withLock { state in
            (Array(state.objects.keys) + Array(state.subtrees.keys), Self.subtree(containing: path, in: state))
        }
        var names: [String] = []
        var seen: Set<String> = []
        if let subtree {
            for name in subtree.children(path) where isPathElement(name) {
                if seen.insert(name).inserted { names.append(name) }
            }
        }
        let depth = path.elements.count
        for root in roots.sorted() where root != path && root.isDescendant(of: path) {
            let name = String(root.elements[depth])
            if seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    private func isPathElement(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    private static func subtree(containing path: ObjectPath, in state: State) -> SubtreeRegistration? {
        var candidate: ObjectPath? = path
        while let current = candidate {
            if let subtree = state.subtrees[current] { return subtree }
            candidate = current.parent
        }
        return nil
    }
}

/// Answers incoming method calls: the standard interfaces here, the rest by the exported handlers.
enum ObjectServer {
    static let introspectable: InterfaceName = "org.freedesktop.DBus.Introspectable"
    static let properties: InterfaceName = "org.freedesktop.DBus.Properties"
    static let peer: InterfaceName = "org.freedesktop.DBus.Peer"
    /// `GetAll`'s reply: `a{sv}`.
    static let propertiesSignature = Signature(unchecked: [.dictionary(key: .string, value: .variant)])

    static func checkNames(_ names: [InterfaceName]) throws {
        var seen: Set<InterfaceName> = []
        for name in names {
            guard seen.insert(name).inserted else {
                throw DBusError.invalidArgs("Interface '\(name)' appears twice in one object")
            }
            guard ![introspectable, properties, peer].contains(name) else {
                throw DBusError.invalidArgs("'\(name)' is implemented by the library and cannot be exported")
            }
        }
    }

    /// Handles one method call, on the connection's queue.
    static func handle(_ call: Message, core: ConnectionCore) {
        let reply = Replier(call: call, core: core, onQueue: true)
        guard let path = call.path, let member = call.member else {
            return reply.error(.invalidArgs("A method call needs a path and a member"))
        }
        if let bodyError = call.bodyError { return reply.error(bodyError) }
        if call.interface == peer { return handlePeer(call, member: member, reply: reply) }
        let object = core.objects.object(at: path)

        if call.interface == introspectable || (call.interface == nil && member.rawValue == "Introspect") {
            guard member.rawValue == "Introspect" else {
                return reply.error(DBusError(.unknownMethod, "Interface '\(introspectable)' has no method '\(member)'"))
            }
            guard call.body.isEmpty else { return reply.error(signatureError(introspectable, member, "", call)) }
            let children = core.objects.children(of: path)
            guard object != nil || !children.isEmpty else {
                return reply.error(DBusError(.unknownObject, "No object at path '\(DBusError.excerpt(path.rawValue))'"))
            }
            let xml = IntrospectionXML.document(
                interfaces: object?.interfaces.map(\.declaration) ?? [], children: children)
            return reply.values([.string(xml)])
        }

        guard let object else { return reply.error(DBusError(.unknownObject, "No object at path '\(DBusError.excerpt(path.rawValue))'")) }

        if call.interface == properties {
            return handleProperties(call, member: member, object: object, reply: reply)
        }

        let target: (Interface, MethodDeclaration)?
        if let name = call.interface {
            guard let interface = object.interfaces.first(where: { $0.name == name }) else {
                return reply.error(DBusError(.unknownInterface, "Object '\(DBusError.excerpt(path.rawValue))' has no interface '\(name)'"))
            }
            guard let method = interface.method(named: member.rawValue) else {
                return reply.error(DBusError(.unknownMethod, "Interface '\(name)' has no method '\(member)'"))
            }
            target = (interface, method)
        } else {
            target = object.interfaces.lazy.compactMap { interface in
                interface.method(named: member.rawValue).map { (interface, $0) }
            }.first
        }
        guard let (interface, method) = target else {
            return reply.error(DBusError(.unknownMethod, "Object '\(DBusError.excerpt(path.rawValue))' has no method '\(member)'"))
        }
        guard call.body.hasTypes(method.inputTypes) else {
            return reply.error(signatureError(interface.name, member, method.inputSignature.rawValue, call))
        }
        if let answerAtOnce = method.answerAtOnce, object.jobs.isConcurrent,
            case let arrival = DispatchTime.now().uptimeNanoseconds, core.atOnceBudget.allows(at: arrival)
        {
            defer { core.atOnceBudget.spend(from: arrival, to: DispatchTime.now().uptimeNanoseconds) }
            let context = MethodCallContext(sender: call.sender, path: path, interface: interface.name, member: member)
            do {
                if let results = try MethodCallContext.$current.withValue(context, operation: { try answerAtOnce(call.body) }) {
                    return try send(results, with: reply)
                }
            } catch {
                return reply.error(DBusError.from(error))
            }
        }
        let later = reply.offQueue
        object.jobs.submit {
            let reply = later
            let context = MethodCallContext(sender: call.sender, path: path, interface: interface.name, member: member)
            do {
                if let invokeResults = method.invokeResults {
                    let results = try await MethodCallContext.$current.withValue(context) {
                        try await invokeResults(call.body)
                    }
                    return try send(results, with: reply)
                }
                let results = try await MethodCallContext.$current.withValue(context) {
                    try await method.invoke(call.body)
                }
                reply.values(results)
            } catch {
                reply.error(DBusError.from(error))
            }
        }
    }

    /// Sends a handler's results: bytes it wrote go on the wire as they are; refused, as values.
    private static func send(_ results: MethodResults, with reply: Replier) throws {
        if case .encoded(let encoded) = results,
            reply.encoded(encoded.bytes, signature: encoded.signature, isWellFormed: encoded.isWellFormed)
        {
            return
        }
        reply.values(try results.values())
    }

    /// `org.freedesktop.DBus.Peer`, which every path of a connection answers.
    private static func handlePeer(_ call: Message, member: MemberName, reply: Replier) {
        switch member.rawValue {
        case "Ping", "GetMachineId":
            guard call.body.isEmpty else { return reply.error(signatureError(peer, member, "", call)) }
            guard member.rawValue == "GetMachineId" else { return reply.values([]) }
            guard let id = RawConnection.localMachineID else {
                return reply.error(DBusError(.failed, "This machine's D-Bus id cannot be read"))
            }
            reply.values([.string(id)])
        default:
            reply.error(DBusError(.unknownMethod, "Interface '\(peer)' has no method '\(member)'"))
        }
    }

    private static func handleProperties(_ call: Message, member: MemberName, object: ObjectRegistry.Object, reply: Replier) {
        let expected: [DBusType]
        switch member.rawValue {
        case "Get": expected = [.string, .string]
        case "GetAll": expected = [.string]
        case "Set": expected = [.string, .string, .variant]
        default: return reply.error(DBusError(.unknownMethod, "Interface '\(properties)' has no method '\(member)'"))
        }
        guard call.body.hasTypes(expected) else {
            return reply.error(signatureError(properties, member, Signature(unchecked: expected).rawValue, call))
        }
        guard case .string(let interfaceName) = call.body[0] else { return }
        guard let interface = object.interfaces.first(where: { $0.name.rawValue == interfaceName }) else {
            return reply.error(
                DBusError(.unknownInterface, "Object '\(DBusError.excerpt(call.path!.rawValue))' has no interface '\(DBusError.excerpt(interfaceName))'"))
        }
        if member.rawValue == "GetAll" {
            // Most often the stored values' bytes written for an earlier call, sent as written;
            // otherwise the values one by one, as for any reply.
            if call.expectsReply, let body = interface.encodedReadableValues(),
                reply.encoded(body, signature: Self.propertiesSignature, isWellFormed: true)
            {
                return
            }
            do {
                return reply.values([.dictionary(key: .string, value: .variant, try interface.readableValues(at: call.path!))])
            } catch {
                return reply.error(error)
            }
        }
        guard case .string(let propertyName) = call.body[1] else { return }
        guard let property = interface.property(named: propertyName) else {
            return reply.error(
                DBusError(.unknownProperty, "Interface '\(interfaceName)' has no property '\(DBusError.excerpt(propertyName))'"))
        }
        if member.rawValue == "Get" {
            guard property.access != .write else {
                return reply.error(
                    DBusError(.accessDenied, "Property '\(propertyName)' of '\(interfaceName)' is write-only"))
            }
            let found: DBusValue?
            do { found = try interface.currentValue(property.name, at: call.path!) } catch { return reply.error(error) }
            guard let value = found else {
                return reply.error(
                    DBusError(
                        .unknownProperty,
                        "Object '\(DBusError.excerpt(call.path!.rawValue))' has no value for property '\(propertyName)' of '\(interfaceName)'"))
            }
            return reply.values([.variant(Variant(value))])
        }
        // Set
        guard property.access != .read else {
            return reply.error(
                DBusError(.propertyReadOnly, "Property '\(propertyName)' of '\(interfaceName)' is read-only"))
        }
        guard case .variant(let variant) = call.body[2], variant.value.hasType(property.type) else {
            let given: String = if case .variant(let variant) = call.body[2] { "\(variant.value.type)" } else { "?" }
            return reply.error(
                .invalidArgs(
                    "Property '\(propertyName)' of '\(interfaceName)' has type '\(property.type)', not '\(given)'"))
        }
        let later = reply.offQueue
        object.jobs.submit {
            let reply = later
            let context = MethodCallContext(
                sender: call.sender, path: call.path!, interface: interface.name, member: property.name)
            do {
                if let set = property.set {
                    let stored = try await MethodCallContext.$current.withValue(context) { try await set(variant.value) }
                    if let stored { interface.store(property.name, stored) }
                } else {
                    interface.store(property.name, variant.value)
                }
                reply.values([])
            } catch {
                reply.error(DBusError.from(error))
            }
        }
    }

    private static func signatureError(_ interface: InterfaceName, _ member: MemberName, _ expected: String, _ call: Message)
        -> DBusError
    {
        .invalidArgs(
            "Method '\(member)' of '\(interface)' takes arguments of signature '\(expected)', got '\(call.signature)'")
    }
}

/// Sends the one reply a method call gets, unless the caller asked for none.
struct Replier: Sendable {
    let call: Message
    let core: ConnectionCore
    /// Whether replies are sent from the connection's queue, where the call is being handled:
    /// then at once, else queued there.
    let onQueue: Bool

    /// The same, for a handler that replies later from another thread.
    var offQueue: Replier { Replier(call: call, core: core, onQueue: false) }

    func values(_ body: [DBusValue]) {
        guard call.expectsReply else { return }
        do {
            send(try OutgoingMessage(reply(.methodReturn, body: body, errorName: nil)))
        } catch {
            // A body that cannot be put on the wire (a NUL in a string, say) still gets an answer.
            self.error(DBusError.from(error))
        }
    }

    /// Replies with a body already in wire format, sent as it is if ``WireBody`` wrote it
    /// (`isWellFormed`), else checked by libdbus; false, with nothing sent, if the message is
    /// invalid.
    func encoded(_ body: [UInt8], signature: Signature, isWellFormed: Bool) -> Bool {
        guard call.expectsReply else { return true }
        guard
            let message = OutgoingMessage(
                replyTo: call.serial, destination: call.sender, signature: signature, body: body, isWellFormed: isWellFormed)
        else { return false }
        send(message)
        return true
    }

    func error(_ error: DBusError) {
        guard call.expectsReply else { return }
        let message = reply(.error, body: [.string(error.message.replacingAll("\0", with: ""))], errorName: error.name)
        if let outgoing = try? OutgoingMessage(message) { send(outgoing) }
    }

    private func send(_ message: OutgoingMessage) {
        if onQueue { core.sendOnQueue(message) } else { core.send(message) }
    }

    private func reply(_ kind: Message.Kind, body: [DBusValue], errorName: ErrorName?) -> Message {
        Message(
            kind: kind, serial: 0, replySerial: call.serial, path: nil, interface: nil, member: nil,
            errorName: errorName, sender: nil, destination: call.sender, expectsReply: false, body: body)
    }
}
