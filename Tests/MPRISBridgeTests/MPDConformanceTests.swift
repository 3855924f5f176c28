import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The daemon's MPD face beside the real mpd 0.23 on one library: `mpd_conformance.py` sends
/// both the same command sequences over raw sockets and compares their answers command by
/// command, after normalising what legitimately differs (song ids, playlist versions, times,
/// the decoded stream's format, output names). The answers the bridge gives on purpose unlike
/// mpd are listed, with why, in the script's `KNOWN`; every other difference fails here,
/// showing both answers.
@Suite struct MPDConformanceTests {
    static let mpdExecutable = "/usr/bin/mpd"

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: mpdExecutable),
            "mpd is not installed (/usr/bin/mpd): Scripts/setup installs it"),
        .timeLimit(.minutes(2)))
    func theBridgeAnswersAsMPDDoes() async throws {
        let folder = try TemporaryDirectory(prefix: "mpd-conformance")
        defer { folder.remove() }
        let music = folder.path + "/music"
        try await Self.makeLibrary(at: music)
        let library = GeneratedLibrary(folder: folder, tracks: [])

        let mpdSocket = folder.path + "/real-mpd.socket"
        let mpd = try await Self.startMPD(music: music, folder: folder.path, socket: mpdSocket)
        do {
            try await compare(mpdSocket: mpdSocket, library: library)
        } catch {
            await mpd.stop()
            throw error
        }
        await mpd.stop()
    }

    /// Runs the script against mpd at `mpdSocket` and the daemon on `library`; records each
    /// difference not known.
    func compare(mpdSocket: String, library: GeneratedLibrary) async throws {
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            let output: ProcessOutput
            do {
                output = try await ChildProcess.run(
                    "/usr/bin/python3", [pythonScript("mpd_conformance.py"), mpdSocket, daemon.mpdSocket, "--wait"],
                    timeout: .seconds(90))
            } catch {
                daemon.process.kill()
                throw error
            }
            try await daemon.stop()
            #expect(output.succeeded, "\(output)")
            let comparisons = output.stdout.split(separator: "\n").compactMap { line in
                try? JSONDecoder().decode(Comparison.self, from: Data(line.utf8))
            }
            #expect(comparisons.count > 300, "the script compared too little: \(output)")
            for comparison in comparisons where !comparison.equal && comparison.known == nil {
                Issue.record(
                    """
                    \(comparison.step): \(comparison.command)
                      mpd:    \(comparison.mpd.joined(separator: " | "))
                      bridge: \(comparison.bridge.joined(separator: " | "))
                    """)
            }
        }
    }

    /// One command's comparison, as the script prints it.
    struct Comparison: Decodable {
        var step: String
        var command: String
        var mpd: [String]
        var bridge: [String]
        var equal: Bool
        /// Why the bridge answers otherwise on purpose; nil when it should not.
        var known: String?
    }

    /// The demo library (two albums of four tracks, covers, an .m3u), with a subfolder and a
    /// playlist inside an album's folder: a folder holding songs, a playlist and a subfolder.
    static func makeLibrary(at music: String) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DEMO_SECONDS"] = "20"
        _ = try await ChildProcess.run(
            repositoryRoot + "/Scripts/make-demo-library", [music], environment: environment, timeout: .seconds(60)
        ).check()
        let album = music + "/Sine Wave Ensemble/Pure Tones"
        try FileManager.default.createDirectory(atPath: album + "/Live", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: album + "/01 A Above Middle C.ogg", toPath: album + "/Live/01 Live A.ogg")
        try "02 Concert E.flac\nLive/01 Live A.ogg\n".write(toFile: album + "/best.m3u", atomically: true, encoding: .utf8)
    }

    /// mpd on `music`, its state in `folder`, listening on the Unix socket `socket` only, playing
    /// to a null output with a software mixer (so it has a volume, as the bridge does).
    static func startMPD(music: String, folder: String, socket: String) async throws -> WatchedDaemon {
        let state = folder + "/real-mpd"
        try FileManager.default.createDirectory(atPath: state + "/playlists", withIntermediateDirectories: true)
        let configuration = """
            music_directory "\(music)"
            playlist_directory "\(state)/playlists"
            db_file "\(state)/database"
            state_file "\(state)/state"
            bind_to_address "\(socket)"
            audio_output {
                type "null"
                name "Null"
                mixer_type "software"
            }
            """
        try configuration.write(toFile: state + "/mpd.conf", atomically: true, encoding: .utf8)
        // mpd says nothing when it is ready: the script waits for its socket.
        return try await WatchedDaemon.start(
            mpdExecutable, ["--no-daemon", "--verbose", state + "/mpd.conf"], mergingStderr: true
        ) { _ in true }
    }
}
