import BenchmarkSupport
import Glibc

/// Where an MPD server listens: a loopback TCP port or a Unix socket.
enum MPDAddress: Sendable, CustomStringConvertible {
    case loopback(port: UInt16)
    case unixSocket(path: String)

    var description: String {
        switch self {
        case .loopback(let port): "127.0.0.1:\(port)"
        case .unixSocket(let path): path
        }
    }

    /// The transport's name in the report.
    var transport: String {
        switch self {
        case .loopback: "TCP"
        case .unixSocket: "unix"
        }
    }
}

/// A blocking MPD client over one socket, as thin as the protocol allows, so that what a round
/// trip costs is the server's and the kernel's: one `write` per request, `read`s into one buffer
/// scanned for the terminating lines, no strings built while timing.
///
/// Used from one thread at a time (the benchmark's samples are sequential).
final class MPDConnection {
    let address: MPDAddress
    private let descriptor: Int32
    private var buffer: [UInt8]
    /// Bytes of `buffer` holding data (from index 0).
    private var filled = 0
    /// The first byte not yet scanned for a line end.
    private var scanned = 0
    /// Where the line being scanned starts.
    private var lineStart = 0
    /// How long a read waits for the server before the run fails.
    static let timeoutMilliseconds: Int32 = 20_000

    /// Connects and reads the greeting (`OK MPD <version>`).
    init(_ address: MPDAddress) throws {
        self.address = address
        buffer = [UInt8](repeating: 0, count: 1 << 16)
        descriptor = try Self.connectedSocket(address)
        // From here on deinit closes the socket.
        // A blocking read that waits longer than this fails with EAGAIN: a server that stopped
        // answering fails the run instead of hanging it, without a poll before every read.
        var timeout = timeval(tv_sec: Int(Self.timeoutMilliseconds / 1000), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        greeting = try readLine()
        guard greeting.hasPrefix("OK MPD ") else {
            throw BenchmarkFailure(description: "\(address) greeted with '\(greeting)', not 'OK MPD …'")
        }
    }

    /// A socket connected to `address`; closed again if connecting fails.
    private static func connectedSocket(_ address: MPDAddress) throws -> Int32 {
        let descriptor: Int32
        let connected: Int32
        switch address {
        case .loopback(let port):
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw failure("socket", address) }
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = port.bigEndian
            target.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .unixSocket(let path):
            var target = sockaddr_un()
            target.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: target.sun_path) else {
                throw BenchmarkFailure(description: "socket path too long: \(path)")
            }
            withUnsafeMutableBytes(of: &target.sun_path) { raw in
                for (index, byte) in bytes.enumerated() { raw[index] = byte }
            }
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw failure("socket", address) }
            connected = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        guard connected == 0 else {
            let error = failure("connect", address)
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// The server's first line, `OK MPD <protocol version>`.
    private(set) var greeting = ""

    deinit { close(descriptor) }

    /// Sends `request` in one `write` (the whole of it, retrying on a short write).
    func send(_ request: [UInt8]) throws {
        var offset = 0
        while offset < request.count {
            let written = request.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, request.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw Self.failure("write", address) }
            offset += written
        }
    }

    /// Reads until `count` responses have ended (each with `OK`) and drops them from the buffer.
    /// An `ACK` line ends the wait with an error.
    func readResponses(_ count: Int = 1) throws {
        consume(upTo: try scanResponses(count))
    }

    /// Sends `request` and returns its response as text (for setting up, not for timing).
    func command(_ request: String, responses: Int = 1) throws -> String {
        try send(Array(request.utf8))
        let end = try scanResponses(responses)
        let text = String(decoding: buffer[0..<end], as: UTF8.self)
        consume(upTo: end)
        return text
    }

    /// Reads until `count` responses have ended; returns where the last one ends in the buffer.
    private func scanResponses(_ count: Int) throws -> Int {
        var remaining = count
        while true {
            while scanned < filled {
                if buffer[scanned] == UInt8(ascii: "\n") {
                    let length = scanned - lineStart
                    if length == 2 && buffer[lineStart] == UInt8(ascii: "O") && buffer[lineStart + 1] == UInt8(ascii: "K") {
                        remaining -= 1
                    } else if length >= 4 && buffer[lineStart] == UInt8(ascii: "A") && buffer[lineStart + 1] == UInt8(ascii: "C")
                        && buffer[lineStart + 2] == UInt8(ascii: "K") && buffer[lineStart + 3] == UInt8(ascii: " ")
                    {
                        let line = String(decoding: buffer[lineStart..<scanned], as: UTF8.self)
                        consume(upTo: scanned + 1)
                        throw BenchmarkFailure(description: "\(address) answered \(line)")
                    }
                    lineStart = scanned + 1
                    if remaining == 0 { return scanned + 1 }
                }
                scanned += 1
            }
            try fill()
        }
    }

    /// True when a byte can be read now (or within `milliseconds`).
    func isReadable(withinMilliseconds milliseconds: Int32 = 0) throws -> Bool {
        if filled > 0 { return true }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, milliseconds)
        if ready < 0 && errno != EINTR { throw Self.failure("poll", address) }
        return ready > 0
    }

    /// The monotonic time at which the line containing `text` (ASCII) arrived, after reading
    /// until `OK`: the `changed: player` of an idle.
    func readResponse(timingLineContaining text: [UInt8]) throws -> UInt64 {
        var seenAt: UInt64?
        var remaining = 1
        while true {
            while scanned < filled {
                if buffer[scanned] == UInt8(ascii: "\n") {
                    let line = buffer[lineStart..<scanned]
                    if line.count == 2 && line.first == UInt8(ascii: "O") && line.last == UInt8(ascii: "K") {
                        remaining -= 1
                    } else if seenAt == nil && line.starts(with: text) {
                        seenAt = lastFillAt
                    } else if line.starts(with: Array("ACK ".utf8)) {
                        throw BenchmarkFailure(description: "\(address) answered \(String(decoding: line, as: UTF8.self))")
                    }
                    lineStart = scanned + 1
                    if remaining == 0 {
                        consume(upTo: scanned + 1)
                        guard let seenAt else {
                            throw BenchmarkFailure(description: "\(address) ended an idle without '\(String(decoding: text, as: UTF8.self))'")
                        }
                        return seenAt
                    }
                }
                scanned += 1
            }
            try fill()
        }
    }

    /// When the last `read` returned (monotonic nanoseconds).
    private(set) var lastFillAt: UInt64 = 0

    /// The first of `connections` with bytes to read, waiting up to ``timeoutMilliseconds``.
    static func firstReadable(_ connections: [MPDConnection]) throws -> MPDConnection {
        if let buffered = connections.first(where: { $0.filled > 0 }) { return buffered }
        var entries = connections.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        while true {
            let ready = poll(&entries, nfds_t(entries.count), timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, let index = entries.firstIndex(where: { $0.revents != 0 }) else {
                throw BenchmarkFailure(description: "\(connections.map(\.address)) sent nothing for \(timeoutMilliseconds) ms")
            }
            return connections[index]
        }
    }

    private func readLine() throws -> String {
        while true {
            while scanned < filled {
                if buffer[scanned] == UInt8(ascii: "\n") {
                    let line = String(decoding: buffer[0..<scanned], as: UTF8.self)
                    consume(upTo: scanned + 1)
                    return line
                }
                scanned += 1
            }
            try fill()
        }
    }

    /// Reads what the socket holds, waiting up to ``timeoutMilliseconds`` for the first byte.
    private func fill() throws {
        if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count > 0 {
                lastFillAt = monotonicNanoseconds()
                filled += count
                return
            }
            if count == 0 { throw BenchmarkFailure(description: "\(address) closed the connection") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                throw BenchmarkFailure(description: "\(address) sent nothing for \(Self.timeoutMilliseconds) ms")
            }
            throw Self.failure("read", address)
        }
    }

    /// Drops the first `end` bytes: moves what follows to the front.
    private func consume(upTo end: Int) {
        let rest = filled - end
        if rest > 0 {
            buffer.withUnsafeMutableBytes { raw in
                _ = memmove(raw.baseAddress!, raw.baseAddress! + end, rest)
            }
        }
        filled = rest
        scanned = 0
        lineStart = 0
    }

    private static func failure(_ call: String, _ address: MPDAddress) -> BenchmarkFailure {
        BenchmarkFailure(description: "\(call) on \(address): \(String(cString: strerror(errno)))")
    }
}

