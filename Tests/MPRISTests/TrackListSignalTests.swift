import DBus
import MPRIS
import MediaRemote
import ProcessTestSupport
import Testing

/// What a client watching the TrackList sees when the app changes its queue:
/// one signal per change, the specific one for a single edit, and the
/// `Tracks` invalidation whenever the ids change.
///
/// Each test ends with a *fence* (as in ``SignalTests``): a last change whose
/// line must come next, which proves that nothing else was sent before it.
@Suite(.timeLimit(.minutes(1))) struct TrackListSignalTests {
    static let tracksInvalidated = "changed tracks invalidated Tracks"

    func next(_ watcher: ChildProcess) async throws -> String {
        try await watcher.waitForLine { _ in true }
    }

    func fence(_ watcher: ChildProcess, _ player: PlayerFixture) async throws {
        player.app.nowPlaying.volume = 0.5
        #expect(try await next(watcher) == "changed player Volume=0.5")
    }

    /// Sets the app's queue to entries named `ids`.
    func setQueue(_ player: PlayerFixture, _ ids: [String]) {
        player.app.nowPlaying.playbackQueue = ids.map { TestApp.queueItem($0) }
    }

    @Test func aSingleInsertionIsOneTrackAddedWithWhereItWent() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            setQueue(player, ["a", "x", "b", "c"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackadded x Song_x after a")
            setQueue(player, ["y", "a", "x", "b", "c"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackadded y Song_y after \(noTrack)")
            setQueue(player, ["y", "a", "x", "b", "c", "z"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackadded z Song_z after c")
            try await fence(watcher, player)
        }
    }

    @Test func addTrackFromAClientIsAnnouncedWithTrackAdded() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            let replies = try await player.client("call tracks AddTrack s:file:///music/new.ogg o:\(trackID("b")) b:false")
            #expect(replies == ["ok"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            let added = ObjectPath.escapeElement("file:///music/new.ogg")
            #expect(try await next(watcher) == "trackadded \(added) new.ogg after b")
            try await fence(watcher, player)
        }
    }

    @Test func aSingleRemovalIsOneTrackRemoved() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            setQueue(player, ["a", "c"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackremoved b")
            _ = try await player.client("call tracks RemoveTrack o:\(trackID("a"))")
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackremoved a")
            setQueue(player, [])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackremoved c")
            try await fence(watcher, player)
        }
    }

    @Test func anEntryChangedInPlaceIsTrackMetadataChanged() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            // Same identifier, new fields: the ids are unchanged, so Tracks is not invalidated.
            player.app.nowPlaying.playbackQueue = [
                TestApp.queueItem("a"), TestApp.queueItem("b", title: "Renamed"), TestApp.queueItem("c"),
            ]
            #expect(try await next(watcher) == "trackmetadatachanged b b Renamed")
            // Another identifier in the same place: the old id, and metadata carrying the new one.
            setQueue(player, ["a", "b2", "c"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackmetadatachanged b b2 Song_b2")
            try await fence(watcher, player)
        }
    }

    /// A window of the queue moving on (the player shows the entries around the current one)
    /// is the entries that left it removed, then those that came in added, one signal each.
    @Test func aWindowMovingOnIsTheEntriesRemovedThenThoseAdded() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            setQueue(player, ["a", "b", "c", "d"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackadded d Song_d after c")
            setQueue(player, ["c", "d", "e", "f"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackremoved a")
            #expect(try await next(watcher) == "trackremoved b")
            #expect(try await next(watcher) == "trackadded e Song_e after d")
            #expect(try await next(watcher) == "trackadded f Song_f after e")
            setQueue(player, ["x", "c", "d", "y", "e"])  // two insertions and a removal
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "trackremoved f")
            #expect(try await next(watcher) == "trackadded x Song_x after \(noTrack)")
            #expect(try await next(watcher) == "trackadded y Song_y after d")
            try await fence(watcher, player)
        }
    }

    @Test func aReorderOrManyEditsReplaceTheList() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            setQueue(player, ["c", "a", "b"])  // a shuffle
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "tracklistreplaced c,a,b current a")
            // Nine insertions: past the edits told one by one (a jump far along the queue).
            let many = ["c", "a", "b"] + (1...9).map { "n\($0)" }
            setQueue(player, many)
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "tracklistreplaced \(many.joined(separator: ",")) current a")
            player.app.nowPlaying.nowPlayingInfo = nil
            #expect(try await next(watcher) == "changed player Metadata=\(noTrack),PlaybackStatus=Stopped")
            setQueue(player, ["d", "e"])
            #expect(try await next(watcher) == Self.tracksInvalidated)
            #expect(try await next(watcher) == "tracklistreplaced d,e current \(noTrack)")
            try await fence(watcher, player)
        }
    }

    @Test func anEqualQueueSendsNothing() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            setQueue(player, ["a", "b", "c"])
            // Playback fields are not shown: a queue differing only there is the same list.
            var playing = TestApp.queueItem("a")
            playing.playbackState = .playing
            playing.elapsedPlaybackTime = .seconds(12)
            player.app.nowPlaying.playbackQueue = [playing, TestApp.queueItem("b"), TestApp.queueItem("c")]
            // A repeated identifier is not shown either.
            setQueue(player, ["a", "b", "c", "a"])
            try await fence(watcher, player)
        }
    }

    @Test func canEditTracksIsSignalledWithItsValue() async throws {
        try await withQueuePlayer { player in
            let watcher = try await player.watch()
            defer { watcher.kill() }
            player.app.commands.addItemToQueueCommand.isEnabled = false
            #expect(try await next(watcher) == "changed tracks CanEditTracks=false")
            player.app.commands.addItemToQueueCommand.isEnabled = true
            #expect(try await next(watcher) == "changed tracks CanEditTracks=true")
            try await fence(watcher, player)
        }
    }
}
