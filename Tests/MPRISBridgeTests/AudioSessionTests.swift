import DBusTestSupport
import Foundation
import AudioTags
import Glibc
import ProcessTestSupport
import SoundServerTestSupport
import TestMedia
import Testing

/// The daemon inside a real audio session: a PulseAudio server of the test's own, with null
/// sinks (no sound hardware), role corking and meters on its outputs.
@Suite struct AudioSessionTests {
    /// Runs `body` with a sound server and a daemon playing through it (autoaudiosink, as a
    /// user's daemon does), then stops both.
    private func withDaemonOnSoundServer(
        arguments: [String] = [], _ body: (DaemonFixture, PrivateSoundServer) async throws -> Void
    ) async throws {
        try await PrivateSoundServer.with { server in
            try await DaemonFixture.with(
                arguments: ["--audio-sink", "autoaudiosink"] + arguments, environment: server.clientVariables
            ) { daemon in
                try await daemon.waitForOutputs()
                try await body(daemon, server)
            }
        }
    }

    @Test func aCallPausesPlaybackAsInterruptedAndItsEndResumesIt() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await startPlaying(daemon)
            defer { watcher.kill() }
            // The daemon's stream says it is music, which the server's policy corks for a call.
            let streams = try await server.streams()
            #expect(streams.map(\.role) == ["music"], "\(streams)")

            let callStarted = ContinuousClock.now
            let call = try server.startCall()
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Paused") }
            let pausedAfter = ContinuousClock.now - callStarted
            _ = try await watcher.waitForLine { $0.contains("changed bridge Interrupted=true") }
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["true"])
            let heldAt = try await daemon.position()
            print("call start → PlaybackStatus Paused: \(pausedAfter) (includes pacat's start-up)")

            let ended = ContinuousClock.now
            call.kill()
            _ = await call.waitForExit()
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["false"])
            // It goes on from where the call stopped it: no further than the time since the call
            // ended (however loaded the machine), and not from the start.
            let resumedAt = try await daemon.position()
            let since = (ContinuousClock.now - ended) / .seconds(1)
            #expect(
                resumedAt >= heldAt && resumedAt <= heldAt + since + 0.5,
                "paused at \(heldAt) s, \(resumedAt) s \(since) s after the call ended")
            let ours = try await server.streams().filter { $0.role == "music" }
            #expect(ours.map(\.isCorked) == [false])
        }
    }

    @Test func aPauseDuringACallStandsWhenTheCallEnds() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await startPlaying(daemon)
            defer { watcher.kill() }
            let call = try server.startCall()
            _ = try await watcher.waitForLine { $0.contains("changed bridge Interrupted=true") }
            _ = try await daemon.playerctl("pause")
            _ = try await watcher.waitForLine { $0.contains("changed bridge Interrupted=false") }
            try await endCallExpectingNoResume(call, on: server, watcher: watcher)
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["false"])
        }
    }

    @Test func aPausedPlayerIsNotStartedByACall() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await startPlaying(daemon)
            defer { watcher.kill() }
            _ = try await daemon.playerctl("pause")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Paused") }
            let call = try server.startCall()
            try await waitUntil(server) { streams in streams.contains { $0.application == "call" } }
            try await endCallExpectingNoResume(call, on: server, watcher: watcher)
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["false"])
        }
    }

    @Test func aLongPauseReleasesTheOutputAndPlayGoesOnFromWhereItStopped() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await startPlaying(daemon)
            defer { watcher.kill() }
            _ = try await daemon.playerctl("pause")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Paused") }
            let heldAt = try await daemon.playerctl("position")
            // Paused for a while, the daemon gives the sound server's stream up.
            try await waitUntil(server, timeout: .seconds(20)) { streams in !streams.contains { $0.role == "music" } }
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.playerctl("position") == heldAt)

            let resumed = ContinuousClock.now
            _ = try await daemon.playerctl("play")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
            let since = (ContinuousClock.now - resumed) / .seconds(1)
            let held = try #require(Double(heldAt))
            let position = try await daemon.position()
            #expect(position >= held && position <= held + since + 0.5, "paused at \(held) s, then \(position) s")
            #expect(try await server.streams().filter { $0.role == "music" }.map(\.isCorked) == [false])
            // A seek now is the first Seeked: resuming said none.
            #expect(!watcher.capturedStdout.contains("seeked "), "\(watcher.capturedStdout)")
            _ = try await daemon.playerctl("position", "9")
            let seeked = try await watcher.waitForLine { $0.hasPrefix("seeked ") }
            #expect(seeked.hasPrefix("seeked 9"), "\(seeked)")
        }
    }

    /// Starts the daemon's watcher (signals, line by line) and playback, and returns the watcher
    /// once the player says Playing.
    private func startPlaying(_ daemon: DaemonFixture) async throws -> ChildProcess {
        let watcher = try await daemon.watch()
        _ = try await daemon.playerctl("play")
        _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
        return watcher
    }

    /// Ends `call` and waits until the server no longer lists it. Its end reaches the daemon as
    /// an uncork request, which changes nothing visible when it is right to ignore it: so a
    /// wrong resume is watched for, for a second (the request comes within milliseconds of the
    /// call's stream going away).
    private func endCallExpectingNoResume(
        _ call: ChildProcess, on server: PrivateSoundServer, watcher: ChildProcess
    ) async throws {
        call.kill()
        _ = await call.waitForExit()
        try await waitUntil(server) { streams in !streams.contains { $0.application == "call" } }
        do {
            let line = try await watcher.waitForLine(timeout: .seconds(1)) { $0.contains("PlaybackStatus=Playing") }
            Issue.record("the player resumed after the call: \(line)")
        } catch ChildProcessError.timedOut {
            // Nothing resumed.
        }
    }

    @Test func outputsAreListedAndASwitchWhilePlayingMovesTheSoundAndKeepsThePosition() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let routes = try await daemon.client("get", "bridge", "OutputRoutes")
            #expect(
                routes == ["[(speakers, Speakers),(headphones, Headphones)]"]
                    || routes == ["[(headphones, Headphones),(speakers, Speakers)]"], "\(routes)")
            #expect(try await daemon.client("get", "bridge", "CanSelectOutputRoute") == ["true"])
            // The system's default output: an empty identifier (read with gdbus, which shows it).
            let route = try await daemon.bus.run(
                "gdbus", ["call", "--session", "-d", DaemonFixture.busName, "-o", "/org/mpris/MediaPlayer2", "-m",
                          "org.freedesktop.DBus.Properties.Get", "org.mprisbridge.Player1", "OutputRoute"]).check()
            #expect(route.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "(<''>,)")
            let meter = try await server.meter()
            defer { Task { await meter.stop() } }
            _ = try await daemon.playerctl("play")
            _ = try await meter.waitFor { $0.sink == "speakers" && $0.rms > -30 }
            let before = try await daemon.position()

            // (AudioSessionBenchmark measures how soon, and the gap in sound.)
            #expect(try await daemon.client("call", "bridge", "SelectOutputRoute", "s:headphones") == ["ok"])
            _ = try await meter.waitFor { $0.sink == "headphones" && $0.rms > -30 }
            #expect(try await server.streams().filter { $0.role == "music" }.map(\.sink) == ["headphones"])
            #expect(try await daemon.client("get", "bridge", "OutputRoute") == ["headphones"])
            #expect(try await daemon.playerctl("status") == "Playing")
            // Not restarted: the position went on from where it was.
            let after = try await daemon.position()
            #expect(after > before, "position \(before) s before the switch, \(after) s after")

            // An output the session does not list is refused, and nothing changes.
            let refused = try await daemon.client("call", "bridge", "SelectOutputRoute", "s:nowhere")
            #expect(
                refused == [
                    "error org.freedesktop.DBus.Error.InvalidArgs: No audio output \"nowhere\"; OutputRoutes lists the outputs."
                ])
            #expect(try await daemon.client("get", "bridge", "OutputRoute") == ["headphones"])
        }
    }

    @Test func aNewOutputIsAnnouncedAndTheChosenOneIsKeptAcrossARestart() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        // Indexed first, as DaemonFixture.with does: the daemon then starts with its library,
        // and play has something to play at once (a first scan on a busy machine may still run).
        let scan = try await DaemonFixture.scan(library)
        #expect(scan.succeeded, "\(scan)")
        try await PrivateSoundServer.with { server in
            try await PrivateBus.with { bus in
                let arguments = ["--audio-sink", "autoaudiosink"]
                var daemon = try await DaemonFixture.start(
                    on: bus, library: library, arguments: arguments, environment: server.clientVariables)
                try await daemon.waitForOutputs()
                let watcher = try await daemon.watch()
                defer { watcher.kill() }
                // Plugging in: a new sink appears on the server, and OutputRoutes says so.
                try await server.run(
                    "pactl", ["load-module", "module-null-sink", "sink_name=usb", "sink_properties=\"device.description='USB Speaker'\""]
                ).check()
                _ = try await watcher.waitForLine { $0.contains("changed bridge") && $0.contains("usb, USB Speaker") }
                #expect(try await daemon.client("call", "bridge", "SelectOutputRoute", "s:headphones") == ["ok"])
                try await daemon.stop()

                daemon = try await DaemonFixture.start(
                    on: bus, library: library, arguments: arguments, environment: server.clientVariables)
                // The choice shows at once, before the outputs are known.
                #expect(try await daemon.client("get", "bridge", "OutputRoute") == ["headphones"])
                try await daemon.waitForOutputs()
                _ = try await daemon.playerctl("play")
                let streams = try await server.streams().filter { $0.role == "music" }
                #expect(streams.map(\.sink) == ["headphones"], "\(streams)")
                try await daemon.stop()
            }
        }
    }

    /// Headphones unplugged while playing: the sound server moves the stream to another output
    /// and playback goes on; plugged in again, the daemon takes them again, as chosen.
    @Test func theChosenOutputGoingAwayKeepsPlaybackAndItsReturnIsTakenAgain() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await startPlaying(daemon)
            defer { watcher.kill() }
            #expect(try await daemon.client("call", "bridge", "SelectOutputRoute", "s:headphones") == ["ok"])
            let modules = try await server.run("pactl", ["list", "short", "modules"]).check().stdout
            let module = try #require(
                modules.split(separator: "\n").first { $0.contains("sink_name=headphones") }?.split(separator: "\t").first)

            try await server.run("pactl", ["unload-module", String(module)]).check()
            _ = try await watcher.waitForLine { $0.contains("changed bridge") && !$0.contains("headphones") && $0.contains("OutputRoutes=") }
            try await waitUntil(server) { streams in streams.contains { $0.role == "music" && $0.sink == "speakers" } }
            #expect(try await daemon.playerctl("status") == "Playing")

            try await server.run(
                "pactl", ["load-module", "module-null-sink", "sink_name=headphones", "sink_properties=\"device.description='Headphones'\""]
            ).check()
            try await waitUntil(server) { streams in streams.contains { $0.role == "music" && $0.sink == "headphones" } }
            #expect(try await daemon.client("get", "bridge", "OutputRoute") == ["headphones"])
            #expect(try await daemon.playerctl("status") == "Playing")
        }
    }

    @Test func theVolumeIsTheStreamsOnTheServerAndIsHeardAtOnce() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let meter = try await server.meter(["speakers"])
            defer { Task { await meter.stop() } }
            _ = try await daemon.playerctl("play")
            let full = try await meter.waitFor { $0.rms > -30 }
            var ours = try await server.streams().filter { $0.role == "music" }
            #expect(ours.map(\.volumeDecibels) == [0], "\(ours)")

            // A tenth is -20 dB, on the server's stream; heard well before the 2 s the output
            // keeps queued at the server would have played out at the old level.
            let asked = ContinuousClock.now
            _ = try await daemon.playerctl("volume", "0.1")
            let quieter = try await meter.waitFor(timeout: .seconds(1)) { $0.rms < full.rms - 15 }
            print("volume 1 → 0.1: \(full.rms) → \(quieter.rms) dBFS, heard after \(ContinuousClock.now - asked)")
            ours = try await server.streams().filter { $0.role == "music" }
            #expect(ours.count == 1 && abs((ours.first?.volumeDecibels ?? 0) + 20) < 0.1, "\(ours)")
            #expect(try await daemon.playerctl("volume") == "0.100000")

            // A track change makes a new stream (autoaudiosink makes a new pulsesink at each load):
            // it starts at the chosen volume.
            _ = try await daemon.playerctl("next")
            try await waitUntil(server) { streams in
                streams.contains { $0.role == "music" && !$0.isCorked && abs(($0.volumeDecibels ?? 0) + 20) < 0.1 }
            }
            _ = try await meter.waitFor { $0.rms < full.rms - 15 && $0.rms > -70 }
        }
    }

    @Test func aMixersVolumeForTheStreamBecomesThePlayersAndOutlivesTheTrack() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await startPlaying(daemon)
            defer { watcher.kill() }
            let ours = try #require(try await server.streams().first { $0.role == "music" })
            let index = try #require(ours.index)
            // The desktop's per-application volume: -12 dB is a linear 0.251.
            try await server.run("pactl", ["set-sink-input-volume", String(index), "-12dB"]).check()
            let shown = try await watcher.waitForLine { $0.contains("changed player") && $0.contains("Volume=0.25") }
            #expect(shown.contains("Volume=0.251"), "\(shown)")
            #expect(try await daemon.playerctl("volume").hasPrefix("0.251"))

            // The next track's stream keeps it, rather than the player's old volume.
            _ = try await daemon.playerctl("next")
            try await waitUntil(server) { streams in
                streams.contains { $0.role == "music" && $0.index != index && abs(($0.volumeDecibels ?? 0) + 12) < 0.1 }
            }
            // And the player's own changes go on from there: a burst of them (a scrolled volume
            // slider) ends at the last one, however the server's reports of the earlier ones
            // interleave.
            let levels = (2...9).map { Double($0) / 10 }
            let replies = try await daemon.client(levels.flatMap { ["set", "player", "Volume", "d:\($0)"] })
            #expect(replies == Array(repeating: "ok", count: levels.count), "\(replies)")
            try await waitUntil(server) { streams in
                streams.contains { $0.role == "music" && abs(($0.volumeDecibels ?? 0) + 0.92) < 0.1 }
            }
            #expect(try await daemon.playerctl("volume") == "0.900000")
        }
    }

    @Test func replayGainEvensOutTheLevelByTrackOrAlbumAndIsKept() async throws {
        let library = try await GeneratedLibrary.make(formats: [.ogg])
        defer { library.remove() }
        // The tone plays at -17 dBFS; its tags ask for -6 dB (track) and -12 dB (album).
        let file = library.path + "/" + library.tracks[0].path
        try AudioTags.write(
            [
                ("TITLE", library.tracks[0].title), ("ARTIST", "Artist"), ("ALBUM", "Generated"),
                ("REPLAYGAIN_TRACK_GAIN", "-6.00 dB"), ("REPLAYGAIN_TRACK_PEAK", "0.2"),
                ("REPLAYGAIN_ALBUM_GAIN", "-12.00 dB"), ("REPLAYGAIN_ALBUM_PEAK", "0.2"),
            ], to: file)
        try await PrivateSoundServer.with { server in
            try await PrivateBus.with { bus in
                let arguments = ["--audio-sink", "autoaudiosink"]
                var daemon = try await DaemonFixture.start(
                    on: bus, library: library, arguments: arguments + ["--replay-gain", "off"],
                    environment: server.clientVariables)
                let meter = try await server.meter(["speakers"])
                defer { Task { await meter.stop() } }
                #expect(try await daemon.client("get", "bridge", "CanSetReplayGain", "get", "bridge", "ReplayGain") == ["true", "off"])
                _ = try await daemon.playerctl("play")
                let off = try await meter.waitFor { abs($0.rms + 17) < 1.5 }
                // Track and album gains apply while playing (after what the output had queued).
                let toTrack = try await daemon.client("set", "bridge", "ReplayGain", "s:track")
                #expect(toTrack == ["ok"], "\(toTrack)\n\(daemon.process.capturedStdout)")
                let track = try await meter.waitFor { abs($0.rms + 23) < 1.5 }
                #expect(try await daemon.client("set", "bridge", "ReplayGain", "s:album") == ["ok"])
                let album = try await meter.waitFor { abs($0.rms + 29) < 1.5 }
                print("ReplayGain levels: off \(off.rms), track \(track.rms), album \(album.rms) dBFS")
                let refused = try await daemon.client("set", "bridge", "ReplayGain", "s:loud")
                #expect(
                    refused == [
                        "error org.freedesktop.DBus.Error.InvalidArgs: Invalid ReplayGain mode \"loud\": off, track or album."
                    ])
                try await daemon.stop()

                // Kept: the next start plays at the album gain, without the option.
                daemon = try await DaemonFixture.start(
                    on: bus, library: library, arguments: arguments, environment: server.clientVariables)
                #expect(try await daemon.client("get", "bridge", "ReplayGain") == ["album"])
                _ = try await daemon.playerctl("play")
                _ = try await meter.waitFor { abs($0.rms + 29) < 1.5 }
                #expect(try await daemon.client("set", "bridge", "ReplayGain", "s:off") == ["ok"])
                _ = try await meter.waitFor { abs($0.rms + 17) < 1.5 }
                try await daemon.stop()

                // The option replaces the saved mode.
                daemon = try await DaemonFixture.start(
                    on: bus, library: library, arguments: arguments + ["--replay-gain", "track"],
                    environment: server.clientVariables)
                #expect(try await daemon.client("get", "bridge", "ReplayGain") == ["track"])
                try await daemon.stop()
            }
        }
    }

    /// Polls the server's stream list (a state with no event to wait on) until `condition`.
    private func waitUntil(
        _ server: PrivateSoundServer, timeout: Duration = .seconds(10), _ condition: ([PlaybackStream]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(try await server.streams()) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the sound server's streams never matched: \(try await server.streams())")
    }
}

extension DaemonFixture {
    /// Waits until the daemon lists the sound server's outputs (it follows them once ready).
    func waitForOutputs() async throws {
        _ = try await process.waitForLine { $0.contains("audio outputs:") }
    }

    /// The player's position in seconds, as `playerctl position` prints it.
    func position() async throws -> Double {
        try #require(Double(try await playerctl("position")))
    }
}
