import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// What a start costs: the libraries a serving daemon maps before anything plays.
@Suite(.timeLimit(.minutes(2))) struct StartUpTests {
    /// The file names of the shared libraries mapped by process `pid` (`libgstreamer-1.0.so.0.2200.0`).
    static func mappedLibraries(_ pid: Int32) throws -> Set<String> {
        // Read to the end: /proc files have no size, and a read by size stops at the first page.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return Set(
            maps.split(separator: "\n").compactMap { line in
                guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last, path.hasPrefix("/")
                else { return nil }
                return path.split(separator: "/").last.map(String.init)
            })
    }

    static func maps(_ libraries: Set<String>, _ name: String) -> Bool { libraries.contains { $0.hasPrefix(name + ".so") } }

    /// GStreamer (and GObject, which only it needs) is loaded when something plays, not at start,
    /// and TagLib when tags are read (by the scan, a child process): mapping and relocating them
    /// took about 3 ms of every start. With a sink that fixes the output, nothing follows the
    /// outputs either, so a ready daemon has loaded neither.
    @Test func gstreamerAndTagLibAreLoadedOnlyWhenUsed() async throws {
        try await DaemonFixture.with { daemon in
            let ready = try Self.mappedLibraries(daemon.process.pid)
            #expect(Self.maps(ready, "libdbus-1"), "the maps are read: \(ready.sorted())")
            for library in ["libgstreamer-1.0", "libgstpbutils-1.0", "libgstbase-1.0", "libgobject-2.0", "libtag"] {
                #expect(!Self.maps(ready, library), "\(library) is mapped before anything played")
            }
            _ = try await daemon.playerctl("play")
            #expect(try await daemon.playerctl("status") == "Playing")
            let playing = try Self.mappedLibraries(daemon.process.pid)
            #expect(Self.maps(playing, "libgstreamer-1.0"), "playing maps GStreamer: \(playing.sorted())")
        }
    }

    /// A GStreamer that cannot be loaded is the player's error, told when something is to play:
    /// the daemon keeps serving, with the dynamic linker's reason in its log.
    @Test func aGStreamerThatCannotBeLoadedIsAnErrorNotACrash() async throws {
        let folder = try TemporaryDirectory(prefix: "broken-gstreamer")
        defer { folder.remove() }
        // Found first on the library path, and not a library.
        try "not a library".write(toFile: folder.path + "/libgstreamer-1.0.so.0", atomically: true, encoding: .utf8)
        try await DaemonFixture.with(environment: ["LD_LIBRARY_PATH": folder.path]) { daemon in
            // The remote hears that the player could not play.
            await #expect(throws: (any Error).self) { try await daemon.playerctl("play") }
            let line = try await daemon.process.waitForLine { $0.contains("could not be loaded") }
            #expect(line.contains("libgstreamer-1.0.so.0"), "the reason names the library: \(line)")
            #expect(try await daemon.playerctl("status") != "Playing")
            #expect(kill(daemon.process.pid, 0) == 0, "the daemon still runs")
        }
    }

    /// The player's name is owned before its objects exist, with the connection's calls held
    /// until they do: a client that calls the moment the name appears (a shell listing players)
    /// gets the player's answers, never `UnknownObject` or `UnknownMethod`, start after start.
    @Test func callsSentTheMomentTheNameAppearsGetThePlayersAnswers() async throws {
        let folder = try TemporaryDirectory(prefix: "call-on-start")
        defer { folder.remove() }
        try FileManager.default.createDirectory(atPath: folder.path + "/music", withIntermediateDirectories: true)
        try await PrivateBus.with { bus in
            let client = try ChildProcess.spawn(
                PrivateBus.systemPython, [pythonScript("call_on_start.py"), DaemonFixture.busName],
                environment: bus.pythonEnvironment)
            defer { client.kill() }
            _ = try await client.waitForLine { $0 == "watching" }
            var answered: [String] = []
            for start in 1...20 {
                let daemon = try ChildProcess.spawn(
                    daemonExecutable,
                    [
                        "--library", folder.path + "/music", "--cache-dir", folder.path + "/cache", "--state-dir",
                        folder.path + "/state", "--audio-sink", "fakesink sync=true", "--no-mpd", "--no-scan", "--no-watch",
                    ], environment: bus.environment)
                defer { daemon.kill() }
                let line = try await client.waitForLine(timeout: .seconds(20)) { $0.hasPrefix("start \(start) ") }
                #expect(line.hasPrefix("start \(start) ok "), "\(line)")
                answered.append(String(line.split(separator: " ").last ?? ""))
                kill(daemon.pid, SIGTERM)
                #expect(try await daemon.waitForExit(timeout: .seconds(10)) == 0)
            }
            print("signal → last reply, ms, per start: \(answered.joined(separator: " "))")
        }
    }
}
