import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Why ``MPDServer`` could not start or tell its address.
public enum MPDServerError: Error, Sendable, CustomStringConvertible {
    /// The Unix socket's path is taken: a server listens there, or it is not a socket.
    case socketPathInUse(String, reason: String)
    /// ``MPDServer/run()`` was called a second time.
    case alreadyRun
    /// The configuration has no TCP listener, so there is no TCP port to tell.
    case noTCPListener

    public var description: String {
        switch self {
        case .socketPathInUse(let path, let reason): "cannot listen on the MPD socket \(path): \(reason)"
        case .alreadyRun: "the MPD server was already run"
        case .noTCPListener: "the MPD server has no TCP listener"
        }
    }
}

/// MPD's protocol on a TCP port and a Unix socket: each connection gets a session that greets
/// it, reads its lines, answers the connection's own commands (`password`, `idle`, command
/// lists, `tagtypes`…) and passes every other command to the ``MPDCommandHandler``.
///
/// The sockets are served by one event-loop thread of the server's own, and each session runs on
/// it too (an actor whose executor is the loop), so that a command is read, answered and written
/// on one thread; the handler's commands run there until they wait for something else (the
/// player, the library's reads, which have threads of their own). A connection costs a task,
/// its socket and a few small buffers while it waits, so hundreds of idle clients cost a few
/// megabytes.
public final class MPDServer: Sendable {
    private enum Listening {
        /// Those who wait, by a number of their own.
        case waiting([Int: CheckedContinuation<Int?, any Error>], next: Int)
        case listening(tcpPort: Int?)
        case failed(any Error)
    }

    /// A connection as accepted: its channel and what its timer and session share.
    private struct Connection: Sendable {
        let channel: any Channel
        let session: MPDSession
        /// The server's logger, with the connection's number.
        let logger: Logger
    }

    private let configuration: MPDServerConfiguration
    private let handler: any MPDCommandHandler
    private let logger: Logger
    private let table: MPDCommandTable
    private let clients = Atomic(0)
    private let nextClientNumber = Atomic(1)
    private let started = Atomic(false)
    private let listening = Mutex(Listening.waiting([:], next: 0))

    /// A server that will listen as `configuration` says and pass commands to `handler`. It
    /// listens from ``run()`` on.
    public init(configuration: MPDServerConfiguration, handler: any MPDCommandHandler, logger: Logger) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        table = MPDCommandTable(handlerCommands: handler.commands)
    }

    /// The number of clients connected now.
    public var clientCount: Int { clients.load(ordering: .relaxed) }

    /// The TCP port the server listens on (the one chosen when ``MPDServerConfiguration/tcpPort``
    /// is 0), once every listener is bound.
    ///
    /// - Throws: the error that stopped ``run()`` from listening, ``MPDServerError/noTCPListener``
    ///   when there is no TCP listener, or `CancellationError`.
    public var boundTCPPort: Int {
        get async throws {
            guard let port = try await waitUntilListening() else { throw MPDServerError.noTCPListener }
            return port
        }
    }

    /// Returns once every listener is bound (with the TCP port, nil without TCP).
    ///
    /// - Throws: the error that stopped ``run()`` from listening, or `CancellationError`.
    @discardableResult
    public func waitUntilListening() async throws -> Int? {
        let number = Mutex<Int?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int?, any Error>) in
                let ready: Result<Int?, any Error>? = listening.withLock { state in
                    switch state {
                    case .listening(let port): return .success(port)
                    case .failed(let error): return .failure(error)
                    case .waiting(var waiting, let next):
                        // Checked under the lock, as the cancellation handler takes it too.
                        if Task.isCancelled { return .failure(CancellationError()) }
                        waiting[next] = continuation
                        number.withLock { $0 = next }
                        state = .waiting(waiting, next: next + 1)
                        return nil
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let cancelled: CheckedContinuation<Int?, any Error>? = listening.withLock { state in
                guard case .waiting(var waiting, let next) = state, let mine = number.withLock({ $0 }) else { return nil }
                let continuation = waiting.removeValue(forKey: mine)
                state = .waiting(waiting, next: next)
                return continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    private func reportListening(_ result: Result<Int?, any Error>) {
        let waiting: [CheckedContinuation<Int?, any Error>] = listening.withLock { state in
            guard case .waiting(let waiting, _) = state else { return [] }
            switch result {
            case .success(let port): state = .listening(tcpPort: port)
            case .failure(let error): state = .failed(error)
            }
            return Array(waiting.values)
        }
        for continuation in waiting { continuation.resume(with: result) }
    }

    /// Binds the listeners and serves clients until the task is cancelled; then closes the
    /// listeners and every client, removes the Unix socket's file and returns (once every
    /// command running then has returned: the handler's tasks are cancelled too).
    ///
    /// - Throws: an error when a listener cannot be bound (the port or socket is taken), which
    ///   ends the server; ``MPDServerError/alreadyRun`` on a second call.
    public func run() async throws {
        guard !started.exchange(true, ordering: .relaxed) else { throw MPDServerError.alreadyRun }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        do {
            try await serve(on: group)
        } catch {
            reportListening(.failure(error))
            try? await group.shutdownGracefully()
            if error is CancellationError || Task.isCancelled { return }
            throw error
        }
        try await group.shutdownGracefully()
    }

    private func serve(on group: MultiThreadedEventLoopGroup) async throws {
        typealias Listener = NIOAsyncChannel<Connection, Never>
        var listeners: [(listener: Listener, isLocal: Bool)] = []
        var socketFile: UnixSocketFile?
        defer { socketFile?.remove() }
        do {
            if let host = configuration.tcpHost {
                let listener = try await bootstrap(group, isTCP: true).bind(host: host, port: configuration.tcpPort) {
                    self.accepted($0, isLocal: false)
                }
                listeners.append((listener, false))
            }
            if let path = configuration.unixSocketPath {
                try UnixSocketFile.prepare(path)
                let listener = try await bootstrap(group, isTCP: false).bind(unixDomainSocketPath: path) {
                    self.accepted($0, isLocal: true)
                }
                listeners.append((listener, true))
                socketFile = try UnixSocketFile(boundAt: path)
            }
        } catch {
            for (listener, _) in listeners { try? await listener.channel.close() }
            throw error
        }
        let tcpPort = configuration.tcpHost == nil ? nil : listeners.first?.listener.channel.localAddress?.port
        logger.info(
            "MPD server listening",
            metadata: [
                "tcp": "\(configuration.tcpHost.map { "\($0):\(tcpPort ?? 0)" } ?? "none")",
                "socket": "\(configuration.unixSocketPath ?? "none")",
            ])
        reportListening(.success(tcpPort))
        try await withThrowingDiscardingTaskGroup { group in
            for (listener, _) in listeners {
                group.addTask { try await self.accept(on: listener) }
            }
        }
    }

    private func bootstrap(_ group: MultiThreadedEventLoopGroup, isTCP: Bool) -> ServerBootstrap {
        // A burst of clients (a phone app opening a few, a test opening a thousand) waits in the
        // kernel's queue rather than being refused.
        let backlog = Int32(min(max(configuration.limits.maximumClients, 64), 4096))
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: backlog)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: false)
            // The session asks for each read once it has taken the lines before: what a client
            // sends ahead waits in the kernel's buffer, not in the server's.
            .childChannelOption(.autoRead, value: false)
        if isTCP { bootstrap = bootstrap.childChannelOption(.tcpOption(.tcp_nodelay), value: 1) }
        return bootstrap
    }

    /// Sets up an accepted connection's pipeline, on its event loop.
    private func accepted(_ channel: any Channel, isLocal: Bool) -> EventLoopFuture<Connection> {
        channel.eventLoop.makeCompletedFuture {
            var logger = logger
            logger[metadataKey: "mpd.client"] = "\(nextClientNumber.add(1, ordering: .relaxed).oldValue)"
            let activity = ConnectionActivity()
            let limits = configuration.limits
            try channel.pipeline.syncOperations.addHandler(
                SilenceTimeoutHandler(activity: activity, timeout: limits.idleConnectionTimeout, logger: logger))
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(MPDLineDecoder(maximumLineBytes: limits.maximumLineBytes)))
            let session = MPDSession(
                handler: handler, table: table, configuration: configuration, logger: logger, activity: activity,
                channel: channel, isLocal: isLocal)
            try channel.pipeline.syncOperations.addHandler(MPDSessionHandler(session: session))
            return Connection(channel: channel, session: session, logger: logger)
        }
    }

    /// Accepts connections until cancelled, each served on a task of the group, which ends
    /// (closing every connection) when this does.
    private func accept(on listener: NIOAsyncChannel<Connection, Never>) async throws {
        try await listener.executeThenClose { connections in
            try await withThrowingDiscardingTaskGroup { sessions in
                for try await connection in connections {
                    let count = clients.add(1, ordering: .relaxed).newValue
                    guard count <= configuration.limits.maximumClients else {
                        clients.subtract(1, ordering: .relaxed)
                        connection.logger.warning(
                            "MPD client refused: \(configuration.limits.maximumClients) clients are connected already")
                        connection.channel.close(promise: nil)
                        continue
                    }
                    sessions.addTask {
                        await self.serve(connection)
                        self.clients.subtract(1, ordering: .relaxed)
                    }
                }
            }
        }
    }

    private func serve(_ connection: Connection) async {
        let logger = connection.logger
        let peer = connection.channel.remoteAddress.map { "\($0)" } ?? "local"
        logger.debug("MPD client connected", metadata: ["peer": "\(peer)"])
        defer { connection.channel.close(promise: nil) }
        do {
            try await connection.session.serve()
            logger.debug("MPD client disconnected")
        } catch let error as MPDLineDecoder.LineTooLong {
            logger.warning("MPD client closed: \(error)")
        } catch {
            logger.debug("MPD client disconnected", metadata: ["reason": "\(error)"])
        }
    }
}
