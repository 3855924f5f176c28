import BenchmarkSupport
import DBusTestSupport
import Glibc
import ProcessTestSupport

/// One MPD server the run measures, listening on a loopback port and on a Unix socket of its own.
final class ServerUnderTest: Sendable {
    /// The name in the report: `mpd`, `mpris-bridge`, or `mpd (2nd)` when the harness checks itself.
    let name: String
    let pid: Int32
    let tcp: MPDAddress
    let unix: MPDAddress
    /// Stops the server (and what it needs, a private bus) and reports whether it exited cleanly.
    private let stopper: @Sendable () async -> String?

    init(name: String, pid: Int32, tcp: MPDAddress, unix: MPDAddress, stop: @escaping @Sendable () async -> String?) {
        self.name = name
        self.pid = pid
        self.tcp = tcp
        self.unix = unix
        self.stopper = stop
    }

    func address(_ transport: Transport) -> MPDAddress { transport == .tcp ? tcp : unix }

    /// Stops it; returns a complaint if it did not exit cleanly.
    func stop() async -> String? { await stopper() }

    /// Resident memory now, from /proc.
    func memory() -> ResidentMemory? { ResidentMemory(pid: pid) }
}

enum Transport: Sendable, CaseIterable {
    case tcp, unix

    var label: String { self == .tcp ? "TCP" : "unix" }
    /// In a threshold's name.
    var name: String { self == .tcp ? "TCP" : "Unix" }
}

/// Starts servers in folders of one run's temporary directory.
struct ServerStarter {
    let options: Options
    let library: ScaleLibrary
    let folder: String

    /// Connects until the server accepts, every 20 ms for up to `timeout`.
    static func waitUntilAccepting(_ address: MPDAddress, process: ChildProcess, timeout: Duration = .seconds(30))
        async throws
    {
        let deadline = monotonicNanoseconds() + UInt64(timeout.components.seconds) * 1_000_000_000
        while true {
            if (try? MPDConnection(address)) != nil { return }
            if processIsGone(process.pid) {
                throw BenchmarkFailure(
                    description: "\(process.command.first ?? "server") exited before it accepted on \(address):\n"
                        + process.capturedStdout + process.capturedStderr)
            }
            guard monotonicNanoseconds() < deadline else {
                throw BenchmarkFailure(description: "nothing accepted on \(address) within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// mpd 0.23 on its own configuration: the library as its music directory, a fresh database
    /// (built at start, awaited here), the null output, up to 300 clients (its default, 100, is
    /// what the memory measurement needs besides its own connections), no state file, no zeroconf.
    func startMPD(name: String, tag: String) async throws -> ServerUnderTest {
        let home = folder + "/" + tag
        try makeDirectories(home)
        let port = try freeLoopbackPort()
        let socketPath = home + "/socket"
        let configuration = home + "/mpd.conf"
        try writeFile(
            configuration,
            """
            music_directory "\(library.music)"
            db_file "\(home)/database"
            bind_to_address "127.0.0.1"
            bind_to_address "\(socketPath)"
            port "\(port)"
            max_connections "300"
            auto_update "no"
            zeroconf_enabled "no"
            audio_output {
                type "null"
                name "null"
            }

            """)
        let process = try ChildProcess.spawn(options.mpd, ["--no-daemon", "--stderr", configuration])
        let tcp = MPDAddress.loopback(port: port)
        do {
            try await Self.waitUntilAccepting(tcp, process: process)
            // Without a database file mpd builds one at start: wait for all the tracks.
            let client = try MPDConnection(tcp)
            let deadline = monotonicNanoseconds() + 600_000_000_000
            while true {
                let status = try client.command("status\n")
                let stats = try client.command("stats\n")
                if !status.contains("updating_db:"), value(of: "songs", in: stats) == String(library.tracks) { break }
                guard monotonicNanoseconds() < deadline else {
                    throw BenchmarkFailure(description: "\(name) had not indexed \(library.tracks) tracks after 600 s:\n\(stats)")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        } catch {
            process.kill()
            _ = await process.waitForExit()
            throw error
        }
        return ServerUnderTest(name: name, pid: process.pid, tcp: tcp, unix: .unixSocket(path: socketPath)) {
            Glibc.kill(process.pid, SIGTERM)
            let status = try? await process.waitForExit(timeout: .seconds(10))
            guard status == 0 else {
                process.kill()
                _ = await process.waitForExit()
                return "\(name) (pid \(process.pid)) did not exit cleanly after SIGTERM: \(status.map(String.init) ?? "killed")\n"
                    + process.capturedStderr
            }
            return nil
        }
    }

    /// mpris-bridge (its release build) on a private bus, with the library indexed beforehand by
    /// `mpris-bridge scan` (as a user's daemon finds its index), `--no-scan`, the fake sink in
    /// real time, and its MPD face on a loopback port and a Unix socket; waits for its log line
    /// `MPD server listening` (or `MPD clients: …`).
    func startDaemon() async throws -> ServerUnderTest {
        let home = folder + "/daemon"
        let cache = home + "/cache"
        let state = home + "/state"
        try makeDirectories(cache)
        try makeDirectories(state)
        let scan = try await ScanRun.measure(
            daemon: options.daemon, library: library.music, cache: cache, arguments: ["--no-notify"])
        guard scan.failed == 0 else { throw BenchmarkFailure(description: "mpris-bridge scan failed on \(scan.failed) files") }
        let port = try freeLoopbackPort()
        let socketPath = home + "/socket"
        var launch = DaemonLaunch(
            executable: options.daemon, library: library.music, cacheDirectory: cache, stateDirectory: state,
            playerName: "mpdbenchmark")
        launch.extraArguments = ["--mpd-port", String(port), "--mpd-bind", "127.0.0.1", "--mpd-socket", socketPath]
        let bus = try await PrivateBus.start()
        let daemon: RunningDaemon
        do {
            daemon = try launch.spawn(on: bus)
        } catch {
            await bus.stop()
            throw error
        }
        let tcp = MPDAddress.loopback(port: port)
        do {
            // The server's own line once bound ("MPD server listening"), or the daemon's naming the
            // addresses ("MPD clients: …"), whichever comes.
            _ = try await daemon.process.waitForLine(timeout: .seconds(60)) {
                $0.contains("MPD server listening") || $0.contains("MPD clients:")
            }
            try await Self.waitUntilAccepting(tcp, process: daemon.process)
        } catch {
            await daemon.kill()
            await bus.stop()
            throw error
        }
        return ServerUnderTest(name: "mpris-bridge", pid: daemon.process.pid, tcp: tcp, unix: .unixSocket(path: socketPath)) {
            var complaint: String?
            do { try await daemon.stop() } catch {
                complaint = "\(error)"
                await daemon.kill()
            }
            await bus.stop()
            return complaint
        }
    }
}

/// The value of the first `key: value` line in an MPD response, nil without one.
func value(of key: String, in response: String) -> String? {
    let prefix = key + ": "
    for line in response.split(separator: "\n") where line.hasPrefix(prefix) {
        return String(line.dropFirst(prefix.count))
    }
    return nil
}
