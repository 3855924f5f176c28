import ArgumentParser
import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport
import Synchronization
import SoundServerTestSupport
import TestMedia

/// `AudioSessionBenchmark [--daemon PATH] [--interruptions N] [--switches N] [--json PATH]
/// [--quick]`: the daemon in a real audio session, a private PulseAudio with two null sinks.
@main
struct Main {
    static func main() {
        benchmarkMain(name: "AudioSessionBenchmark", arguments: Arguments.self, run: { await run($0) })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "AudioSessionBenchmark",
        abstract: "Measures the mpris-bridge daemon (its release build) against a private PulseAudio.",
        discussion: """
            Playing: the daemon's CPU and context switches per second (every thread), and the \
            server's CPU, over 10 s (5 s with --quick) of playback. \
            Interruption: a stream with the phone role starts (pacat) -> PlaybackStatus Paused \
            reaches a client (and, for comparison, -> the server reports the new stream, pactl \
            subscribe: the client's own start); the call's client is killed -> Playing. \
            Output switch: SelectOutputRoute while playing -> the reply, and the gap between the \
            last sound on the old output and the first on the new one (level meters on both \
            monitors, one clock). Exits 1 when a threshold is exceeded, 2 when the run fails.
            """)

    @Option(help: "The mpris-bridge executable (default: ../.build/release/mpris-bridge).")
    var daemon: String?

    @Option(help: "Timed interruptions (default 20, 5 with --quick).")
    var interruptions: Int?

    @Option(help: "Timed output switches (default 10, 4 with --quick).")
    var switches: Int?

    @Option(help: "Also write the figures as JSON to this file.")
    var json: String?

    @Flag(help: "A short smoke run: 5 interruptions, 4 switches.")
    var quick = false

    func validate() throws {
        if let interruptions, interruptions <= 0 { throw ValidationError("--interruptions must be positive") }
        if let switches, switches <= 0 { throw ValidationError("--switches must be positive") }
    }

    func settings() -> Options {
        var options = Options()
        if let daemon { options.daemon = daemon.hasPrefix("/") ? daemon : currentDirectory() + "/" + daemon }
        options.jsonPath = json
        if quick { (options.interruptions, options.switches, options.playingWindow) = (5, 4, .seconds(5)) }
        if let interruptions { options.interruptions = interruptions }
        if let switches { options.switches = switches }
        return options
    }
}

struct Options: Sendable {
    var daemon = Options.packageFolder + "/../.build/release/mpris-bridge"
    var jsonPath: String?
    var interruptions = 20
    var switches = 10
    /// How long the daemon's CPU and context switches are counted while it plays.
    var playingWindow: Duration = .seconds(10)

    /// Benchmarks/, from this file's path.
    static let packageFolder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()
}

func run(_ options: Options) async -> Int32 {
    do {
        return try await measure(options)
    } catch {
        writeError("AudioSessionBenchmark: \(error)\n")
        return 2
    }
}

func measure(_ options: Options) async throws -> Int32 {
    let thresholds = ThresholdFile(benchmark: "AudioSessionBenchmark")
    let folder = try TemporaryDirectory(prefix: "audio-session-benchmark")
    defer { folder.remove() }
    let library = folder.path + "/music"
    mkdir(library, 0o755)
    // Long enough that nothing ends while it is measured.
    try await TestMedia.generate(
        .ogg, seconds: 600, tags: TestMedia.Tags(title: "Tone", artist: "Artist", album: "Album"),
        at: library + "/tone.ogg")
    try await ChildProcess.run(options.daemon, ["scan", "--library", library, "--cache-dir", folder.path + "/cache"])
        .check()

    let server = try await PrivateSoundServer.start()
    let bus = try await PrivateBus.start()
    var launch = DaemonLaunch(
        executable: options.daemon, library: library, cacheDirectory: folder.path + "/cache",
        stateDirectory: folder.path + "/state", playerName: "audiosession")
    launch.audioSink = "autoaudiosink"
    launch.environment = server.clientVariables
    let daemon = try launch.spawn(on: bus)
    var stopped = false
    func stopAll() async {
        guard !stopped else { return }
        stopped = true
        await daemon.kill()
        await bus.stop()
        await server.stop()
    }
    do {
        _ = try await daemon.waitUntilReady()
        let connection = try await Connection.connect(to: .address(bus.address))
        defer { connection.close() }
        let client = BusClient(connection: connection, busName: launch.busName)
        let statuses = try await connection.signals(
            matching: MatchRule(
                path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let changes = PlaybackStatusChanges(statuses)
        let _: () = try await client.player.call("Play")
        try await changes.next("Playing")

        // Playing: the daemon's CPU and context switches (every thread), and the server's CPU,
        // over one window once the queues have filled.
        try await Task.sleep(for: .seconds(3))
        let daemonProbe = daemon.probe
        let serverProbe = ProcessProbe(pid: server.pid)
        let (daemonStart, serverStart) = (daemonProbe.sample(), serverProbe.sample())
        try await Task.sleep(for: options.playingWindow)
        let playing = ActivityWindow(from: daemonStart, to: daemonProbe.sample())
        let serving = ActivityWindow(from: serverStart, to: serverProbe.sample())
        let playingCPU = playing.cpuMicroseconds / 1e6 / playing.seconds * 100
        let playingSwitches = Double(playing.switches) / playing.seconds
        let servingCPU = serving.cpuMicroseconds / 1e6 / serving.seconds * 100

        // Interruptions: from the server listing the call's stream to Paused at a client.
        // pactl prints with stdio, which a pipe buffers: line by line instead.
        let events = try server.spawn("stdbuf", ["-oL", "pactl", "subscribe"])
        defer { events.kill() }
        // Subscribed once it reports a module loaded after its start.
        let marker = try await server.run("pactl", ["load-module", "module-null-sink", "sink_name=marker"]).check()
        _ = try await events.waitForLine { $0.contains("'new' on module") }
        try await server.run("pactl", ["unload-module", marker.stdout.filter(\.isNumber)]).check()
        // The call's client needs some milliseconds to connect: its stream's creation, as
        // `pactl subscribe` reports it, is timed from the same start, for comparison.
        var paused: [UInt64] = []
        var listed: [UInt64] = []
        var resumed: [UInt64] = []
        for _ in 0..<options.interruptions {
            let started = monotonicNanoseconds()
            let call = try server.startCall()
            _ = try await events.waitForLine { $0.contains("'new' on sink-input") }
            listed.append(monotonicNanoseconds() - started)
            paused.append(try await changes.next("Paused") - started)
            let killed = monotonicNanoseconds()
            call.kill()
            _ = await call.waitForExit()
            resumed.append(try await changes.next("Playing") - killed)
            _ = try await events.waitForLine { $0.contains("'remove' on sink-input") }
        }

        // Output switches, back and forth while playing.
        // Readings of 10 ms: the gap's resolution.
        let meter = try await server.meter(interval: .milliseconds(10))
        defer { Task { await meter.stop() } }
        let extension1 = Proxy(
            connection, destination: launch.busName, path: "/org/mpris/MediaPlayer2",
            interface: "org.mprisbridge.Player1", timeout: .seconds(30))
        var replies: [UInt64] = []
        var gaps: [Double] = []
        var from = "speakers"
        _ = try await meter.waitFor { $0.sink == from && $0.rms > -40 }
        for _ in 0..<options.switches {
            let to = from == "speakers" ? "headphones" : "speakers"
            let asked = monotonicNanoseconds()
            let _: () = try await extension1.call("SelectOutputRoute", to)
            replies.append(monotonicNanoseconds() - asked)
            // The two monitors' readings come in turns, not in time order: the old output's
            // last sound is known once one of its readings is past the new output's first.
            var lastOnOld: Double?
            let heard = try await meter.waitFor { reading in
                if reading.sink == from, reading.rms > -40 { lastOnOld = max(lastOnOld ?? 0, reading.time) }
                return reading.sink == to && reading.rms > -40
            }
            _ = try await meter.waitFor { reading in
                if reading.sink == from, reading.rms > -40 { lastOnOld = max(lastOnOld ?? 0, reading.time) }
                return reading.sink == from && reading.time > heard.time
            }
            // Negative: both sounded for a moment (the new output started before the old one stopped).
            gaps.append(heard.time - (lastOnOld ?? heard.time))
            from = to
            // Let the new output settle before the next switch.
            for _ in 0..<50 { _ = try await meter.waitFor { $0.sink == to } }
        }

        let pausedSummary = Summary(nanoseconds: paused)
        let listedSummary = Summary(nanoseconds: listed)
        let resumedSummary = Summary(nanoseconds: resumed)
        let replySummary = Summary(nanoseconds: replies)
        let overlaps = gaps.filter { $0 < 0 }.count
        let gapSummary = Summary(nanoseconds: gaps.map { UInt64(max($0, 0) * 1e9) })
        print(
            "playing \(fixed(playing.seconds, 1)) s: daemon CPU \(fixed(playingCPU, 2)) %, "
                + "\(fixed(playingSwitches, 0)) context switches/s; sound server CPU \(fixed(servingCPU, 2)) %")
        for thread in playing.activeThreads.prefix(6) {
            print("  \(pad(thread.name, 18, right: false)) \(pad(fixed(Double(thread.switches) / playing.seconds, 1), 7)) switches/s")
        }
        print(Summary.tableHeader("AudioSessionBenchmark (µs)"))
        print(listedSummary.tableRow("call started -> listed"))
        print(pausedSummary.tableRow("call started -> Paused"))
        print(resumedSummary.tableRow("call killed -> Playing"))
        print(replySummary.tableRow("SelectOutputRoute reply"))
        print(gapSummary.tableRow("switch gap (meter)"))
        print("  (\(overlaps) of \(gaps.count) switches overlapped instead: both outputs sounded; counted as 0)")
        print("  gaps, ms: " + gaps.map { "\(Int(($0 * 1000).rounded()))" }.joined(separator: " "))
        let checks = [
            ThresholdCheck(
                name: "playing CPU %", limit: thresholds["playingCPUPercent"], value: playingCPU, gating: true),
            ThresholdCheck(
                name: "playing switches/s", limit: thresholds["playingSwitchesPerSecond"], value: playingSwitches,
                gating: true),
            ThresholdCheck(
                name: "interruption p50 ms", limit: thresholds["interruptionP50Milliseconds"],
                value: pausedSummary.p50 / 1000, gating: true),
            ThresholdCheck(
                name: "switch gap p50 ms", limit: thresholds["switchGapP50Milliseconds"], value: gapSummary.p50 / 1000,
                gating: true),
        ]
        for line in ThresholdCheck.reportLines(checks) { print(line) }
        if let path = options.jsonPath {
            let json = JSON.object([
                ("callStartedToListed", listedSummary.json), ("callStartedToPaused", pausedSummary.json), ("endToPlaying", resumedSummary.json),
                ("switchReply", replySummary.json), ("switchGap", gapSummary.json),
                ("playing", playing.json), ("playingCPUPercent", .number(playingCPU)),
                ("playingSwitchesPerSecond", .number(playingSwitches)), ("serverCPUPercentWhilePlaying", .number(servingCPU)),
                ("checks", .array(checks.map(\.json))),
            ])
            try json.write(to: path)
        }
        await stopAll()
        return checks.allSatisfy(\.passed) ? 0 : 1
    } catch {
        await stopAll()
        throw error
    }
}

