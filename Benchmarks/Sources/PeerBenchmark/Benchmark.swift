import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport
import SoundServerTestSupport
import Synchronization

/// What one player measured; nil figures were not measured (the player is missing or failed).
struct PlayerFigures: Sendable {
    let kind: PlayerKind
    /// Why the player was not measured: not installed, or it failed (the reason).
    var missing: String?
    /// exec of the MPRIS process -> its name owned, nanoseconds, one per start.
    var execToName: [UInt64] = []
    var getAll: Summary?
    var ping: Summary?
    /// PlayPause sent -> PropertiesChanged(PlaybackStatus) received by another process that
    /// watches the player (`SignalWatcher`), as a desktop shell showing the state.
    var toggleWatched: Summary?
    /// PlayPause sent -> PropertiesChanged(PlaybackStatus) received by the caller, this process.
    var toggleSignal: Summary?
    /// PlayPause sent -> its reply.
    var toggleReply: Summary?
    /// PlayPause sent -> PropertiesChanged(PlaybackStatus) handed to the main loop of a GDBus
    /// client that sent it (`ShellCaller`), as a desktop shell's media widget clicked.
    var toggleShellCaller: Summary?
    /// Toggles whose signal came before the call's reply.
    var signalsBeforeReply = 0
    /// Resident kB of the playing process, paused for 8 s: what a paused player keeps.
    var rssPaused: Int?
    /// The same 2 s after the pause (a player may still be giving memory back, or taking some).
    var rssPausedEarly: Int?
    /// The peak resident kB of the playing process (`VmHWM`), read at the same time.
    var rssPeak: Int?
    /// Resident kB of the playing process at the end of the playing window.
    var rssPlaying: Int?
    /// The same of the MPRIS process, when it is another process (mpDris2).
    var mprisRSSPaused: Int?
    var playing: ActivityWindow?
    var mprisPlaying: ActivityWindow?
    var server: ActivityWindow?
    /// Streams the sound server listed just before the playing window.
    var streamsWhilePlaying = 0
    /// How far the track's Position advanced over the playing window, in seconds (nil if the
    /// player gives no Position).
    var advancedSeconds: Double?
    var doubleTapErrors = 0
    var doubleTapCalls = 0
    var burstErrors = 0
    var burstCalls = 0
    /// What the player did that the table does not show (an error's text, say).
    var notes: [String] = []

    init(kind: PlayerKind) { self.kind = kind }

    var execToNameMilliseconds: Double? { execToName.isEmpty ? nil : Summary(nanoseconds: execToName).p50 / 1000 }
    var getAllOverPing: Double? { getAll.flatMap { getAll in ping.map { getAll.p50 / $0.p50 } } }
}

/// CPU % of a window (schedstat of every thread), nil without one.
func cpuPercent(_ window: ActivityWindow?) -> Double? { window.map { $0.cpuMicroseconds / ($0.seconds * 1e6) * 100 } }
/// Context switches per second of a window.
func switchesPerSecond(_ window: ActivityWindow?) -> Double? { window.map { Double($0.switches) / $0.seconds } }

final class PeerBenchmark: Sendable {
    let options: Options

    init(options: Options) { self.options = options }

    func run() async -> Int32 {
        do {
            return try await measureAll()
        } catch {
            writeError("PeerBenchmark: \(error)\n")
            return 2
        }
    }

    private func log(_ text: String) { writeError("PeerBenchmark: \(text)\n") }

    private func measureAll() async throws -> Int32 {
        let started = monotonicNanoseconds()
        let library = PeerLibrary(folder: options.media)
        log(try await library.prepare())
        let folder = try TemporaryDirectory(prefix: "peer-benchmark")
        defer { folder.remove() }
        // VLC runs as an unprivileged user: it must reach the bus, the sound server and the folder.
        chmod(folder.path, 0o755)
        let busFolder = folder.path + "/bus"
        try makeDirectories(busFolder)
        let busConfiguration = folder.path + "/bus.conf"
        try writeFile(
            busConfiguration,
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(busFolder)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """)
        let server = try await PrivateSoundServer.start(sinks: [.init(name: "speakers", description: "Speakers")])
        let bus: PrivateBus
        do { bus = try await PrivateBus.start(configuration: busConfiguration) } catch {
            await server.stop()
            throw error
        }
        var results: [PlayerFigures] = []
        var baseline: ActivityWindow?
        do {
            let variables = server.clientVariables
            openSocketFolders(variables["PULSE_SERVER"] ?? "")
            let stage = Stage(options: options, bus: bus, soundVariables: variables, library: library, folder: folder.path)
            let client = try await Connection.connect(to: .address(bus.address))
            defer { client.close() }
            // The sound server alone, its null sink running: what every player's window includes.
            let serverProbe = ProcessProbe(pid: server.pid)
            let before = serverProbe.sample()
            try await Task.sleep(for: .seconds(options.window))
            baseline = ActivityWindow(from: before, to: serverProbe.sample())
            for kind in options.players {
                var figures = PlayerFigures(kind: kind)
                if let missing = stage.missing(kind) {
                    if kind == .daemon { throw BenchmarkFailure(description: missing) }
                    figures.missing = missing
                    log("\(kind.label): missing (\(missing))")
                } else {
                    log("\(kind.label)...")
                    do {
                        try await measure(kind, stage: stage, server: server, client: client, into: &figures)
                    } catch {
                        // The daemon's failure fails the run; a peer's is reported as missing.
                        if kind == .daemon { throw error }
                        figures.missing = "failed: \(error)"
                        log("\(kind.label) failed: \(error)")
                    }
                }
                results.append(figures)
            }
        } catch {
            await bus.stop()
            await server.stop()
            throw error
        }
        await bus.stop()
        await server.stop()
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        return PeerReport(options: options, results: results, serverBaseline: baseline, totalSeconds: seconds).print()
    }

    /// The sound server's socket folders readable by others (for VLC's unprivileged user).
    private func openSocketFolders(_ pulseServer: String) {
        guard pulseServer.hasPrefix("unix:") else { return }
        var path = String(pulseServer.dropFirst(5))
        // <folder>/run/pulse/native: open pulse, run and the folder.
        for _ in 0..<3 {
            path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            guard !path.isEmpty else { return }
            chmod(path, 0o755)
        }
    }

    private func measure(
        _ kind: PlayerKind, stage: Stage, server: PrivateSoundServer, client: Connection, into figures: inout PlayerFigures
    ) async throws {
        if kind == .daemon { try await stage.prepareDaemon() }
        let names = BusClient(connection: client, busName: kind.busName)
        // exec -> name owned, each start stopped again.
        for number in 0..<options.starts {
            let changes = try await names.ownerChanges()
            let running = try await stage.start(kind, number: number)
            do {
                let owned = try await awaitOwned(changes, timeout: .seconds(60))
                figures.execToName.append(owned - running.spawnedAt)
            } catch {
                await running.stop()
                throw failure(error, running)
            }
            await running.stop()
            try await names.waitUntilNameIsFree()
        }

        let changes = try await names.ownerChanges()
        let running = try await stage.start(kind, number: options.starts)
        do {
            _ = try await awaitOwned(changes, timeout: .seconds(60))
            try await stage.prepare(running)
            try await measureRunning(running, names: names, server: server, address: stage.bus.address, into: &figures)
        } catch {
            await running.stop()
            throw failure(error, running)
        }
        if let exited = running.exited {
            figures.notes.append("\(exited.command.first ?? "?") exited during the run")
        }
        await running.stop()
        try await names.waitUntilNameIsFree()
    }

    /// The error, with what the player printed if one of its processes is gone.
    private func failure(_ error: any Error, _ running: RunningPlayer) -> any Error {
        guard let exited = running.exited else { return error }
        let output = (exited.capturedStdout + exited.capturedStderr).split(separator: "\n").suffix(15).joined(separator: "\n")
        return BenchmarkFailure(description: "\(error); \(exited.command.first ?? "?") exited:\n\(output)")
    }

    private func measureRunning(
        _ running: RunningPlayer, names: BusClient, server: PrivateSoundServer, address: String,
        into figures: inout PlayerFigures
    ) async throws {
        let player = names.player
        // Playing: Play until it says so (a player may still be loading its queue).
        try await setStatus(player, to: "Playing", with: "Play")
        try await Task.sleep(for: .seconds(2))
        let sinkInputs = try await server.run("pactl", ["list", "short", "sink-inputs"]).check().stdout
        figures.streamsWhilePlaying = sinkInputs.split(separator: "\n").count
        let playerProbe = ProcessProbe(pid: running.player)
        let mprisProbe = ProcessProbe(pid: running.mpris)
        let serverProbe = ProcessProbe(pid: server.pid)
        // Where the track is, before and after (outside the window): a player that says Playing
        // but does not advance is named in the report.
        let positionBefore = try? await player.property("Position", as: Int64.self)
        let starts = (playerProbe.sample(), mprisProbe.sample(), serverProbe.sample())
        try await Task.sleep(for: .seconds(options.window))
        let ends = (playerProbe.sample(), mprisProbe.sample(), serverProbe.sample())
        let positionAfter = try? await player.property("Position", as: Int64.self)
        if let positionBefore, let positionAfter { figures.advancedSeconds = Double(positionAfter - positionBefore) / 1e6 }
        figures.playing = ActivityWindow(from: starts.0, to: ends.0)
        if running.mpris != running.player { figures.mprisPlaying = ActivityWindow(from: starts.1, to: ends.1) }
        figures.server = ActivityWindow(from: starts.2, to: ends.2)
        figures.rssPlaying = playerProbe.memory()?.resident

        // Paused: early, then settled (threads a player no longer needs end within seconds, and a
        // player that gives memory back does so in that time too).
        try await setStatus(player, to: "Paused", with: "Pause")
        try await Task.sleep(for: .seconds(2))
        figures.rssPausedEarly = playerProbe.memory()?.resident
        try await Task.sleep(for: .seconds(6))
        let paused = playerProbe.memory()
        figures.rssPaused = paused?.resident
        figures.rssPeak = paused?.peak
        if running.mpris != running.player { figures.mprisRSSPaused = mprisProbe.memory()?.resident }

        // GetAll(Player) and Peer.Ping to the same process, interleaved.
        let ping = Proxy(
            names.connection, destination: names.busName, path: "/org/mpris/MediaPlayer2",
            interface: "org.freedesktop.DBus.Peer", timeout: .seconds(30))
        func roundTrip(_ kind: Int) async throws {
            if kind == 0 {
                _ = try await player.allProperties()
            } else {
                let _: () = try await ping.call("Ping")
            }
        }
        for _ in 0..<max(20, options.iterations / 10) {
            try await roundTrip(0)
            try await roundTrip(1)
        }
        let samples = try await interleavedSamples(kinds: 2, iterations: options.iterations, batch: 50) {
            try await roundTrip($0)
        }
        figures.getAll = Summary(nanoseconds: samples[0])
        figures.ping = Summary(nanoseconds: samples[1])

        try await measureToggles(player: player, names: names, address: address, into: &figures)
        try await measureBursts(player: player, names: names, address: address, into: &figures)
    }

    /// Calls `method` until PlaybackStatus is `status` (30 s at most), every second again.
    private func setStatus(_ player: Proxy, to status: String, with method: MemberName) async throws {
        let deadline = monotonicNanoseconds() + 30_000_000_000
        var lastCall: UInt64 = 0
        var lastError: (any Error)?
        while monotonicNanoseconds() < deadline {
            if (try? await player.property("PlaybackStatus", as: String.self)) == status { return }
            if monotonicNanoseconds() - lastCall > 1_000_000_000 {
                lastCall = monotonicNanoseconds()
                do { let _: () = try await player.call(method) } catch { lastError = error }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchmarkFailure(
            description: "PlaybackStatus did not become \(status) within 30 s of \(method)"
                + (lastError.map { " (last error: \($0))" } ?? ""))
    }

    /// PlayPause -> PropertiesChanged(PlaybackStatus), from Paused, a pause (`--toggle-gap`) after each
    /// so that the player settles and late signals of one toggle never count for the next: as
    /// `SignalWatcher` (a process that sent no call, as a shell showing the state) sees each
    /// signal arrive, and as this caller does.
    private func measureToggles(
        player: Proxy, names: BusClient, address: String, into figures: inout PlayerFigures
    ) async throws {
        let stream = try await names.connection.signals(
            matching: MatchRule(
                sender: names.busName, path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", arguments: [0: "org.mpris.MediaPlayer2.Player"]))
        let changes = PlaybackStatusChanges(stream)
        let watcher = try ChildProcess.spawn(
            try Self.besideThisBenchmark("SignalWatcher"), [names.busName.rawValue],
            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        defer { watcher.kill() }
        _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "ready" }
        var status = try await player.property("PlaybackStatus", as: String.self)
        var toggles: [(sent: UInt64, expected: String)] = []
        var signals: [UInt64] = []
        var replies: [UInt64] = []
        for _ in 0..<options.toggles {
            let expected = status == "Playing" ? "Paused" : "Playing"
            let sent = monotonicNanoseconds()
            let _: () = try await player.call("PlayPause")
            let replied = monotonicNanoseconds()
            let signalled = try await changes.next(expected, notBefore: sent)
            toggles.append((sent, expected))
            signals.append(signalled - sent)
            replies.append(replied - sent)
            if signalled < replied { figures.signalsBeforeReply += 1 }
            status = expected
            try await Task.sleep(for: .milliseconds(options.toggleGap))
        }
        figures.toggleSignal = Summary(nanoseconds: signals)
        figures.toggleReply = Summary(nanoseconds: replies)
        // The watcher prints what it saw once its stdin ends (before, no write of its wakes this
        // process while toggles are timed); each toggle's signal is the first change to the
        // status it expects that arrived after it was sent.
        watcher.closeStdin()
        guard try await watcher.waitForExit(timeout: .seconds(10)) == 0 else {
            throw BenchmarkFailure(description: "SignalWatcher failed: \(watcher.capturedStderr)")
        }
        let seen = watcher.capturedStdout.split(separator: "\n").compactMap { line -> (at: UInt64, status: Substring)? in
            let fields = line.split(separator: " ")
            guard fields.count == 2, let at = UInt64(fields[0]) else { return nil }
            return (at, fields[1])
        }
        var watched: [UInt64] = []
        for toggle in toggles {
            guard let change = seen.first(where: { $0.at >= toggle.sent && $0.status == toggle.expected }) else {
                throw BenchmarkFailure(description: "SignalWatcher saw no \(toggle.expected) after a PlayPause")
            }
            watched.append(change.at - toggle.sent)
        }
        figures.toggleWatched = Summary(nanoseconds: watched)
        figures.toggleShellCaller = try await measureShellCallerToggles(names: names, address: address)
        // Back to Paused for what follows.
        if try await player.property("PlaybackStatus", as: String.self) != "Paused" {
            try await setStatus(player, to: "Paused", with: "Pause")
        }
    }

    /// The same toggles sent by `ShellCaller`, a client on GDBus (the client library of most of
    /// a desktop), each signal taken when its main loop has it: the player's figure at a caller
    /// built as a shell's media widget is, beside this process's own.
    private func measureShellCallerToggles(names: BusClient, address: String) async throws -> Summary {
        let caller = try ChildProcess.spawn(
            try Self.besideThisBenchmark("ShellCaller"), [names.busName.rawValue, "\(options.toggles)", "\(options.toggleGap)"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        defer { caller.kill() }
        // ShellCaller gives up by itself 30 s after its toggles' gaps, with half a second each.
        let deadline = Duration.seconds(60) + .milliseconds(options.toggles * (options.toggleGap + 500))
        guard try await caller.waitForExit(timeout: deadline) == 0 else {
            throw BenchmarkFailure(description: "ShellCaller failed: \(caller.capturedStderr)")
        }
        let signals = caller.capturedStdout.split(separator: "\n").compactMap { line -> UInt64? in
            line.split(separator: " ").first.flatMap { UInt64($0) }
        }
        guard signals.count == options.toggles else {
            throw BenchmarkFailure(description: "ShellCaller timed \(signals.count) of \(options.toggles) toggles")
        }
        return Summary(nanoseconds: signals)
    }

    /// The path of `executable`, one of the C clients built beside this benchmark.
    private static func besideThisBenchmark(_ executable: String) throws -> String {
        let benchmark = try System.executablePath()
        return String(benchmark[..<(benchmark.lastIndex(of: "/") ?? benchmark.endIndex)]) + "/" + executable
    }

    /// Two PlayPause at once from one client (a double-tapped media key), from Paused and from
    /// Playing in turn, then one from each of many clients at once (from Paused): the calls whose
    /// reply is an error.
    private func measureBursts(
        player: Proxy, names: BusClient, address: String, into figures: inout PlayerFigures
    ) async throws {
        for round in 0..<options.doubleTaps {
            // Every other round from Playing: a double tap meets a pause as well as a resume.
            try await setStatus(player, to: round % 2 == 0 ? "Paused" : "Playing", with: round % 2 == 0 ? "Pause" : "Play")
            async let first = succeeds { let _: () = try await player.call("PlayPause") }
            async let second = succeeds { let _: () = try await player.call("PlayPause") }
            for result in await [first, second] {
                figures.doubleTapCalls += 1
                if let error = result {
                    figures.doubleTapErrors += 1
                    if figures.notes.count < 4 { figures.notes.append("double tap: \(error)") }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        try await setStatus(player, to: "Paused", with: "Pause")
        var connections: [Connection] = []
        defer { for connection in connections { connection.close() } }
        for _ in 0..<options.clients { connections.append(try await Connection.connect(to: .address(address))) }
        let busName = names.busName
        let errors = await withTaskGroup(of: String?.self) { group in
            for connection in connections {
                group.addTask {
                    let proxy = Proxy(
                        connection, destination: busName, path: "/org/mpris/MediaPlayer2",
                        interface: "org.mpris.MediaPlayer2.Player", timeout: .seconds(30))
                    return await succeeds { let _: () = try await proxy.call("PlayPause") }
                }
            }
            var errors: [String] = []
            for await result in group { if let result { errors.append(result) } }
            return errors
        }
        figures.burstCalls += connections.count
        figures.burstErrors += errors.count
        if let first = errors.first { figures.notes.append("\(options.clients) clients: \(errors.count) errors, e.g. \(first)") }
        try await Task.sleep(for: .seconds(1))
    }
}

/// Runs `body`; nil if it succeeded, its error's text if not.
private func succeeds(_ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        return nil
    } catch {
        return "\(error)"
    }
}

