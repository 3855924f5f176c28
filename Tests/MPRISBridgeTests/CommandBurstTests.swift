import DBusTestSupport
import Foundation
import ProcessTestSupport
import Testing

/// Several clients at once sending bursts of PlayPause, Next, GoTo and AddTrack, as media keys,
/// desktop shells and phones do: a command carried out, or superseded by a later one, answers
/// success, and the player ends where the last command asked.
@Suite(.timeLimit(.minutes(3))) struct CommandBurstTests {
    @Test func burstsFromSeveralClientsAnswerSuccessAndEndAsTheLastCommandAsked() async throws {
        let library = try await GeneratedLibrary.makeWide(count: 40, seconds: 120)
        try await DaemonFixture.with(library: library) { daemon in
            let clients = 4
            let uri = daemon.library.tracks[0].url(in: daemon.library.path)
            let output = try await daemon.bus.run(
                PrivateBus.systemPython,
                [pythonScript("command_burst.py"), DaemonFixture.busName, "\(clients)", uri], timeout: .seconds(150))
            #expect(output.succeeded, "\(output)")
            let lines = Dictionary(
                output.stdout.split(separator: "\n").map { line in
                    (String(line.prefix { $0 != " " }), String(line.drop { $0 != " " }.dropFirst()))
                }, uniquingKeysWith: { first, _ in first })
            print(output.stdout)
            #expect(lines["start"] == "replies= status=Stopped current=0", "\(output)")
            // Each client: 10 commands ending in GoTo(the 21st entry), which plays.
            #expect(lines["mixed"] == "replies=ok:\(10 * clients) status=Playing current=20", "\(output)")
            // An even count of presses leaves it playing; an odd one pauses.
            #expect(lines["even-play-pause"] == "replies=ok:\(4 * clients) status=Playing current=20", "\(output)")
            let odd = clients % 2 == 0 ? clients - 1 : clients
            #expect(lines["odd-play-pause"] == "replies=ok:\(odd) status=Paused current=20", "\(output)")
            // Every Next moves on one entry, paused.
            #expect(lines["next"] == "replies=ok:\(3 * clients) status=Paused current=\(20 + 3 * clients)", "\(output)")
            // Each client's two AddTrack added an entry each, where they asked.
            #expect(lines["entries"] == "inserted=\(clients) appended=\(clients)", "\(output)")
        }
    }
}
