import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The daemon stopping, as systemd stops it: what it saves on the way out, and how long it may
/// take when something it talks to does not answer.
@Suite(.timeLimit(.minutes(2))) struct DaemonShutdownTests {
    /// SIGTERM while a track plays: the position it had reached (past anything saved while it
    /// played) and the queue are written on the way out, and the daemon exits cleanly well
    /// within its shutdown deadline (5 s).
    @Test func aSIGTERMWhilePlayingSavesWhereItWasAndExitsCleanly() async throws {
        let library = try await GeneratedLibrary.make(seconds: 30)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            defer { daemon.process.kill() }
            _ = try await daemon.playerctl("play")
            _ = try await daemon.playerctl("next")
            _ = try await daemon.playerctl("position", "2")
            // The seek was saved; playing on is saved only every 15 s, or on the way out.
            _ = try await SavedState.wait(in: daemon.stateDirectory) { $0.currentIdentifier == library.tracks[1].path }
            // Played on to 4 s (a 20 s bound, for a clear failure if it never gets there).
            let playing = ContinuousClock.now
            var position = 0.0
            while position < 4 {
                try #require(ContinuousClock.now - playing < .seconds(20), "stuck at \(position) s")
                try await Task.sleep(for: .milliseconds(100))
                position = try #require(Double(try await daemon.playerctl("position")))
            }
            #expect(try #require(SavedState.read(in: daemon.stateDirectory)).positionMilliseconds < 4_000)
            let stopping = ContinuousClock.now
            kill(daemon.process.pid, SIGTERM)
            let status = try await daemon.process.waitForExit(timeout: .seconds(10))
            let took = ContinuousClock.now - stopping
            #expect(status == 0, "\(daemon.process.capturedStdout)")
            #expect(took < .seconds(5), "stopping took \(took)")
            let saved = try #require(SavedState.read(in: daemon.stateDirectory))
            #expect(saved.currentIdentifier == library.tracks[1].path)
            #expect(saved.positionMilliseconds >= 4_000 && saved.positionMilliseconds < 30_000, "\(saved)")
            #expect(saved.entryCount == 3, "\(saved)")
        }
    }

    /// A message bus that stops answering while the daemon stops (here: stopped with SIGSTOP)
    /// holds up the shutdown no longer than its deadline: the state is saved first, releasing the
    /// bus names waits 5 s at most, and the exit status says the shutdown was cut short.
    @Test func aBusThatStopsAnsweringHoldsUpTheShutdownNoLongerThanItsDeadline() async throws {
        let library = try await GeneratedLibrary.make(seconds: 30)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            defer { daemon.process.kill() }
            _ = try await daemon.playerctl("play")
            _ = try await daemon.playerctl("position", "3")
            _ = try await daemon.playerctl("pause")
            _ = try await SavedState.wait(in: daemon.stateDirectory) { $0.positionMilliseconds >= 3_000 }
            kill(bus.daemonPID, SIGSTOP)
            defer { kill(bus.daemonPID, SIGCONT) }
            let stopping = ContinuousClock.now
            kill(daemon.process.pid, SIGTERM)
            let status = try await daemon.process.waitForExit(timeout: .seconds(15))
            let took = ContinuousClock.now - stopping
            let output = daemon.process.capturedStdout
            #expect(status == 1, "\(output)")
            // The deadline (5 s), then at most the group's 2 s for cancelled services to end, and
            // a margin for a loaded machine (8.5 s seen on CI); without the deadline, releasing the
            // name would wait for D-Bus's 25 s reply timeout.
            #expect(took >= .seconds(5) && took < .seconds(10), "stopping took \(took)")
            #expect(output.contains("shutting down took more than 5 s (releasing"), "\(output)")
            let saved = try #require(SavedState.read(in: daemon.stateDirectory))
            #expect(saved.currentIdentifier == library.tracks[0].path && saved.positionMilliseconds >= 3_000, "\(saved)")
        }
    }
}
