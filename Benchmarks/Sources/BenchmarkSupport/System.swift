import Glibc
import ProcessTestSupport

/// Linux process plumbing for the benchmarks: CPU pinning, per-process CPU time, the
/// executable's path, and a service that exits with its parent.
public enum System {
    private typealias Affinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
    /// 1024 CPUs, as glibc's `cpu_set_t`.
    private static let maskWords = 16

    private static func function<T>(_ name: String, as type: T.Type) -> T? {
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    /// The CPUs this process may run on.
    public static func allowedCPUs() -> [Int] {
        guard let getAffinity = function("sched_getaffinity", as: Affinity.self) else { return [] }
        var mask = [UInt64](repeating: 0, count: maskWords)
        guard mask.withUnsafeMutableBytes({ getAffinity(0, $0.count, $0.baseAddress) }) == 0 else { return [] }
        return (0..<(maskWords * 64)).filter { mask[$0 / 64] & (1 << UInt64($0 % 64)) != 0 }
    }

    /// Pins every thread of this process to `cpu`. Threads and children started afterwards inherit it.
    /// Returns false if the kernel refused.
    public static func pinProcess(to cpu: Int) -> Bool {
        guard let setAffinity = function("sched_setaffinity", as: Affinity.self) else { return false }
        var mask = [UInt64](repeating: 0, count: maskWords)
        mask[cpu / 64] |= 1 << UInt64(cpu % 64)
        var pinned = true
        // Twice: a thread that an unpinned thread created during the first pass is caught by the second.
        for _ in 0..<2 {
            for thread in threads(of: getpid()) {
                if mask.withUnsafeMutableBytes({ setAffinity(thread, $0.count, $0.baseAddress) }) != 0 { pinned = false }
            }
        }
        return pinned
    }

    /// CPU time used so far by the live threads of `pid`, in nanoseconds (`/proc/PID/task/*/schedstat`).
    public static func cpuNanoseconds(of pid: Int32) -> UInt64 {
        var total: UInt64 = 0
        for thread in threads(of: pid) {
            guard let text = readWholeFile("/proc/\(pid)/task/\(thread)/schedstat"),
                let first = text.split(separator: " ").first, let value = UInt64(first)
            else { continue }
            total += value
        }
        return total
    }

    /// This executable, for starting it again as a service.
    public static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw BenchmarkFailure(description: "cannot read /proc/self/exe") }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// For a service: the benchmark holds the write end of our stdin, so end of file means it is
    /// gone and no service outlives a benchmark that crashed. `_exit`s on end of file.
    public static func exitWhenStdinCloses() {
        startThread {
            var byte: UInt8 = 0
            while true {
                let count = read(0, &byte, 1)
                if count == 0 || (count < 0 && errno != EINTR) { _exit(0) }
            }
        }
    }

    private static func threads(of pid: Int32) -> [Int32] {
        (directoryEntries("/proc/\(pid)/task") ?? []).compactMap { Int32($0) }
    }
}

/// A process's memory as `/proc/PID/status` gives it, in kB.
public struct ResidentMemory: Sendable {
    /// Resident now (`VmRSS`).
    public var resident = 0
    /// The peak resident set (`VmHWM`).
    public var peak = 0
    /// Anonymous memory (heap, stacks, `mmap` without a file): `RssAnon`.
    public var anonymous = 0
    /// Pages of mapped files (code and data of the executable and its libraries): `RssFile`.
    public var file = 0
    public var threads = 0

    /// Reads it now; nil if the process is gone.
    public init?(pid: Int32) {
        guard let text = readWholeFile("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ":" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            switch parts[0] {
            case "VmRSS": resident = value
            case "VmHWM": peak = value
            case "RssAnon": anonymous = value
            case "RssFile": file = value
            case "Threads": threads = value
            default: break
            }
        }
    }

    /// The four sizes, for a report's JSON.
    public var json: JSON {
        .object([
            ("vmRSSKilobytes", .integer(resident)), ("vmHWMKilobytes", .integer(peak)),
            ("rssAnonKilobytes", .integer(anonymous)), ("rssFileKilobytes", .integer(file)),
        ])
    }
}

/// The whole of a (possibly large, possibly `/proc`) file, nil if it cannot be opened.
public func readWholeFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

@inlinable public func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Runs `body` on a detached POSIX thread, off the Swift concurrency pool.
public func startThread(_ body: @escaping @Sendable () -> Void) {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { argument in
        Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}

/// A loopback TCP port free now: bound to port 0, read back, closed. The server that gets it
/// binds it a moment later; another process taking it in between makes that server fail to
/// start, which the run reports. Never a fixed port (mpd's 6600 may be taken by a real mpd).
public func freeLoopbackPort() throws -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw BenchmarkFailure(description: "socket: \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
        }
    }
    guard bound else { throw BenchmarkFailure(description: "cannot bind a loopback port: \(String(cString: strerror(errno)))") }
    return UInt16(bigEndian: address.sin_port)
}
