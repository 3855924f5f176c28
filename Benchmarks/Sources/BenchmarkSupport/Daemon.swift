import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport

/// How to start `mpris-bridge` for one measurement, on a benchmark's private bus.
public struct DaemonLaunch: Sendable {
    public var executable: String
    public var library: String
    public var cacheDirectory: String
    public var stateDirectory: String
    /// `--name`: the bus names are `org.mpris.MediaPlayer2.<name>` and `org.gnome.UPnP.MediaServer2.<name>`.
    public var playerName: String
    public var audioSink = "fakesink sync=true"
    /// Without `--no-scan`: the daemon rescans the library in a child process after `ready:`.
    public var scansAtStart = false
    /// Started as `/bin/sh -c 'exec mpris-bridge … 2>&1'` so that its log (stderr) arrives on
    /// stdout line by line and its lines can be awaited: the same process once the shell has
    /// exec'd, at the price of the shell's start-up (DaemonBenchmark measures it). Without it
    /// the daemon is spawned directly and its log is only captured.
    public var logsToStdout = true
    /// Added to the bus's environment (a sound server's variables, say).
    public var environment: [String: String] = [:]
    /// Options after the others (the MPD server's addresses, say).
    public var extraArguments: [String] = []

    public init(
        executable: String, library: String, cacheDirectory: String, stateDirectory: String, playerName: String
    ) {
        self.executable = executable
        self.library = library
        self.cacheDirectory = cacheDirectory
        self.stateDirectory = stateDirectory
        self.playerName = playerName
    }

    /// `org.mpris.MediaPlayer2.<name>`.
    public var busName: BusName { BusName(stringLiteral: "org.mpris.MediaPlayer2.\(playerName)") }
    /// `org.gnome.UPnP.MediaServer2.<name>`: the media tree.
    public var treeName: BusName { BusName(stringLiteral: "org.gnome.UPnP.MediaServer2.\(playerName)") }
    /// The media tree's root object.
    public var treeRoot: ObjectPath { ObjectPath(stringLiteral: "/org/gnome/UPnP/MediaServer2/\(playerName)") }

    public var arguments: [String] {
        // The MPD face on, as a user runs the daemon, but on a port and socket of its own.
        let mpd =
            extraArguments.contains { $0.hasPrefix("--mpd") || $0 == "--no-mpd" }
            ? [] : ["--mpd-port", "0", "--mpd-socket", stateDirectory + "/mpd.socket"]
        return ["--library", library, "--cache-dir", cacheDirectory, "--state-dir", stateDirectory, "--audio-sink", audioSink,
            "--name", playerName] + (scansAtStart ? [] : ["--no-scan"]) + mpd + extraArguments
    }

    /// Spawns the daemon on `bus`; returns with the time just before the spawn.
    public func spawn(on bus: PrivateBus) throws -> RunningDaemon {
        let started = monotonicNanoseconds()
        let environment = bus.environment.merging(self.environment) { _, added in added }
        let process =
            logsToStdout
            ? try ChildProcess.spawn(
                "/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>&1", executable] + arguments, environment: environment)
            : try ChildProcess.spawn(executable, arguments, environment: environment)
        return RunningDaemon(process: process, spawnedAt: started)
    }
}

/// A started `mpris-bridge`.
public struct RunningDaemon: Sendable {
    public let process: ChildProcess
    /// Monotonic nanoseconds just before the spawn.
    public let spawnedAt: UInt64
    public var probe: ProcessProbe { ProcessProbe(pid: process.pid) }

    /// Waits for the log line `ready: N entries queued`; returns when it arrived and N.
    public func waitUntilReady(timeout: Duration = .seconds(120)) async throws -> (at: UInt64, entries: Int) {
        let (at, line) = try await waitForLog(containing: "ready:", timeout: timeout)
        let words = line.split(separator: " ")
        let entries = words.firstIndex(of: "ready:").flatMap { Int(words[$0 + 1]) } ?? -1
        return (at, entries)
    }

    /// Waits for the first log line from now on that contains `text` (the log must go to
    /// stdout, ``DaemonLaunch/logsToStdout``); returns the monotonic time it arrived, and the line.
    public func waitForLog(containing text: String, timeout: Duration = .seconds(120)) async throws
        -> (at: UInt64, line: String)
    {
        let line = try await process.waitForLine(timeout: timeout) { $0.contains(text) }
        return (monotonicNanoseconds(), line)
    }

    /// Waits for the daemon's start-up scan: until it has a child process, then until it has none
    /// (this only reads /proc, every 5 ms); returns the monotonic time it saw none.
    public func waitForStartupScan(timeout: Duration = .seconds(600)) async throws -> UInt64 {
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
    public func stop() async throws -> UInt64 {
        let start = monotonicNanoseconds()
        Glibc.kill(process.pid, SIGTERM)
        let status = try await process.waitForExit(timeout: .seconds(60))
        let took = monotonicNanoseconds() - start
        guard status == 0 else {
            throw BenchmarkFailure(
                description: "mpris-bridge exited with status \(status) after SIGTERM:\n"
                    + process.capturedStdout + process.capturedStderr)
        }
        return took
    }

    /// For a run that failed: SIGKILL and reap, so that no daemon outlives the benchmark.
    public func kill() async {
        process.kill()
        _ = await process.waitForExit()
    }
}

/// A benchmark's own connection to the private bus, and its handles on the daemon.
public struct BusClient: Sendable {
    public let connection: Connection
    /// The daemon's MPRIS name, `org.mpris.MediaPlayer2.<name>`.
    public let busName: BusName

    public init(connection: Connection, busName: BusName) {
        self.connection = connection
        self.busName = busName
    }

    public var player: Proxy {
        Proxy(
            connection, destination: busName, path: "/org/mpris/MediaPlayer2",
            interface: "org.mpris.MediaPlayer2.Player", timeout: .seconds(30))
    }

    /// Subscribes to `NameOwnerChanged` for `name` (by default the daemon's player name; do
    /// it before the daemon is spawned) and returns a stream of the changes. Dropping the
    /// stream unsubscribes.
    public func ownerChanges(of name: BusName? = nil) async throws -> AsyncThrowingStream<Message, any Error> {
        try await connection.signals(
            matching: MatchRule(
                sender: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", arguments: [0: (name ?? busName).rawValue]))
    }

    public func playbackStatus() async throws -> String { try await player.property("PlaybackStatus", as: String.self) }

    /// Waits until the bus has processed the last daemon's exit, so the next one can own the name.
    public func waitUntilNameIsFree() async throws {
        for _ in 0..<1000 {
            if try await connection.nameOwner(of: busName) == nil { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchmarkFailure(description: "\(busName) still has an owner after its daemon exited")
    }
}

/// Awaits the first `NameOwnerChanged` in `stream` that gives the name an owner; returns the
/// monotonic time it arrived. Throws after `timeout`.
public func awaitOwned(_ stream: AsyncThrowingStream<Message, any Error>, timeout: Duration) async throws -> UInt64 {
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
        guard let first else { throw BenchmarkFailure(description: "the daemon's bus name got no owner within \(timeout)") }
        return first
    }
}
