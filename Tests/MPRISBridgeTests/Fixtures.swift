import AudioTags
import DBusTestSupport
import Foundation
import Glibc
import MusicLibrary
import ProcessTestSupport
import TestMedia
import Testing

/// The daemon as built for the tests.
let daemonExecutable = buildProductsFolder + "/mpris-bridge"

func pythonScript(_ name: String) -> String { repositoryRoot + "/Tests/MPRISBridgeTests/Python/" + name }

/// One track of a generated library.
struct LibraryTrack: Sendable {
    var path: String
    var format: TestMedia.Format
    var seconds: Double
    var title: String
    var album = "Generated"
    var trackNumber: Int

    /// Where the track is in the library, percent-encoded as in `xesam:url`.
    func url(in library: String) -> String { URL(fileURLWithPath: library + "/" + path).absoluteString }
}

/// A folder of generated, tagged audio files; removed by ``remove()``.
struct GeneratedLibrary: Sendable {
    let folder: TemporaryDirectory
    let tracks: [LibraryTrack]
    var path: String { folder.path + "/music" }

    /// Three tracks by default, each `seconds` long, in different formats and
    /// nested folders, numbered in play order. Long enough by default that no track ends
    /// by itself between a test's commands, however loaded the machine.
    static func make(seconds: Double = 12, formats: [TestMedia.Format] = [.ogg, .flac, .mp3]) async throws
        -> GeneratedLibrary
    {
        let folder = try TemporaryDirectory(prefix: "bridge")
        let tracks = formats.enumerated().map { index, format in
            LibraryTrack(
                path: "Artist/Generated/\(String(format: "%02d", index + 1)) Tone \(index + 1).\(format.fileExtension)",
                format: format, seconds: seconds, title: "Tone \(index + 1)", trackNumber: index + 1)
        }
        let library = GeneratedLibrary(folder: folder, tracks: tracks)
        try FileManager.default.createDirectory(
            atPath: library.path + "/Artist/Generated", withIntermediateDirectories: true)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, track) in tracks.enumerated() {
                group.addTask {
                    try await TestMedia.generate(
                        track.format, seconds: track.seconds, frequency: 220 * (index + 1),
                        tags: TestMedia.Tags(
                            title: track.title, artist: "Artist", album: track.album, albumArtist: "Artist",
                            trackNumber: track.trackNumber),
                        at: library.path + "/" + track.path)
                }
            }
            try await group.waitForAll()
        }
        return library
    }

    /// `count` tracks, each the only one of its album and its artist, in folders of their
    /// own: copies of one generated file retagged, so that every tab holds more rows than the
    /// daemon copies (500) and is served page by page, Tracks, Albums, Artists and Folders alike.
    static func makeWide(count: Int, seconds: Double = 3) async throws -> GeneratedLibrary {
        try await makeCopies(prefix: "bridge-wide", seconds: seconds) {
            (0..<count).map { index in
                let number = String(format: "%04d", index)
                return (
                    LibraryTrack(
                        path: "Artist \(number)/Album \(number)/01 Song \(number).ogg", format: .ogg, seconds: seconds,
                        title: "Song \(number)", album: "Album \(number)", trackNumber: 1),
                    artist: "Artist \(number)")
            }
        }
    }

    /// A library of `tracks` (each with its artist): copies of one generated Ogg file of
    /// `seconds`, retagged with the track's title, artist, album and number. Faster than
    /// encoding each, for libraries of hundreds of tracks.
    static func makeCopies(
        prefix: String, seconds: Double, _ tracks: () -> [(track: LibraryTrack, artist: String)]
    ) async throws -> GeneratedLibrary {
        let folder = try TemporaryDirectory(prefix: prefix)
        let source = folder.path + "/source.ogg"
        try await TestMedia.generate(.ogg, seconds: seconds, frequency: 330, tags: TestMedia.Tags(), at: source)
        let made = tracks()
        for (track, artist) in made {
            let path = folder.path + "/music/" + track.path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: source, toPath: path)
            try AudioTags.write(
                [("TITLE", track.title), ("ARTIST", artist), ("ALBUM", track.album), ("TRACKNUMBER", "\(track.trackNumber)")],
                to: path)
        }
        try FileManager.default.removeItem(atPath: source)
        return GeneratedLibrary(folder: folder, tracks: made.map(\.track))
    }

    func remove() { folder.remove() }
}

/// A running `mpris-bridge` on a private bus, with its own cache and state folders.
struct DaemonFixture: Sendable {
    static let playerName = "mprisbridge"
    static let busName = "org.mpris.MediaPlayer2.mprisbridge"

    let bus: PrivateBus
    let library: GeneratedLibrary
    let process: ChildProcess

    var cacheDirectory: String { library.folder.path + "/cache" }
    var stateDirectory: String { library.folder.path + "/state" }
    /// The MPD socket the daemon listens on (unless the test's arguments chose otherwise).
    let mpdSocket: String

    init(bus: PrivateBus, library: GeneratedLibrary, process: ChildProcess, mpdSocket: String? = nil) {
        self.bus = bus
        self.library = library
        self.process = process
        self.mpdSocket = mpdSocket ?? library.folder.path + "/mpd.socket"
    }

    /// Runs `mpris-bridge scan` on `library` and returns its output.
    static func scan(_ library: GeneratedLibrary) async throws -> ProcessOutput {
        try await ChildProcess.run(
            daemonExecutable, ["scan", "--library", library.path, "--cache-dir", library.folder.path + "/cache"])
    }

    /// Starts the daemon on `bus` and returns once it is ready (its queue restored or filled).
    ///
    /// The output is `fakesink` (no sound server needed) unless `arguments` name another
    /// `--audio-sink`; `environment` is added to the bus's (a sound server's variables, say).
    /// `launcher` runs the daemon (`["unshare", "--pid", "--fork"]`, say): the daemon is its last argument but
    /// the daemon's own.
    static func start(
        on bus: PrivateBus, library: GeneratedLibrary, arguments: [String] = [], environment: [String: String] = [:],
        launcher: [String] = []
    ) async throws -> DaemonFixture {
        let folder = library.folder.path
        let sink = arguments.contains("--audio-sink") ? [] : ["--audio-sink", "fakesink sync=true"]
        // Daemons of tests running side by side each serve MPD on a port and socket of their own;
        // daemons sharing a library each have a state folder of their own, and the socket there.
        let stateFolder = arguments.lastIndex(of: "--state-dir").map { arguments[$0 + 1] } ?? folder
        let socket = stateFolder + "/mpd.socket"
        let mpd =
            arguments.contains { $0.hasPrefix("--mpd") || $0 == "--no-mpd" }
            ? [] : ["--mpd-port", "0", "--mpd-socket", socket]
        // The log goes to stdout so the test can wait for its lines.
        let process = try ChildProcess.spawn(
            "/bin/sh",
            [
                "-c", "exec \"$0\" \"$@\" 2>&1"] + launcher + [daemonExecutable, "--library", library.path, "--cache-dir",
                folder + "/cache", "--state-dir", folder + "/state",
            ] + sink + mpd + arguments,
            environment: bus.environment.merging(environment) { _, added in added })
        let fixture = DaemonFixture(bus: bus, library: library, process: process, mpdSocket: socket)
        _ = try await process.waitForLine(timeout: .seconds(20)) { $0.contains("ready:") }
        // "ready:" tells the queue is restored; the MPD face listens once the library is open,
        // which may be a moment later: a test's first mpc must not find the socket missing.
        if !mpd.isEmpty { try await fixture.waitForMPD() }
        return fixture
    }

    /// Returns once the daemon logs that its MPD face listens; throws after `timeout`.
    func waitForMPD(timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !process.capturedStdout.contains("MPD server listening") {
            guard ContinuousClock.now < deadline else {
                throw ChildProcessError.outputEnded(
                    command: process.command, pid: process.pid, stdout: process.capturedStdout, stderr: "MPD never listened")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Runs a fresh library through `body` with a daemon serving it (started through
    /// `launcher`, as ``start(on:library:arguments:environment:launcher:)`` does), then stops both.
    static func with(
        library: GeneratedLibrary? = nil, arguments: [String] = [], environment: [String: String] = [:],
        launcher: [String] = [], _ body: (DaemonFixture) async throws -> Void
    ) async throws {
        let library = if let library { library } else { try await GeneratedLibrary.make() }
        defer { library.remove() }
        try await PrivateBus.with { bus in
            let scan = try await scan(library)
            #expect(scan.succeeded, "\(scan)")
            let daemon = try await start(
                on: bus, library: library, arguments: arguments, environment: environment, launcher: launcher)
            do {
                try await body(daemon)
            } catch {
                daemon.process.kill()
                throw error
            }
            try await daemon.stop()
        }
    }

    /// Runs the daemon on the folder `library` with `arguments`, which it must refuse before
    /// starting anything, saying `message` on its standard error.
    static func expectRefusal(
        of arguments: [String], library: String, saying message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let output = try await ChildProcess.run(daemonExecutable, ["--library", library] + arguments)
        #expect(!output.succeeded, "\(arguments) was accepted", sourceLocation: sourceLocation)
        #expect(output.stderr.contains(message), "\(arguments): \(output.stderr)", sourceLocation: sourceLocation)
    }

    /// Stops the daemon with SIGTERM, as systemd does, and expects a clean exit.
    func stop() async throws {
        kill(process.pid, SIGTERM)
        let process = self.process
        let status = await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await process.waitForExit() }
            group.addTask {
                try? await Task.sleep(for: .seconds(8))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let status else {
            // Still running: record where each thread is before killing it.
            let stacks = try? await ChildProcess.run(
                "gdb", ["-p", "\(process.pid)", "-batch", "-ex", "thread apply all bt 25"], timeout: .seconds(60))
            process.kill()
            Issue.record("mpris-bridge did not stop on SIGTERM:\n\(process.capturedStdout)\n\(stacks?.stdout ?? "no gdb")")
            return
        }
        #expect(status == 0, "mpris-bridge exited with \(status): \(process.capturedStdout)")
    }

    func playerctl(_ arguments: String...) async throws -> String {
        let output = try await bus.run("playerctl", ["--player=\(Self.playerName)"] + arguments)
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        return output.stdout.trimmingSuffix()
    }

    /// Runs `mpc` against the daemon's MPD socket and returns its output; a warning on stderr
    /// (a command mpc expected and did not get) fails the test.
    func mpc(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let output = try await ChildProcess.run("mpc", arguments, environment: ["MPD_HOST": mpdSocket, "PATH": "/usr/bin:/bin"])
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        #expect(output.stderr.isEmpty, "mpc \(arguments) warned: \(output.stderr)", sourceLocation: sourceLocation)
        return output.stdout.trimmingSuffix()
    }

    /// Runs Python/mpd_client.py (python-mpd2) against the daemon's MPD socket with `arguments`;
    /// its stdout, one JSON document per line.
    func mpdClient(_ arguments: String...) async throws -> [String] {
        let output = try await ChildProcess.run(
            PrivateBus.systemPython, [pythonScript("mpd_client.py"), mpdSocket] + arguments, timeout: .seconds(60))
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// Runs Python/bridge_client.py with `operations`; one output line per operation.
    func client(_ operations: String...) async throws -> [String] { try await client(operations) }

    /// Runs Python/bridge_client.py with `operations`; one output line per operation.
    func client(_ operations: [String]) async throws -> [String] {
        let output = try await bus.run(
            PrivateBus.systemPython, [pythonScript("bridge_client.py"), Self.busName] + operations)
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// Starts Python/bridge_client.py's watcher, which prints player and track-list signals, once subscribed.
    func watch() async throws -> ChildProcess {
        let watcher = try bus.spawn(PrivateBus.systemPython, ["-u", pythonScript("bridge_client.py"), Self.busName, "watch"])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }
}

/// What a daemon's `state.sqlite` holds, read with SQLite as any client of the file would, not
/// through the daemon's code.
struct SavedState: Sendable {
    var currentIdentifier: String?
    var positionMilliseconds: Int64
    /// The number of queued entries.
    var entryCount: Int

    /// What `state.sqlite` in `folder` holds; nil when there is no file or no saved state yet.
    static func read(in folder: String) -> SavedState? {
        let path = folder + "/state.sqlite"
        // Opening would create the file: look first.
        guard FileManager.default.fileExists(atPath: path), let database = try? SQLiteDatabase(path: path) else {
            return nil
        }
        return try? database.readTransaction { () throws -> SavedState? in
            var saved: SavedState?
            try database.forEachRow("SELECT current, position_ms FROM player") { row throws(SQLiteError) in
                saved = SavedState(currentIdentifier: row.text(0), positionMilliseconds: row.integer(1) ?? 0, entryCount: 0)
            }
            saved?.entryCount = Int(try database.integer("SELECT count(*) FROM queue") ?? 0)
            return saved
        }
    }

    /// Waits until `state.sqlite` in `folder` holds a state `holds` accepts, for at most `timeout`.
    static func wait(
        in folder: String, timeout: Duration = .seconds(10), until holds: (SavedState) -> Bool
    ) async throws -> SavedState? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let saved = read(in: folder), holds(saved) { return saved }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(folder)/state.sqlite never held what was expected: \(read(in: folder).map { "\($0)" } ?? "no saved state")")
        return nil
    }
}

extension String {
    func trimmingSuffix() -> String {
        var text = self
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text
    }
}
