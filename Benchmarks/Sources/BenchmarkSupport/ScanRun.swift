import Glibc
import ProcessTestSupport

/// One run of `mpris-bridge scan`.
public struct ScanRun: Sendable {
    /// Spawn -> exit, nanoseconds.
    public var wall: UInt64
    /// The duration the scan prints itself ("Scan took X s"), seconds.
    public var own: Double
    public var read: Int
    public var unchanged: Int
    public var failed: Int
    /// User + system time of the scan process, seconds.
    public var cpuSeconds: Double

    public var wallMilliseconds: Double { Double(wall) / 1e6 }

    public var json: JSON {
        .object([
            ("wallMilliseconds", .number(wallMilliseconds)), ("scanMilliseconds", .number(own * 1000)),
            ("filesRead", .integer(read)), ("unchanged", .integer(unchanged)), ("failed", .integer(failed)),
            ("cpuSeconds", .number(cpuSeconds)),
        ])
    }

    /// Runs `daemon scan --library LIBRARY --cache-dir CACHE` with `arguments` added, timed from
    /// spawn to exit, and reads the summary it prints.
    public static func measure(
        daemon: String, library: String, cache: String, arguments: [String] = [],
        timeout: Duration = .seconds(1800)
    ) async throws -> ScanRun {
        let cpuBefore = childrenCPUSeconds()
        let start = monotonicNanoseconds()
        let output = try await ChildProcess.run(
            daemon, ["scan", "--library", library, "--cache-dir", cache] + arguments, timeout: timeout)
        let wall = monotonicNanoseconds() - start
        guard output.succeeded else { throw BenchmarkFailure(description: "mpris-bridge scan failed: \(output)") }
        // "…: N tracks, 0 playlists. Scan took 1.234 s (2000 files read, 1620 files/s): 2000 added, 0 updated,
        // 0 removed, 0 unchanged, 0 failed"
        let text = output.stdout
        func number(before marker: String) -> Double? {
            guard let range = text.firstRange(of: marker) else { return nil }
            let head = text[..<range.lowerBound]
            let digits = head.reversed().prefix { $0.isNumber || $0 == "." }
            return Double(String(digits.reversed()))
        }
        guard let own = number(before: " s ("), let read = number(before: " files read"),
            let unchanged = number(before: " unchanged"), let failed = number(before: " failed")
        else { throw BenchmarkFailure(description: "cannot read the scan's summary: \(text)") }
        return ScanRun(
            wall: wall, own: own, read: Int(read), unchanged: Int(unchanged), failed: Int(failed),
            cpuSeconds: childrenCPUSeconds() - cpuBefore)
    }
}

/// User + system time of every child process reaped so far, in seconds.
public func childrenCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
