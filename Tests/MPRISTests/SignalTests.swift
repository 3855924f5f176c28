import DBus
import MPRIS
import MediaRemote
import ProcessTestSupport
import Testing

/// What a watching client sees: one PropertiesChanged per logical change,
/// capabilities that follow the command centre, Seeked on every jump.
///
/// Each test ends with a *fence*: a last change whose line must come next,
/// which proves that nothing else was sent before it.
@Suite(.timeLimit(.minutes(1))) struct SignalTests {
    static let secondTrackID = "/org/mprisbridge/Track/second"

    /// The next line of the watcher.
    func next(_ watcher: ChildProcess) async throws -> String {
        try await watcher.waitForLine { _ in true }
    }

    /// Changes the volume, and expects that line next: nothing was sent in between.
    func fence(_ watcher: ChildProcess, _ player: PlayerFixture, volume: Double = 0.5) async throws {
        player.app.nowPlaying.volume = volume
        let line = try await next(watcher)
        #expect(line == "changed player Volume=\(volume)")
    }

    @Test func aNewNowPlayingValueIsOneSignalWithOnlyWhatChanged() async throws {
        try await withPlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            // Item, status and rate change together: one signal.
            var second = TestApp.secondTrack
            second.playbackRate = 1.5
            player.app.nowPlaying.publish(second)
            let line = try await next(watcher)
            #expect(line == "changed player Metadata=\(Self.secondTrackID),PlaybackStatus=Playing,Rate=1.5")
            // The same value again, with the position playback has reached by now: nothing. (The
            // old position republished later would be a jump back, rightly announced with Seeked:
            // the line above takes long enough on a busy machine.) A new track is not a jump
            // either: no Seeked before the fence.
            let now = ContinuousClock.now
            second.elapsedPlaybackTime = try #require(player.app.nowPlaying.position(at: now))
            player.app.nowPlaying.publish(second, at: now)
            try await fence(watcher, player)
        }
    }

    @Test func positionIsComputedAtEachReadAndNeverSignalled() async throws {
        try await withPlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            var playing = TestApp.track
            playing.playbackState = .playing
            player.app.nowPlaying.publish(playing)
            #expect(try await next(watcher) == "changed player PlaybackStatus=Playing")
            let first = try await player.client("get player Position")
            let second = try await player.client("get player Position")
            let positions = (first + second).map { Int64($0.dropFirst(2))! }
            #expect(positions[0] > 0 && positions[1] > positions[0])
            try await fence(watcher, player)
        }
    }

    @Test func everyJumpIsAnnouncedWithSeeked() async throws {
        try await withPlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            let current = Metadata.trackID(forIdentifier: TestApp.track.identifier!).rawValue
            _ = try await player.client("call player SetPosition o:\(current) x:30000000")
            #expect(try await next(watcher) == "seeked 30000000")
            _ = try await player.client("call player Seek x:15000000")
            #expect(try await next(watcher) == "seeked 45000000")
            // The app restarting the item (repeat one) is a jump too.
            player.app.nowPlaying.publish(TestApp.track)
            #expect(try await next(watcher) == "seeked 0")
            try await fence(watcher, player)
        }
    }

    @Test func capabilitiesFollowTheCommandsAndAreSignalledOnce() async throws {
        try await withPlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            let commands = player.app.commands
            commands.nextTrackCommand.isEnabled = false
            #expect(try await next(watcher) == "changed player CanGoNext=false")
            commands.performBatchUpdates {
                commands.nextTrackCommand.isEnabled = true
                commands.playCommand.isEnabled = false
                commands.togglePlayPauseCommand.isEnabled = false
                commands.changePlaybackRateCommand.supportedPlaybackRates = [1, 3]
            }
            #expect(
                try await next(watcher)
                    == "changed player CanGoNext=true,CanPlay=false,MaximumRate=3.0,MinimumRate=1.0")
            #expect(try await next(watcher) == "changed ext SupportedRates=[1.0,3.0]")
            commands.changeRepeatModeCommand.currentRepeatType = .all
            #expect(try await next(watcher) == "changed player LoopStatus=Playlist")
            try await fence(watcher, player)
        }
    }

    @Test func feedbackCommandsSwitchToRadioModeAndBack() async throws {
        try await withPlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            player.app.enableFeedback()
            #expect(try await next(watcher) == "changed player CanGoPrevious=false")
            #expect(
                try await next(watcher)
                    == "changed ext CanBookmark=true,CanLike=true,LikeShortTitle=Love,LikeTitle=Love this song,RadioMode=true")
            // Previous has no effect in radio mode.
            let replies = try await player.client("call player Previous", "call ext Like b:true")
            #expect(replies == ["ok", "ok"])
            #expect(try await next(watcher) == "changed ext LikeActive=true")
            #expect(player.app.received == ["like"])
            // Disabling is enough to leave radio mode: no removeTarget needed.
            let commands = player.app.commands
            commands.performBatchUpdates {
                commands.likeCommand.isEnabled = false
                commands.bookmarkCommand.isEnabled = false
            }
            #expect(try await next(watcher) == "changed player CanGoPrevious=true")
            #expect(try await next(watcher) == "changed ext CanBookmark=false,CanLike=false,RadioMode=false")
            try await fence(watcher, player)
        }
    }
}
