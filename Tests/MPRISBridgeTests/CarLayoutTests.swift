import AudioTags
import DBus
import DBusTestSupport
import Foundation
import ProcessTestSupport
import Testing

/// The daemon with `--tree-layout car`, browsed by a car that keeps Android Automotive's
/// rules: at most four tabs, and while driving 21 rows per list, three levels and strings of
/// at most 120 characters.
@Suite(.timeLimit(.minutes(2))) struct CarLayoutTests {
    /// What `car_client.py` saw.
    struct CarView: Decodable {
        var tabs: [String]
        var recent: [String]?
        var longestList: Int
        var longestText: [Text]
        var deepest: Int
        var styles: [String: [String]]
        var trackHints: [String]

        enum Text: Decodable {
            case count(Int), text(String)
            init(from decoder: any Decoder) throws {
                let value = try decoder.singleValueContainer()
                if let count = try? value.decode(Int.self) { self = .count(count) } else { self = .text(try value.decode(String.self)) }
            }
        }

        var longestTextCount: Int { if case .count(let count) = longestText[0] { count } else { -1 } }
        var longestTextValue: String { if case .text(let text) = longestText[1] { text } else { "" } }
    }

    static func browse(_ daemon: DaemonFixture, driving: Bool) async throws -> CarView {
        let output = try await daemon.bus.run(
            PrivateBus.systemPython,
            [pythonScript("car_client.py"), MediaTreeDaemonTests.treeName, MediaTreeDaemonTests.root, driving ? "drive" : "park"])
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        return try JSONDecoder().decode(CarView.self, from: Data(output.stdout.utf8))
    }

    @Test func aCarSeesFourTabsAndWhileDriving21RowsThreeLevelsAnd120Characters() async throws {
        // 30 albums, each of one track, by 30 artists: more rows than a car may show.
        let library = try await GeneratedLibrary.makeWide(count: 30, seconds: 2)
        let longTitle = "A Very Long Song Title That Goes On " + String(repeating: "and On ", count: 30)
        let longAlbum = "An Album Whose Name Is Far Longer Than Any Car Screen " + String(repeating: "Allows ", count: 20)
        try AudioTags.write(
            [("TITLE", longTitle), ("ARTIST", "Artist 0000"), ("ALBUM", longAlbum), ("TRACKNUMBER", "1")],
            to: library.path + "/" + library.tracks[0].path)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let daemon = try await DaemonFixture.start(on: bus, library: library, arguments: ["--tree-layout", "car"])
            defer { daemon.process.kill() }
            let parked = try await Self.browse(daemon, driving: false)
            #expect(parked.tabs == ["Recent", "Artists", "Albums", "Playlists"])
            #expect(parked.recent == [])
            // Parked, everything is shown whole.
            #expect(parked.longestList == 30)
            #expect(parked.longestTextCount == longTitle.count, "\(parked.longestTextValue)")
            #expect(parked.styles["Albums"] == ["grid", ""] && parked.styles["album"] == ["", "list"], "\(parked.styles)")
            // A track's row carries only the hints it has: its actions.
            #expect(parked.trackHints == ["Actions"])
            // MPRIS Playlists still lists the albums, from their tab's place in this layout.
            let playlists = try await daemon.client("playlists")
            #expect(playlists.first?.contains(" Album 0001|") == true, "\(playlists)")

            // The long album played: the Recent tab lists it first, and says so with Updated.
            let recentTab = try daemon.bus.spawn(
                "gdbus",
                ["monitor", "--session", "--dest", MediaTreeDaemonTests.treeName, "--object-path", MediaTreeDaemonTests.root + "/recent"])
            defer { recentTab.kill() }
            _ = try await recentTab.waitForLine(timeout: .seconds(10)) { $0.hasPrefix("Monitoring signals") }
            let album = "album:Artist 0000\u{1F}" + longAlbum
            let played = try await MediaTreeDaemonTests.headUnit(daemon, ["play", MediaTreeDaemonTests.path("albums", album)])
            #expect(played[0].hasPrefix("played"), "\(played)")
            _ = try await recentTab.waitForLine(timeout: .seconds(10)) { $0.contains("MediaContainer2.Updated") }

            let driving = try await Self.browse(daemon, driving: true)
            #expect(driving.tabs.count <= 4)
            #expect(driving.longestList == 21)
            #expect(driving.deepest <= 3)
            #expect(driving.longestTextCount == 120 && driving.longestTextValue.hasSuffix("…"), "\(driving.longestTextValue)")
            #expect(driving.recent == [String(longAlbum.prefix(119)) + "…"])
            try await daemon.stop()

            // The Recent tab is kept across a restart.
            let again = try await DaemonFixture.start(on: bus, library: library, arguments: ["--tree-layout", "car", "--no-scan"])
            defer { again.process.kill() }
            let restarted = try await Self.browse(again, driving: false)
            #expect(restarted.recent == [longAlbum])
            try await again.stop()
        }
    }

    /// A car's per-row buttons: the actions the daemon declares, cut to the number the car
    /// shows, each carried out on the queue while what plays goes on.
    @Test func aRowsCustomActionsQueueItsTracksUpToTheCarsLimit() async throws {
        try await DaemonFixture.with { daemon in
            let library = daemon.library
            let tone3 = MediaTreeDaemonTests.path("tracks", MediaTreeDaemonTests.track(library, 2))
            let album = MediaTreeDaemonTests.path("albums", MediaTreeDaemonTests.album)
            let node = "org.mprisbridge.MediaNode1"
            let before = try await MediaTreeDaemonTests.headUnit(
                daemon, ["get", "", "org.mprisbridge.MediaRoot1", "CustomActions"], ["get", tone3, node, "Actions"],
                ["set", "", "org.mprisbridge.MediaRoot1", "ActionLimit", "u", "1"], ["get", tone3, node, "Actions"],
                ["action", tone3, "add-to-queue"], ["action", tone3, "nonsense"],
                ["set", "", "org.mprisbridge.MediaRoot1", "ActionLimit", "u", "0"])
            #expect(before[0].contains("play-next") && before[0].contains("Add to queue"), "\(before[0])")
            #expect(before[1] == "Array ['play-next', 'add-to-queue']")
            #expect(before[3] == "Array ['play-next']")
            // Hidden by the limit, or unknown: refused, and the queue is as it was.
            #expect(before[4] == "error org.freedesktop.DBus.Error.InvalidArgs")
            #expect(before[5] == "error org.freedesktop.DBus.Error.InvalidArgs")
            #expect(try await daemon.client("titles") == ["Tone 1|Tone 2|Tone 3"])

            let after = try await MediaTreeDaemonTests.headUnit(daemon, ["action", tone3, "play-next"], ["action", album, "add-to-queue"])
            #expect(after == ["done", "done"])
            #expect(try await daemon.client("titles") == ["Tone 1|Tone 3|Tone 2|Tone 3|Tone 1|Tone 2|Tone 3"])
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
            #expect(try await daemon.playerctl("status") == "Stopped")
        }
    }
}
