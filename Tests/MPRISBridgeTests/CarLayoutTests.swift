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

            // The long album played: the Recent tab lists it first.
            let album = "album:Artist 0000\u{1F}" + longAlbum
            let played = try await MediaTreeDaemonTests.headUnit(daemon, ["play", MediaTreeDaemonTests.path("albums", album)])
            #expect(played[0].hasPrefix("played"), "\(played)")

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
}
