import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import SoundServerTestSupport
import Testing

/// The daemon inside a real audio session: a PulseAudio server of the test's own, with null
/// sinks (no sound hardware), role corking and meters on its outputs.
@Suite struct AudioSessionTests {
    /// Runs `body` with a sound server and a daemon playing through it (autoaudiosink, as a
    /// user's daemon does), then stops both.
    private func withDaemonOnSoundServer(
        arguments: [String] = [], _ body: (DaemonFixture, PrivateSoundServer) async throws -> Void
    ) async throws {
        let server = try await PrivateSoundServer.start()
        do {
            try await DaemonFixture.with(
                arguments: ["--audio-sink", "autoaudiosink"] + arguments, environment: server.clientVariables
            ) { daemon in try await body(daemon, server) }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func aCallPausesPlaybackAsInterruptedAndItsEndResumesIt() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            _ = try await daemon.playerctl("play")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
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

            call.kill()
            _ = await call.waitForExit()
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["false"])
            // It goes on from where the call stopped it.
            let resumedAt = try await daemon.position()
            #expect(resumedAt >= heldAt && resumedAt < heldAt + 2, "paused at \(heldAt) s, resumed at \(resumedAt) s")
            let ours = try await server.streams().filter { $0.role == "music" }
            #expect(ours.map(\.isCorked) == [false])
        }
    }

    @Test func aPauseDuringACallStandsWhenTheCallEnds() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            _ = try await daemon.playerctl("play")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
            let call = try server.startCall()
            _ = try await watcher.waitForLine { $0.contains("changed bridge Interrupted=true") }
            _ = try await daemon.playerctl("pause")
            _ = try await watcher.waitForLine { $0.contains("changed bridge Interrupted=false") }
            call.kill()
            _ = await call.waitForExit()
            try await waitUntil(server) { streams in !streams.contains { $0.application == "call" } }
            try await expectNoResume(watcher)
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["false"])
        }
    }

    @Test func aPausedPlayerIsNotStartedByACall() async throws {
        try await withDaemonOnSoundServer { daemon, server in
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            _ = try await daemon.playerctl("play")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Playing") }
            _ = try await daemon.playerctl("pause")
            _ = try await watcher.waitForLine { $0.contains("PlaybackStatus=Paused") }
            let call = try server.startCall()
            try await waitUntil(server) { streams in streams.contains { $0.application == "call" } }
            call.kill()
            _ = await call.waitForExit()
            try await waitUntil(server) { streams in !streams.contains { $0.application == "call" } }
            try await expectNoResume(watcher)
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.client("get", "bridge", "Interrupted") == ["false"])
        }
    }

    /// The end of a call reaches the daemon as an uncork request, which changes nothing visible
    /// when it is right to ignore it: so a wrong resume is watched for, for a second (the
    /// request comes within milliseconds of the call's stream going away).
    private func expectNoResume(_ watcher: ChildProcess) async throws {
        do {
            let line = try await watcher.waitForLine(timeout: .seconds(1)) { $0.contains("PlaybackStatus=Playing") }
            Issue.record("the player resumed after the call: \(line)")
        } catch ChildProcessError.timedOut {
            // Nothing resumed.
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
    /// The player's position in seconds, as `playerctl position` prints it.
    func position() async throws -> Double {
        try #require(Double(try await playerctl("position")))
    }
}
