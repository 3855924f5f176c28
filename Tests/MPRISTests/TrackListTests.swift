import DBus
import MPRIS
import MediaRemote
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The track id of a queue entry, as clients see it.
func trackID(_ identifier: String) -> String { Metadata.trackID(forIdentifier: identifier).rawValue }

let noTrack = Metadata.noTrack.rawValue

/// Publishes a ``TestApp`` with the TrackList: every command enabled (the
/// queue commands unless `queueCommands` is false), a queue of entries named
/// `ids` (see ``TestApp/queueItem(_:title:)``) and its first entry playing.
func withQueuePlayer<T: Sendable>(
    _ ids: [String] = ["a", "b", "c"], queueCommands: Bool = true, _ body: (PlayerFixture) async throws -> T
) async throws -> T {
    try await withPlayer(
        hasTrackList: true,
        configure: { app in
            app.enableCommands()
            if queueCommands { app.enableQueue() }
            app.nowPlaying.playbackQueue = ids.map { TestApp.queueItem($0) }
            app.nowPlaying.nowPlayingInfo = ids.first.map { TestApp.queueItem($0) }
        }, body)
}

/// MPRIS TrackList over the play queue: what a client reads, and what its
/// methods make the app's queue commands receive.
@Suite(.timeLimit(.minutes(1))) struct TrackListTests {
    /// How mpris_client.py prints the metadata of ``TestApp/queueItem(_:title:)``.
    static func shownMetadata(_ id: String) -> String {
        "{mpris:length: 60000000, mpris:trackid: \(trackID(id)), xesam:artist: [Queue Artist], "
            + "xesam:title: Song \(id), xesam:url: file:///music/\(id).ogg}"
    }

    @Test func hasTrackListFollowsTheConfiguration() async throws {
        let without = try await withPlayer { player in
            try await player.client("get root HasTrackList", "get tracks Tracks", "call tracks GoTo o:\(trackID("a"))")
        }
        let unknown =
            "error org.freedesktop.DBus.Error.UnknownInterface: Object '/org/mpris/MediaPlayer2' has no interface 'org.mpris.MediaPlayer2.TrackList'"
        #expect(without == ["b false", unknown, unknown])
        let with = try await withQueuePlayer { player in try await player.client("get root HasTrackList") }
        #expect(with == ["b true"])
    }

    @Test func tracksAreTheQueueInPlayOrderWithTheirMetadataTypes() async throws {
        try await withQueuePlayer(["b", "a", "c"]) { player in
            let replies = try await player.client("get tracks Tracks", "get tracks CanEditTracks")
            #expect(replies == ["ao [\(trackID("b")), \(trackID("a")), \(trackID("c"))]", "b true"])
            let tracks = try await player.client("tracks")
            #expect(
                tracks == ["b", "a", "c"].flatMap { id in
                    [
                        trackID(id), "  mpris:length x 60000000", "  mpris:trackid o \(trackID(id))",
                        "  xesam:artist as [Queue Artist]", "  xesam:title s Song \(id)",
                        "  xesam:url s file:///music/\(id).ogg",
                    ]
                })
        }
    }

    @Test func anyIdentifierGivesAValidUniqueIDAndArtworkBytesAnArtURL() async throws {
        try await withQueuePlayer([]) { player in
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 9, count: 64)
            var odd = TestApp.queueItem("spotify:track:ü/ñ 1?")
            odd.artwork = .imageData(Data(png))
            // The second "a" breaks the queue's uniqueness rule: it is not shown.
            player.app.nowPlaying.playbackQueue = [TestApp.queueItem("a"), odd, TestApp.queueItem("a", title: "Again")]
            let replies = try await player.client(
                "get tracks Tracks", "typedcall tracks GetTracksMetadata ao:\(trackID("spotify:track:ü/ñ 1?"))")
            #expect(replies[0] == "ao [\(trackID("a")), /org/mprisbridge/Track/spotify_3atrack_3a_c3_bc_2f_c3_b1_201_3f]")
            let artURL = try #require(replies[1].split(separator: "mpris:artUrl: ").last?.split(separator: ",").first)
            #expect(artURL.hasPrefix("file://\(player.artworkDirectory)/") && artURL.hasSuffix(".png"), "\(replies[1])")
            #expect(Array(try Data(contentsOf: URL(string: String(artURL))!)) == png)
        }
    }

    @Test func getTracksMetadataAnswersInTheOrderAskedAndSkipsUnknownIDs() async throws {
        try await withQueuePlayer { player in
            let replies = try await player.client(
                "typedcall tracks GetTracksMetadata ao:\(trackID("c")),/org/mprisbridge/Track/gone,\(trackID("a")),\(noTrack)",
                "typedcall tracks GetTracksMetadata ao:/org/mprisbridge/Track/gone",
                "typedcall tracks GetTracksMetadata ao:")
            #expect(
                replies == [
                    "ok aa{sv} [\(Self.shownMetadata("c")), \(Self.shownMetadata("a"))]", "ok aa{sv} []", "ok aa{sv} []",
                ])
        }
    }

    @Test func goToAddTrackAndRemoveTrackReachTheQueueCommands() async throws {
        try await withQueuePlayer { player in
            let replies = try await player.client(
                "call tracks GoTo o:\(trackID("b"))",
                "call tracks AddTrack s:file:///music/new.ogg o:\(noTrack) b:false",
                "call tracks AddTrack s:https://radio.example/live o:\(trackID("a")) b:true",
                "call tracks RemoveTrack o:\(trackID("c"))",
                // Ids not in the list: no effect, as the specification says.
                "call tracks GoTo o:\(trackID("c"))", "call tracks RemoveTrack o:/org/mprisbridge/Track/gone",
                "get tracks Tracks", "get player Metadata")
            #expect(Array(replies[0..<6]) == Array(repeating: "ok", count: 6))
            #expect(
                player.app.received == [
                    "playItem b", "addItem file:///music/new.ogg after start",
                    "addItem https://radio.example/live after a now", "removeItem c",
                ])
            let tracks = [trackID("file:///music/new.ogg"), trackID("a"), trackID("https://radio.example/live"), trackID("b")]
            #expect(replies[6] == "ao [\(tracks.joined(separator: ", "))]")
            #expect(replies[7].contains("mpris:trackid: \(trackID("https://radio.example/live"))"), "SetAsCurrent plays it")
        }
    }

    @Test func aHandlersFailureIsANamedErrorAndChangesNothing() async throws {
        try await withQueuePlayer { player in
            player.app.status = .noSuchContent
            let replies = try await player.client(
                "call tracks GoTo o:\(trackID("b"))", "call tracks RemoveTrack o:\(trackID("b"))",
                "call tracks AddTrack s:file:///music/new.ogg o:\(trackID("c")) b:false", "get tracks Tracks")
            #expect(
                replies == [
                    "error org.mprisbridge.Error.NoSuchContent: The player could not go to the track: no such content.",
                    "error org.mprisbridge.Error.NoSuchContent: The player could not remove the track: no such content.",
                    "error org.mprisbridge.Error.NoSuchContent: The player could not add file:///music/new.ogg to the track list: no such content.",
                    "ao [\(trackID("a")), \(trackID("b")), \(trackID("c"))]",
                ])
        }
    }

    @Test func canEditTracksFollowsTheCommandsAndGuardsAddAndRemove() async throws {
        try await withQueuePlayer { player in
            let commands = player.app.commands
            commands.removeItemFromQueueCommand.isEnabled = false
            let replies = try await player.client(
                "get tracks CanEditTracks",
                "call tracks AddTrack s:file:///music/new.ogg o:\(noTrack) b:false",
                "call tracks AddTrack s:not%20a%20uri o:\(noTrack) b:false",  // no effect comes first
                "call tracks RemoveTrack o:\(trackID("a"))",
                "call tracks GoTo o:\(trackID("c"))",  // not an edit: still works
                "get tracks Tracks")
            #expect(replies == ["b false", "ok", "ok", "ok", "ok", "ao [\(trackID("a")), \(trackID("b")), \(trackID("c"))]"])
            #expect(player.app.received == ["playItem c"])
            commands.removeItemFromQueueCommand.isEnabled = true
            commands.addItemToQueueCommand.isEnabled = false
            #expect(try await player.client("get tracks CanEditTracks", "call tracks RemoveTrack o:\(trackID("a"))") == ["b false", "ok"])
            commands.addItemToQueueCommand.isEnabled = true
            #expect(try await player.client("get tracks CanEditTracks") == ["b true"])
            #expect(player.app.received == ["playItem c"])
        }
    }

    @Test func anAppWithoutQueueCommandsShowsItsQueueReadOnly() async throws {
        try await withQueuePlayer(queueCommands: false) { player in
            let replies = try await player.client(
                "get tracks CanEditTracks", "call tracks GoTo o:\(trackID("b"))",
                "call tracks RemoveTrack o:\(trackID("b"))", "get tracks Tracks")
            #expect(replies == ["b false", "ok", "ok", "ao [\(trackID("a")), \(trackID("b")), \(trackID("c"))]"])
            #expect(player.app.received.isEmpty)
        }
    }

    @Test func addTrackTakesTheOpenURLSchemesWhichTheRootShowsEvenWithoutOpenUri() async throws {
        try await withQueuePlayer { player in
            player.app.commands.openURLCommand.removeAllTargets()
            let replies = try await player.client(
                "get root SupportedUriSchemes", "call tracks AddTrack s:https://radio.example/live o:\(noTrack) b:false",
                "call tracks AddTrack s:ftp://example.com/a.ogg o:\(noTrack) b:false")
            #expect(
                replies == [
                    "as [file, https]", "ok",
                    "error org.freedesktop.DBus.Error.NotSupported: The player cannot open 'ftp' URIs; it supports file, https.",
                ])
            #expect(player.app.received == ["addItem https://radio.example/live after start"])
        }
        // Without a TrackList, the queue commands open nothing.
        let withoutTrackList = try await withPlayer(configure: { app in
            app.enableCommands()
            app.enableQueue()
            app.commands.openURLCommand.removeAllTargets()
        }) { player in try await player.client("get root SupportedUriSchemes") }
        #expect(withoutTrackList == ["as []"])
    }

    @Test func badInputGetsAnErrorAndChangesNothing() async throws {
        try await withQueuePlayer { player in
            let replies = try await player.client(
                "call tracks AddTrack s:not%20a%20uri o:\(noTrack) b:false",
                "call tracks AddTrack s:ftp://example.com/a.ogg o:\(noTrack) b:false",
                "call tracks AddTrack s:file:///music/new.ogg o:/org/mprisbridge/Track/gone b:false",
                "call tracks AddTrack s:file:///music/new.ogg s:\(noTrack) b:false",
                "call tracks AddTrack s:file:///music/new.ogg o:\(noTrack)",
                "call tracks GoTo s:\(trackID("b"))", "call tracks RemoveTrack s:\(trackID("b"))",
                "call tracks GoTo", "call tracks GetTracksMetadata s:\(trackID("b"))",
                "set tracks Tracks ao:", "set tracks CanEditTracks b:false",
                "get tracks Tracks", "get tracks CanEditTracks", "get player Metadata")
            let invalid = "error org.freedesktop.DBus.Error.InvalidArgs: "
            #expect(replies[0] == invalid + "'not a uri' is not a URI.")
            #expect(
                replies[1]
                    == "error org.freedesktop.DBus.Error.NotSupported: The player cannot open 'ftp' URIs; it supports file, https.")
            #expect(replies[2] == invalid + "AfterTrack '/org/mprisbridge/Track/gone' is not in the track list.")
            #expect(replies[3] == invalid + "Method 'AddTrack' of 'org.mpris.MediaPlayer2.TrackList' takes arguments of signature 'sob', got 'ssb'")
            #expect(replies[4] == invalid + "Method 'AddTrack' of 'org.mpris.MediaPlayer2.TrackList' takes arguments of signature 'sob', got 'so'")
            for reply in replies[5...8] { #expect(reply.hasPrefix(invalid + "Method "), "\(reply)") }
            for reply in replies[9...10] { #expect(reply.hasPrefix("error org.freedesktop.DBus.Error.PropertyReadOnly: "), "\(reply)") }
            #expect(
                Array(replies[11...])
                    == [
                        "ao [\(trackID("a")), \(trackID("b")), \(trackID("c"))]", "b true",
                        "a{sv} \(Self.shownMetadata("a"))",
                    ])
            #expect(player.app.received.isEmpty)
        }
    }
}
