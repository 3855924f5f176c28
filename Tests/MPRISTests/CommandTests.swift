import DBus
import MPRIS
import MediaRemote
import Testing

/// Remote commands arriving over MPRIS: what the app's handlers receive, what
/// the client gets back, and bad input answered with an error and no change.
@Suite(.timeLimit(.minutes(1))) struct CommandTests {
    @Test func everyPlayerMethodReachesItsCommand() async throws {
        try await withPlayer { player in
            let replies = try await player.client(
                "call player Play", "call player Pause", "call player PlayPause", "call player Stop",
                "call player Next", "call player Previous", "call player Seek x:10000000",
                "call player Seek x:-4000000", "call player OpenUri s:file:///music/a%20b.ogg",
                "call ext BeginSeekForward", "call ext EndSeekForward", "call ext BeginSeekBackward",
                "call ext EndSeekBackward", "call ext SkipForward", "call ext SkipBackward")
            #expect(replies == Array(repeating: "ok", count: 15))
            #expect(
                player.app.received == [
                    "play", "pause", "togglePlayPause", "stop", "nextTrack", "previousTrack",
                    "skipForward 10.0 seconds", "skipBackward 4.0 seconds", "open file:///music/a%20b.ogg",
                    "seekForward beginSeeking", "seekForward endSeeking", "seekBackward beginSeeking",
                    "seekBackward endSeeking", "skipForward 15.0 seconds", "skipBackward 15.0 seconds",
                ])
        }
    }

    @Test func seekFollowsTheSpecificationsRules() async throws {
        try await withPlayer(configure: { app in
            app.enableCommands()
            // Without skip commands, Seek becomes an absolute position.
            app.commands.skipForwardCommand.isEnabled = false
            app.commands.skipBackwardCommand.isEnabled = false
            var track = TestApp.track
            track.elapsedPlaybackTime = .seconds(50)
            app.nowPlaying.nowPlayingInfo = track
        }) { player in
            let replies = try await player.client(
                "call player Seek x:-80000000",  // before the start: to the start
                "call player Seek x:500000000")  // past the end: acts as Next
            #expect(replies == ["ok", "ok"])
            #expect(player.app.received == ["position 0.0 seconds", "nextTrack"])
        }
    }

    @Test func setPositionActsOnlyOnTheCurrentTrackAndWithinIt() async throws {
        try await withPlayer { player in
            let current = Metadata.trackID(forIdentifier: TestApp.track.identifier!).rawValue
            let replies = try await player.client(
                "call player SetPosition o:\(current) x:30000000",
                "call player SetPosition o:/org/mprisbridge/Track/stale x:10000000",
                "call player SetPosition o:\(current) x:-1",
                "call player SetPosition o:\(current) x:200000001",
                "get player Position")
            #expect(replies == ["ok", "ok", "ok", "ok", "x 30000000"])
            #expect(player.app.received == ["position 30.0 seconds"])
        }
    }

    @Test func rateSnapsToASupportedRateAndReportsWhatIsPlayed() async throws {
        try await withPlayer { player in
            let replies = try await player.client(
                "get player MinimumRate", "get player MaximumRate",
                "set player Rate d:1.3", "get player Rate",
                "set player Rate d:7", "get player Rate",
                "call ext CycleRate",  // from the fastest, wraps to the slowest
                "set player Rate d:0")
            #expect(replies == ["d 0.5", "d 2.0", "ok", "d 1.25", "ok", "d 2.0", "ok 0.5", "ok"])
            #expect(player.app.received == ["rate 1.25", "rate 2.0", "rate 0.5", "pause"])
        }
    }

    /// A rate the app cannot change now is not offered: with its rate command disabled, the
    /// range is the rate played and 1.0, whatever rates it once supported.
    @Test func whileTheRateCannotChangeTheRangeOffersNoOtherRate() async throws {
        try await withPlayer { player in
            let offered = try await player.client("get player MinimumRate", "get player MaximumRate")
            player.app.commands.changePlaybackRateCommand.isEnabled = false
            let disabled = try await player.client("get player MinimumRate", "get player MaximumRate")
            player.app.commands.changePlaybackRateCommand.isEnabled = true
            let again = try await player.client("get player MinimumRate", "get player MaximumRate")
            #expect(offered == ["d 0.5", "d 2.0"])
            #expect(disabled == ["d 1.0", "d 1.0"])
            #expect(again == ["d 0.5", "d 2.0"])
        }
    }

    @Test func loopStatusAndShuffleCarryTheTargetStateNeverAToggle() async throws {
        try await withPlayer { player in
            let replies = try await player.client(
                "set player LoopStatus s:Playlist", "set player LoopStatus s:Playlist", "get player LoopStatus",
                "set player LoopStatus s:Track", "get player LoopStatus",
                "set player Shuffle b:true", "set player Shuffle b:true", "get player Shuffle",
                "set player Shuffle b:false", "get player Shuffle")
            #expect(replies == ["ok", "ok", "s Playlist", "ok", "s Track", "ok", "ok", "b true", "ok", "b false"])
            #expect(
                player.app.received == [
                    "repeat all", "repeat all", "repeat one", "shuffle items", "shuffle items", "shuffle off",
                ])
        }
    }

    @Test func volumeIsCarriedToTheAppAndNegativeMeansSilent() async throws {
        try await withPlayer { player in
            let replies = try await player.client(
                "set player Volume d:0.25", "get player Volume", "set player Volume d:-3", "get player Volume")
            #expect(replies == ["ok", "d 0.25", "ok", "d 0.0"])
            #expect(player.app.received == ["volume 0.25", "volume 0.0"])
        }
    }

    @Test func aHandlersFailureIsANamedErrorWithAMessage() async throws {
        try await withPlayer { player in
            let expected: [(RemoteCommandHandlerStatus, String)] = [
                (.noSuchContent, "error org.mprisbridge.Error.NoSuchContent: The player could not go to the next track: no such content."),
                (.noActionableNowPlayingItem, "error org.mprisbridge.Error.NoActionableNowPlayingItem: The player could not go to the next track: nothing is loaded."),
                (.deviceNotFound, "error org.mprisbridge.Error.DeviceNotFound: The player could not go to the next track: its output device is not available."),
                (.commandFailed, "error org.mprisbridge.Error.CommandFailed: The player could not go to the next track."),
            ]
            for (status, error) in expected {
                player.app.status = status
                let reply = try await player.client("call player Next")
                #expect(reply == [error])
            }
            // The track did not change: a failed command changes nothing.
            let metadata = try await player.client("get player Metadata")
            #expect(metadata[0].contains("First Song"))
        }
    }

    @Test func aDisabledCommandHasNoEffectAndIsNotAnError() async throws {
        try await withPlayer { player in
            let commands = player.app.commands
            commands.performBatchUpdates {
                commands.nextTrackCommand.isEnabled = false
                commands.changeRepeatModeCommand.isEnabled = false
                commands.changePlaybackRateCommand.isEnabled = false
            }
            let replies = try await player.client(
                "get player CanGoNext", "call player Next", "set player LoopStatus s:Track",
                "get player LoopStatus", "set player Rate d:2", "get player Rate")
            #expect(replies == ["b false", "ok", "ok", "s None", "ok", "d 1.0"])
            #expect(player.app.received.isEmpty)
        }
    }

    /// An app that offers no command: CanControl and every Can* are false, the methods have no
    /// effect, Stop is an error and the writable properties are read-only, as the specification
    /// says; PlayPause is an error whenever CanPause is false.
    @Test func whileCanControlIsFalseNothingChangesAndStopAndWritesAreErrors() async throws {
        try await withPlayer(configure: { app in app.nowPlaying.nowPlayingInfo = TestApp.track }) { player in
            let replies = try await player.client(
                "get player CanControl", "get player CanPlay", "get player CanPause", "call player Play",
                "call player Next", "call player Pause", "call player PlayPause", "call player Stop",
                "set player LoopStatus s:Track", "set player Volume d:0.5", "get player LoopStatus",
                "call player OpenUri s:file:///music/a.ogg")
            #expect(Array(replies[0...6]) == [
                "b false", "b false", "b false", "ok", "ok", "ok",
                "error org.freedesktop.DBus.Error.NotSupported: The player cannot pause now (CanPause is false).",
            ])
            #expect(replies[7] == "error org.freedesktop.DBus.Error.NotSupported: The player cannot be controlled (CanControl is false).")
            #expect(
                replies[8]
                    == "error org.freedesktop.DBus.Error.PropertyReadOnly: LoopStatus is read-only: the player cannot be controlled (CanControl is false).")
            #expect(replies[9].hasPrefix("error org.freedesktop.DBus.Error.PropertyReadOnly: Volume is read-only"))
            #expect(replies[10] == "s None")
            #expect(replies[11] == "error org.freedesktop.DBus.Error.NotSupported: The player cannot open URIs.")
            #expect(player.app.received.isEmpty)
        }
    }

    @Test func badInputGetsAnErrorAndChangesNothing() async throws {
        try await withPlayer { player in
            let replies = try await player.client(
                "set player Rate d:nan", "set player Rate d:inf", "set player Rate d:-1",
                "set player Volume d:nan", "set player LoopStatus s:Sometimes",
                "set player Shuffle s:yes", "call player Seek s:ten", "call player SetPosition s:/x x:1",
                "call player OpenUri s:not%20a%20uri", "call player OpenUri s:ftp://example.com/a.ogg",
                "call ext Like s:yes",
                "get player Rate", "get player Volume", "get player LoopStatus", "get player Position")
            let invalid = "error org.freedesktop.DBus.Error.InvalidArgs: "
            #expect(replies[0] == invalid + "Rate must be a finite number of at least 0, not nan.")
            #expect(replies[1] == invalid + "Rate must be a finite number of at least 0, not inf.")
            #expect(replies[2] == invalid + "Rate must be a finite number of at least 0, not -1.0.")
            #expect(replies[3] == invalid + "Volume must be a finite number, not nan.")
            #expect(replies[4] == invalid + "LoopStatus must be None, Track or Playlist, not 'Sometimes'.")
            for reply in replies[5...7] + [replies[10]] { #expect(reply.hasPrefix(invalid), "\(reply)") }
            #expect(replies[8] == invalid + "'not a uri' is not a URI.")
            #expect(
                replies[9]
                    == "error org.freedesktop.DBus.Error.NotSupported: The player cannot open 'ftp' URIs; it supports file, https.")
            #expect(Array(replies[11...]) == ["d 1.0", "d 1.0", "s None", "x 0"])
            #expect(player.app.received.isEmpty)
        }
    }

    @Test func aRatingOutsideTheRangeOrNotANumberIsRefusedAndReachesNoHandler() async throws {
        try await withPlayer(configure: { app in
            app.enableCommands()
            app.enableRating()
        }) { player in
            let replies = try await player.client(
                "get ext CanRate", "get ext RatingRange", "call ext SetRating d:4", "call ext SetRating d:5",
                "call ext SetRating d:5.5", "call ext SetRating d:0", "call ext SetRating d:nan",
                "call ext SetRating s:four")
            #expect(Array(replies[0...3]) == ["b true", "ad [1.0, 5.0]", "ok", "ok"])
            let invalid = "error org.freedesktop.DBus.Error.InvalidArgs: "
            #expect(replies[4] == invalid + "Rating must be between 1.0 and 5.0 (RatingRange), not 5.5.")
            #expect(replies[5] == invalid + "Rating must be between 1.0 and 5.0 (RatingRange), not 0.0.")
            #expect(replies[6] == invalid + "Rating must be between 1.0 and 5.0 (RatingRange), not nan.")
            #expect(replies[7].hasPrefix(invalid))
            #expect(player.app.received == ["rating 4.0", "rating 5.0"])
        }
    }

    @Test func ratingIsOfferedOnlyWithATarget() async throws {
        try await withPlayer { player in
            let replies = try await player.client("get ext CanRate", "get ext RatingRange", "call ext SetRating d:0.5")
            #expect(replies == ["b false", "ad [0.0, 1.0]", "ok"])
            #expect(player.app.received.isEmpty)
        }
    }

    @Test func rootInterfaceDescribesThePlayer() async throws {
        try await withPlayer { player in
            let replies = try await player.client(
                "get root Identity", "get root DesktopEntry", "get root CanQuit", "get root CanRaise",
                "get root HasTrackList", "get root SupportedUriSchemes", "get root SupportedMimeTypes",
                "call root Raise", "set root Fullscreen b:true", "get root Fullscreen", "get player CanControl")
            #expect(
                replies == [
                    "s mpris-bridge test player", "s mprisbridge-test", "b false", "b false", "b false",
                    "as [file, https]", "as [audio/ogg]", "ok", "ok", "b false", "b true",
                ])
        }
    }

    @Test func anAppWithNoCommandCannotBeControlled() async throws {
        try await withPlayer(configure: { _ in }) { player in
            let replies = try await player.client(
                "get player CanControl", "get player CanPlay", "call player Play", "get root SupportedUriSchemes")
            #expect(replies == ["b false", "b false", "ok", "as []"])
        }
    }
}
