import DBusTestSupport
import Foundation
import Glibc
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

    /// `mode` is `file`, `drop` or `icy`.
    func url(_ mode: String, _ name: String) -> String { "http://127.0.0.1:\(port)/\(mode)/\(name)" }
}

@Suite struct StreamTests {
    @Test func aRadioStreamPlaysAndItsTitlesBecomeTheMetadata() async throws {
        try await DaemonFixture.with { daemon in
            let folder = daemon.library.folder.path + "/served"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try await TestMedia.generate(.mp3, seconds: 4, at: folder + "/radio.mp3")
            let server = try await LoopbackMediaServer.start(serving: folder)
            defer { server.process.kill() }
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            _ = try await daemon.playerctl("open", server.url("icy", "radio.mp3"))
            #expect(try await daemon.playerctl("status") == "Playing")
            _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0.contains("Metadata=First") }
            _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0.contains("Metadata=Second") }
            #expect(try await daemon.playerctl("metadata", "album") == "Test Radio", "the station")
            #expect(try await daemon.client("get", "player", "CanSeek") == ["false"], "a radio cannot seek")
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
}
