import DBus
import DBusTestSupport
import MPRIS
import MediaRemote
import ProcessTestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// MPRIS Playlists over the playable-content manager: what a client lists,
/// what activating a playlist does and when it replies, and the signals that
/// keep a client's view true. The data is ``TestLibrary``'s.
@Suite(.timeLimit(.minutes(1))) struct PlaylistsTests {
    static let blueTrain = playlistID("albums", "album-b")
    static let abbeyRoad = playlistID("albums", "album-a")
    static let brokenRecord = playlistID("albums", "album-x")
    static let roadTrip = playlistID("playlists", "mix/1 ü")
    static let favourites = playlistID("playlists", "faves")

    func next(_ watcher: ChildProcess) async throws -> String {
        try await watcher.waitForLine { _ in true }
    }

    /// A last change whose line must come next: proves nothing else was sent before it.
    func fence(_ watcher: ChildProcess, _ playlists: PlaylistsFixture) async throws {
        playlists.content.nowPlayingIdentifiers = ["faves", "f1"]
        #expect(try await next(watcher) == "changed ActivePlaylist=Favourites")
    }

    // MARK: Ids

    @Test func idsAreValidObjectPathsThatGiveBackTheContentPath() throws {
        let paths: [[String]] = [
            ["albums", "album-b"], ["playlists", "mix/1 ü"], ["", "_"], ["a", "dup\u{0}2"], ["tab", "x y", "../z"],
        ]
        for path in paths {
            let id = MPRISPlaylist.id(forContentPath: path)
            #expect(try ObjectPath(validating: id.rawValue) == id)
            #expect(id.isDescendant(of: MPRISPlaylist.idPrefix) && id != MPRISPlaylist.idPrefix)
            #expect(MPRISPlaylist.contentPath(forID: id) == path)
        }
        #expect(Set(paths.map(MPRISPlaylist.id(forContentPath:))).count == paths.count)
        #expect(playlistID("playlists", "mix/1 ü") == "/org/mprisbridge/Playlist/playlists/mix_2f1_20_c3_bc")
        // Object paths the derivation never makes.
        for id: ObjectPath in ["/org/mprisbridge/Playlist", "/org/mprisbridge/Track/a", "/org/mprisbridge/Playlist/_41", "/"] {
            #expect(MPRISPlaylist.contentPath(forID: id) == nil, "\(id)")
        }
    }

    // MARK: Listing

    @Test func getPlaylistsOrdersPagesAndReverses() async throws {
        try await withPlaylists { playlists in
            let replies = try await playlists.client(
                "get PlaylistCount", "get Orderings",
                "list User false 0 100", "list Alphabetical false 0 100", "list Created false 0 100",
                "list Modified false 0 100", "list User true 0 100", "list Alphabetical true 0 100",
                "list Alphabetical false 1 2", "list Alphabetical true 1 2", "list User false 4 10",
                "list User false 5 10", "list User false 99 10", "list User false 0 0")
            #expect(
                replies == [
                    "u 5", "as [Alphabetical,Created,Modified,User]",
                    // The tree's order: Albums' playable containers, then the Playlists tab's.
                    "ok Blue Train|Abbey Road|Broken Record|road trip|Favourites",
                    // Case does not count.
                    "ok Abbey Road|Blue Train|Broken Record|Favourites|road trip",
                    // Oldest first; those without a date follow in the tree's order.
                    "ok Blue Train|road trip|Abbey Road|Broken Record|Favourites",
                    "ok Abbey Road|Blue Train|Broken Record|road trip|Favourites",
                    "ok Favourites|road trip|Broken Record|Abbey Road|Blue Train",
                    "ok road trip|Favourites|Broken Record|Blue Train|Abbey Road",
                    // Index and MaxCount count in the order asked for, reversed or not.
                    "ok Blue Train|Broken Record", "ok Favourites|Broken Record",
                    "ok Favourites", "ok ", "ok ", "ok ",
                ])
        }
    }

    @Test func eachPlaylistHasAStableIdItsTitleAndItsArtworkAsIcon() async throws {
        try await withPlaylists { playlists in
            let lines = try await playlists.client("full User")
            try #require(lines.count == 5, "\(lines)")
            #expect(lines[0] == "\(Self.blueTrain) \(TestLibrary.blueTrainCover.absoluteString) Blue Train")
            #expect(Array(lines[2...]) == [
                "\(Self.brokenRecord) - Broken Record", "\(Self.roadTrip) - road trip", "\(Self.favourites) - Favourites",
            ])
            // Artwork bytes go through the artwork cache, as mpris:artUrl's do.
            let abbey = lines[1].split(separator: " ", maxSplits: 2).map(String.init)
            #expect(abbey[0] == Self.abbeyRoad && abbey[2] == "Abbey Road")
            #expect(abbey[1].hasPrefix("file://\(playlists.player.artworkDirectory)/") && abbey[1].hasSuffix(".png"))
            let written = try Data(contentsOf: try #require(URL(string: abbey[1])))
            #expect(written == TestLibrary.png)
        }
    }

    @Test func anOrderingNotOfferedIsInvalidArgsNamingTheOffered() async throws {
        try await withPlaylists { playlists in
            let replies = try await playlists.client("list Played false 0 10", "list user false 0 10")
            let offered = "this player offers Alphabetical, Created, Modified, User."
            #expect(
                replies == [
                    "error org.freedesktop.DBus.Error.InvalidArgs: Unknown playlist ordering 'Played'; \(offered)",
                    "error org.freedesktop.DBus.Error.InvalidArgs: Unknown playlist ordering 'user'; \(offered)",
                ])
        }
    }

    @Test func dateOrderingsAreOfferedOnlyWhileSomePlaylistHasTheDate() async throws {
        try await withPlaylists { playlists in
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            playlists.change { library in
                for id in ["album-a", "album-b", "mix/1 ü"] {
                    library.updateItem(id) { $0.media?.creationDate = nil }
                }
            }
            #expect(try await next(watcher) == "changed Orderings=[Alphabetical,Modified,User]")
            let replies = try await playlists.client("list Created false 0 10", "list Modified false 0 2")
            #expect(
                replies == [
                    "error org.freedesktop.DBus.Error.InvalidArgs: Unknown playlist ordering 'Created'; "
                        + "this player offers Alphabetical, Modified, User.",
                    "ok Abbey Road|Blue Train",
                ])
            try await fence(watcher, playlists)
        }
    }

    @Test func playlistCountFollowsPlaylistsAddedAndRemoved() async throws {
        try await withPlaylists { playlists in
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            playlists.change { library in
                library.update { tabs in tabs[2].children.append(TestLibrary.playlist("new", "New Mix", tracks: [("n1", "New")])) }
            }
            #expect(try await next(watcher) == "changed PlaylistCount=6")
            #expect(try await playlists.client("list User true 0 1") == ["ok New Mix"])
            // A playlist's tracks changing is not a change of the playlists.
            playlists.change { library in
                library.update { tabs in tabs[0].children[0].children.removeLast() }
            }
            playlists.change { library in
                library.update { tabs in tabs[0].children.remove(at: 2) }  // the informative row: not a playlist
                library.update { tabs in tabs[0].children.remove(at: 2) }  // Broken Record
            }
            #expect(try await next(watcher) == "changed PlaylistCount=5")
            #expect(
                try await playlists.client("list User false 0 10") == [
                    "ok Blue Train|Abbey Road|road trip|Favourites|New Mix"
                ])
            try await fence(watcher, playlists)
        }
    }

    @Test func aLocationStillLoadingIsListedOnceItHasLoaded() async throws {
        try await withPlaylists(slowContainers: ["playlists"], loadingDeadline: .milliseconds(50)) { playlists in
            // Published after the deadline with what was there: the albums.
            #expect(try await playlists.client("get PlaylistCount") == ["u 3"])
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            playlists.library.loadingGate.open()
            #expect(try await next(watcher) == "changed PlaylistCount=5")
            #expect(
                try await playlists.client("list User false 0 10") == [
                    "ok Blue Train|Abbey Road|Broken Record|road trip|Favourites"
                ])
        }
    }

    @Test func contentLimitsInForceLimitWhatIsListed() async throws {
        try await withPlaylists { playlists in
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            // Two rows per listing: Albums shows its informative row and Blue Train,
            // Playlists shows road trip and a folder that is not a playlist.
            playlists.content.updateContext { context in
                context.contentLimitsEnforced = true
                context.enforcedContentItemsCount = 2
            }
            #expect(try await next(watcher) == "changed PlaylistCount=2")
            #expect(try await playlists.client("list User false 0 10") == ["ok Blue Train|road trip"])
            playlists.content.updateContext { $0.contentLimitsEnforced = false }
            #expect(try await next(watcher) == "changed PlaylistCount=5")
            try await fence(watcher, playlists)
        }
    }

    /// Only with a content manager and locations; then the contract in `dbus/` exactly.
    @Test(arguments: [true, false])
    func theServiceServesThePlaylistsContract(hasContent: Bool) async throws {
        try await withPlaylists(content: hasContent) { playlists in
            let output = try await playlists.player.bus.run(
                PrivateBus.systemPython,
                ["\(repositoryRoot)/Scripts/check-contract.py", PlayerFixture.busName, MPRISService.objectPath.rawValue,
                 "\(repositoryRoot)/dbus/org.mpris.MediaPlayer2.xml",
                 "\(repositoryRoot)/dbus/org.mpris.MediaPlayer2.Player.xml",
                 "\(repositoryRoot)/dbus/org.mprisbridge.Player1.xml",
                 "\(repositoryRoot)/dbus/org.mpris.MediaPlayer2.Playlists.xml"])
            if hasContent {
                #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
                #expect(output.stdout == "match 82 members\n")
            } else {
                #expect(output.status == 1, "\(output.stderr)")
                #expect(output.stdout == "org.mpris.MediaPlayer2.Playlists: not served\n")
            }
        }
    }

    @Test func withoutLocationsThereIsNoPlaylistsInterface() async throws {
        let replies = try await withPlaylists(locations: []) { playlists in try await playlists.client("get PlaylistCount") }
        #expect(
            replies == [
                "error org.freedesktop.DBus.Error.UnknownInterface: Object '/org/mpris/MediaPlayer2' has no interface 'org.mpris.MediaPlayer2.Playlists'"
            ])
    }

    // MARK: Activating

    @Test func activatePlaylistRepliesOncePlaybackHasStarted() async throws {
        try await withPlaylists { playlists in
            #expect(try await playlists.client("get ActivePlaylist") == ["(b(oss)) (false, (/, , ))"])
            let lines = try await playlists.client("activate \(Self.abbeyRoad)")
            // The delegate took 300 ms to start; the reply came after that, and after
            // the signals it caused: ActivePlaylist and the Player's new track.
            let elapsed = try #require(lines.last.flatMap { Int($0.dropFirst("elapsed ".count)) }, "\(lines)")
            #expect(elapsed >= 300)
            #expect(Array(lines.suffix(2).prefix(1)) == ["ok"])
            let signals = lines.dropLast(2)
            #expect(signals.contains("changed playlists ActivePlaylist=Abbey Road"), "\(lines)")
            #expect(signals.contains { $0.hasPrefix("changed player ") && $0.contains("Metadata=Come Together") }, "\(lines)")
            #expect(playlists.delegate.received == ["play album-a", "started album-a"])

            let active = try await playlists.client("get ActivePlaylist")
            let icon = try await playlists.client("full User")[1].split(separator: " ")[1]
            #expect(active == ["(b(oss)) (true, (\(Self.abbeyRoad), Abbey Road, \(icon)))"])
        }
    }

    @Test func anUnknownPlaylistIdIsNoSuchContentAndChangesNothing() async throws {
        try await withPlaylists { playlists in
            let notListed = [
                "/org/mprisbridge/Playlist/nope",
                playlistID("artists", "ann-greatest"),  // playable, but not under a location
                playlistID("playlists", "old"),  // under a location, but not playable
                "/org/mprisbridge/Track/a1",
            ]
            for id in notListed {
                let lines = try await playlists.client("activate \(id)")
                #expect(
                    lines.first == "error org.mprisbridge.Error.NoSuchContent: No playlist has the id '\(id)'; GetPlaylists lists them.")
                #expect(lines.count == 2, "no signal: \(lines)")
            }
            #expect(playlists.delegate.received == [])
            #expect(try await playlists.client("get ActivePlaylist") == ["(b(oss)) (false, (/, , ))"])
            #expect(playlists.player.app.nowPlaying.nowPlayingInfo == nil)
        }
    }

    @Test func aDelegateThatFailsGivesAnErrorReply() async throws {
        try await withPlaylists { playlists in
            let lines = try await playlists.client("activate \(Self.brokenRecord)")
            #expect(
                Array(lines.dropLast()) == [
                    "error org.mprisbridge.Error.CommandFailed: The player could not play the playlist 'Broken Record': the record is scratched"
                ])
            #expect(playlists.delegate.received == ["play album-x"])
            #expect(try await playlists.client("get ActivePlaylist") == ["(b(oss)) (false, (/, , ))"])
        }
    }

    @Test func playerctlShowsTheActivatedPlaylistsFirstTrack() async throws {
        try await withPlaylists { playlists in
            #expect(try await playlists.client("activate \(Self.roadTrip)").suffix(2).first == "ok")
            let title = try await playlists.player.playerctl("metadata", "title")
            #expect(title.status == 0, "\(title.stderr)")
            #expect(title.stdout == "Highway Song\n")
            #expect(try await playlists.player.playerctl("status").stdout == "Playing\n")
            #expect(try await playlists.client("get ActivePlaylist").first?.contains("road trip") == true)
        }
    }

    // MARK: Signals

    @Test func aRenameIsExactlyOnePlaylistChangedWithTheNewName() async throws {
        try await withPlaylists { playlists in
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            playlists.change { library in
                library.updateItem("mix/1 ü") { $0.title = "Road Trip 2025" }
            }
            #expect(try await next(watcher) == "playlistchanged \(Self.roadTrip) - Road Trip 2025")
            try await fence(watcher, playlists)
            #expect(try await playlists.client("list User false 3 1") == ["ok Road Trip 2025"])
        }
    }

    @Test func newArtworkIsAPlaylistChangedWithTheNewIcon() async throws {
        try await withPlaylists { playlists in
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            let cover = "https://covers.example/faves.png"
            playlists.change { library in
                library.updateItem("faves") { $0.artwork = .url(URL(string: cover)!) }
            }
            #expect(try await next(watcher) == "playlistchanged \(Self.favourites) \(cover) Favourites")
            try await fence(watcher, playlists)
        }
    }

    @Test func activePlaylistFollowsTheManagersNowPlayingIdentifiers() async throws {
        try await withPlaylists { playlists in
            let watcher = try await playlists.watch()
            defer { watcher.kill() }
            playlists.content.nowPlayingIdentifiers = ["mix/1 ü", "r1"]
            #expect(try await next(watcher) == "changed ActivePlaylist=road trip")
            // A track alone names no playlist.
            playlists.content.nowPlayingIdentifiers = ["b1"]
            #expect(try await next(watcher) == "changed ActivePlaylist=-")
            playlists.content.nowPlayingIdentifiers = ["album-b", "b1"]
            #expect(try await next(watcher) == "changed ActivePlaylist=Blue Train")
            // Renaming the active playlist changes ActivePlaylist too.
            playlists.change { library in library.updateItem("album-b") { $0.title = "Blue Train (Mono)" } }
            #expect(try await next(watcher) == "changed ActivePlaylist=Blue Train (Mono)")
            #expect(try await next(watcher) == "playlistchanged \(Self.blueTrain) \(TestLibrary.blueTrainCover.absoluteString) Blue Train (Mono)")
            try await fence(watcher, playlists)
        }
    }
}
