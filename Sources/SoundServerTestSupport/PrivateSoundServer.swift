import Glibc
import ProcessTestSupport

/// Why a private sound server could not be started.
public enum PrivateSoundServerError: Error, Sendable, CustomStringConvertible {
    /// No `pulseaudio` executable (install the `pulseaudio` package).
    case serverNotFound
    /// The server did not say it was ready; what it printed is attached.
    case notReady(output: String)

    public var description: String {
        switch self {
        case .serverNotFound:
            return "pulseaudio not found; install the pulseaudio and pulseaudio-utils packages"
        case .notReady(let output):
            return "pulseaudio did not start:\n\(output)"
        }
    }
}

/// A PulseAudio server of a test's own, with null sinks and no hardware: what a player's audio
/// session is tested against (corking for a call, output routes, levels on the output).
///
/// ```swift
/// let server = try await PrivateSoundServer.start()
/// defer { Task { await server.stop() } }
/// let sinks = try await server.run("pactl", ["list", "short", "sinks"]).check()
/// ```
///
/// Clients reach it, and only it, through ``environment`` (the server's socket, no autospawn
/// of the user's own server). It never outlives the test process (``WatchedDaemon``).
public final class PrivateSoundServer: Sendable {
    /// A null sink: an output that plays to nothing, whose monitor source records what it plays.
    public struct Sink: Sendable, Equatable {
        /// The sink's name (`pactl`, `pulsesink device=`); its monitor is `<name>.monitor`.
        public var name: String
        /// The name people see (`device.description`).
        public var description: String

        public init(name: String, description: String) {
            self.name = name
            self.description = description
        }
    }

    /// The sinks the server was started with; the first is the default.
    public let sinks: [Sink]
    /// The server's process id.
    public var pid: Int32 { daemon.pid }

    private let daemon: WatchedDaemon
    private let folder: TemporaryDirectory

    /// What a client needs to reach this server and no other: the test process's environment
    /// with the server's socket in `PULSE_SERVER` and a client configuration that never starts
    /// a server of its own.
    public var environment: [String: String] {
        var environment = currentEnvironment()
        for (key, value) in clientVariables { environment[key] = value }
        return environment
    }

    /// The variables of ``environment`` that point a client at this server, to add to another
    /// environment (a private bus's, say).
    public var clientVariables: [String: String] {
        [
            "PULSE_SERVER": "unix:" + folder.path + "/run/pulse/native",
            "PULSE_CLIENTCONFIG": folder.path + "/client.conf",
            "XDG_RUNTIME_DIR": folder.path + "/run",
        ]
    }

    private init(sinks: [Sink], daemon: WatchedDaemon, folder: TemporaryDirectory) {
        self.sinks = sinks
        self.daemon = daemon
        self.folder = folder
    }

    /// Starts `pulseaudio` with `sinks` (null sinks) and role corking (a stream whose
    /// `media.role` is `phone` corks those whose role is `music`), and returns once it accepts
    /// clients (a few tens of milliseconds).
    ///
    /// It runs without real-time scheduling, so it cannot starve the tests around it, and with
    /// its runtime and home folders in a temporary folder of its own.
    public static func start(
        sinks: [Sink] = [
            Sink(name: "speakers", description: "Speakers"), Sink(name: "headphones", description: "Headphones"),
        ],
        startupTimeout: Duration = .seconds(10)
    ) async throws -> PrivateSoundServer {
        precondition(!sinks.isEmpty, "a sound server needs a sink")
        let candidates: [String] = ["/usr/bin/pulseaudio", "/bin/pulseaudio"]
        guard let executable = candidates.first(where: { path in access(path, X_OK) == 0 }) else {
            throw PrivateSoundServerError.serverNotFound
        }
        let folder = try TemporaryDirectory(prefix: "sound-server")
        for sub in ["/run", "/home"] { mkdir(folder.path + sub, 0o700) }
        var script = ".fail\n"
        for sink in sinks {
            let description = sink.description.replacing(" ", with: "\\ ")
            script += "load-module module-null-sink sink_name=\(sink.name) rate=48000 sink_properties=device.description=\"\(description)\"\n"
        }
        script += "set-default-sink \(sinks[0].name)\n"
        script += "load-module module-role-cork trigger_roles=phone cork_roles=music\n"
        // The socket last: once a client can connect, every sink exists.
        script += "load-module module-native-protocol-unix auth-anonymous=1\n"
        try write(script, to: folder.path + "/server.pa")
        try write("autospawn = no\n", to: folder.path + "/client.conf")

        var environment = currentEnvironment()
        environment["XDG_RUNTIME_DIR"] = folder.path + "/run"
        environment["HOME"] = folder.path + "/home"
        // No bus: the server must not find or register with the machine's session.
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        for key in ["PULSE_SERVER", "PULSE_SINK", "PULSE_SOURCE", "PULSE_PROP", "PULSE_COOKIE"] { environment[key] = nil }
        do {
            let daemon = try await WatchedDaemon.start(
                executable,
                [
                    "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disallow-exit=no",
                    "--realtime=no", "--high-priority=no", "--log-target=stderr", "--log-level=info",
                    "-F", folder.path + "/server.pa",
                ],
                environment: environment, mergingStderr: true, startupTimeout: startupTimeout
            ) { line in line.contains("Daemon startup complete.") }
            return PrivateSoundServer(sinks: sinks, daemon: daemon, folder: folder)
        } catch let error as ChildProcessError {
            folder.remove()
            // The server's stderr is merged into what the watchdog printed.
            throw PrivateSoundServerError.notReady(output: error.capturedOutput?.stdout ?? "\(error)")
        }
    }

    /// Starts a server (see ``start(sinks:startupTimeout:)``), runs `body` with it, and stops
    /// the server, also when `body` throws.
    nonisolated(nonsending)
    public static func with<Result>(_ body: (PrivateSoundServer) async throws -> Result) async throws -> Result {
        let server = try await start()
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Stops the server (see ``WatchedDaemon/stop()``) and removes its folder. Idempotent.
    public func stop() async {
        await daemon.stop()
        folder.remove()
    }

    /// Runs a client of this server to completion (`pactl`, `paplay`), with ``environment``.
    public func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30)) async throws
        -> ProcessOutput
    {
        try await ChildProcess.run(executable, arguments, environment: environment, timeout: timeout)
    }

    /// Starts a long-running client of this server, with ``environment``.
    public func spawn(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.spawn(executable, arguments, environment: environment)
    }

    /// Starts a stream with the role of a phone call (silence, for ever), which corks every
    /// music stream until the call ends: kill the process it returns.
    public func startCall() throws -> ChildProcess {
        try spawn("pacat", ["--playback", "--property=media.role=phone", "--property=application.name=call", "/dev/zero"])
    }

    /// Whether a stream of this application's is playing on the server, and whether corked.
    public func streams() async throws -> [PlaybackStream] {
        let listing = try await run("pactl", ["list", "sink-inputs"]).check().stdout
        return PlaybackStream.parse(listing, sinks: try await sinkIndexes())
    }

    /// The server's sinks by their index, as `pactl list sink-inputs` names them.
    private func sinkIndexes() async throws -> [String: String] {
        let listing = try await run("pactl", ["list", "short", "sinks"]).check().stdout
        var names: [String: String] = [:]
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count >= 2 { names[String(fields[0])] = String(fields[1]) }
        }
        return names
    }

    /// Starts a meter on the monitors of `sinks` (every sink by default), in one pipeline, so
    /// their readings' times compare: each ``LevelMeter/Reading`` is the loudness of what one
    /// sink played over a tenth of a second.
    /// `interval` is the length of a reading (a tenth of a second by default).
    public func meter(_ sinks: [String]? = nil, interval: Duration = .milliseconds(100)) async throws -> LevelMeter {
        let sinks = sinks ?? self.sinks.map(\.name)
        // A monitor whose sink was idle when it was opened may never give data: each sink
        // plays silence for as long as the meter runs.
        let silence = try sinks.map { sink in
            try spawn(
                "pacat", ["--playback", "--device=\(sink)", "--property=application.name=meter-keepalive", "/dev/zero"])
        }
        return try await LevelMeter.start(
            on: sinks, interval: interval, keepingAlive: silence, environment: environment)
    }

    private static func write(_ text: String, to path: String) throws {
        guard let file = fopen(path, "w") else { throw PrivateSoundServerError.notReady(output: "cannot write \(path)") }
        defer { fclose(file) }
        fputs(text, file)
    }
}

/// A stream playing on the server (`pactl list sink-inputs`).
public struct PlaybackStream: Sendable, Equatable {
    /// The sink it plays on, by name.
    public var sink: String?
    /// Its `media.role`, if it has one.
    public var role: String?
    /// Whether the server corked it (paused it for a more important stream, or its client did).
    public var isCorked: Bool
    /// The client's `application.name`.
    public var application: String?
    /// The server's index of the stream (`pactl set-sink-input-volume` takes it).
    public var index: Int? = nil
    /// The stream's volume on the server, in dB, of its first channel (nil: the listing gave
    /// none; `-inf` for silence).
    public var volumeDecibels: Double? = nil
    /// Whether the stream is muted on the server.
    public var isMuted = false

    static func parse(_ listing: String, sinks: [String: String]) -> [PlaybackStream] {
        var streams: [PlaybackStream] = []
        // `split` leaves out the empty text before the first block.
        for block in listing.split(separator: "Sink Input #") {
            var stream = PlaybackStream(sink: nil, role: nil, isCorked: false, application: nil)
            stream.index = block.prefix { $0.isNumber }.isEmpty ? nil : Int(block.prefix { $0.isNumber })
            for rawLine in block.split(separator: "\n") {
                let line = rawLine.drop { $0 == " " || $0 == "\t" }
                if line.hasPrefix("Sink: ") { stream.sink = sinks[String(line.dropFirst(6))] }
                if line.hasPrefix("Corked: ") { stream.isCorked = line.hasSuffix("yes") }
                if line.hasPrefix("Mute: ") { stream.isMuted = line.hasSuffix("yes") }
                // "Volume: front-left: 6554 /  10% / -60.00 dB,   front-right: …"
                if line.hasPrefix("Volume: "), let unit = line.firstRange(of: " dB") {
                    let number = line[..<unit.lowerBound].split(separator: "/").last?.split(separator: " ").last
                    stream.volumeDecibels = number.flatMap { $0 == "-inf" ? -Double.infinity : Double($0) }
                }
                if line.hasPrefix("media.role = ") { stream.role = quoted(line) }
                if line.hasPrefix("application.name = ") { stream.application = quoted(line) }
            }
            streams.append(stream)
        }
        return streams
    }

    private static func quoted(_ line: Substring) -> String? {
        guard let start = line.firstIndex(of: "\""), let end = line.lastIndex(of: "\""), start < end else { return nil }
        return String(line[line.index(after: start)..<end])
    }
}

/// Measures what sinks play: GStreamer's `level` on their monitor sources (`gst-launch-1.0
/// pulsesrc ! level`, one branch per sink in one pipeline), which reports every tenth of a
/// second while the sink plays something (an idle sink's monitor gives no data, so no
/// readings). A meter is started once per test and read as it goes.
public final class LevelMeter: Sendable {
    /// One reading: the loudest channel's RMS level over the interval, in dBFS (0 is full
    /// scale; silence reads below -90), of which sink, and when it ends on the meter's clock,
    /// in seconds (the same clock for every sink of the meter).
    public struct Reading: Sendable, Equatable {
        public var sink: String
        public var rms: Double
        public var time: Double
    }

    private let process: ChildProcess
    private let keepAlive: [ChildProcess]

    private init(process: ChildProcess, keepAlive: [ChildProcess]) {
        self.process = process
        self.keepAlive = keepAlive
    }

    deinit {
        process.kill()
        for child in keepAlive { child.kill() }
    }

    static func start(
        on sinks: [String], interval: Duration, keepingAlive keepAlive: [ChildProcess], environment: [String: String]
    ) async throws -> LevelMeter {
        let (seconds, attoseconds) = interval.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        // gst-launch prints with stdio, which a pipe buffers: line by line instead.
        var arguments = ["-oL", "gst-launch-1.0", "-m"]
        for sink in sinks {
            arguments += [
                "pulsesrc", "device=\(sink).monitor", "!", "audio/x-raw,rate=48000,channels=2", "!", "level",
                "name=level-\(sink)", "interval=\(nanoseconds)", "post-messages=true", "!", "fakesink", "sync=false",
            ]
        }
        let process = try ChildProcess.spawn("stdbuf", arguments, environment: environment)
        let meter = LevelMeter(process: process, keepAlive: keepAlive)
        // A monitor gives data only while its sink plays something: readings come from then on.
        _ = try await process.waitForLine(timeout: .seconds(10)) { $0.hasPrefix("Setting pipeline to PLAYING") }
        return meter
    }

    /// Waits for the next reading.
    public func next(timeout: Duration = .seconds(10)) async throws -> Reading {
        var reading: Reading?
        _ = try await process.waitForLine(timeout: timeout) { line in
            reading = Self.parse(line)
            return reading != nil
        }
        return reading!
    }

    /// Reads until `accept` takes a reading, and returns it; throws after `timeout`.
    public func waitFor(timeout: Duration = .seconds(10), _ accept: (Reading) -> Bool) async throws -> Reading {
        let deadline = ContinuousClock.now + timeout
        while true {
            let reading = try await next(timeout: max(deadline - .now, .milliseconds(1)))
            if accept(reading) { return reading }
        }
    }

    /// Stops the meter.
    public func stop() async {
        for child in [process] + keepAlive {
            child.kill()
            _ = await child.waitForExit()
        }
    }

    /// A `level` element message as `gst-launch-1.0 -m` prints it: `Got message #N from element
    /// "level-SINK" (element): level, … endtime=(guint64)N, … rms=(GValueArray)< -20.1, -20.2 >, …`.
    static func parse(_ line: String) -> Reading? {
        guard let nameRange = line.firstRange(of: "from element \"level-"),
            let rmsRange = line.firstRange(of: "rms=(GValueArray)<")
        else { return nil }
        let sink = String(line[nameRange.upperBound...].prefix { $0 != "\"" })
        let values = line[rmsRange.upperBound...].prefix { $0 != ">" }
            .split(separator: ",").compactMap { Double($0.filter { $0 != " " }) }
        guard let loudest = values.max() else { return nil }
        var time = 0.0
        if let end = line.firstRange(of: "endtime=(guint64)") {
            let digits = line[end.upperBound...].prefix { $0.isNumber }
            time = (Double(digits) ?? 0) / 1e9
        }
        return Reading(sink: sink, rms: loudest, time: time)
    }
}
