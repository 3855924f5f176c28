import DBus
import DBusTestSupport
import ProcessTestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The daemon's media tree and MPRIS Playlists, browsed and played by real clients.
@Suite(.timeLimit(.minutes(2))) struct MediaTreeDaemonTests {
    static let treeName = "org.gnome.UPnP.MediaServer2.mprisbridge"
    static let root = "/org/gnome/UPnP/MediaServer2/mprisbridge"
    static let album = "album:Artist\u{1F}Generated"

    /// A node's path relative to the root: its identifiers, escaped.
    static func path(_ identifiers: String...) -> String {
        identifiers.map(ObjectPath.escapeElement).joined(separator: "/")
    }

    static func track(_ library: GeneratedLibrary, _ index: Int) -> String { "track:" + library.tracks[index].path }

    /// Runs the head-unit client of the MPRIS tests against the daemon's tree.
    static func headUnit(_ daemon: DaemonFixture, _ operations: [String]...) async throws -> [String] {
        let arguments = operations.enumerated().flatMap { index, operation in (index == 0 ? [] : ["--"]) + operation }
        let output = try await daemon.bus.run(
            PrivateBus.systemPython,
            ["\(repositoryRoot)/Tests/MPRISTests/Python/media_tree_client.py", treeName, root] + arguments)
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        return output.stdout.split(separator: "\n").map(String.init)
    }

    @Test func aHeadUnitBrowsesSearchesAndPlaysTheLibrary() async throws {
        try await DaemonFixture.with { daemon in
            let library = daemon.library
            let second = Self.path("albums", Self.album, Self.track(library, 1))
            let lines = try await Self.headUnit(
                daemon,
                ["walk", "2"],
                ["list", "", "0", "0"],
                ["list", Self.path("artists", "artist:Artist"), "0", "0"],
                ["search", "", "DisplayName contains \"tone 2\"", "0", "0"],
                ["text", "", "generated", "0", "0"],
                ["play", second],
                ["get", second, "org.mprisbridge.MediaNode1", "NowPlaying"],
                ["get", Self.path("tracks", Self.track(library, 1)), "org.mprisbridge.MediaNode1", "NowPlaying"],
                ["get", Self.path("albums", Self.album), "org.mprisbridge.MediaNode1", "NowPlaying"],
                ["get", Self.path("tracks", Self.track(library, 0)), "org.mprisbridge.MediaNode1", "NowPlaying"])
            // Five tabs; the artist, their album and its 3 tracks; the album and 3 tracks; 3 tracks;
            // no playlist; folders Artist and Generated and 3 tracks.
            #expect(lines[0].hasPrefix("nodes 23 containers 11 items 12 depth 3"), "\(lines[0])")
            #expect(lines[0].hasSuffix("problems 0"), "\(lines[0])")
            #expect(lines[1] == "Artists|container|Container Albums|container|Container Tracks|container|Container Playlists|container|Container Folders|container|Container Recent|container|Container")
            #expect(lines[2] == "Generated|container|Playable,Container")
            #expect(lines[3] == "Tone 2")
            // The album's title and every track's album match.
            #expect(lines[4] == "Generated Tone 1 Tone 2 Tone 3")
            let played = lines[5].split(separator: " ")
            #expect(played.first == "played", "\(lines[5])")
            #expect(try await daemon.playerctl("status") == "Playing")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
            // The track is marked in every tab, and so is the album it was played from.
            #expect(lines[6...9] == ["Boolean 1", "Boolean 1", "Boolean 1", "Boolean 0"])
            // The queue is the album, from the second track.
            #expect(try await daemon.client("titles") == ["Tone 1|Tone 2|Tone 3"])
        }
    }

    @Test func whileTheFirstIndexIsBuiltTheRootSaysSoThenTheScanUpdatesTheTreeOnce() async throws {
        let library = try await GeneratedLibrary.make(seconds: 1)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            // No scan beforehand: the daemon starts on an empty index and scans in its child.
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            defer { daemon.process.kill() }
            let watcher = try bus.spawn(
                PrivateBus.systemPython,
                ["-u", "\(repositoryRoot)/Tests/MPRISTests/Python/watch_tree.py", Self.treeName, Self.root])
            defer { watcher.kill() }
            _ = try await watcher.waitForLine { $0 == "READY" }
            // The root, then the Tracks tab, listed: a tab is read when a remote reaches it.
            let before = try await Self.headUnit(daemon, ["list", "", "0", "0"], ["list", Self.path("tracks"), "0", "0"])
            // The scan may already be over; if not, the informative row comes first.
            let indexing = before[0].hasPrefix("Indexing your music…|container|Informative ")
            if indexing { _ = try await watcher.waitForLine(timeout: .seconds(30)) { $0 == "updated " } }
            _ = try await daemon.process.waitForLine(timeout: .seconds(30)) { $0.contains("the media tree shows the scan's 3 tracks") }
            let after = try await Self.headUnit(daemon, ["list", "", "0", "0"], ["list", Self.path("tracks"), "0", "0"])
            #expect(after[0] == "Artists|container|Container Albums|container|Container Tracks|container|Container Playlists|container|Container Folders|container|Container Recent|container|Container")
            // The queue, filled after the scan, is stopped at Tone 1: that is the item now playing.
            #expect(after[1] == "Tone 1|music|Playable,NowPlaying Tone 2|music|Playable Tone 3|music|Playable")
            if indexing {
                // One Updated per changed container: the root, and the tabs read before the scan
                // ended that gained tracks (the Tracks tab, listed above, and any the daemon read).
                let updates = watcher.capturedStdout.split(separator: "\n").filter { $0.hasPrefix("updated") }
                #expect(updates.count == Set(updates).count, "each container once: \(updates)")
                #expect(updates.contains("updated ") && updates.contains("updated tracks"), "\(updates)")
                #expect(Set(updates).isSubset(of: ["updated ", "updated artists", "updated albums", "updated tracks", "updated folders", "updated recent"]))
            }
            try await daemon.stop()
        }
    }

    @Test func anEmptyLibraryShowsWhyInAnInformativeFirstRow() async throws {
        let library = try await GeneratedLibrary.make(seconds: 1)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            // Never scanned, and told not to: the index is empty.
            let daemon = try await DaemonFixture.start(on: bus, library: library, arguments: ["--no-scan"])
            let lines = try await Self.headUnit(
                daemon, ["list", "", "0", "0"], ["play", Self.path("status")],
                ["get", Self.path("status"), "org.mprisbridge.MediaNode1", "Informative"],
                ["list", Self.path("status"), "0", "0"],
                ["get", Self.path("status"), "org.mprisbridge.MediaNode1", "ErrorCode"],
                ["get", Self.path("status"), "org.mprisbridge.MediaNode1", "ResolutionAction"],
                ["get", Self.path("status"), "org.mprisbridge.MediaNode1", "ResolutionLabel"],
                ["rescan"])
            #expect(lines[0] == "No music found in \(library.path)|container|Informative Artists|container|Container Albums|container|Container Tracks|container|Container Playlists|container|Container Folders|container|Container Recent|container|Container")
            #expect(lines[1].hasPrefix("error org.mprisbridge.Error.NotPlayable"), "\(lines[1])")
            #expect(lines[2] == "Boolean 1")
            // A container, as its type says, with nothing in it.
            #expect(lines[3] == "(empty)")
            // Typed, with the way out a car can offer as a button: the root's Rescan, which finds
            // the library's music.
            #expect(Array(lines[4...6]) == ["String content-unavailable", "String Rescan", "String Scan again"], "\(lines)")
            #expect(lines[7].hasPrefix("rescanned in"), "\(lines)")
            let after = try await Self.headUnit(daemon, ["list", "", "0", "0"])
            #expect(after[0].hasPrefix("Artists|container|Container"), "\(after)")
            try await daemon.stop()
        }
    }

    /// A folder with no music: the first scan finds nothing to index, and the root's first row
    /// goes from "Indexing your music…" to saying there is none.
    @Test func aFirstScanThatFindsNoMusicSaysSo() async throws {
        let library = try await GeneratedLibrary.make(formats: [])
        defer { library.remove() }
        try await PrivateBus.with { bus in
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            defer { daemon.process.kill() }
            _ = try await daemon.process.waitForLine(timeout: .seconds(30)) { $0.contains("the media tree shows the scan's 0 tracks") }
            let root = try await Self.headUnit(daemon, ["list", "", "0", "1"])
            #expect(root.first == "No music found in \(library.path)|container|Informative", "\(root)")
            try await daemon.stop()
        }
    }

    @Test func drivingLimitsAndANotPlayableTabAreHonoured() async throws {
        try await DaemonFixture.with { daemon in
            let lines = try await Self.headUnit(
                daemon,
                ["set", "", "org.mprisbridge.MediaRoot1", "EnforcedItemCount", "u", "2"],
                ["set", "", "org.mprisbridge.MediaRoot1", "EnforcedTreeDepth", "u", "2"],
                ["set", "", "org.mprisbridge.MediaRoot1", "ContentLimitsEnforced", "b", "true"],
                ["list", "", "0", "0"],
                ["list", Self.path("tracks"), "0", "0"],
                ["list", Self.path("artists", "artist:Artist"), "0", "0"],
                ["play", Self.path("tracks")])
            #expect(lines[3] == "Artists|container|Container Albums|container|Container")
            // The queue's current entry, stopped at the start, is marked as MPRIS shows it.
            #expect(lines[4] == "Tone 1|music|Playable,NowPlaying Tone 2|music|Playable")
            #expect(lines[5] == "(empty)")
            #expect(lines[6].hasPrefix("error org.mprisbridge.Error.NotPlayable"), "\(lines[6])")
            _ = try await daemon.process.waitForLine { $0.contains("remote context: endpoint absent, limits 2 rows, depth 2") }
        }
    }

    @Test func playlistsListAlbumsAndActivatingOneRepliesOncePlaying() async throws {
        try await DaemonFixture.with { daemon in
            let output = try await daemon.bus.run(
                PrivateBus.systemPython,
                ["\(repositoryRoot)/Tests/MPRISTests/Python/playlists_client.py", DaemonFixture.busName,
                 "get PlaylistCount", "list Alphabetical false 0 10", "get ActivePlaylist"])
            #expect(output.succeeded, "\(output)")
            #expect(output.stdout.split(separator: "\n") == ["u 1", "ok Generated", "(b(oss)) (false, (/, , ))"], "\(output)")
            let id = "/org/mprisbridge/Playlist/" + Self.path("albums", Self.album)
            let activated = try await daemon.bus.run(
                PrivateBus.systemPython,
                ["\(repositoryRoot)/Tests/MPRISTests/Python/playlists_client.py", DaemonFixture.busName,
                 "activate \(id)", "get ActivePlaylist"])
            let lines = activated.stdout.split(separator: "\n").map(String.init)
            #expect(lines.contains("ok"), "\(activated)")
            #expect(lines.last == "(b(oss)) (true, (\(id), Generated, ))", "\(activated)")
            // The reply came after the player said it plays.
            let changed = try #require(lines.firstIndex { $0.contains("PlaybackStatus=Playing") }, "\(lines)")
            #expect(changed < lines.firstIndex(of: "ok")!)
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
        }
    }

    @Test func rygelServesTheDaemonsTreeOverUPnP() async throws {
        try await DaemonFixture.with { daemon in
            try await withRygel(bus: daemon.bus.address, provider: "mprisbridge") { rygel in
                let tabs = try await rygel.browse(from: "0").filter { $0.depth == 0 }
                #expect(tabs.map(\.title) == ["Artists", "Albums", "Tracks", "Playlists", "Folders", "Recent"])
                let tracks = try await rygel.browse(from: Self.root + "/" + Self.path("tracks"))
                #expect(tracks.map(\.title) == ["Tone 1", "Tone 2", "Tone 3"])
                #expect(tracks.allSatisfy { $0.upnpClass == "object.item.audioItem.musicTrack" })
                #expect(
                    tracks.map { $0.url(for: "internal") }
                        == daemon.library.tracks.map { $0.url(in: daemon.library.path) })
                // Rygel serves the file itself.
                let http = try #require(tracks.first?.url(for: "http-get"), "\(tracks)")
                let copy = try TemporaryDirectory(prefix: "rygel-fetch")
                defer { copy.remove() }
                #expect(try await rygel.fetch(http, into: copy.path + "/tone.ogg") == 200)
                let served = try Data(contentsOf: URL(filePath: copy.path + "/tone.ogg"))
                let original = try Data(contentsOf: URL(filePath: daemon.library.path + "/" + daemon.library.tracks[0].path))
                #expect(served == original)

                // Only objects of the index exist: an ObjectID naming a file, as cover objects' ids
                // once did, or the cover of a row that has none, gives Rygel no object to serve.
                for id in [
                    Self.root + "/__art/" + ObjectPath.escapeElement("file:///etc/passwd"),
                    Self.root + "/" + Self.path("tracks") + "/__art",
                    Self.root + "/" + Self.path("tracks", "no such track"),
                ] {
                    let found = try? await rygel.metadata(of: id)
                    #expect(found == nil, "\(id) is served as \(String(describing: found))")
                }
            }
        }
    }
}
