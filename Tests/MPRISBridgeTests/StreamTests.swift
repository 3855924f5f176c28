import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import TestMedia
import Testing

/// `Tests/GStreamerPlaybackTests/Python/media_server.py` serving a folder on 127.0.0.1
/// (an ephemeral port): files, a connection that drops, and a Shoutcast-style radio.
struct LoopbackMediaServer {
    let process: ChildProcess
    let port: Int

    static func start(serving folder: String) async throws -> LoopbackMediaServer {
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONHOME"] = nil  // a pyenv setup may point it at another interpreter
        let script = repositoryRoot + "/Tests/GStreamerPlaybackTests/Python/media_server.py"
        let process = try ChildProcess.spawn(PrivateBus.systemPython, [script, folder], environment: environment)
        let line = try await process.waitForLine { $0.hasPrefix("PORT ") }
        return LoopbackMediaServer(process: process, port: try #require(Int(line.dropFirst(5))))
    }

    /// `mode` is `file`, `drop`, `icy`, `stall` or `stall-after` (see the script).
    func url(_ mode: String, _ name: String) -> String { "http://127.0.0.1:\(port)/\(mode)/\(name)" }
}

@Suite struct StreamTests {
    @Test func aRadioStreamPlaysAndItsTitlesBecomeTheMetadata() async throws {
        try await DaemonFixture.with { daemon in
            let folder = daemon.library.folder.path + "/served"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // Ten seconds: the station is read while the first title plays, with five seconds of
            // it left, so a loaded machine's slow client still finds the radio playing.
            try await TestMedia.generate(.mp3, seconds: 10, at: folder + "/radio.mp3")
            let server = try await LoopbackMediaServer.start(serving: folder)
            defer { server.process.kill() }
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            _ = try await daemon.playerctl("open", server.url("icy", "radio.mp3"))
            #expect(try await daemon.playerctl("status") == "Playing")
            _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0.contains("Metadata=First") }
            #expect(try await daemon.playerctl("metadata", "album") == "Test Radio", "the station")
            #expect(try await daemon.client("get", "player", "CanSeek") == ["false"], "a radio cannot seek")
            _ = try await watcher.waitForLine(timeout: .seconds(15)) { $0.contains("Metadata=Second") }
            #expect(try await daemon.playerctl("metadata", "title") == "Second", "the title as it plays")
        }
    }

    @Test func aStreamThatDropsIsReportedAndPlaybackMovesOn() async throws {
        try await DaemonFixture.with { daemon in
            let folder = daemon.library.folder.path + "/served"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try await TestMedia.generate(.mp3, seconds: 3, at: folder + "/dropping.mp3")
            let server = try await LoopbackMediaServer.start(serving: folder)
            defer { server.process.kill() }
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            // Opened after the first track: when it fails, the next entry (Tone 2) plays.
            _ = try await daemon.playerctl("open", server.url("drop", "dropping.mp3"))
            // Reported when it happens: while starting ("cannot play") or while playing ("failed").
            let logged = try await daemon.process.waitForLine(timeout: .seconds(15)) { $0.contains("dropping.mp3") }
            #expect(logged.contains("warning"), "\(logged)")
            // GStreamer's reason follows: "Server sent bad data" with libsoup 2, a flow error with libsoup 3.
            #expect(logged.contains("Network error: "), "the log says what failed: \(logged)")
            _ = try await watcher.waitForLine(timeout: .seconds(15)) { $0.contains("Metadata=Tone 2") }
            #expect(try await daemon.playerctl("status") == "Playing")
        }
    }
    /// A stream that never answers holds no command: a pause sent while "add and play" waits on
    /// it is answered at once and supersedes that wait (the add then answers success: it was
    /// carried out, and the pause had the last word), and left alone the stream is reported as
    /// a network error within the engine's 5 s timeout while playback moves on.
    @Test func aStalledStreamHoldsNoCommandAndIsLeftAfterTheTimeout() async throws {
        try await DaemonFixture.with(library: try await GeneratedLibrary.make(seconds: 30)) { daemon in
            let folder = daemon.library.folder.path + "/served"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try await TestMedia.generate(.mp3, seconds: 3, at: folder + "/silent.mp3")
            let server = try await LoopbackMediaServer.start(serving: folder)
            defer { server.process.kill() }
            let script = """
                import dbus, dbus.mainloop.glib, sys, time
                from gi.repository import GLib
                dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
                loop = GLib.MainLoop()
                player = dbus.SessionBus().get_object(sys.argv[1], "/org/mpris/MediaPlayer2")
                tracklist = dbus.Interface(player, "org.mpris.MediaPlayer2.TrackList")
                transport = dbus.Interface(player, "org.mpris.MediaPlayer2.Player")
                start = time.monotonic()
                replies = []
                def reply(name):
                    def answered(outcome):
                        print("%s %s %d" % (name, outcome, (time.monotonic() - start) * 1000), flush=True)
                        replies.append(name)
                        if len(replies) == 2: loop.quit()
                    return (lambda *args: answered("ok")), (lambda error: answered(error.get_dbus_name()))
                done, failed = reply("AddTrack")
                tracklist.AddTrack(sys.argv[2], dbus.ObjectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), True,
                                   reply_handler=done, error_handler=failed, timeout=30)
                def pause():
                    global start
                    start = time.monotonic()
                    done, failed = reply("Pause")
                    transport.Pause(reply_handler=done, error_handler=failed, timeout=30)
                    return False
                GLib.timeout_add(300, pause)
                loop.run()
                """
            let output = try await daemon.bus.python(script, [DaemonFixture.busName, server.url("stall", "silent.mp3")])
            // Milliseconds after the pause was sent: it was answered at once, and it ended the wait
            // of the add, superseded rather than failed.
            let replies = Dictionary(
                output.stdout.split(separator: "\n").map { line in
                    let fields = line.split(separator: " ")
                    return (String(fields.first ?? ""), (outcome: String(fields.dropFirst().first ?? ""), milliseconds: Int(fields.last ?? "") ?? .max))
                }, uniquingKeysWith: { first, _ in first })
            let pause = try #require(replies["Pause"], "\(output)")
            let add = try #require(replies["AddTrack"], "\(output)")
            print("Pause during a stalled AddTrack answered in \(pause.milliseconds) ms")
            // Well before the stream's 5 s timeout, on however loaded a machine (a quiet one: a few
            // milliseconds); before, the pause waited for the stream, 13 s.
            #expect(pause.outcome == "ok" && pause.milliseconds < 4000, "\(output)")
            #expect(add.outcome == "ok" && add.milliseconds < 4000, "\(output)")
            #expect(try await daemon.playerctl("status") == "Paused")

            // Left alone, the stream fails by the engine's timeout and the next entry plays.
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            _ = try await daemon.playerctl("open", server.url("stall", "silent.mp3"))
            let logged = try await daemon.process.waitForLine(timeout: .seconds(20)) { $0.contains("silent.mp3") && $0.contains("Network error") }
            #expect(logged.contains("warning"), "\(logged)")
            #expect(try await daemon.playerctl("status") == "Playing")
            #expect(try await daemon.playerctl("metadata", "title") != "silent")
        }
    }
}
