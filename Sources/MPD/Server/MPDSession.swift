import Logging
import NIOCore
import Synchronization

/// One client's conversation: reads its lines in order, answers the connection's own commands
/// (`password`, `idle`, command lists…) and passes the others to the handler, one at a time.
/// The answers to the lines of one read (a client's pipelined commands) are gathered and
/// written as one buffer once the last is answered, as mpd does: one write, one wake-up of the
/// client.
///
/// It runs on its channel's event loop (the actor's executor is the loop), so that reading a
/// line, answering a command of the connection's own and writing the answer stay on one thread:
/// no hop between threads for a `ping`, and for a handler's command only the hops its own work
/// needs. ``MPDSessionHandler`` hands it the lines from the pipeline. Only an `idle` wait runs
/// beside the session's task, on a task of its own that writes the changes when they come
/// while the session keeps reading (for `noidle`).
actor MPDSession {
    /// How a request ended.
    private enum Outcome {
        /// Its answer, to which `OK` or `list_OK` is added.
        case answered(MPDResponse)
        case failed(MPDError)
        /// `close`: the connection ends without an answer.
        case close
        /// `idle`: the answer comes when a subsystem of the mask changes.
        case idle(MPDSubsystems)
    }

    /// A command list being received: its requests are run at `command_list_end`.
    private struct CommandList {
        /// `command_list_ok_begin`: a `list_OK` follows each answer.
        var answersEach: Bool
        var requests: [Result<MPDRequest, MPDError>] = []
        var bytes = 0
    }

    /// An `idle` in progress: its task answers the change it waits for, or, when cancelled
    /// (`noidle`, the connection ending), returns what it would have answered, for the session
    /// to write: a write of a cancelled task would fail.
    private struct IdleWait {
        let state: IdleState
        let task: Task<MPDSubsystems?, Never>
    }

    /// Whether an idle task still waits: while it does, the only line the client may send is `noidle`.
    private final class IdleState: Sendable {
        let waiting = Atomic(true)
    }

    private let handler: any MPDCommandHandler
    private let table: MPDCommandTable
    private let configuration: MPDServerConfiguration
    private let logger: Logger
    private let activity: ConnectionActivity
    private nonisolated let channel: any Channel
    private let allocator: ByteBufferAllocator
    private let subscription: MPDChanges.Subscription

    private var permissions: MPDPermissions
    private var client: MPDClient
    private var commandList: CommandList?
    private var idle: IdleWait?
    /// Answers not written yet: written at the end of a read's lines, before an idle begins, and
    /// whenever they reach ``writeThreshold``.
    private var pending: ByteBuffer
    /// Gathered answers are written in pieces of this size, so a long command list or a burst of
    /// pipelined listings is not held whole.
    private let writeThreshold = 64 * 1024

    /// Lines read and not yet taken, a batch per read; at most what one read brings, as the
    /// session asks for a read only once it has taken them all (the channel does not read by itself).
    private var inbox: [[ByteBuffer]] = []
    /// Why the input ended (nil while it goes on): the client closed, or an error (a line too long).
    private var inputEnd: InputEnd?
    /// The session's task, waiting for lines.
    private var readWaiter: CheckedContinuation<Void, Never>?
    /// The session's task, waiting for the channel to take more output (the client reads slowly).
    private var writeWaiter: CheckedContinuation<Void, Never>?

    private enum InputEnd {
        case closed
        case failed(any Error)
    }

    /// The channel was closed while the session wrote to it.
    struct ConnectionClosed: Error {}

    nonisolated var unownedExecutor: UnownedSerialExecutor { channel.eventLoop.executor.asUnownedSerialExecutor() }

    init(
        handler: any MPDCommandHandler, table: MPDCommandTable, configuration: MPDServerConfiguration, logger: Logger,
        activity: ConnectionActivity, channel: any Channel, isLocal: Bool
    ) {
        self.handler = handler
        self.table = table
        self.configuration = configuration
        self.logger = logger
        self.activity = activity
        self.channel = channel
        allocator = channel.allocator
        // Before the greeting: a change the client could know of after it is kept for its `idle`.
        subscription = handler.changes.subscribe()
        permissions = configuration.initialPermissions
        client = MPDClient(responseLimit: configuration.limits.maximumResponseBytes, isLocal: isLocal)
        pending = allocator.buffer(capacity: 0)
    }

    /// Greets the client and answers its lines until it closes, breaks a rule that closes the
    /// connection, or the task is cancelled (which closes the channel).
    func serve() async throws {
        do {
            pending.writeString("OK MPD \(configuration.protocolVersion)\n")
            try await flush()
            reading: while let lines = try await nextLines() {
                for line in lines {
                    guard try await receive(line) else {
                        try await flush()
                        break reading
                    }
                    if pending.readableBytes >= writeThreshold { try await flush() }
                }
                try await flush()
            }
        } catch {
            await endIdleWithoutAnswer()
            throw error
        }
        await endIdleWithoutAnswer()
    }

    // MARK: Input

    /// Lines of one read, from the pipeline (on the event loop).
    func received(_ lines: [ByteBuffer]) {
        inbox.append(lines)
        wakeReader()
    }

    /// The input ended: the channel closed, or the pipeline failed (`error`).
    func inputEnded(_ error: (any Error)?) {
        if inputEnd == nil { inputEnd = error.map { .failed($0) } ?? .closed }
        wakeReader()
        channelWritable()
    }

    /// The channel takes output again.
    func channelWritable() {
        writeWaiter?.resume()
        writeWaiter = nil
    }

    private func wakeReader() {
        readWaiter?.resume()
        readWaiter = nil
    }

    /// The lines of the next read; nil once the client closed. Throws the pipeline's error.
    private func nextLines() async throws -> [ByteBuffer]? {
        while true {
            if !inbox.isEmpty { return inbox.removeFirst() }
            switch inputEnd {
            case .closed: return nil
            case .failed(let error): throw error
            case nil: break
            }
            try Task.checkCancellation()
            channel.read()
            await waitClosingOnCancel(until: { !$0.inbox.isEmpty || $0.inputEnd != nil }) { readWaiter = $0 }
        }
    }

    /// A read ended: when it brought no whole line (a part of one), the session still waits, and
    /// asks for the next read (the channel does not read by itself).
    func readCompleted() {
        if readWaiter != nil, inbox.isEmpty, inputEnd == nil { channel.read() }
    }

    /// Waits until `done` holds, resumed through the continuation `store` keeps; when the task is
    /// cancelled, closes the channel, which ends the input and so resumes every wait. The
    /// condition is checked before waiting, as a close (or a read) may tell its news right
    /// away, before the continuation is stored.
    private func waitClosingOnCancel(
        until done: (isolated MPDSession) -> Bool, _ store: (CheckedContinuation<Void, Never>) -> Void
    ) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if done(self) { continuation.resume() } else { store(continuation) }
            }
        } onCancel: { [channel] in
            channel.close(promise: nil)
        }
    }

    // MARK: Lines

    /// Answers one line; false when the connection must end.
    private func receive(_ buffer: ByteBuffer) async throws -> Bool {
        var line = buffer.readableBytesView
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }

        // Outside idle `noidle` is ignored, and is no part of a command list: the client already
        // had (or will have) the idle's answer, which it may not have read when it sent this.
        if line.elementsEqual("noidle".utf8) {
            if let idle {
                self.idle = nil
                idle.task.cancel()
                if let events = await idle.task.value { pending.writeString(idleAnswer(events)) }
            }
            return true
        }
        if let idle {
            guard !idle.state.waiting.load(ordering: .sequentiallyConsistent) else {
                logger.warning("MPD client closed: it sent a command other than noidle during idle")
                return false
            }
            // It has answered, or is about to (which the client could not have read yet).
            self.idle = nil
            if let events = await idle.task.value { pending.writeString(idleAnswer(events)) }
        }

        if commandList != nil {
            if line.elementsEqual("command_list_end".utf8) {
                let list = commandList!
                commandList = nil
                return try await run(list)
            }
            // Changed in place: a copy would copy the list's requests at every line.
            let limits = configuration.limits
            commandList!.bytes += buffer.readableBytes + 1
            guard commandList!.requests.count < limits.maximumCommandListLength,
                commandList!.bytes <= limits.maximumCommandListBytes
            else {
                logger.warning(
                    """
                    MPD client closed: a command list longer than \(limits.maximumCommandListLength) commands \
                    or \(limits.maximumCommandListBytes) bytes
                    """)
                return false
            }
            commandList!.requests.append(parse(line))
            return true
        }
        if line.elementsEqual("command_list_begin".utf8) || line.elementsEqual("command_list_ok_begin".utf8) {
            commandList = CommandList(answersEach: line.count == "command_list_ok_begin".utf8.count)
            return true
        }

        switch await execute(parse(line), index: 0, inList: false) {
        case .answered(let response):
            pending.writeBytes(response.bytes)
            pending.writeStaticString("OK\n")
        case .failed(let error):
            pending.writeString(error.line)
        case .close:
            return false
        case .idle(let mask):
            // Its answer is written by its own task: what came before goes first.
            try await flush()
            startIdle(mask)
        }
        return true
    }

    /// Runs a command list: each answer in order (with `list_OK` after each when asked), then
    /// `OK`; the first error stops the list, and is its last answer.
    private func run(_ list: CommandList) async throws -> Bool {
        for (index, request) in list.requests.enumerated() {
            switch await execute(request, index: index, inList: true) {
            case .answered(let response):
                pending.writeBytes(response.bytes)
                if list.answersEach { pending.writeStaticString("list_OK\n") }
            case .failed(let error):
                pending.writeString(error.line)
                return true
            case .close:
                return false
            case .idle:
                preconditionFailure("idle is refused in a command list")
            }
            if pending.readableBytes >= writeThreshold { try await flush() }
        }
        pending.writeStaticString("OK\n")
        return true
    }

    /// The request on a line, or the error that answers it (naming the command when its name
    /// could be read).
    private func parse(_ line: ByteBufferView) -> Result<MPDRequest, MPDError> {
        do throws(MPDError) {
            return .success(try MPDRequest.parse(line, maximumArguments: configuration.limits.maximumArguments))
        } catch {
            var error = error
            if error.code != .unknown {
                let name = line.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
                error.command = String(decoding: name, as: UTF8.self)
            }
            return .failure(error)
        }
    }

    // MARK: Commands

    private func execute(_ parsed: Result<MPDRequest, MPDError>, index: Int, inList: Bool) async -> Outcome {
        let request: MPDRequest
        switch parsed {
        case .success(let parsed): request = parsed
        case .failure(var error):
            error.listIndex = index
            return .failed(error)
        }
        let name = request.name
        guard let needed = table.permission(of: name) else {
            return .failed(MPDError(.unknown, "unknown command \"\(name)\"", listIndex: index))
        }
        guard permissions.isSuperset(of: needed) else {
            return .failed(MPDError(.permission, "you don't have permission for \"\(name)\"", command: name, listIndex: index))
        }
        do throws(MPDError) {
            return try await answer(request, inList: inList)
        } catch {
            var error = error
            error.command = name
            error.listIndex = index
            return .failed(error)
        }
    }

    private func answer(_ request: MPDRequest, inList: Bool) async throws(MPDError) -> Outcome {
        let arguments = request.arguments
        func expectArguments(_ range: ClosedRange<Int>) throws(MPDError) {
            guard range.contains(arguments.count) else {
                throw .argument("wrong number of arguments for \"\(request.name)\"")
            }
        }
        var response = client.response()
        switch request.name {
        case "close":
            return .close
        case "ping":
            try expectArguments(0...0)
        case "password":
            try expectArguments(1...1)
            guard let granted = configuration.passwords[arguments[0]] else {
                throw MPDError(.password, "incorrect password")
            }
            permissions = granted
        case "commands", "notcommands":
            try expectArguments(0...0)
            let allowed = request.name == "commands"
            for (name, permission) in table.sorted where permissions.isSuperset(of: permission) == allowed {
                try response.add("command", name)
            }
        case "tagtypes":
            try tagTypes(arguments, into: &response)
        case "binarylimit":
            try expectArguments(1...1)
            guard let bytes = Int(arguments[0]), bytes >= 0, arguments[0].utf8.allSatisfy({ (48...57).contains($0) })
            else {
                throw .argument("Integer expected: \(arguments[0])")
            }
            guard bytes >= 64 else { throw .argument("Value too small") }
            guard bytes <= configuration.limits.maximumBinaryChunk else {
                throw .argument("Value too large (at most \(configuration.limits.maximumBinaryChunk))")
            }
            client.binaryLimit = bytes
        case "idle":
            // mpd enters idle from a list and drops the list's `OK`, which leaves a client
            // waiting for it: refused here instead.
            guard !inList else { throw MPDError(.argument, "idle is not allowed in a command list") }
            var mask: MPDSubsystems = []
            for name in arguments {
                guard let subsystem = MPDSubsystems(name: name) else { throw .argument("Unrecognized idle event: \(name)") }
                mask.insert(subsystem)
            }
            return .idle(mask.isEmpty ? .all : mask)
        default:
            activity.setWaiting(true)
            defer { activity.setWaiting(false) }
            let writeEarlier = scheduleWriteOfPending()
            defer { writeEarlier?.cancel() }
            response = try await handler.handle(request, client: client)
        }
        return .answered(response)
    }

    /// `tagtypes` and its sub-commands: which tags this client's answers carry.
    private func tagTypes(_ arguments: [String], into response: inout MPDResponse) throws(MPDError) {
        guard let subcommand = arguments.first else {
            for tag in MPDTag.allCases where client.tags.contains(tag) { try response.add("tagtype", tag.rawValue) }
            return
        }
        let tagNames = arguments.dropFirst()
        switch subcommand {
        case "clear", "all":
            guard tagNames.isEmpty else { throw .argument("wrong number of arguments for \"tagtypes \(subcommand)\"") }
            client.tags = subcommand == "all" ? .all : MPDTagSet([])
        case "enable", "disable":
            guard !tagNames.isEmpty else { throw .argument("Not enough arguments") }
            var tags: [MPDTag] = []
            for name in tagNames {
                guard let tag = MPDTag(name: name) else { throw .argument("Unknown tag type: \(name)") }
                tags.append(tag)
            }
            for tag in tags {
                if subcommand == "enable" { client.tags.insert(tag) } else { client.tags.remove(tag) }
            }
        default:
            throw .argument("Unknown sub command")
        }
    }

    // MARK: Idle

    /// Waits for a change of `mask` on a task of its own, which answers it; the session keeps
    /// reading, for `noidle`.
    private func startIdle(_ mask: MPDSubsystems) {
        let state = IdleState()
        activity.setWaiting(true)
        let task = Task { [self] () -> MPDSubsystems? in
            await waitForChanges(mask, state: state)
        }
        idle = IdleWait(state: state, task: task)
    }

    /// An idle task's wait: writes the changes and returns nil, or returns them when cancelled
    /// first (the session answers them), or when the connection is gone.
    private func waitForChanges(_ mask: MPDSubsystems, state: IdleState) async -> MPDSubsystems? {
        let events = await subscription.next(in: mask)
        state.waiting.store(false, ordering: .sequentiallyConsistent)
        activity.setWaiting(false)
        guard !Task.isCancelled, channel.isActive else { return events }
        // Nothing of the session's is pending: it wrote all before the idle began, and the
        // client may send nothing but `noidle` meanwhile.
        channel.writeAndFlush(ByteBuffer(string: idleAnswer(events)), promise: nil)
        return nil
    }

    /// Ends an idle wait without an answer, as the connection ends; returns when its task has
    /// (which then holds the subscription no more).
    private func endIdleWithoutAnswer() async {
        guard let idle else { return }
        self.idle = nil
        idle.task.cancel()
        _ = await idle.task.value
    }

    // MARK: Writing

    /// The answers gathered before a handler's command are written if it has not answered
    /// within ``pendingWriteDelay``: a slow command (a costly search, `pause` waiting for the
    /// engine) does not hold back the answers to the commands sent before it.
    private func scheduleWriteOfPending() -> Scheduled<Void>? {
        guard pending.readableBytes > 0 else { return nil }
        return channel.eventLoop.scheduleTask(in: Self.pendingWriteDelay) { [self] in
            assumeIsolated { $0.writePendingNow() }
        }
    }

    /// How long the answers before a running command may wait for it to be written with them.
    private static let pendingWriteDelay = TimeAmount.milliseconds(2)

    private func writePendingNow() {
        guard pending.readableBytes > 0, channel.isActive else { return }
        let output = pending
        pending = allocator.buffer(capacity: 0)
        channel.writeAndFlush(output, promise: nil)
    }

    /// Writes the gathered answers, if any, as one buffer; returns once the channel takes more
    /// (at once, unless the client reads slower than it is answered).
    private func flush() async throws {
        guard pending.readableBytes > 0 else { return }
        // A server stopping cancels its sessions: what a command cancelled then answers is not sent.
        try Task.checkCancellation()
        guard channel.isActive else { throw ConnectionClosed() }
        let output = pending
        pending = allocator.buffer(capacity: 0)
        channel.writeAndFlush(output, promise: nil)
        while !channel.isWritable {
            guard channel.isActive, inputEnd == nil else { throw ConnectionClosed() }
            await waitClosingOnCancel(until: { $0.channel.isWritable || $0.inputEnd != nil }) { writeWaiter = $0 }
        }
    }
}

/// Hands a session what its channel reads and tells, on the channel's event loop.
final class MPDSessionHandler: ChannelInboundHandler {
    typealias InboundIn = [ByteBuffer]

    private let session: MPDSession

    init(session: MPDSession) {
        self.session = session
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let lines = unwrapInboundIn(data)
        session.assumeIsolated { $0.received(lines) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        session.assumeIsolated { $0.readCompleted() }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        session.assumeIsolated { $0.inputEnded(nil) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session.assumeIsolated { $0.inputEnded(error) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { session.assumeIsolated { $0.channelWritable() } }
        context.fireChannelWritabilityChanged()
    }
}

/// The answer to `idle`: a line per subsystem that changed, then `OK`.
private func idleAnswer(_ events: MPDSubsystems) -> String {
    var text = ""
    for name in events.names { text += "changed: \(name)\n" }
    return text + "OK\n"
}
