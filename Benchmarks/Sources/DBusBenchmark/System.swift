import Glibc

/// Linux process plumbing for the benchmark: CPU pinning and per-process CPU time.
enum System {
    private typealias Affinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32
    /// 1024 CPUs, as glibc's `cpu_set_t`.
    private static let maskWords = 16

    private static func function<T>(_ name: String, as type: T.Type) -> T? {
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    /// The CPUs this process may run on.
    static func allowedCPUs() -> [Int] {
        guard let getAffinity = function("sched_getaffinity", as: Affinity.self) else { return [] }
        var mask = [UInt64](repeating: 0, count: maskWords)
        guard mask.withUnsafeMutableBytes({ getAffinity(0, $0.count, $0.baseAddress) }) == 0 else { return [] }
        return (0..<(maskWords * 64)).filter { mask[$0 / 64] & (1 << UInt64($0 % 64)) != 0 }
    }

    /// Pins every thread of this process to `cpu`. Threads and children started afterwards inherit it.
    /// Returns false if the kernel refused.
    static func pinProcess(to cpu: Int) -> Bool {
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
    static func cpuNanoseconds(of pid: Int32) -> UInt64 {
        var total: UInt64 = 0
        for thread in threads(of: pid) {
            guard let text = readFile("/proc/\(pid)/task/\(thread)/schedstat"),
                let first = text.split(separator: " ").first, let value = UInt64(first)
            else { continue }
            total += value
        }
        return total
    }

    private static func threads(of pid: Int32) -> [Int32] {
        guard let directory = opendir("/proc/\(pid)/task") else { return [] }
        defer { closedir(directory) }
        var result: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let thread = Int32(name) { result.append(thread) }
        }
        return result
    }

    private static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var length = 0
        while length < buffer.count {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + length, $0.count - length) }
            if count <= 0 { break }
            length += count
        }
        return String(decoding: buffer[..<length], as: UTF8.self)
    }
}
