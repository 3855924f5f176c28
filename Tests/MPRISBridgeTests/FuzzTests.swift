import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import SoundServerTestSupport
import TestMedia
import Testing

/// The project's fuzzer (`Python/fuzz_daemon.py`, `Scripts/fuzz` for long runs) against the daemon:
/// a short seeded pass of malformed and hostile calls derived from both bus names'
/// introspection. The daemon must not crash, must answer every call within 5 s and every
/// liveness check between batches, and must still stop cleanly afterwards.
@Suite(.timeLimit(.minutes(3))) struct FuzzTests {
    @Test func aSeededPassOfHostileCallsLeavesTheDaemonAnswering() async throws {
        let library = try await Self.libraryOfEveryKind()
        try await DaemonFixture.with(library: library) { daemon in
            let summary = try await Self.fuzz(daemon, calls: 3000, seed: 1)
            // The fuzzer reached every kind of node the library has.
            let kinds = summary["node_kinds"] as? [String: Int] ?? [:]
            for kind in ["root", "tab", "container", "music", "art"] {
                #expect(kinds[kind, default: 0] > 0, "no \(kind) node sampled: \(kinds)")
            }
            #expect(try await daemon.playerctl("status") != "")
        }
    }

    /// The MPD face's fuzzer (`Python/fuzz_mpd.py`): hostile protocol lines over the daemon's MPD
    /// socket, then 200 clients parked in idle at once, all woken by one change. The daemon must
    /// not crash, must answer each line with OK or one ACK line (or close the connection on a
    /// line over its bound) within 5 s, must answer a fresh client after each batch, and must
    /// still stop cleanly. 200 idle clients: the daemon takes 256 at once (MPDLimits.maximumClients);
    /// Scripts/fuzz --mpd parks 1000 and sees the ones over the limit refused.
    @Test func aSeededMPDPassLeavesTheDaemonAnswering() async throws {
        let library = try await Self.libraryOfEveryKind()
        try await DaemonFixture.with(library: library) { daemon in
            let report = daemon.library.folder.path + "/fuzz-mpd.json"
            let output = try await ChildProcess.run(
                PrivateBus.systemPython,
                [pythonScript("fuzz_mpd.py"), "--socket", daemon.mpdSocket, "--pid", "\(daemon.process.pid)",
                 "--requests", "2000", "--seed", "1", "--idle-clients", "200",
                 // Growth over the second half of the requests (under 200 KiB seen); a bound against a runaway.
                 "--max-rss-growth-kb", "16384", "--json", report],
                timeout: .seconds(150))
            print(output.stdout, output.stderr)
            #expect(output.succeeded, "\(output)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: report))) as? [String: Any])
            #expect(summary["requests"] as? Int == 2000)
            // Every kind of hostile input was sent.
            let kinds = summary["kinds"] as? [String: Int] ?? [:]
            for kind in [
                "command", "unknown", "utf8", "filter", "binary", "long", "idle-gone", "noidle", "command-pipelined",
                "list-at-bound", "list-over-bound",
            ] {
                #expect(kinds[kind, default: 0] > 0, "no \(kind) request sent: \(kinds)")
            }
            #expect(summary["crashes"] as? Int == 0)
            if summary["crashes"] as? Int != 0 {
                print("the daemon's last output:\n" + String(daemon.process.capturedStdout.suffix(8_000)))
            }
            #expect(summary["failed_liveness_checks"] as? Int == 0)
            #expect((summary["slowest_reply_seconds"] as? Double ?? 99) < 5, "\(summary["slowest_request"] ?? "")")
            let findings = summary["findings"] as? [[String: Any]] ?? [["unreadable": summary["findings"] ?? "none"]]
            #expect(findings.isEmpty, "\(findings.map { "\($0["kind"] ?? ""): \($0["detail"] ?? "")\n\($0["reproducer"] ?? "")" })")
            // Every idle client was taken and woken, and a fresh one answered at once after.
            #expect(summary["idle_refused_after"] == nil, "\(summary["idle_refusal"] ?? "")")
            #expect(summary["idle_clients"] as? Int == 200)
            #expect(summary["idle_woken"] as? Int == 200)
            #expect((summary["fresh_client_seconds"] as? Double ?? 99) < 5)
            print("MPD fuzz: replies \(summary["replies"] ?? ""), slowest \(summary["slowest_reply_seconds"] ?? "") s, RSS growth \(summary["rss_growth_kb"] ?? "") KiB")
            #expect(try await daemon.playerctl("status") != "")
            #expect(try await daemon.mpc("status").contains("volume:"))
        }
    }

    /// A library with every kind of node the fuzzers can reach: tracks, a cover (an `__art`
    /// object), a playlist, and what a real folder holds that is not a track (text named like
    /// audio, a link loop).
    static func libraryOfEveryKind() async throws -> GeneratedLibrary {
        let library = try await GeneratedLibrary.make(seconds: 5)
        try await TestMedia.generatePicture(at: library.path + "/Artist/Generated/cover.png")
        try "\(library.tracks[0].path)\n\(library.tracks[2].path)\n".write(
            toFile: library.path + "/Mix.m3u", atomically: true, encoding: .utf8)
        try "not audio at all".write(toFile: library.path + "/notes.mp3", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: library.path + "/loop", withDestinationPath: "..")
        return library
    }

    /// Runs a seeded pass of `calls` hostile calls against `daemon` and checks what every pass
    /// must hold; returns the fuzzer's summary.
    static func fuzz(_ daemon: DaemonFixture, calls: Int, seed: Int) async throws -> [String: Any] {
        let report = daemon.library.folder.path + "/fuzz.json"
        let output = try await daemon.bus.run(
            PrivateBus.systemPython,
            [pythonScript("fuzz_daemon.py"), "--pid", "\(daemon.process.pid)", "--calls", "\(calls)", "--seed", "\(seed)",
             // Growth is the long run's figure (Scripts/fuzz); here a bound against a runaway.
             "--max-rss-growth-kb", "65536", "--json", report],
            timeout: .seconds(150))
        print(output.stdout)
        #expect(output.succeeded, "\(output)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(filePath: report))) as? [String: Any])
        #expect(summary["calls"] as? Int == calls)
        #expect(summary["crashes"] as? Int == 0, "\(summary["distinct_crashes"] ?? "")")
        if summary["crashes"] as? Int != 0 {
            // What the daemon said last (its log and standard error), to tell a crash's cause.
            print("the daemon's last output:\n" + String(daemon.process.capturedStdout.suffix(8_000)))
        }
        #expect(summary["timeouts"] as? Int == 0)
        #expect(summary["failed_liveness_checks"] as? Int == 0)
        #expect((summary["slowest_reply_seconds"] as? Double ?? 99) < 5, "\(summary["slowest_call"] ?? "")")
        // Promises broken without a crash: a wrong signature or a read-only property write
        // accepted, an error message over 1 KiB, a system file opened or named, an object at a
        // path that names no node. Each comes with the call that showed it.
        let findings = summary["findings"] as? [[String: Any]] ?? [["unreadable": summary["findings"] ?? "none"]]
        #expect(findings.isEmpty, "\(findings.map { "\($0["kind"] ?? ""): \($0["detail"] ?? "")\n\($0["reproducer"] ?? "")" })")
        return summary
    }

    /// The same pass against a daemon in a real audio session (a private PulseAudio): its output
    /// can be chosen there, so the route and ReplayGain handlers get the hostile calls too, and
    /// the engine plays to a real sink while they come.
    @Test func aSeededPassAgainstADaemonInAnAudioSessionLeavesItAnswering() async throws {
        try await PrivateSoundServer.with { server in
            try await DaemonFixture.with(
                arguments: ["--audio-sink", "autoaudiosink"], environment: server.clientVariables
            ) { daemon in
                try await daemon.waitForOutputs()
                #expect(try await daemon.client("get", "bridge", "CanSelectOutputRoute") == ["true"])
                let summary = try await Self.fuzz(daemon, calls: 1500, seed: 3)
                let replies = summary["replies"] as? [String: Int] ?? [:]
                print("replies by name: \(replies)")
                // Still following the server, and still choosing.
                let routes = try await daemon.client("get", "bridge", "OutputRoutes")
                #expect(routes.first?.contains("(headphones, Headphones)") == true, "\(routes)")
                #expect(try await daemon.client("call", "bridge", "SelectOutputRoute", "s:headphones") == ["ok"])
                #expect(try await daemon.playerctl("status") != "")
            }
        }
    }

    /// The same pass over a library of 520 albums of one track each: every tab holds more rows
    /// than the daemon copies, so the fuzzer's calls reach the rows of containers served page
    /// by page (tracks, and albums, artists and folders opened below them) and keys made up
    /// below them, which the small library never shows.
    /// The tree keeps 100 rows (`--tree-cache-rows`), so the calls also land on containers it
    /// keeps forgetting and reading again.
    @Test func aSeededPassOverContainersServedPageByPageLeavesTheDaemonAnswering() async throws {
        let library = try await GeneratedLibrary.makeWide(count: 520)
        try await DaemonFixture.with(library: library, arguments: ["--tree-cache-rows", "100"]) { daemon in
            let summary = try await Self.fuzz(daemon, calls: 2000, seed: 2)
            let kinds = summary["node_kinds"] as? [String: Int] ?? [:]
            for kind in ["root", "tab", "container", "music"] {
                #expect(kinds[kind, default: 0] > 0, "no \(kind) node sampled: \(kinds)")
            }
            // Every album is still there, its last page read from the index (once the content
            // limits the fuzzer may have set are lifted).
            let lifted = try await daemon.bus.run(
                "gdbus",
                ["call", "--session", "--dest", "org.gnome.UPnP.MediaServer2.mprisbridge", "--object-path",
                 "/org/gnome/UPnP/MediaServer2/mprisbridge", "--method", "org.mprisbridge.MediaRoot1.SetContentLimits",
                 "false", "0", "0"])
            #expect(lifted.succeeded, "\(lifted)")
            let lastPage = try await daemon.bus.run(
                "gdbus",
                ["call", "--session", "--dest", "org.gnome.UPnP.MediaServer2.mprisbridge", "--object-path",
                 "/org/gnome/UPnP/MediaServer2/mprisbridge/albums", "--method",
                 "org.gnome.UPnP.MediaContainer2.ListChildren", "500", "100", "['DisplayName']"])
            #expect(lastPage.stdout.components(separatedBy: "'DisplayName'").count - 1 == 20, "\(lastPage)")
            #expect(lastPage.stdout.contains("Album 0519"), "\(lastPage)")
            #expect(try await daemon.playerctl("status") != "")
        }
    }

    /// Found by the fuzzer: cycling the rate while changing tracks crashed the daemon in
    /// GStreamer 1.22's scaletempo (a copy from the buffer it freed when it last stopped).
    @Test func rateChangesAcrossTrackChangesKeepTheDaemonUp() async throws {
        let library = try await GeneratedLibrary.make(seconds: 5)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            // Stopped by SIGKILL whatever happened: a crashed daemon has no clean exit to check.
            defer { daemon.process.kill() }
            let script = """
                import dbus, sys
                player = dbus.SessionBus().get_object(sys.argv[1], "/org/mpris/MediaPlayer2")
                transport = dbus.Interface(player, "org.mpris.MediaPlayer2.Player")
                rates = dbus.Interface(player, "org.mprisbridge.Player1")
                transport.Play()
                try:
                    for i in range(400):
                        rates.CycleRate()
                        if i % 7 == 0:
                            transport.Next()
                    print("survived")
                except dbus.DBusException as error:
                    print(error.get_dbus_name())
                """
            let output = try await bus.python(script, [DaemonFixture.busName])
            #expect(output.stdout == "survived\n", "\(output)")
            #expect(!daemon.process.capturedStdout.contains("crashed"))
        }
    }
}
