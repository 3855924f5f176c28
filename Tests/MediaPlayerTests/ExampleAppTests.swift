import DBusTestSupport
import Foundation
import ProcessTestSupport
import Testing

/// The example iOS app (`Examples/iOSAudioApp`, MediaPlayer code as on iOS), started as a user
/// starts it, then browsed and played as a head unit does and controlled with playerctl.
/// Its own process and its own bus: it shares nothing with the other suites.
@Suite struct ExampleAppTests {
    static let executable = buildProductsFolder + "/ios-audio-app-example"
    static let playerName = "ios_audio_app_example"
    static let mprisName = "org.mpris.MediaPlayer2.\(playerName)"
    static let treeName = "org.gnome.UPnP.MediaServer2.\(playerName)"
    static let treeRoot = "/org/gnome/UPnP/MediaServer2/\(playerName)"

    /// The app on a private bus, its artwork cache in a folder of the test's.
    struct RunningApp {
        let bus: PrivateBus
        let cache: TemporaryDirectory
        /// The app's process id.
        let pid: Int32

        func playerctl(_ arguments: String...) async throws -> String {
            let output = try await bus.run("playerctl", ["-p", ExampleAppTests.playerName] + arguments)
            #expect(output.status == 0, "playerctl \(arguments): \(output.stderr)")
            return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// A head unit's call on the app's tree (Python/content_client.py).
        func tree(_ arguments: String...) async throws -> [String] {
            let output = try await ChildProcess.run(
                PrivateBus.systemPython,
                [pythonScript("content_client.py"), ExampleAppTests.treeName, ExampleAppTests.treeRoot] + arguments,
                environment: bus.pythonEnvironment)
            #expect(output.status == 0, "content_client \(arguments): \(output.stderr)")
            return output.stdout.split(separator: "\n").map(String.init)
        }

        func player(_ method: String, _ arguments: String...) async throws -> String {
            let output = try await bus.run(
                "gdbus",
                ["call", "--session", "--dest", ExampleAppTests.mprisName, "--object-path", "/org/mpris/MediaPlayer2",
                    "--method", method] + arguments)
            #expect(output.status == 0, "\(method) \(arguments): \(output.stderr)")
            return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The Player's `Position`, in seconds.
        func position() async throws -> Double {
            Double(try await playerctl("position")) ?? .nan
        }
    }

    /// Starts the app, waits for both its names, runs `body`, and stops the app and the bus.
    func withApp(_ body: (RunningApp) async throws -> Void) async throws {
        try await PrivateBus.with { bus in
            let cache = try TemporaryDirectory(prefix: "ios-audio-app-cache")
            defer { cache.remove() }
            var environment = bus.environment
            environment["XDG_CACHE_HOME"] = cache.path
            let app = try ChildProcess.spawn(Self.executable, [], environment: environment)
            defer { app.kill() }
            for name in [Self.mprisName, Self.treeName] {
                let waited = try await bus.run("gdbus", ["wait", "--session", "--timeout", "20", name])
                try #require(waited.status == 0, "\(name) never appeared: \(app.capturedStderr)")
            }
            try await body(RunningApp(bus: bus, cache: cache, pid: app.pid))
            app.kill()
            _ = await app.waitForExit()
        }
    }

    @Test func theAppIsBrowsedPlayedFromTheTreeAndControlledWithPlayerctl() async throws {
        try await withApp { app in
            // Launched with its first show loaded and paused: the rate, 0, says paused.
            #expect(try await app.playerctl("status") == "Paused")
            #expect(try await app.playerctl("metadata", "title") == "Swift Over Coffee #1")
            #expect(try await app.player("org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2", "Identity")
                .contains("ios-audio-app-example"))

            // The data source's tree, as a head unit walks it.
            let rows = try await app.tree("walk")
            #expect(rows.last == "problems 0")
            #expect(rows.count == 21, "\(rows)")
            #expect(rows.contains("tab_2epodcasts|Podcasts||Container|-1"))
            #expect(rows.contains("tab_2emusic/album_2etones|Test Tones|Oscillator|Playable,Container|-1"))
            let episode = "tab_2epodcasts/show_2elinux/show_2elinux_2e2"
            #expect(rows.contains("\(episode)|Linux Unplugged #2|Jupiter Broadcasting|Playable,DisplaysPlaybackProgress|0"))

            // Played from the tree: the delegate starts it, the now-playing info shows it.
            #expect(try await app.tree("play", episode) == ["played"])
            #expect(try await app.playerctl("status") == "Playing")
            #expect(try await app.playerctl("metadata", "title") == "Linux Unplugged #2")
            #expect(try await app.playerctl("metadata", "artist") == "Jupiter Broadcasting")
            #expect(try await app.playerctl("metadata", "album") == "Linux Unplugged")
            #expect(try await app.playerctl("metadata", "mpris:length") == "3900000000")
            let art = try await app.playerctl("metadata", "mpris:artUrl")
            let artFile = try #require(URL(string: art), "\(art)")
            #expect(artFile.path.hasPrefix(app.cache.path))
            let shipped = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/Examples/iOSAudioApp/Artwork.png"))
            #expect(FileManager.default.contents(atPath: artFile.path) == shipped, "the app's artwork, as it gave it")
            let marked = try await app.tree("walk").filter { $0.contains("NowPlaying") }.map { $0.split(separator: "|")[0] }
            #expect(marked == ["tab_2epodcasts/show_2elinux", Substring(episode)])

            // Paused: the app says so with rate 0, and the position stands still.
            _ = try await app.playerctl("pause")
            #expect(try await app.playerctl("status") == "Paused")
            let stopped = try await app.position()
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await app.position() == stopped)

            _ = try await app.playerctl("next")
            #expect(try await app.playerctl("metadata", "title") == "Linux Unplugged #3")
            _ = try await app.playerctl("position", "100")
            #expect(abs(try await app.position() - 100) < 0.001)

            // Rate 1.5, then playing: the position advances at one and a half times the clock.
            _ = try await app.player(
                "org.freedesktop.DBus.Properties.Set", "org.mpris.MediaPlayer2.Player", "Rate", "<1.5>")
            #expect(try await app.player("org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", "Rate") == "(<1.5>,)")
            _ = try await app.playerctl("play")
            #expect(try await app.playerctl("status") == "Playing")
            let clock = ContinuousClock()
            let before = clock.now
            let first = try await app.position()
            let afterFirst = clock.now
            try await Task.sleep(for: .seconds(1))
            let beforeSecond = clock.now
            let second = try await app.position()
            let after = clock.now
            let shortest = (beforeSecond - afterFirst) / .seconds(1)
            let longest = (after - before) / .seconds(1)
            #expect(second - first >= 1.5 * shortest - 0.001 && second - first <= 1.5 * longest + 0.001, "\(first) → \(second)")

            _ = try await app.playerctl("loop", "Playlist")
            #expect(try await app.playerctl("loop") == "Playlist")
            _ = try await app.playerctl("shuffle", "On")
            #expect(try await app.playerctl("shuffle") == "On")

            // A pick the delegate refuses reaches the head unit as its error.
            let refused = try await app.tree("play", "tab_2emusic")
            #expect(refused.first?.hasPrefix("error ") == true, "\(refused)")
        }
    }
    /// The project's fuzzer (the daemon's, `Tests/MPRISBridgeTests/Python/fuzz_daemon.py`) against
    /// the app: hostile calls derived from both its names' introspection reach MPRIS, the tree
    /// and through them the app's handlers, data source and delegate on its main queue. The app
    /// must not crash, answer every call within 5 s, and break no promise of the contract.
    @Test func aSeededPassOfHostileCallsLeavesTheAppAnswering() async throws {
        try await withApp { app in
            let report = app.cache.path + "/fuzz.json"
            let output = try await ChildProcess.run(
                PrivateBus.systemPython,
                [repositoryRoot + "/Tests/MPRISBridgeTests/Python/fuzz_daemon.py", "--pid", "\(app.pid)",
                    "--name", Self.playerName, "--calls", "2000", "--seed", "5", "--max-rss-growth-kb", "65536",
                    "--json", report],
                environment: app.bus.pythonEnvironment, timeout: .seconds(150))
            #expect(output.status == 0, "\(output.stdout)\n\(output.stderr)")
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
            #expect(summary["calls"] as? Int == 2000)
            #expect(summary["crashes"] as? Int == 0)
            #expect(summary["timeouts"] as? Int == 0)
            #expect(summary["failed_liveness_checks"] as? Int == 0)
            let findings = summary["findings"] as? [[String: Any]] ?? [["unreadable": summary["findings"] ?? "none"]]
            #expect(findings.isEmpty, "\(findings)")
            // Still the app it was: its tree walks, and it plays.
            #expect(try await app.tree("walk").last == "problems 0")
            #expect(try await app.playerctl("status") != "")
        }
    }
}
