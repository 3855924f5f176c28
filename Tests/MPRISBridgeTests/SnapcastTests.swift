import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

// Snapcast as a real consumer of the daemon's MPD face: the daemon writes raw PCM into a FIFO,
// snapserver 0.26 reads it as a pipe stream and runs its meta_mpd.py control script, which reads
// the title and playback status over MPD and turns the stream's Stream.Control commands into MPD
// commands. snapserver may announce itself over Zeroconf and listens on TCP, so it runs only in
// a network namespace that has nothing but loopback; the FIFO and the MPD socket are files, which
// the namespace reaches like any other.

/// Where Debian's snapserver keeps its control scripts.
private let snapcastPlugins = "/usr/share/snapserver/plug-ins"

/// The programs the Snapcast tests need, or why they cannot run.
private let snapcastMissing: String? = {
    let programs = [
        ("/usr/bin/snapserver", "snapserver"), (snapcastPlugins + "/meta_mpd.py", "snapserver"),
        ("/usr/bin/unshare", "util-linux"), ("/usr/bin/nsenter", "util-linux"),
    ]
    for (program, package) in programs where access(program, X_OK) != 0 {
        return "\(program) is missing (package \(package)): run Scripts/setup"
    }
    if access("/usr/sbin/ip", X_OK) != 0 && access("/usr/bin/ip", X_OK) != 0 {
        return "ip is missing (package iproute2): run Scripts/setup"
    }
    // meta_mpd.py's MPD client, which Debian's snapserver does not pull in.
    if access("/usr/lib/python3/dist-packages/mpd", F_OK) != 0 {
        return "python-mpd2 is missing (package python3-mpd): run Scripts/setup"
    }
    return nil
}()

/// The PCM format of the stream: snapserver's default sample format, 48000:16:2.
let snapcastSampleFormat = "audio/x-raw,rate=48000,channels=2,format=S16LE"

/// An `--audio-sink` description that writes the daemon's output into the FIFO at `path` as raw
/// PCM in ``snapcastSampleFormat``, paced by the clock (`sync=true`) as a sound card would be, so
/// the daemon's position and a pause take effect when heard, not a pipe's worth of audio early.
func snapcastAudioSink(fifo path: String) -> String {
    "audioconvert ! audioresample ! \(snapcastSampleFormat) ! filesink location=\(path) sync=true"
}

/// One stream as Snapcast's `Server.GetStatus` shows it (see Python/snapcast_control.py).
struct SnapcastStream: Sendable, CustomStringConvertible {
    /// `playing` while PCM arrives, `idle` some time after it stops.
    var status: String?
    /// The control script's `playbackStatus`: `playing`, `paused` or `stopped`.
    var playbackStatus: String?
    /// The control script's metadata title.
    var title: String?
    /// The stream's line of JSON, for messages.
    var json: String

    init(json line: String) throws {
        json = line
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        status = object["status"] as? String
        playbackStatus = object["playbackStatus"] as? String
        title = object["title"] as? String
    }

    var description: String { json }
}

/// A running snapserver, alone in a loopback-only network namespace, reading one pipe stream.
struct SnapserverSession: Sendable {
    /// The stream's name (its id in the JSON-RPC API).
    static let stream = "Bridge"
    /// snapserver's JSON-RPC port, inside the namespace: every session has a namespace of its own.
    static let controlPort = 1705

    let process: ChildProcess

    /// Everything snapserver and its control script logged so far.
    var output: String { process.capturedStdout + process.capturedStderr }

    /// Python/snapcast_control.py with `arguments`, run inside the namespace; its stdout lines.
    func control(_ arguments: [String], timeout seconds: Int = 10) async throws -> [Substring] {
        let output = try await ChildProcess.run(
            "/usr/bin/nsenter",
            ["--net=/proc/\(process.pid)/ns/net", PrivateBus.systemPython, pythonScript("snapcast_control.py"),
             "--port", "\(Self.controlPort)", "--timeout", "\(seconds)"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], timeout: .seconds(seconds + 10))
        guard output.succeeded else {
            throw SnapcastError.requestFailed(output, snapserverOutput: self.output)
        }
        return output.stdout.split(separator: "\n")
    }

    /// Waits, on snapserver's notifications, until the stream's status, playback status and title
    /// are those given (each only if not nil); returns the stream and how long the wait took.
    @discardableResult
    func waitForStream(
        status: String? = nil, playback: String? = nil, title: String? = nil, timeout seconds: Int = 10
    ) async throws -> (stream: SnapcastStream, waited: Duration) {
        var arguments = ["wait", Self.stream]
        if let status { arguments += ["--status", status] }
        if let playback { arguments += ["--playback", playback] }
        if let title { arguments += ["--title", title] }
        let lines = try await control(arguments, timeout: seconds)
        guard lines.count == 2, let milliseconds = Int(lines[0]) else {
            throw SnapcastError.unreadable(lines.joined(separator: "\n"))
        }
        return (try SnapcastStream(json: String(lines[1])), .milliseconds(milliseconds))
    }

    /// Sends `Stream.Control` with `command` (`next`, `previous`, `play`, `pause`, …) and its
    /// `parameters` (`setPosition` takes `position` in seconds) to the stream.
    func send(_ command: String, _ parameters: [String: Double] = [:]) async throws {
        var arguments = ["control", Self.stream, command]
        if !parameters.isEmpty {
            let json = try JSONSerialization.data(withJSONObject: parameters, options: [.sortedKeys])
            arguments.append(String(decoding: json, as: UTF8.self))
        }
        _ = try await control(arguments)
    }
}

/// Why snapserver could not be run or asked.
enum SnapcastError: Error, CustomStringConvertible {
    /// snapserver never opened its control port.
    case notStarted(output: String, reason: String)
    /// snapcast_control.py failed: a JSON-RPC error, a timeout or no answer.
    case requestFailed(ProcessOutput, snapserverOutput: String)
    /// snapcast_control.py printed something else than it should.
    case unreadable(String)
    /// The reference mpd accepted no connection on its socket.
    case mpdNotListening(socket: String, output: String)

    var description: String {
        switch self {
        case .notStarted(let output, let reason):
            return "snapserver did not start (\(reason)); its output:\n\(output)"
        case .requestFailed(let output, let snapserverOutput):
            return "\(output)\n--- snapserver ---\n\(snapserverOutput)"
        case .unreadable(let text):
            return "unreadable answer from snapcast_control.py: \(text)"
        case .mpdNotListening(let socket, let output):
            return "mpd did not listen on \(socket); its output:\n\(output)"
        }
    }
}

/// Starts snapserver in a fresh loopback-only network namespace, reading the FIFO at `fifo` as
/// the pipe stream ``SnapserverSession/stream`` with meta_mpd.py as its control script, connected
/// to the MPD server at `mpdHost` (a unix socket path, as meta_mpd.py's `--mpd-host` takes it; nil
/// for no control script, the stream then only sound); runs `body`, and stops snapserver and its script (SIGKILL to their process group, then reaped)
/// even when `body` throws. The namespace ends with them.
///
/// snapserver 0.26 passes its script no parameters of ours (`controlscriptparams` came in 0.27),
/// and meta_mpd.py connects to localhost:6600 unless told otherwise: so the control script is a
/// two-line wrapper in the temporary folder that runs meta_mpd.py with `--mpd-host`. meta_mpd.py
/// also looks up cover art on musicbrainz.org and dies of the network error it does not catch;
/// Python/offline/musicbrainzngs stands in for that service.
func withSnapserver<Result>(
    fifo: String, mpdHost: String?, startupTimeout: Duration = .seconds(15),
    _ body: (SnapserverSession) async throws -> Result
) async throws -> Result {
    let folder = try TemporaryDirectory(prefix: "snapserver")
    defer { folder.remove() }
    for name in ["home", "data"] { mkdir(folder.path + "/" + name, 0o700) }
    var source = "pipe://\(fifo)?name=\(SnapserverSession.stream)"
    if let mpdHost {
        let script = folder.path + "/meta_mpd"
        try Data("#!/bin/sh\nexec \(snapcastPlugins)/meta_mpd.py --mpd-host=\(mpdHost) \"$@\"\n".utf8)
            .write(to: URL(filePath: script))
        chmod(script, 0o700)
        source += "&controlscript=" + script
    }
    let configuration = """
        [server]
        datadir = \(folder.path)/data

        [http]
        enabled = false

        [tcp]
        enabled = true
        bind_to_address = 127.0.0.1
        port = \(SnapserverSession.controlPort)

        [stream]
        bind_to_address = 127.0.0.1
        source = \(source)

        [logging]
        sink = stdout
        filter = *:info

        """
    try Data(configuration.utf8).write(to: URL(filePath: folder.path + "/snapserver.conf"))

    let environment = [
        // /usr/bin first: meta_mpd.py runs as `/usr/bin/env python3` and needs the system's
        // python3-mpd and python3-dbus.
        "PATH": "/usr/bin:/bin:/usr/sbin:/sbin",
        "LANG": "C.UTF-8",
        "HOME": folder.path + "/home",
        "PYTHONPATH": pythonScript("offline"),
        // Nothing written into the checkout (the stand-in's __pycache__).
        "PYTHONDONTWRITEBYTECODE": "1",
        // No system bus, so no Avahi announcement even if the machine runs avahi-daemon.
        "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + folder.path + "/no-system-bus",
    ]
    // unshare and sh exec, so the child is snapserver itself: its pid names the namespace, and
    // the control script is in its process group.
    let process = try ChildProcess.spawn(
        "/usr/bin/unshare",
        ["--net", "/bin/sh", "-c", "ip link set lo up && exec \"$0\" \"$@\" 2>&1", "/usr/bin/snapserver",
         "-c", folder.path + "/snapserver.conf"],
        environment: environment)
    do {
        do {
            _ = try await process.waitForLine(timeout: startupTimeout) {
                $0.contains("Creating TCP acceptor") && $0.contains("port: \(SnapserverSession.controlPort)")
            }
        } catch let error as ChildProcessError {
            throw SnapcastError.notStarted(output: process.capturedStdout + process.capturedStderr, reason: "\(error)")
        }
        let result = try await body(SnapserverSession(process: process))
        process.kill()
        _ = await process.waitForExit()
        return result
    } catch {
        process.kill()
        _ = await process.waitForExit()
        throw error
    }
}

/// mpd 0.23 itself on `library`, its output the FIFO at `fifo` and its only listener a unix socket
/// in a temporary folder: the reference the daemon's MPD face is held to. Runs `body` with the
/// socket's path, then kills mpd by its pid.
private func withReferenceMPD(
    library: GeneratedLibrary, fifo: String, _ body: (_ socket: String) async throws -> Void
) async throws {
    let folder = try TemporaryDirectory(prefix: "snapcast-mpd")
    defer { folder.remove() }
    let socket = folder.path + "/mpd.socket"
    let configuration = """
        music_directory "\(library.path)"
        db_file "\(folder.path)/database"
        state_file "\(folder.path)/state"
        bind_to_address "\(socket)"
        zeroconf_enabled "no"
        audio_output {
            type "fifo"
            name "Snapcast"
            path "\(fifo)"
            format "48000:16:2"
        }

        """
    try Data(configuration.utf8).write(to: URL(filePath: folder.path + "/mpd.conf"))
    let mpd = try ChildProcess.spawn("/usr/bin/mpd", ["--no-daemon", "--stderr", folder.path + "/mpd.conf"])
    defer { mpd.kill() }
    // mpd says nothing when it listens, and binds its socket a moment before it listens: a
    // connection accepted is the event.
    let deadline = ContinuousClock.now + .seconds(10)
    while !acceptsConnections(unixSocket: socket) {
        guard ContinuousClock.now < deadline else {
            throw SnapcastError.mpdNotListening(socket: socket, output: mpd.capturedStderr)
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    for arguments in [["update", "--wait"], ["add", "/"]] {
        let output = try await ChildProcess.run("/usr/bin/mpc", ["-q", "--host", socket] + arguments)
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
    }
    try await body(socket)
    mpd.kill()
    _ = await mpd.waitForExit()
}

/// Whether mpd and mpc are there for ``withReferenceMPD(library:fifo:_:)``.
private let referenceMPDInstalled = access("/usr/bin/mpd", X_OK) == 0 && access("/usr/bin/mpc", X_OK) == 0

/// Whether a connection to the unix socket at `path` is accepted now.
private func acceptsConnections(unixSocket path: String) -> Bool {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
        }
    }
}

/// What a user checks on the player itself, whatever its remote: MPRIS for the daemon, mpc for mpd.
private struct PlayerChecks {
    var play: () async throws -> Void
    var pause: () async throws -> Void
    var title: () async throws -> String
    /// `Playing`, `Paused` or `Stopped`, as MPRIS says it.
    var status: () async throws -> String
    /// Where the current track is, in seconds.
    var position: () async throws -> Double
}

/// Asks `read` until its value satisfies `holds` or `timeout` passes; returns the last value.
private func waitForValue<Value>(
    timeout: Duration = .seconds(5), _ read: () async throws -> Value, until holds: (Value) -> Bool
) async throws -> Value {
    let deadline = ContinuousClock.now + timeout
    var value = try await read()
    while !holds(value) && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(50))
        value = try await read()
    }
    return value
}

/// The Snapcast scenario, the same for the daemon and for mpd: play shows the track on the
/// stream; the stream's next, previous, setPosition, seek, pause and play act on the player.
private func checkSnapcastControls(_ snapserver: SnapserverSession, player: PlayerChecks) async throws {
    // The control script has read the player's state over MPD.
    try await snapserver.waitForStream(playback: "stopped")

    let clock = ContinuousClock()
    let pressed = clock.now
    try await player.play()
    let (playing, _) = try await snapserver.waitForStream(status: "playing", playback: "playing", title: "Tone 1")
    let shown = clock.now - pressed
    #expect(playing.title == "Tone 1", "\(playing)")
    // snapserver notices the PCM after a few hundred milliseconds of it; on a loaded machine
    // (the whole suite at once) that took 10 s.
    #expect(shown < .seconds(20), "the stream showed the track \(shown) after play")

    try await snapserver.send("next")
    try await snapserver.waitForStream(playback: "playing", title: "Tone 2")
    #expect(try await player.title() == "Tone 2")

    try await snapserver.send("previous")
    try await snapserver.waitForStream(title: "Tone 1")
    #expect(try await player.title() == "Tone 1")

    // meta_mpd.py answers a control only after MPD did, but the player may take a moment to
    // report the new position.
    try await snapserver.send("setPosition", ["position": 8])
    let position = try await waitForValue(player.position) { (8..<10).contains($0) }
    #expect((8..<10).contains(position), "setPosition 8 left the track at \(position) s")
    // A relative seek: meta_mpd.py sends `seekcur -4.0`.
    try await snapserver.send("seek", ["offset": -4])
    let back = try await waitForValue(player.position) { (4..<6.5).contains($0) }
    #expect((4..<6.5).contains(back), "seek -4 from \(position) s left the track at \(back) s")
    // A seek may reload the track; it must still be the same one.
    #expect(try await player.title() == "Tone 1")

    try await snapserver.send("pause")
    try await snapserver.waitForStream(playback: "paused")
    #expect(try await player.status() == "Paused")

    try await snapserver.send("play")
    try await snapserver.waitForStream(status: "playing", playback: "playing", title: "Tone 1")
    #expect(try await player.status() == "Playing")

    // Paused, the player writes nothing, so snapserver's going away cannot fail a write.
    try await player.pause()
    try await snapserver.waitForStream(playback: "paused")
}

@Suite(.enabled(if: snapcastMissing == nil, "\(snapcastMissing ?? "")"))
struct SnapcastTests {
    @Test(.enabled(if: referenceMPDInstalled, "mpd or mpc is missing (packages mpd, mpc): run Scripts/setup"))
    func snapcastShowsMPDsTrackAndControlsIt() async throws {
        // The harness and the scenario, held to mpd 0.23 itself.
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        let pipes = try TemporaryDirectory(prefix: "snapcast-fifo")
        defer { pipes.remove() }
        let fifo = pipes.path + "/snapfifo"
        try await withReferenceMPD(library: library, fifo: fifo) { socket in
            try await withSnapserver(fifo: fifo, mpdHost: socket) { snapserver in
                func mpc(_ arguments: String...) async throws -> String {
                    let output = try await ChildProcess.run("/usr/bin/mpc", ["--host", socket] + arguments)
                    guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
                    return output.stdout.trimmingSuffix()
                }
                try await checkSnapcastControls(
                    snapserver,
                    player: PlayerChecks(
                        play: { _ = try await mpc("-q", "play") }, pause: { _ = try await mpc("-q", "pause") },
                        title: { try await mpc("current", "--format", "%title%") },
                        status: {
                            let state = try await mpc("status", "%state%")
                            return ["playing": "Playing", "paused": "Paused"][state] ?? "Stopped"
                        },
                        position: {
                            // `m:ss`
                            let time = try await mpc("status", "%currenttime%").split(separator: ":")
                            return Double(time.first ?? "").flatMap { minutes in
                                Double(time.last ?? "").map { minutes * 60 + $0 }
                            } ?? -1
                        }))
            }
        }
    }

    @Test func snapcastShowsTheDaemonsTrackAndControlsIt() async throws {
        let pipes = try TemporaryDirectory(prefix: "snapcast-fifo")
        defer { pipes.remove() }
        let fifo = pipes.path + "/snapfifo"
        // Made before the daemon starts: a filesink whose path does not exist makes a plain file.
        #expect(mkfifo(fifo, 0o600) == 0)
        try await DaemonFixture.with(arguments: ["--audio-sink", snapcastAudioSink(fifo: fifo)]) { daemon in
            try await withSnapserver(fifo: fifo, mpdHost: daemon.mpdSocket) { snapserver in
                try await checkSnapcastControls(
                    snapserver,
                    player: PlayerChecks(
                        play: { _ = try await daemon.playerctl("play") }, pause: { _ = try await daemon.playerctl("pause") },
                        title: { try await daemon.playerctl("metadata", "title") },
                        status: { try await daemon.playerctl("status") },
                        position: { Double(try await daemon.playerctl("position")) ?? -1 }))
            }
        }
    }

    @Test func theDaemonOutlivesSnapserverGoingAwayAndPlaysIntoTheNextOne() async throws {
        let pipes = try TemporaryDirectory(prefix: "snapcast-fifo")
        defer { pipes.remove() }
        let fifo = pipes.path + "/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        try await DaemonFixture.with(arguments: ["--audio-sink", snapcastAudioSink(fifo: fifo)]) { daemon in
            try await withSnapserver(fifo: fifo, mpdHost: nil) { snapserver in
                _ = try await daemon.playerctl("play")
                try await snapserver.waitForStream(status: "playing")
                let watcher = try await daemon.watch()
                defer { watcher.kill() }
                snapserver.process.kill()
                _ = await snapserver.process.waitForExit()
                // The daemon's next write into the FIFO fails (EPIPE): it stops playing, and lives.
                _ = try await watcher.waitForLine {
                    $0.hasPrefix("changed player ") && $0.contains("PlaybackStatus=Stopped")
                }
            }
            try await withSnapserver(fifo: fifo, mpdHost: nil) { snapserver in
                _ = try await daemon.playerctl("play")
                try await snapserver.waitForStream(status: "playing")
                #expect(try await daemon.playerctl("status") == "Playing")
                _ = try await daemon.playerctl("pause")
            }
        }
    }
}
