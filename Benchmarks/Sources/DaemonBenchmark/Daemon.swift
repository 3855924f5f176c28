import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc

/// How to start `mpris-bridge` for one measurement, on the benchmark's private bus.
struct DaemonLaunch: Sendable {
    static let playerName = "daemonbenchmark"
    static let busName: BusName = "org.mpris.MediaPlayer2.daemonbenchmark"

    var executable: String
    var library: String
    var cacheDirectory: String
    var stateDirectory: String
    var audioSink = "fakesink sync=true"
    /// Without `--no-scan`: the daemon rescans the library in a child process after `ready:`.
    var scansAtStart = false
    /// Started as `/bin/sh -c 'exec mpris-bridge … 2>&1'` so that its log (stderr) arrives on
    /// stdout line by line and `ready:` can be awaited: the same process once the shell has
    /// exec'd, at the price of the shell's start-up (measured: see ``DaemonStarts``). Without
    /// it the daemon is spawned directly and its log is only captured.
    var logsToStdout = true

    var arguments: [String] {
        ["--library", library, "--cache-dir", cacheDirectory, "--state-dir", stateDirectory, "--audio-sink", audioSink,
            "--name", Self.playerName] + (scansAtStart ? [] : ["--no-scan"])
    }

    /// Spawns the daemon on `bus`; returns with the time just before the spawn.
    func spawn(on bus: PrivateBus) throws -> RunningDaemon {
        let started = monotonicNanoseconds()
        let process =
            logsToStdout
            ? try bus.spawn("/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>&1", executable] + arguments)
            : try bus.spawn(executable, arguments)
        return RunningDaemon(process: process, spawnedAt: started)
    }
}

/// A started `mpris-bridge`.
struct RunningDaemon: Sendable {
    let process: ChildProcess
    /// Monotonic nanoseconds just before the spawn.
    let spawnedAt: UInt64
    var probe: ProcessProbe { ProcessProbe(pid: process.pid) }

    /// Waits for the log line `ready: N entries queued`; returns when it arrived and N.
    func waitUntilReady(timeout: Duration = .seconds(120)) async throws -> (at: UInt64, entries: Int) {
        let line = try await process.waitForLine(timeout: timeout) { $0.contains("ready:") }
        let at = monotonicNanoseconds()
        let words = line.split(separator: " ")
        let entries = words.firstIndex(of: "ready:").flatMap { Int(words[$0 + 1]) } ?? -1
        return (at, entries)
    }

    /// Waits for the daemon's start-up scan: until it has a child process, then until it has none
    /// (this only reads /proc, every 5 ms); returns the monotonic time it saw none.
    func waitForStartupScan(timeout: Duration = .seconds(600)) async throws -> UInt64 {
        let started = monotonicNanoseconds()
        let deadline = started + UInt64(timeout.components.seconds) * 1_000_000_000
        while probe.children().isEmpty {
            guard monotonicNanoseconds() < started + 10_000_000_000 else {
                throw BenchmarkFailure(description: "the daemon started no scan child within 10 s")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        while !probe.children().isEmpty {
            guard monotonicNanoseconds() < deadline else {
                throw BenchmarkFailure(description: "the daemon's scan child was still running after \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return monotonicNanoseconds()
    }

    /// SIGTERM, as systemd stops it; waits for the exit and expects status 0. Returns how long
    /// the exit took, in nanoseconds.
    @discardableResult
    func stop() async throws -> UInt64 {
        let start = monotonicNanoseconds()
        kill(process.pid, SIGTERM)
        let status = try await process.waitForExit(timeout: .seconds(60))
        let took = monotonicNanoseconds() - start
        guard status == 0 else {
            throw BenchmarkFailure(
                description: "mpris-bridge exited with status \(status) after SIGTERM:\n"
                    + process.capturedStdout + process.capturedStderr)
        }
        return took
    }
}

/// The benchmark's own connection to the private bus, and its handles on the daemon.
struct BusClient: Sendable {
    let connection: Connection
    var player: Proxy {
        Proxy(
            connection, destination: DaemonLaunch.busName, path: "/org/mpris/MediaPlayer2",
            interface: "org.mpris.MediaPlayer2.Player", timeout: .seconds(30))
    }

    /// Subscribes to `NameOwnerChanged` for the daemon's name (before it is spawned) and
    /// returns a stream of the times at which the name got an owner. Dropping the stream
    /// unsubscribes.
    func ownerChanges() async throws -> AsyncThrowingStream<Message, any Error> {
        try await connection.signals(
            matching: MatchRule(
                sender: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", arguments: [0: DaemonLaunch.busName.rawValue]))
    }

    func playbackStatus() async throws -> String { try await player.property("PlaybackStatus", as: String.self) }
}

/// Awaits the first `NameOwnerChanged` in `stream` that gives the name an owner; returns the
/// monotonic time it arrived. Throws after `timeout`.
func awaitOwned(_ stream: AsyncThrowingStream<Message, any Error>, timeout: Duration) async throws -> UInt64 {
    try await withThrowingTaskGroup(of: UInt64?.self) { group in
        group.addTask {
            for try await message in stream {
                let (_, _, owner) = try message.decode(as: String.self, String.self, String.self)
                if !owner.isEmpty { return monotonicNanoseconds() }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        guard let first else {
            throw BenchmarkFailure(description: "\(DaemonLaunch.busName) got no owner within \(timeout)")
        }
        return first
    }
}
