import DBus
import DBusTestSupport
import MPRIS
import MediaRemote
import ProcessTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a client reads off the wire: types, metadata, the contract in `dbus/`.
@Suite(.timeLimit(.minutes(1))) struct WireTests {
    @Test func everyPropertyAndMetadataEntryHasTheSpecificationsType() async throws {
        try await withPlayer { player in
            let lines = try await player.client("types")
            let types = Dictionary(uniqueKeysWithValues: lines.map { line in
                let parts = line.split(separator: " ")
                return (String(parts[0]), String(parts[1]))
            })
            let expected: [String: String] = [
                "root.CanQuit": "b", "root.CanRaise": "b", "root.CanSetFullscreen": "b", "root.DesktopEntry": "s",
                "root.Fullscreen": "b", "root.HasTrackList": "b", "root.Identity": "s",
                "root.SupportedMimeTypes": "as", "root.SupportedUriSchemes": "as",
                "player.CanControl": "b", "player.CanGoNext": "b", "player.CanGoPrevious": "b", "player.CanPause": "b",
                "player.CanPlay": "b", "player.CanSeek": "b", "player.LoopStatus": "s", "player.MaximumRate": "d",
                "player.Metadata": "a{sv}", "player.MinimumRate": "d", "player.PlaybackStatus": "s",
                "player.Position": "x", "player.Rate": "d", "player.Shuffle": "b", "player.Volume": "d",
                "metadata.mpris:length": "x", "metadata.mpris:trackid": "o", "metadata.xesam:album": "s",
                "metadata.xesam:albumArtist": "as", "metadata.xesam:artist": "as", "metadata.xesam:composer": "as",
                "metadata.xesam:contentCreated": "s", "metadata.xesam:discNumber": "i", "metadata.xesam:genre": "as",
                "metadata.xesam:title": "s", "metadata.xesam:trackNumber": "i", "metadata.xesam:url": "s",
                "ext.CanLike": "b", "ext.LikeActive": "b", "ext.LikeTitle": "s", "ext.LikeShortTitle": "s",
                "ext.CanDislike": "b", "ext.DislikeActive": "b", "ext.DislikeTitle": "s", "ext.DislikeShortTitle": "s",
                "ext.CanBookmark": "b", "ext.BookmarkActive": "b", "ext.BookmarkTitle": "s",
                "ext.BookmarkShortTitle": "s", "ext.RadioMode": "b", "ext.CanSeekForward": "b",
                "ext.CanSeekBackward": "b", "ext.CanSkipForward": "b", "ext.CanSkipBackward": "b",
                "ext.SkipForwardIntervals": "ad", "ext.SkipBackwardIntervals": "ad", "ext.SupportedRates": "ad",
                "ext.CanRate": "b", "ext.RatingRange": "ad",
                "ext.Interrupted": "b", "ext.OutputRoutes": "a(ss)", "ext.OutputRoute": "s",
                "ext.CanSelectOutputRoute": "b", "ext.ReplayGain": "s", "ext.CanSetReplayGain": "b",
            ]
            #expect(types == expected)
        }
    }

    @Test func metadataCarriesTheNowPlayingValueInMPRISForm() async throws {
        try await withPlayer { player in
            let escaped = "spotify_3atrack_3a_c3_bc_2f_c3_b1_201_3f"
            let metadata = try await player.client("get player Metadata")
            #expect(
                metadata == [
                    "a{sv} {mpris:length: 200000000, mpris:trackid: /org/mprisbridge/Track/\(escaped), "
                        + "xesam:album: Album, xesam:albumArtist: [Ann], xesam:artist: [Ann, Bob], "
                        + "xesam:composer: [Cole], xesam:contentCreated: 1970-01-01T00:00:00Z, xesam:discNumber: 2, "
                        + "xesam:genre: [Jazz, Blues], xesam:title: First Song, xesam:trackNumber: 3, "
                        + "xesam:url: file:///music/A%20B/%C3%A7a.ogg}"
                ])
            #expect(Metadata.trackID(forIdentifier: "spotify:track:ü/ñ 1?").rawValue == "/org/mprisbridge/Track/\(escaped)")
        }
    }

    @Test func nothingLoadedIsStoppedWithTheNoTrackID() async throws {
        try await withPlayer(configure: { $0.enableCommands() }) { player in
            let values = try await player.client(
                "get player Metadata", "get player PlaybackStatus", "get player Position")
            #expect(
                values == [
                        "a{sv} {mpris:trackid: /org/mpris/MediaPlayer2/TrackList/NoTrack}", "s Stopped", "x 0",
                    ])
        }
    }

    @Test func aLiveStreamHasNoLengthAndCannotSeek() async throws {
        try await withPlayer { player in
            var stream = NowPlayingInfo(
                identifier: "radio", title: "Radio", playbackDuration: .seconds(10),
                assetURL: URL(string: "https://radio.example/stream"), isLiveStream: true, playbackState: .playing)
            stream.elapsedPlaybackTime = .seconds(5)
            player.app.nowPlaying.publish(stream)
            let values = try await player.client("get player Metadata", "get player CanSeek")
            #expect(
                values == [
                    "a{sv} {mpris:trackid: /org/mprisbridge/Track/radio, xesam:title: Radio, "
                        + "xesam:url: https://radio.example/stream}",
                    "b false",
                ])
        }
    }

    @Test func artworkBytesAreCachedOnceAndPublishedAsAFileURL() async throws {
        try await withPlayer { player in
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)
            var info = TestApp.track
            info.artwork = .imageData(Data(png))
            player.app.nowPlaying.publish(info)
            let metadata = try await player.client("get player Metadata")[0]
            // The fields print sorted, so the art URL comes first: "a{sv} {mpris:artUrl: URL, …".
            let artURL = try #require(
                metadata.split(separator: ", ").first?.split(separator: "mpris:artUrl: ").last)
            #expect(artURL.hasPrefix("file://\(player.artworkDirectory)/") && artURL.hasSuffix(".png"))
            let written = try Data(contentsOf: URL(string: String(artURL))!)
            #expect(Array(written) == png)

            info.artwork = .url(URL(string: "https://covers.example/a%20b.jpg")!)
            player.app.nowPlaying.publish(info)
            #expect(try await player.client("get player Metadata")[0].contains("mpris:artUrl: https://covers.example/a%20b.jpg"))
        }
    }

    /// With a TrackList, its contract is served too (10 more members); without, it is not served at all.
    @Test(arguments: [false, true])
    func theServiceServesExactlyTheContractInDBusFolder(hasTrackList: Bool) async throws {
        try await withPlayer(hasTrackList: hasTrackList) { player in
            let output = try await player.bus.run(
                PrivateBus.systemPython,
                ["\(repositoryRoot)/Scripts/check-contract.py", PlayerFixture.busName, MPRISService.objectPath.rawValue,
                 "\(repositoryRoot)/dbus/org.mpris.MediaPlayer2.xml",
                 "\(repositoryRoot)/dbus/org.mpris.MediaPlayer2.Player.xml",
                 "\(repositoryRoot)/dbus/org.mprisbridge.Player1.xml",
                 "\(repositoryRoot)/dbus/org.mpris.MediaPlayer2.TrackList.xml"])
            if hasTrackList {
                #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
                #expect(output.stdout == "match 86 members\n")
            } else {
                #expect(output.status == 1, "\(output.stderr)")
                #expect(output.stdout == "org.mpris.MediaPlayer2.TrackList: not served\n")
            }
        }
    }

    @Test func aSecondPlayerWithTheSameNameTakesAnInstanceName() async throws {
        try await withPlayer { player in
            let app = TestApp()
            app.enableCommands()
            let second = try MPRISService(
                configuration: MPRISConfiguration(playerName: PlayerFixture.playerName, identity: "second"),
                commands: app.commands, nowPlaying: app.nowPlaying)
            let connection = try await Connection.connect(to: .address(player.bus.address))
            defer { connection.close() }
            let name = try await second.publish(on: connection)
            #expect(name.rawValue == "\(PlayerFixture.busName).instance\(getpid())")
            let listed = try await player.bus.run("playerctl", ["--list-all"])
            #expect(listed.stdout.contains("mprisbridge_test.instance\(getpid())"))
            await second.unpublish()
        }
    }

    @Test func anInvalidPlayerNameIsRefused() {
        let app = TestApp()
        #expect(throws: DBusError.self) {
            try MPRISService(
                configuration: MPRISConfiguration(playerName: "9 bad name", identity: "x"),
                commands: app.commands, nowPlaying: app.nowPlaying)
        }
    }
}
