import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport

/// The players measured: the daemon and its peers as Debian ships them.
enum PlayerKind: String, CaseIterable, Sendable {
    case daemon = "mpris-bridge"
    case vlc
    case mpd
    case mopidy
    case mpv

    /// The name in the report: the MPRIS provider, and the player behind it when they differ.
    var label: String {
        switch self {
        case .daemon: "mpris-bridge"
        case .vlc: "vlc"
        case .mpd: "mpd+mpDris2"
        case .mopidy: "mopidy"
        case .mpv: "mpv"
        }
    }

    var busName: BusName {
        switch self {
        case .daemon: "org.mpris.MediaPlayer2.mprisbridge"
        case .vlc: "org.mpris.MediaPlayer2.vlc"
        case .mpd: "org.mpris.MediaPlayer2.mpd"
        case .mopidy: "org.mpris.MediaPlayer2.mopidy"
        case .mpv: "org.mpris.MediaPlayer2.mpv"
        }
    }
}

/// The unprivileged user VLC runs as when the benchmark runs as root: VLC refuses root.
let unprivilegedID: UInt32 = 65534

/// What every player of one run shares: the bus, the sound server, the library, a folder.
struct Stage: Sendable {
    let options: Options
    let bus: PrivateBus
    /// `PULSE_SERVER` and the rest, pointing at the private PulseAudio.
    let soundVariables: [String: String]
    let library: PeerLibrary
    /// The run's temporary folder (readable by the unprivileged user).
    let folder: String
    /// The daemon's index, built once by `mpris-bridge scan` before its starts.
    var daemonCache: String { folder + "/daemon-cache" }
    static let python = "/usr/bin/python3"
    static let queueScript = Options.packageFolder + "/Python/mpd_queue.py"
    static let mpvScripts = ["/usr/lib/mpv-mpris/mpris.so", "/etc/mpv/scripts/mpris.so"]

    /// The bus's and the sound server's variables, a home of the player's own, no Python from pyenv.
    func processEnvironment(home: String) -> [String: String] {
        var environment = bus.environment.merging(soundVariables) { $1 }
        environment["HOME"] = home
        environment["PYTHONHOME"] = nil
        environment["PYTHONPATH"] = nil
        environment["MPD_HOST"] = nil
        environment["MPD_PORT"] = nil
        return environment
    }

    /// Why `kind` cannot run here, nil if it can.
    func missing(_ kind: PlayerKind) -> String? {
        func executable(_ path: String) -> Bool { access(path, X_OK) == 0 }
        switch kind {
        case .daemon:
            return executable(options.daemon) ? nil : "\(options.daemon) not built"
        case .vlc:
            if !executable("/usr/bin/cvlc") { return "cvlc not installed (vlc-bin, vlc-plugin-base)" }
            if geteuid() == 0 && !executable("/usr/bin/setpriv") { return "VLC refuses root and setpriv is missing" }
            return nil
        case .mpd:
            if !executable("/usr/bin/mpd") { return "mpd not installed" }
            if !executable("/usr/bin/mpDris2") { return "mpDris2 not installed (mpdris2)" }
            if access("/usr/lib/python3/dist-packages/mpd", F_OK) != 0 { return "python3-mpd not installed" }
            return nil
        case .mopidy:
            if !executable("/usr/bin/mopidy") { return "mopidy not installed" }
            if access("/usr/lib/python3/dist-packages/mopidy_mpris", F_OK) != 0 { return "mopidy-mpris not installed" }
            if access("/usr/lib/python3/dist-packages/mopidy_mpd", F_OK) != 0 {
                return "mopidy-mpd not installed (it queues the tracks)"
            }
            return nil
        case .mpv:
            if !executable("/usr/bin/mpv") { return "mpv not installed" }
            if Self.mpvScripts.allSatisfy({ access($0, R_OK) != 0 }) { return "mpv-mpris not installed" }
            return nil
        }
    }

    /// The index the daemon starts with (as a user's daemon finds its index): built once.
    func prepareDaemon() async throws {
        try makeDirectories(daemonCache)
        try await ChildProcess.run(
            options.daemon, ["scan", "--library", library.music, "--cache-dir", daemonCache], timeout: .seconds(120)
        ).check()
    }

    /// Starts `kind` (start number `number`): its prerequisites first (mpd and its queue for
    /// mpDris2), then the process that owns the MPRIS name, whose spawn time is recorded.
    func start(_ kind: PlayerKind, number: Int) async throws -> RunningPlayer {
        let home = folder + "/\(kind.rawValue)-\(number)"
        try makeDirectories(home)
        switch kind {
        case .daemon:
            // Spawned directly (no shell): exec -> name is the daemon's own start.
            let state = home + "/state"
            try makeDirectories(state)
            var launch = DaemonLaunch(
                executable: options.daemon, library: library.music, cacheDirectory: daemonCache, stateDirectory: state,
                playerName: "mprisbridge")
            // The daemon's default sink, which finds the private PulseAudio through PULSE_SERVER.
            launch.audioSink = "autoaudiosink"
            launch.logsToStdout = false
            var environment = processEnvironment(home: home)
            environment.merge(launch.environment) { $1 }
            let spawned = monotonicNanoseconds()
            let process = try ChildProcess.spawn(options.daemon, launch.arguments, environment: environment)
            return RunningPlayer(kind: kind, processes: [process], player: process.pid, mpris: process.pid, spawnedAt: spawned)
        case .vlc:
            var arguments = ["-I", "dummy", "--control", "dbus", "--aout", "pulse", "--no-video", "--start-paused"]
            arguments += library.tracks
            var environment = processEnvironment(home: home)
            environment["XDG_RUNTIME_DIR"] = home
            var executable = "/usr/bin/cvlc"
            if geteuid() == 0 {
                // setpriv execs cvlc, a shell script that execs vlc: one pid throughout.
                guard chown(home, unprivilegedID, unprivilegedID) == 0 else {
                    throw BenchmarkFailure(description: "cannot give \(home) to uid \(unprivilegedID)")
                }
                arguments =
                    ["--reuid=\(unprivilegedID)", "--regid=\(unprivilegedID)", "--clear-groups", executable] + arguments
                executable = "/usr/bin/setpriv"
            }
            let spawned = monotonicNanoseconds()
            let process = try ChildProcess.spawn(executable, arguments, environment: environment)
            return RunningPlayer(kind: kind, processes: [process], player: process.pid, mpris: process.pid, spawnedAt: spawned)
        case .mpd:
            let socket = home + "/socket"
            let configuration = home + "/mpd.conf"
            try writeFile(
                configuration,
                """
                music_directory "\(library.music)"
                db_file "\(home)/database"
                bind_to_address "\(socket)"
                auto_update "no"
                zeroconf_enabled "no"
                audio_output {
                    type "pulse"
                    name "pulse"
                }

                """)
            let mpd = try ChildProcess.spawn(
                "/usr/bin/mpd", ["--no-daemon", "--stderr", configuration], environment: processEnvironment(home: home))
            do {
                try await queue(address: socket, update: true, uris: [])
                let mprisHome = home + "/mpdris2"
                try makeDirectories(mprisHome)
                var environment = processEnvironment(home: mprisHome)
                environment["MPD_HOST"] = socket
                let spawned = monotonicNanoseconds()
                let mpDris2 = try ChildProcess.spawn("/usr/bin/mpDris2", [], environment: environment)
                return RunningPlayer(
                    kind: kind, processes: [mpd, mpDris2], player: mpd.pid, mpris: mpDris2.pid, spawnedAt: spawned,
                    mpdAddress: socket)
            } catch {
                await RunningPlayer.stop(mpd)
                throw error
            }
        case .mopidy:
            let port = try freeLoopbackPort()
            let configuration = home + "/mopidy.conf"
            for sub in ["cache", "config", "data"] { try makeDirectories(home + "/" + sub) }
            try writeFile(
                configuration,
                """
                [core]
                cache_dir = \(home)/cache
                config_dir = \(home)/config
                data_dir = \(home)/data
                [logging]
                verbosity = -1
                [audio]
                output = pulsesink
                [file]
                enabled = true
                media_dirs = \(library.music)
                [m3u]
                enabled = false
                [stream]
                enabled = false
                [http]
                enabled = false
                [mpd]
                enabled = true
                hostname = 127.0.0.1
                port = \(port)
                zeroconf =
                [mpris]
                enabled = true
                bus_type = session

                """)
            let spawned = monotonicNanoseconds()
            let process = try ChildProcess.spawn(
                "/usr/bin/mopidy", ["--config", configuration], environment: processEnvironment(home: home))
            return RunningPlayer(
                kind: kind, processes: [process], player: process.pid, mpris: process.pid, spawnedAt: spawned,
                mpdAddress: "127.0.0.1:\(port)")
        case .mpv:
            let script = Self.mpvScripts.first { access($0, R_OK) == 0 }!
            let arguments =
                [
                    "--no-config", "--no-video", "--idle=yes", "--pause", "--ao=pulse", "--no-terminal",
                    "--input-ipc-server=\(home)/mpv.socket", "--script=\(script)",
                ] + library.tracks
            let spawned = monotonicNanoseconds()
            let process = try ChildProcess.spawn("/usr/bin/mpv", arguments, environment: processEnvironment(home: home))
            return RunningPlayer(kind: kind, processes: [process], player: process.pid, mpris: process.pid, spawnedAt: spawned)
        }
    }

    /// What a started player needs before it can play the library: Mopidy its queue (through its
    /// MPD frontend); the others were given the library at start.
    func prepare(_ running: RunningPlayer) async throws {
        if running.kind == .mopidy, let address = running.mpdAddress {
            try await queue(address: address, update: false, uris: library.tracks.map { "file://" + $0 })
        }
    }

    /// Queues `uris` (the whole database without any) on an MPD server with Python/mpd_queue.py.
    private func queue(address: String, update: Bool, uris: [String]) async throws {
        var environment = bus.environment
        environment["PYTHONHOME"] = nil
        environment["PYTHONPATH"] = nil
        let output = try await ChildProcess.run(
            Self.python, [Self.queueScript, address] + (update ? ["--update"] : []) + uris, environment: environment,
            timeout: .seconds(90))
        guard output.succeeded, output.stdout.hasPrefix("queued ") else {
            throw BenchmarkFailure(description: "queueing on \(address) failed:\n\(output.stdout)\(output.stderr)")
        }
    }
}

/// A started player: its processes, which of them plays and which owns the MPRIS name.
struct RunningPlayer: Sendable {
    let kind: PlayerKind
    /// In start order; stopped in reverse.
    let processes: [ChildProcess]
    /// The process that decodes and plays (mpd for mpd + mpDris2).
    let player: Int32
    /// The process that owns the MPRIS name (mpDris2 for mpd + mpDris2).
    let mpris: Int32
    /// Monotonic nanoseconds just before the MPRIS process was spawned.
    let spawnedAt: UInt64
    /// Mopidy's MPD frontend or mpd's socket.
    var mpdAddress: String?

    init(kind: PlayerKind, processes: [ChildProcess], player: Int32, mpris: Int32, spawnedAt: UInt64, mpdAddress: String? = nil) {
        self.kind = kind
        self.processes = processes
        self.player = player
        self.mpris = mpris
        self.spawnedAt = spawnedAt
        self.mpdAddress = mpdAddress
    }

    /// A process that is gone: the player crashed.
    var exited: ChildProcess? { processes.first { processIsGone($0.pid) } }

    /// SIGTERM to each process by its pid, the last started first; SIGKILL after 10 s.
    func stop() async {
        for process in processes.reversed() { await Self.stop(process) }
    }

    static func stop(_ process: ChildProcess) async {
        Glibc.kill(process.pid, SIGTERM)
        if (try? await process.waitForExit(timeout: .seconds(10))) == nil {
            process.kill()
            _ = await process.waitForExit()
        }
    }
}

