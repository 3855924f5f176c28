import AsyncSupport
import Logging
import MPD
import ProcessTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A handler of a few commands, each showing one thing a session must do with what the
/// handler answers: `status` counts its calls, `play` posts a change, `fail` throws, `slow`
/// waits, `add` needs the add permission, `big` answers many bytes, `client` shows the
/// client's state as the handler sees it.
final class ServerTestHandler: MPDCommandHandler {
    let changes = MPDChanges()
    private let calls = Atomic(0)

    var commands: [String: MPDPermissions] {
        ["status": .read, "play": .control, "fail": .read, "slow": .read, "add": .add, "big": .read, "client": .read]
    }

    func handle(_ request: MPDRequest, client: MPDClient) async throws(MPDError) -> MPDResponse {
        var response = client.response()
        switch request.name {
        case "status":
            try response.add("state", "stop")
            try response.add("calls", calls.add(1, ordering: .relaxed).newValue)
        case "play":
            changes.post(.player)
        case "fail":
            throw .noExist("No such song")
        case "slow":
            let milliseconds = Int(request.arguments.first ?? "") ?? 0
            try? await Task.sleep(for: .milliseconds(milliseconds))
            try response.add("slept", milliseconds)
        case "add":
            break
        case "big":
            let line = String(repeating: "x", count: 1000)
            for index in 0..<(Int(request.arguments.first ?? "") ?? 0) { try response.add("line\(index)", line) }
        case "client":
            try response.add("tags", MPDTag.allCases.filter { client.tags.contains($0) }.map(\.rawValue).joined(separator: ","))
            try response.add("binarylimit", client.binaryLimit)
            try response.add("local", client.isLocal ? 1 : 0)
        default:
            throw .argument("not a test command")
        }
        return response
    }
}

/// A server run in this process on a free port and a socket in a temporary folder, stopped
/// (its task cancelled) when the test's body returns.
struct ServerFixture: Sendable {
    let server: MPDServer
    let handler: ServerTestHandler
    let port: Int
    let socketPath: String
    let folder: TemporaryDirectory
    let running: Task<Void, any Error>

    /// Runs `body` with a server whose configuration `configure` adjusted, then stops it and
    /// removes its folder.
    static func with<Result>(
        _ configure: (inout MPDServerConfiguration) -> Void = { _ in },
        _ body: (ServerFixture) async throws -> Result
    ) async throws -> Result {
        let fixture = try await start(configure)
        do {
            let result = try await body(fixture)
            try await fixture.stop()
            return result
        } catch {
            try? await fixture.stop()
            throw error
        }
    }

    static func start(_ configure: (inout MPDServerConfiguration) -> Void) async throws -> ServerFixture {
        let folder = try TemporaryDirectory(prefix: "mpd-server")
        var configuration = MPDServerConfiguration(tcpHost: "127.0.0.1", tcpPort: 0, unixSocketPath: folder.path + "/mpd.socket")
        configure(&configuration)
        let handler = ServerTestHandler()
        // MPD_SERVER_TEST_LOG=debug shows what the server logs.
        var logger = Logger(label: "mpd-server-test") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = getenv("MPD_SERVER_TEST_LOG").flatMap { Logger.Level(rawValue: String(cString: $0)) } ?? .critical
        let server = MPDServer(configuration: configuration, handler: handler, logger: logger)
        let running = Task { try await server.run() }
        let port: Int
        do {
            port = try await server.boundTCPPort
        } catch {
            running.cancel()
            folder.remove()
            throw error
        }
        return ServerFixture(
            server: server, handler: handler, port: port, socketPath: configuration.unixSocketPath ?? "", folder: folder,
            running: running)
    }

    /// Cancels the server and waits until it returned.
    func stop() async throws {
        running.cancel()
        defer { folder.remove() }
        try await running.value
    }

    /// A new client on the TCP port, its greeting read.
    func connect() async throws -> LineClient {
        let client = try await LineClient(port: port)
        #expect(try await client.readLine() == "OK MPD 0.23.0")
        return client
    }

    /// Waits until `condition` holds, checking every millisecond for at most `timeout`.
    func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw LineClient.Failure("the condition did not hold within \(timeout)") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// A Python script of `Python/`, next to this file.
    static func pythonScript(_ name: String) -> String {
        let file = #filePath
        return String(file[..<file.lastIndex(of: "/")!]) + "/Python/" + name
    }
}

/// A client on a raw socket, as a program sees the protocol: lines out, lines in.
///
/// Its blocking calls (each bounded by a timeout) run on threads of their own, not on those
/// Swift's tasks share, which the server in this process needs.
final class LineClient: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static let executor = BlockingExecutor(label: "MPDTests.LineClient", width: 4)

    let descriptor: Int32
    /// Bytes received and not yet returned as a line.
    private let received = Mutex<[UInt8]>([])

    init(port: Int) async throws {
        descriptor = try await withTaskExecutorPreference(Self.executor) {
            try Self.connected(family: AF_INET) { fd in
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
    }

    init(unixSocket path: String) async throws {
        descriptor = try await withTaskExecutorPreference(Self.executor) {
            try Self.connected(family: AF_UNIX) { fd in
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { bytes in
                    bytes.copyBytes(from: path.utf8)
                    bytes[path.utf8.count] = 0
                }
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        }
    }

    private static func connected(family: Int32, _ connecting: (Int32) -> Int32) throws -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        guard connecting(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure("connect: \(reason)")
        }
        return fd
    }

    deinit { close(descriptor) }

    /// Sends `text` as it is (add the `\n`).
    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure("send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// The next line, without its `\n`.
    func readLine(timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let line = takeLine() { return line }
            guard try await receiveSome(until: deadline) else {
                throw Failure("the connection closed before a whole line; got \(pendingText)")
            }
        }
    }

    /// The lines of one answer: up to and including `OK` or an `ACK` line.
    func readAnswer(timeout: Duration = .seconds(10)) async throws -> [String] {
        var lines: [String] = []
        while true {
            let line = try await readLine(timeout: timeout)
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") { return lines }
        }
    }

    /// Sends `command` and returns its answer.
    func ask(_ command: String) async throws -> [String] {
        try send(command + "\n")
        return try await readAnswer()
    }

    /// Waits until the server closes the connection; returns the lines it sent before.
    func waitForClose(timeout: Duration = .seconds(10)) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while try await receiveSome(until: deadline) {}
        var lines: [String] = []
        while let line = takeLine() { lines.append(line) }
        return lines
    }

    /// Whether nothing arrives within `duration` (the connection stays open and silent).
    func staysSilent(for duration: Duration) async throws -> Bool {
        let ready = await withTaskExecutorPreference(Self.executor) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
            return poll(&poller, 1, Int32(milliseconds))
        }
        return ready == 0 && received.withLock { $0.isEmpty }
    }

    /// Whether the descriptor has bytes (or end of file) to read now.
    var isReadable: Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    /// Reads what is there now without waiting; false at end of file.
    func receiveNow() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if count > 0 { received.withLock { $0 += buffer[..<count] } }
        return count != 0
    }

    /// Lines received and complete now, without waiting.
    func takeLines() -> [String] {
        var lines: [String] = []
        while let line = takeLine() { lines.append(line) }
        return lines
    }

    private var pendingText: String { received.withLock { String(decoding: $0, as: UTF8.self).debugDescription } }

    private func takeLine() -> String? {
        received.withLock { bytes in
            guard let newline = bytes.firstIndex(of: 0x0A) else { return nil }
            let line = String(decoding: bytes[..<newline], as: UTF8.self)
            bytes.removeSubrange(...newline)
            return line
        }
    }

    /// Waits for bytes until `deadline`; false at end of file (or a reset).
    private func receiveSome(until deadline: ContinuousClock.Instant) async throws -> Bool {
        try await withTaskExecutorPreference(Self.executor) {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw Failure("nothing received in time; pending \(pendingText)") }
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000) + 1
                guard poll(&poller, 1, milliseconds) > 0 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return false }
                received.withLock { $0 += buffer[..<count] }
                return true
            }
        }
    }
}

/// The process's resident memory, in bytes (`/proc/self/statm`).
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    guard fgets(&line, Int32(line.count), file) != nil else { return 0 }
    let fields = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ")
    guard fields.count >= 2, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
