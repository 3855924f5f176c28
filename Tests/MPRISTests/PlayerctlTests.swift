import DBus
import DBusTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The example app (`Examples/NowPlayingExample`, an in-memory player written
/// against MediaRemote) run as its own process and driven by playerctl, as a
/// user would.
@Suite(.timeLimit(.minutes(1))) struct PlayerctlTests {
    /// Runs `body` with the example serving on a private bus, its artwork cache in a temporary folder.
    static func withExample(_ body: (PrivateBus, String) async throws -> Void) async throws {
        let cache = try TemporaryDirectory(prefix: "mpris-example")
        defer { cache.remove() }
        try await PrivateBus.with { bus in
            var environment = bus.environment
            environment["XDG_CACHE_HOME"] = cache.path
            let example = try ChildProcess.spawn(
                "\(buildProductsFolder)/now-playing-example", [], environment: environment)
            defer { example.kill() }
            let appeared = try await bus.run(
                "gdbus", ["wait", "--session", "--timeout", "20", "org.mpris.MediaPlayer2.mprisbridge_example"])
            try #require(appeared.status == 0, "\(example.capturedStderr)")
            try await body(bus, cache.path)
        }
    }

    @Test func everyPlayerctlCommandWorks() async throws {
        try await PlayerctlTests.withExample { bus, cache in
            /// Runs `playerctl ARGUMENTS` and returns its output without the final newline.
            func playerctl(_ arguments: String...) async throws -> String {
                let output = try await bus.run("playerctl", ["--player=mprisbridge_example"] + arguments)
                #expect(output.status == 0, "playerctl \(arguments): \(output.stderr)")
                return String(output.stdout.dropLast())
            }
            let listed = try await playerctl("--list-all")
            // Once per bus: the private bus also stands in for the system bus, which playerctl lists too.
            #expect(Set(listed.split(separator: "\n")) == ["mprisbridge_example"])
            #expect(try await playerctl("status") == "Stopped")
            _ = try await playerctl("play")
            #expect(try await playerctl("status") == "Playing")
            _ = try await playerctl("pause")
            #expect(try await playerctl("status") == "Paused")
            _ = try await playerctl("play-pause")
            #expect(try await playerctl("status") == "Playing")
            _ = try await playerctl("play-pause")
            #expect(try await playerctl("status") == "Paused")

            // Paused, so the position holds still and reads exactly.
            _ = try await playerctl("position", "30")
            #expect(try await playerctl("position") == "30.000000")
            _ = try await playerctl("position", "10+")
            #expect(try await playerctl("position") == "40.000000")
            _ = try await playerctl("position", "5-")
            #expect(try await playerctl("position") == "35.000000")

            #expect(try await playerctl("volume") == "1.000000")
            _ = try await playerctl("volume", "0.4")
            #expect(try await playerctl("volume") == "0.400000")
            _ = try await playerctl("volume", "0.1+")
            #expect(try await playerctl("volume") == "0.500000")

            #expect(try await playerctl("loop") == "None")
            _ = try await playerctl("loop", "Playlist")
            #expect(try await playerctl("loop") == "Playlist")
            _ = try await playerctl("loop", "Track")
            #expect(try await playerctl("loop") == "Track")
            #expect(try await playerctl("shuffle") == "Off")
            _ = try await playerctl("shuffle", "On")
            #expect(try await playerctl("shuffle") == "On")
            _ = try await playerctl("shuffle", "Toggle")
            #expect(try await playerctl("shuffle") == "Off")

            let format = "{{title}} by {{artist}} on {{album}} #{{xesam:trackNumber}} {{duration(mpris:length)}} {{mpris:trackid}}"
            let described = try await playerctl("metadata", "--format", format)
            #expect(
                described
                    == "Sine at 440 Hz by Oscillator, Guest on Test Tones #1 3:00 '/org/mprisbridge/Track/demo_3a1_2fSine_20_c3_a0_20440_20Hz'")
            #expect(try await playerctl("metadata", "xesam:url") == "file:///music/Test%20Tones/01%20Sine%20440.ogg")
            let artURL = try await playerctl("metadata", "mpris:artUrl")
            #expect(artURL.hasPrefix("file://\(cache)/mpris-bridge/artwork/") && artURL.hasSuffix(".png"))
            #expect(FileManager.default.fileExists(atPath: String(artURL.dropFirst(7))))

            _ = try await playerctl("next")
            #expect(try await playerctl("metadata", "title") == "Square at 220 Hz")
            #expect(try await playerctl("position") == "0.000000")
            _ = try await playerctl("previous")
            #expect(try await playerctl("metadata", "title") == "Sine at 440 Hz")

            _ = try await playerctl("open", "file:///tmp/Some%20Song.ogg")
            #expect(try await playerctl("metadata", "--format", "{{status}} {{title}} {{xesam:url}}")
                == "Playing Some Song.ogg file:///tmp/Some%20Song.ogg")
            _ = try await playerctl("stop")
            #expect(try await playerctl("status") == "Stopped")
        }
    }

    /// The example's queue is its TrackList (no playerctl command reads one, so the Python client does).
    @Test func theExampleShowsAWorkingTrackList() async throws {
        try await PlayerctlTests.withExample { bus, _ in
            func client(_ operations: String...) async throws -> [String] {
                let output = try await bus.run(
                    PrivateBus.systemPython,
                    [pythonScript("mpris_client.py"), "org.mpris.MediaPlayer2.mprisbridge_example"] + operations)
                #expect(output.status == 0, "\(output.stderr)")
                return output.stdout.split(separator: "\n").map(String.init)
            }
            let (sine, square, noise) = (trackID("demo:1/Sine à 440 Hz"), trackID("demo:2"), trackID("demo:3"))
            let added = trackID("file:///tmp/new.ogg")
            #expect(
                try await client("get root HasTrackList", "get tracks Tracks", "get tracks CanEditTracks")
                    == ["b true", "ao [\(sine), \(square), \(noise)]", "b true"])

            var replies = try await client("call tracks GoTo o:\(square)", "get player PlaybackStatus", "get player Metadata")
            #expect(Array(replies[0...1]) == ["ok", "s Playing"])
            #expect(replies[2].contains("xesam:title: Square at 220 Hz"), "GoTo plays the item")

            replies = try await client(
                "call tracks AddTrack s:file:///tmp/new.ogg o:\(square) b:false", "get tracks Tracks",
                "call tracks GetTracksMetadata ao:\(added)", "get player Metadata")
            #expect(Array(replies[0...1]) == ["ok", "ao [\(sine), \(square), \(added), \(noise)]"])
            #expect(replies[2].contains("xesam:title: new.ogg") && replies[2].contains("xesam:url: file:///tmp/new.ogg"))
            #expect(replies[3].contains("xesam:title: Square at 220 Hz"), "without SetAsCurrent, what plays goes on")

            replies = try await client(
                "call tracks RemoveTrack o:\(square)", "get tracks Tracks", "get player Metadata",
                "get player PlaybackStatus")
            #expect(Array(replies[0...1]) == ["ok", "ao [\(sine), \(added), \(noise)]"])
            #expect(replies[2].contains("xesam:title: new.ogg"), "removing the current item moves to the next")
            #expect(replies[3] == "s Playing")

            replies = try await client(
                "call tracks AddTrack s:https://radio.example/live o:\(noTrack) b:true", "get tracks Tracks",
                "get player Metadata")
            #expect(Array(replies[0...1]) == ["ok", "ao [\(trackID("https://radio.example/live")), \(sine), \(added), \(noise)]"])
            #expect(replies[2].contains("xesam:url: https://radio.example/live"), "SetAsCurrent plays it")
        }
    }
}

/// playerctl --follow through play, pause, seek, next and stop: the position it prints is wall-clock
/// time, so this runs alone, after the other suites (Scripts/test).
@Suite(.timeLimit(.minutes(1))) struct PlayerctlRealTimeTests {
    @Test func followPrintsOneLinePerChange() async throws {
        try await PlayerctlTests.withExample { bus, _ in
            let follow = try bus.spawn(
                "playerctl",
                ["--player=mprisbridge_example", "--follow", "metadata", "--format",
                 "{{status}} {{title}} {{duration(position)}}"])
            defer { follow.kill() }
            func step(_ arguments: String...) async throws -> String {
                let output = try await bus.run("playerctl", ["--player=mprisbridge_example"] + arguments)
                #expect(output.status == 0, "\(output.stderr)")
                return try await follow.waitForLine { _ in true }
            }
            var lines = [try await follow.waitForLine { _ in true }]
            lines.append(try await step("play"))
            lines.append(try await step("pause"))
            lines.append(try await step("position", "30"))
            lines.append(try await step("next"))
            // playerctl 2.4.1 prints a new track with its cached position, and prints it again once
            // it has reset that position if the reset comes in a later turn of its main loop (it
            // does on a busy machine): one more line that the bridge did not cause.
            var stopped = try await step("stop")
            if stopped == "Paused Square at 220 Hz 0:00" { stopped = try await follow.waitForLine { _ in true } }
            lines.append(stopped)
            #expect(
                lines == [
                    "Stopped Sine at 440 Hz 0:00",
                    "Playing Sine at 440 Hz 0:00",
                    "Paused Sine at 440 Hz 0:00",
                    "Paused Sine at 440 Hz 0:30",  // from Seeked
                    "Paused Square at 220 Hz 0:30",
                    "Stopped Square at 220 Hz 0:00",
                ])
            // Nothing more: the stop printed one line, and a fence proves no other followed.
            lines.append(try await step("play"))
            #expect(lines.last == "Playing Square at 220 Hz 0:00")
        }
    }
}
