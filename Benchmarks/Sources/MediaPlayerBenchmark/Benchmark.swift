import BenchmarkSupport
import DBus
import DBusTestSupport
import Foundation
import Glibc
import MPRIS
import ProcessTestSupport
import Synchronization

/// What the run is checked against (Benchmarks/Thresholds/MediaPlayerBenchmark.json).
enum Thresholds {
    private static let file = ThresholdFile(benchmark: "MediaPlayerBenchmark")
    // The layer's goals: reported as met or NOT MET, never gating.
    /// GetAll(Player) p50 of the MediaPlayer app over the native app's.
    static let getAllOverNativeGoal = file["getAllOverNativeGoal"]
    /// PlayPause -> PropertiesChanged(PlaybackStatus) p50 of the MediaPlayer app over the native app's.
    static let playPauseToSignalOverNativeGoal = file["playPauseToSignalOverNativeGoal"]
    // Gating regression thresholds: above the worst the reference machine measured (GetAll
    // 1.005, PlayPause 1.058 in full runs; --quick runs, 500 toggles, reach 1.08).
    static let getAllOverNativeP50 = file["getAllOverNativeP50"]
    static let playPauseToSignalOverNativeP50 = file["playPauseToSignalOverNativeP50"]
}

final class Benchmark {
    let options: Options
    private var pinnedCPU: Int?
    private var pids: [Int32] = []

    init(options: Options) { self.options = options }

    /// Runs everything; returns the exit code: 0, 1 if a threshold is exceeded, 2 if the run failed.
    func run() async -> Int32 {
        let status = await ServiceHarness.run(
            program: "MediaPlayerBenchmark", pin: options.pin, serviceEnvironment: [Apps.apiVariable: "mediaplayer"]
        ) { harness in
            pinnedCPU = harness.pinnedCPU
            var environment = harness.bus.environment
            environment[Apps.apiVariable] = "native"
            let native = try ChildProcess.spawn(
                System.executablePath(), ["serve", "--address", harness.bus.address], environment: environment)
            pids = [harness.service.pid, native.pid]
            defer {
                native.closeStdin()
                native.kill()
            }
            do {
                let status = try await measure(bus: harness.bus, mediaPlayer: harness.service, native: native)
                _ = try? await native.waitForExit(timeout: .seconds(5))
                return status
            } catch {
                if !native.capturedStderr.isEmpty { writeError("native service stderr:\n\(native.capturedStderr)\n") }
                throw error
            }
        }
        for pid in pids { try? FileManager.default.removeItem(atPath: Apps.artworkDirectory(pid: pid)) }
        return status
    }

    private func measure(bus: PrivateBus, mediaPlayer: ChildProcess, native: ChildProcess) async throws -> Int32 {
        let started = monotonicNanoseconds()
        let client = try await Connection.connect(to: .address(bus.address))
        defer { client.close() }
        _ = try await mediaPlayer.waitForLine(timeout: .seconds(20)) { $0 == "ready" }
        _ = try await native.waitForLine(timeout: .seconds(20)) { $0 == "ready" }

        let floor = Proxy(client, destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus")
        let players = [Apps.nativeName, Apps.mediaPlayerName].map {
            Proxy(client, destination: $0, path: MPRISService.objectPath, interface: "org.mpris.MediaPlayer2.Player", timeout: .seconds(5))
        }
        // Both publish the same: as many properties and metadata entries, artwork included.
        var shapes: [(Int, Int)] = []
        for player in players {
            let properties = try await player.allProperties()
            let metadata = try properties["Metadata"]?.get([String: Variant].self) ?? [:]
            guard metadata["mpris:artUrl"] != nil else { throw BenchmarkFailure(description: "no artwork from \(player.destination)") }
            shapes.append((properties.count, metadata.count))
        }
        guard shapes[0] == shapes[1] else {
            throw BenchmarkFailure(description: "the players publish different shapes: native \(shapes[0]), MediaPlayer \(shapes[1])")
        }

        func roundTrip(_ kind: Int) async throws {
            if kind == 0 {
                let _: String = try await floor.call("GetId")
            } else {
                _ = try await players[kind - 1].allProperties()
            }
        }
        for _ in 0..<options.warmUp {
            for kind in 0..<3 { try await roundTrip(kind) }
        }
        let samples = try await interleavedSamples(kinds: 3, iterations: options.iterations, batch: options.batch) {
            try await roundTrip($0)
        }
        let toggles = try await measureToggles(client: client, players: players)
        return try report(
            samples: samples, toggles: toggles, shape: shapes[0], totalSeconds: Double(monotonicNanoseconds() - started) / 1e9)
    }

    /// PlayPause -> PropertiesChanged(PlaybackStatus) latencies, nanoseconds, of each player
    /// (native first), alternating in batches.
    private func measureToggles(client: Connection, players: [Proxy]) async throws -> [[UInt64]] {
        var streams = try await [Apps.nativeName, Apps.mediaPlayerName].asyncMap { name in
            try await client.signals(
                matching: MatchRule(
                    sender: name, path: MPRISService.objectPath, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged", arguments: [0: "org.mpris.MediaPlayer2.Player"])
            ).makeAsyncIterator()
        }
        var statuses = [String]()
        for player in players { statuses.append(try await player.property("PlaybackStatus", as: String.self)) }
        // A signal that never comes would wait forever: the watchdog closes the connection, which
        // ends the streams, when no toggle completed for 5 s.
        let progress = Atomic<Int>(0)
        let watchdog = Task {
            var last = -1
            while (try? await Task.sleep(for: .seconds(5))) != nil {
                let now = progress.load(ordering: .relaxed)
                if now == last { return client.close() }
                last = now
            }
        }
        defer { watchdog.cancel() }
        var samples: [[UInt64]] = [[], []]
        var done = [0, 0]
        let total = options.toggleWarmUp + options.toggles
        var round = 0
        while done[0] < total || done[1] < total {
            for offset in 0..<2 {
                let which = (offset + round) % 2
                for _ in 0..<min(options.batch, total - done[which]) {
                    statuses[which] = statuses[which] == "Playing" ? "Paused" : "Playing"
                    let start = monotonicNanoseconds()
                    async let replied: Void = players[which].call("PlayPause")
                    // Other properties may change first (the position): wait for the status.
                    var announced: String?
                    while announced == nil {
                        guard let message = try await streams[which].next() else {
                            throw BenchmarkFailure(description: "no PropertiesChanged after PlayPause from \(players[which].destination)")
                        }
                        let (_, changed, _) = try message.decode(as: String.self, [String: Variant].self, [String].self)
                        announced = try changed["PlaybackStatus"]?.get(String.self)
                    }
                    let received = monotonicNanoseconds()
                    try await replied
                    guard announced == statuses[which] else {
                        throw BenchmarkFailure(description: "PlayPause announced \(announced ?? "-"), expected \(statuses[which])")
                    }
                    if done[which] >= options.toggleWarmUp { samples[which].append(received - start) }
                    done[which] += 1
                    progress.add(1, ordering: .relaxed)
                }
            }
            round += 1
        }
        return samples
    }

    private func report(samples: [[UInt64]], toggles: [[UInt64]], shape: (Int, Int), totalSeconds: Double) throws -> Int32 {
        let own = samples.map { Summary(nanoseconds: $0) }
        let toggle = toggles.map { Summary(nanoseconds: $0) }
        let getAllRatio = own[2].p50 / own[1].p50
        let toggleRatio = toggle[1].p50 / toggle[0].p50
        let checks = [
            ThresholdCheck(name: "getAllOverNativeP50", limit: Thresholds.getAllOverNativeGoal, value: getAllRatio, gating: false),
            ThresholdCheck(
                name: "playPauseToSignalOverNativeP50", limit: Thresholds.playPauseToSignalOverNativeGoal,
                value: toggleRatio, gating: false),
            ThresholdCheck(name: "getAllOverNativeP50", limit: Thresholds.getAllOverNativeP50, value: getAllRatio, gating: true),
            ThresholdCheck(
                name: "playPauseToSignalOverNativeP50", limit: Thresholds.playPauseToSignalOverNativeP50, value: toggleRatio,
                gating: true),
        ]
        let passed = checks.allSatisfy { $0.passed || !$0.gating }
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let placement = pinnedCPU.map { "all pinned to CPU \($0) of \(cores)" } ?? "unpinned, \(cores) CPUs"
        var lines = [
            "",
            "MediaPlayer over MediaRemote: two players, one process each, one private dbus-daemon (\(placement))",
            "GetAll(org.mpris.MediaPlayer2.Player): \(shape.0) properties, Metadata of \(shape.1) entries, from each",
            "",
            "\(options.iterations) timed round trips of each kind, interleaved in batches of \(options.batch)",
            Summary.tableHeader("Round trip (µs)"),
            own[0].tableRow("bus floor: GetId"),
            own[1].tableRow("GetAll, native app"),
            own[2].tableRow("GetAll, MediaPlayer app"),
            "GetAll p50, MediaPlayer / native: \(fixed(getAllRatio, 3))x   goal <= \(fixed(Thresholds.getAllOverNativeGoal, 2))x: "
                + (checks[0].passed ? "met" : "NOT MET"),
            "",
            "PlayPause -> PropertiesChanged(PlaybackStatus): \(options.toggles) toggles of each after \(options.toggleWarmUp), alternating",
            Summary.tableHeader("Latency (µs)"),
            toggle[0].tableRow("native app"),
            toggle[1].tableRow("MediaPlayer app"),
            "p50, MediaPlayer / native: \(fixed(toggleRatio, 3))x   goal <= \(fixed(Thresholds.playPauseToSignalOverNativeGoal, 2))x: "
                + (checks[1].passed ? "met" : "NOT MET"),
            "",
            "Run: \(fixed(totalSeconds, 1)) s in all",
            "Regression thresholds (exit status 1 if one is exceeded):",
        ]
        lines += ThresholdCheck.reportLines(checks, nameWidth: 32)
        print(lines.joined(separator: "\n"))
        if let path = options.jsonPath {
            let json = JSON.object([
                ("benchmark", .string("mediaplayer-overhead")),
                ("schemaVersion", .integer(1)),
                ("passed", .bool(passed)),
                ("iterations", .integer(options.iterations)),
                ("toggles", .integer(options.toggles)),
                ("getAll", .object([("floor", own[0].json), ("native", own[1].json), ("mediaPlayer", own[2].json)])),
                ("getAllOverNativeP50", .number(getAllRatio)),
                ("playPauseToSignal", .object([("native", toggle[0].json), ("mediaPlayer", toggle[1].json)])),
                ("playPauseToSignalOverNativeP50", .number(toggleRatio)),
                ("thresholds", .array(checks.map(\.json))),
                ("totalSeconds", .number(totalSeconds)),
            ])
            guard json.writeFigures(to: path, benchmark: "MediaPlayerBenchmark") else { return 2 }
        }
        return passed ? 0 : 1
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

