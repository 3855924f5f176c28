import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import MPRIS
import ProcessTestSupport
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the run is checked against.
enum Thresholds {
    private static let file = ThresholdFile(benchmark: "MPRISBenchmark")
    // The MPRIS service's goals: reported as met or NOT MET, never gating.
    /// GetAll(Player) p50 from the library's own client, at most this many times the bus floor's p50.
    static let ownGetAllOverFloorGoal = file["ownGetAllOverFloorGoal"]
    /// GetAll(Player) p50 from python3-dbus, at most this many times python's own GetId p50.
    static let pythonGetAllOverFloorGoal = file["pythonGetAllOverFloorGoal"]
    /// PlayPause -> PropertiesChanged(PlaybackStatus), median.
    static let playPauseToSignalP50GoalMicroseconds = file["playPauseToSignalP50GoalMicroseconds"]

    // Gating regression thresholds: about 1.5x the worst the reference machine (2 cores) measured,
    // pinned or not (`--no-pin`). See Benchmarks/README.md.
    /// Own client: what serving GetAll(Player) adds over a bare libdbus round trip to the player
    /// (GetAll p50 / Ping p50). Measured 2.26-2.46x pinned, 1.8-2.0x unpinned.
    static let ownGetAllOverPingP50 = file["ownGetAllOverPingP50"]
    /// python3-dbus: GetAll(Player) p50 / its GetId p50. Measured 4.62-4.83x pinned, 3.7-3.9x unpinned.
    static let pythonGetAllOverFloorP50 = file["pythonGetAllOverFloorP50"]
    /// PlayPause -> PropertiesChanged(PlaybackStatus) p50, µs. Measured 136-146 µs pinned (173 in a
    /// run disturbed by other load), 165-197 µs unpinned.
    static let playPauseToSignalP50Microseconds = file["playPauseToSignalP50Microseconds"]
}

/// The round trips measured from the own client, always interleaved (and likewise by the Python client).
enum RoundTrip: Int, CaseIterable {
    /// `org.freedesktop.DBus.GetId`, answered by the bus daemon itself: the floor.
    case busFloor
    /// `org.freedesktop.DBus.Peer.Ping` to the player, answered by libdbus in the player process
    /// before any Swift code sees it: a forwarded round trip with no serving work.
    case servicePing
    /// `Properties.GetAll("org.mpris.MediaPlayer2.Player")` through `Proxy.allProperties()`.
    case getAll

    var label: String {
        switch self {
        case .busFloor: "bus floor: GetId (bus daemon)"
        case .servicePing: "Peer.Ping to player (libdbus)"
        case .getAll: "GetAll(Player)"
        }
    }

    var key: String {
        switch self {
        case .busFloor: "busFloorGetId"
        case .servicePing: "servicePing"
        case .getAll: "getAllPlayer"
        }
    }
}

/// What Python/mpris_roundtrips.py prints.
struct PythonFigures: Decodable {
    struct Figures: Decodable {
        let iterations: Int
        let p50, p90, p99, mean, min, max: Double
        var summary: Summary {
            Summary(count: iterations, p50: p50, p90: p90, p99: p99, mean: mean, min: min, max: max)
        }
    }
    let python: String
    let dbusPython: String
    let roundTrips: [String: Figures]

    func summary(_ kind: RoundTrip) throws -> Summary {
        guard let figures = roundTrips[kind.key] else {
            throw BenchmarkFailure(description: "mpris_roundtrips.py printed no \(kind.key)")
        }
        return figures.summary
    }
}

/// The PlayPause -> PropertiesChanged measurement, in nanoseconds per timed toggle.
struct ToggleFigures {
    /// Call sent -> PropertiesChanged(PlaybackStatus) received: the latency.
    var signal: [UInt64] = []
    /// Call sent -> PlayPause reply received.
    var reply: [UInt64] = []
    /// Call sent -> the togglePlayPause target starts (in the player).
    var toTarget: [UInt64] = []
    /// Target start -> it calls `NowPlayingInfoCenter.publish`: the app's own work.
    var inApp: [UInt64] = []
    /// `publish` called -> PropertiesChanged received: MPRISService's refresh and the signal's way.
    var publishToClient: [UInt64] = []
    /// `publish` called -> it returns. With one CPU the signal's sender thread, the bus and the
    /// client often run before `publish` returns, so this may end after the signal arrived.
    var publishCall: [UInt64] = []
    var cpu = CPUFigures(client: 0, service: 0, daemon: 0)
}

final class ToggleProgress: Sendable {
    let count = Atomic<Int>(0)
}

final class Benchmark {
    let options: Options
    private var pinnedCPU: Int?
    private var servicePID: Int32 = 0
    private var daemonPID: Int32 = 0

    init(options: Options) { self.options = options }

    /// Runs everything; returns the exit code: 0, 1 if a threshold is exceeded, 2 if the run failed.
    func run() async -> Int32 {
        let status = await ServiceHarness.run(program: "MPRISBenchmark", pin: options.pin) { harness in
            pinnedCPU = harness.pinnedCPU
            servicePID = harness.service.pid
            daemonPID = harness.bus.daemonPID
            return try await measure(bus: harness.bus, service: harness.service)
        }
        if servicePID != 0 { rmdir(Service.artworkDirectory(pid: servicePID)) }
        return status
    }

    private func measure(bus: PrivateBus, service: ChildProcess) async throws -> Int32 {
        let started = monotonicNanoseconds()
        let client = try await Connection.connect(to: .address(bus.address))
        defer { client.close() }
        _ = try await service.waitForLine(timeout: .seconds(20)) { $0 == "ready" }

        let floor = Proxy(client, destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus")
        let ping = Proxy(
            client, destination: Service.busName, path: MPRISService.objectPath, interface: "org.freedesktop.DBus.Peer")
        let player = Proxy(
            client, destination: Service.busName, path: MPRISService.objectPath,
            interface: "org.mpris.MediaPlayer2.Player", timeout: .seconds(5))
        let control = Proxy(
            client, destination: Service.busName, path: Service.controlPath, interface: Service.controlInterface)

        // The player publishes what the benchmark thinks it does.
        let properties = try await player.allProperties()
        let metadata = try properties["Metadata"]?.get([String: Variant].self) ?? [:]
        guard properties.count == 15, metadata.count == 12, metadata["mpris:artUrl"] != nil else {
            throw BenchmarkFailure(
                description: "GetAll(Player) returned \(properties.count) properties and \(metadata.count) Metadata "
                    + "entries, expected 15 and 12 with an artUrl")
        }

        func roundTrip(_ kind: RoundTrip) async throws {
            switch kind {
            case .busFloor: let _: String = try await floor.call("GetId")
            case .servicePing: let _: () = try await ping.call("Ping")
            case .getAll: _ = try await player.allProperties()
            }
        }
        for _ in 0..<options.warmUp {
            for kind in RoundTrip.allCases { try await roundTrip(kind) }
        }
        let samples = try await interleavedSamples(
            kinds: RoundTrip.allCases.count, iterations: options.iterations, batch: options.batch
        ) { try await roundTrip(RoundTrip(rawValue: $0)!) }

        let toggles = try await measureToggles(client: client, player: player, control: control)
        let python = try await runPython(bus: bus)
        return try report(
            samples: samples, python: python, toggles: toggles,
            properties: (properties.count, metadata.count),
            totalSeconds: Double(monotonicNanoseconds() - started) / 1e9)
    }

    // MARK: PlayPause -> PropertiesChanged

    private func measureToggles(client: Connection, player: Proxy, control: Proxy) async throws -> ToggleFigures {
        var changes = try await client.signals(
            matching: MatchRule(
                sender: Service.busName, path: MPRISService.objectPath, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", arguments: [0: "org.mpris.MediaPlayer2.Player"])
        ).makeAsyncIterator()
        // A signal that never comes would wait forever: closing the connection ends the stream.
        let progress = ToggleProgress()
        let watchdog = Task {
            var last = -1
            while true {
                do { try await Task.sleep(for: .seconds(5)) } catch { return }
                let now = progress.count.load(ordering: .relaxed)
                if now == last { return client.close() }
                last = now
            }
        }
        defer { watchdog.cancel() }

        var status = try await player.property("PlaybackStatus", as: String.self)
        var figures = ToggleFigures()
        var starts: [UInt64] = []
        let total = options.toggleWarmUp + options.toggles
        var cpuBefore = CPUFigures(client: 0, service: 0, daemon: 0)
        for index in 0..<total {
            if index == options.toggleWarmUp { cpuBefore = CPUFigures.now(service: servicePID, daemon: daemonPID) }
            status = status == "Playing" ? "Paused" : "Playing"
            let start = monotonicNanoseconds()
            async let replied: Void = player.call("PlayPause")
            guard let message = try await changes.next() else {
                throw BenchmarkFailure(description: "no PropertiesChanged after PlayPause \(index + 1) of \(total)")
            }
            let received = monotonicNanoseconds()
            try await replied
            let repliedAt = monotonicNanoseconds()
            let (_, changed, _) = try message.decode(as: String.self, [String: Variant].self, [String].self)
            let announced = try changed["PlaybackStatus"]?.get(String.self)
            guard announced == status else {
                throw BenchmarkFailure(
                    description: "PlayPause \(index + 1) announced PlaybackStatus \(announced ?? "nothing"), "
                        + "expected \(status)")
            }
            progress.count.add(1, ordering: .relaxed)
            if index >= options.toggleWarmUp {
                starts.append(start)
                figures.signal.append(received - start)
                figures.reply.append(repliedAt - start)
            }
        }
        figures.cpu = CPUFigures.now(service: servicePID, daemon: daemonPID).since(cpuBefore, per: options.toggles)

        // The player's own times (the same monotonic clock) split the latency in three.
        let (entered, publishing, published): ([UInt64], [UInt64], [UInt64]) = try await control.call("ToggleTimes")
        guard entered.count == total, publishing.count == total, published.count == total else {
            throw BenchmarkFailure(
                description: "the togglePlayPause target ran \(entered.count) times for \(total) calls")
        }
        for (offset, start) in starts.enumerated() {
            let index = options.toggleWarmUp + offset
            figures.toTarget.append(entered[index] - start)
            figures.inApp.append(publishing[index] - entered[index])
            figures.publishToClient.append(start + figures.signal[offset] - publishing[index])
            figures.publishCall.append(published[index] - publishing[index])
        }
        return figures
    }

    // MARK: python3-dbus

    /// Python/mpris_roundtrips.py next to this package's Sources.
    private static let pythonScript: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Python/mpris_roundtrips.py"
    }()

    private func runPython(bus: PrivateBus) async throws -> PythonFigures {
        var environment = bus.environment
        // A pyenv setup may point PYTHONHOME at another interpreter's library.
        environment["PYTHONHOME"] = nil
        let output = try await ChildProcess.run(
            PrivateBus.systemPython,
            [Self.pythonScript, Service.busName.rawValue, String(options.iterations), String(options.warmUp),
                String(options.batch)],
            environment: environment, timeout: .seconds(60 + options.iterations / 50))
        guard output.status == 0 else {
            throw BenchmarkFailure(description: "\(Self.pythonScript) exited with \(output.status):\n\(output.stderr)")
        }
        return try JSONDecoder().decode(PythonFigures.self, from: Data(output.stdout.utf8))
    }

    // MARK: Reporting

    private func report(
        samples: [[UInt64]], python: PythonFigures, toggles: ToggleFigures, properties: (count: Int, metadata: Int),
        totalSeconds: Double
    ) throws -> Int32 {
        let own = samples.map { Summary(nanoseconds: $0) }
        let (floor, ping, getAll) = (own[0], own[1], own[2])
        let ownRatio = getAll.p50 / floor.p50
        let ownPingRatio = ping.p50 / floor.p50
        let segmentRatios: [Double] = (0..<5).map { segment in
            let size = samples[0].count / 5
            let range = (segment * size)..<((segment + 1) * size)
            return Summary.median(samples[2][range]) / Summary.median(samples[0][range])
        }
        let py = try RoundTrip.allCases.map { try python.summary($0) }
        let pyRatio = py[2].p50 / py[0].p50
        let pyPingRatio = py[1].p50 / py[0].p50
        let signal = Summary(nanoseconds: toggles.signal)
        let reply = Summary(nanoseconds: toggles.reply)
        let parts = [toggles.toTarget, toggles.inApp, toggles.publishToClient, toggles.publishCall].map {
            Summary(nanoseconds: $0)
        }

        let checks = [
            ThresholdCheck(
                name: "ownGetAllOverFloorP50", limit: Thresholds.ownGetAllOverFloorGoal, value: ownRatio,
                gating: false),
            ThresholdCheck(
                name: "pythonGetAllOverFloorP50", limit: Thresholds.pythonGetAllOverFloorGoal, value: pyRatio,
                gating: false),
            ThresholdCheck(
                name: "playPauseToSignalP50", limit: Thresholds.playPauseToSignalP50GoalMicroseconds, value: signal.p50,
                gating: false),
            ThresholdCheck(
                name: "ownGetAllOverPingP50", limit: Thresholds.ownGetAllOverPingP50, value: getAll.p50 / ping.p50,
                gating: true),
            ThresholdCheck(
                name: "pythonGetAllOverFloorP50", limit: Thresholds.pythonGetAllOverFloorP50, value: pyRatio,
                gating: true),
            ThresholdCheck(
                name: "playPauseToSignalP50", limit: Thresholds.playPauseToSignalP50Microseconds, value: signal.p50,
                gating: true),
        ]
        let passed = checks.allSatisfy { $0.passed || !$0.gating }
        func goal(_ check: ThresholdCheck, unit: String, notMet reason: String) -> String {
            "goal <= \(fixed(check.limit, 2))\(unit): " + (check.passed ? "met" : "NOT MET (\(reason))")
        }
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let placement = pinnedCPU.map { "all pinned to CPU \($0) of \(cores)" } ?? "unpinned, \(cores) CPUs"

        var lines = [
            "",
            "MPRIS service benchmark: private dbus-daemon; MPRISService in a separate process (\(placement))",
            "GetAll(org.mpris.MediaPlayer2.Player): \(properties.count) properties, "
                + "Metadata of \(properties.metadata) entries",
            "",
            "Own client (DBus.Proxy): \(options.iterations) timed round trips of each kind, interleaved in batches of "
                + "\(options.batch), after \(options.warmUp) of each to warm up",
            Summary.tableHeader("Round trip (µs)"),
        ]
        for kind in RoundTrip.allCases { lines.append(own[kind.rawValue].tableRow(kind.label)) }
        lines += [
            "GetAll p50 / floor p50: \(fixed(ownRatio, 2))x   "
                + goal(
                    checks[0], unit: "x", notMet: "Ping alone, no Swift serving code, is \(fixed(ownPingRatio, 2))x"),
            "  by fifth of the run: " + segmentRatios.map { fixed($0, 2) }.joined(separator: " "),
            "  Ping p50 / floor p50: \(fixed(ownPingRatio, 2))x   "
                + "GetAll p50 / Ping p50: \(fixed(getAll.p50 / ping.p50, 2))x"
                + "   GetAll p50 - Ping p50: \(fixed(getAll.p50 - ping.p50, 1)) µs",
            "",
            "python3-dbus client (dbus-python \(python.dbusPython), Python \(python.python); "
                + "Python/mpris_roundtrips.py): the same round trips, measured and interleaved the same way",
            Summary.tableHeader("Round trip (µs)"),
        ]
        for kind in RoundTrip.allCases { lines.append(py[kind.rawValue].tableRow(kind.label)) }
        lines += [
            "GetAll p50 / its GetId p50: \(fixed(pyRatio, 2))x   "
                + goal(checks[1], unit: "x", notMet: "its Ping alone is \(fixed(pyPingRatio, 2))x"),
            "  Ping p50 / GetId p50: \(fixed(pyPingRatio, 2))x   "
                + "GetAll p50 / Ping p50: \(fixed(py[2].p50 / py[1].p50, 2))x"
                + "   GetAll p50 - Ping p50: \(fixed(py[2].p50 - py[1].p50, 1)) µs",
            "",
            "PlayPause -> PropertiesChanged(PlaybackStatus): \(options.toggles) toggles after \(options.toggleWarmUp) "
                + "to warm up, the own client subscribed with a MatchRule",
            Summary.tableHeader("Latency (µs)"),
            signal.tableRow("call sent -> signal received"),
            reply.tableRow("call sent -> reply received"),
            "p50 \(fixed(signal.p50, 1)) µs   "
                + goal(checks[2], unit: " µs", notMet: "see where the time goes below"),
            "  where the time goes (p50s; the player's clock is the client's):",
            "    call sent -> togglePlayPause target runs            \(pad(fixed(parts[0].p50, 1), 7)) µs",
            "    target -> it calls NowPlayingInfoCenter.publish     \(pad(fixed(parts[1].p50, 1), 7)) µs",
            "    publish called -> PropertiesChanged received        \(pad(fixed(parts[2].p50, 1), 7)) µs",
            "    (publish called -> it returns                       \(pad(fixed(parts[3].p50, 1), 7)) µs)",
            "  CPU µs per toggle: client \(fixed(toggles.cpu.client, 1)), player \(fixed(toggles.cpu.service, 1)), "
                + "daemon \(fixed(toggles.cpu.daemon, 1))",
            "",
            "Run: \(fixed(totalSeconds, 1)) s in all",
            "Regression thresholds (exit status 1 if one is exceeded):",
        ]
        lines += ThresholdCheck.reportLines(checks, nameWidth: 26)
        print(lines.joined(separator: "\n"))

        if let path = options.jsonPath {
            func roundTrips(_ summaries: [Summary]) -> JSON {
                .object(RoundTrip.allCases.map { ($0.key, summaries[$0.rawValue].json) })
            }
            let json = JSON.object([
                ("benchmark", .string("mpris-service")),
                ("schemaVersion", .integer(1)),
                ("passed", .bool(passed)),
                (
                    "configuration",
                    .object([
                        ("iterations", .integer(options.iterations)), ("warmUpIterations", .integer(options.warmUp)),
                        ("batch", .integer(options.batch)), ("toggles", .integer(options.toggles)),
                        ("toggleWarmUp", .integer(options.toggleWarmUp)), ("cores", .integer(cores)),
                        ("pinnedCPU", pinnedCPU.map { .integer($0) } ?? .null),
                        ("playerProperties", .integer(properties.count)),
                        ("metadataEntries", .integer(properties.metadata)),
                    ])
                ),
                (
                    "ownClient",
                    .object([
                        ("roundTrips", roundTrips(own)),
                        ("getAllOverFloorP50", .number(ownRatio)),
                        ("getAllOverFloorP50BySegment", .array(segmentRatios.map { .number($0) })),
                        ("pingOverFloorP50", .number(ownPingRatio)),
                        ("getAllOverPingP50", .number(getAll.p50 / ping.p50)),
                        ("getAllMinusPingP50Microseconds", .number(getAll.p50 - ping.p50)),
                    ])
                ),
                (
                    "python",
                    .object([
                        ("python", .string(python.python)), ("dbusPython", .string(python.dbusPython)),
                        ("roundTrips", roundTrips(py)),
                        ("getAllOverFloorP50", .number(pyRatio)),
                        ("pingOverFloorP50", .number(pyPingRatio)),
                        ("getAllOverPingP50", .number(py[2].p50 / py[1].p50)),
                    ])
                ),
                (
                    "playPause",
                    .object([
                        ("toSignal", signal.json),
                        ("toReply", reply.json),
                        ("callToTargetP50Microseconds", .number(parts[0].p50)),
                        ("targetToPublishP50Microseconds", .number(parts[1].p50)),
                        ("publishToSignalReceivedP50Microseconds", .number(parts[2].p50)),
                        ("publishCallP50Microseconds", .number(parts[3].p50)),
                        ("cpuPerToggle", toggles.cpu.json),
                    ])
                ),
                ("thresholds", .array(checks.map(\.json))),
                ("totalSeconds", .number(totalSeconds)),
            ])
            guard json.writeFigures(to: path, benchmark: "MPRISBenchmark") else { return 2 }
        }
        return passed ? 0 : 1
    }
}
