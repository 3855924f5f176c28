import AsyncSupport
import MediaRemote
import Playback
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PlayQueue {
    /// The identifiers in the queue's own order (MPD's positions).
    var positions: [String] { addedOrder.map(\.identifier) }
    /// The identifiers in play order.
    var playing: [String] { items.map(\.identifier) }
}

/// The queue as MPD sees it: positions in its own order, song ids, edits by range.
@Suite struct PlayQueuePositionTests {
    @Test func songIDsAreUniqueAndFollowTheirEntriesThroughMovesAndRemovals() throws {
        var queue = queue("a", "b", "c", "d")
        #expect(queue.songIDs == [1, 2, 3, 4])
        #expect(queue.insert(queueItems("x"), atPosition: 1) == [5])
        #expect(queue.positions == ["a", "x", "b", "c", "d"])
        #expect(queue.songIDs == [1, 5, 2, 3, 4])

        #expect(queue.moveEntries(atPositions: 3..<5, to: 0) == true)
        #expect(queue.positions == ["c", "d", "a", "x", "b"])
        #expect(queue.songIDs == [3, 4, 1, 5, 2])
        #expect(queue.playing == queue.positions, "unshuffled, the play order is the queue's order")
        #expect(queue.current?.identifier == "a")
        #expect(queue.position(ofSongID: 1) == 2)

        // The current entry goes: the one after it in play order is current.
        #expect(queue.removeEntries(atPositions: 1..<3) == .removedCurrent(followed: true))
        #expect(queue.positions == ["c", "x", "b"])
        #expect(queue.songIDs == [3, 5, 2])
        #expect(queue.current?.identifier == "x")
        #expect(queue.position(ofSongID: 1) == nil)

        // A new queue, an emptied one: ids go on, never given twice.
        queue.replace(with: queueItems("e", "f"))
        #expect(queue.songIDs == [6, 7])
        #expect(queue.removeEntries(atPositions: 0..<2) == .removedCurrent(followed: false))
        #expect(queue.currentIndex == nil)
        #expect(queue.insert(queueItems("g"), atPosition: 0) == [8])
        #expect(queue.current?.identifier == "g")
    }

    @Test func badPositionsChangeNothing() {
        var queue = queue("a", "b", "c", "d", current: 2)
        let before = queue
        let revision = queue.revision
        #expect(queue.insert(queueItems("x"), atPosition: 5) == nil)
        #expect(queue.insert(queueItems("x"), atPosition: -1) == nil)
        #expect(queue.removeEntries(atPositions: 3..<9) == nil)
        #expect(queue.removeEntries(atPositions: -1..<1) == nil)
        #expect(queue.moveEntries(atPositions: 0..<2, to: 3) == false)
        #expect(queue.moveEntries(atPositions: 2..<5, to: 0) == false)
        #expect(queue.shuffleEntries(atPositions: 2..<7, keepingCurrent: true) == false)
        #expect(queue.moveTo(position: 4) == false)
        #expect(queue == before)
        #expect(queue.revision == revision)
        #expect(queue.songIDs == before.songIDs)
        // An empty range is no edit at all.
        #expect(queue.removeEntries(atPositions: 4..<4) == .keptCurrent)
        #expect(queue.moveEntries(atPositions: 1..<1, to: 4) == true)
        #expect(queue == before)
    }

    /// Removing the last entry of the play order, current: none follows, unless the queue loops.
    @Test func removingTheCurrentLastEntryFollowsOnlyUnderRepeatAll() {
        var queue = queue("a", "b", "c", current: 2)
        #expect(queue.removeEntries(atPositions: 2..<3) == .removedCurrent(followed: false))
        #expect(queue.current?.identifier == "b")
        queue.repeatMode = .all
        #expect(queue.removeEntries(atPositions: 1..<2) == .removedCurrent(followed: true))
        #expect(queue.current?.identifier == "a")
    }

    /// Shuffle mode draws the play order; positions stay the queue's. New entries take random
    /// places after the entry that plays next, which stays next; a move keeps the sequence.
    @Test func underShuffleModePositionsStayAndWhatPlaysNextStaysNext() throws {
        var queue = queue("a", "b", "c", "d", "e")
        var generator = SeededGenerator(state: 3)
        queue.setShuffle(.items, using: &generator)
        let next = try #require(queue.itemAfterCurrentEnds)
        let ids = try #require(queue.insert(queueItems("x", "y", "z"), atPosition: queue.count, using: &generator))
        #expect(queue.positions == ["a", "b", "c", "d", "e", "x", "y", "z"])
        #expect(ids == [6, 7, 8])
        #expect(queue.current?.identifier == "a")
        #expect(queue.itemAfterCurrentEnds == next)
        #expect(Set(queue.playing.dropFirst(2)) == Set(["b", "c", "d", "e", "x", "y", "z"]).subtracting([next.identifier]))

        let sequence = queue.playing
        #expect(queue.moveEntries(atPositions: 0..<2, to: 6) == true)
        #expect(queue.positions == ["c", "d", "e", "x", "y", "z", "a", "b"])
        #expect(queue.playing == sequence, "a move under shuffle mode changes positions, not what plays when")
        #expect(queue.currentPosition == 6)
    }

    /// Moves of every size and direction, shuffled or not, against the plain definition: the
    /// range taken out and put back at the destination; the sequence of play kept under shuffle.
    @Test func movesMatchTheirDefinition() {
        var generator = SeededGenerator(state: 5)
        for shuffled in [false, true] {
            var queue = PlayQueue()
            queue.replace(with: queueItems((0..<12).map { "t\($0)" }), currentIndex: 4)
            if shuffled { queue.setShuffle(.items, using: &generator) }
            for _ in 0..<200 {
                let lower = Int.random(in: 0...12, using: &generator)
                let positions = lower..<Int.random(in: lower...12, using: &generator)
                let destination = Int.random(in: 0...(12 - positions.count), using: &generator)
                var expected = queue.positions
                let moved = Array(expected[positions])
                expected.removeSubrange(positions)
                expected.insert(contentsOf: moved, at: destination)
                let (current, sequence, ids) = (queue.current, queue.playing, zip(queue.positions, queue.songIDs))
                #expect(queue.moveEntries(atPositions: positions, to: destination) == true)
                #expect(queue.positions == expected)
                #expect(queue.current == current)
                #expect(queue.playing == (shuffled ? sequence : expected))
                #expect(Dictionary(uniqueKeysWithValues: zip(queue.positions, queue.songIDs)) == Dictionary(uniqueKeysWithValues: ids))
            }
        }
    }

    /// An entry put after another goes there in the queue's own order too, so unshuffled the
    /// two orders stay one (an MPD client sees what plays in the order it plays).
    @Test func anEntryInsertedAfterAnotherIsThereInBothOrders() {
        var queue = queue("a", "b", "c")
        queue.insert(queueItems("x")[0], after: "a")
        queue.insert(queueItems("y")[0], after: nil)
        #expect(queue.positions == ["y", "a", "x", "b", "c"])
        #expect(queue.playing == queue.positions)
        #expect(queue.songIDs == [5, 1, 4, 2, 3])
    }

    /// MPD's `shuffle`: the queue's own order is drawn anew; the current entry goes first in
    /// the range and stays current.
    @Test func shufflingARangeKeepsTheCurrentEntryCurrent() {
        let names = (0..<20).map { "t\($0)" }
        var queue = PlayQueue()
        queue.replace(with: queueItems(names), currentIndex: 7)
        var generator = SeededGenerator(state: 11)
        #expect(queue.shuffleEntries(atPositions: 5..<15, keepingCurrent: true, using: &generator) == true)
        #expect(queue.current?.identifier == "t7")
        #expect(queue.currentPosition == 5)
        #expect(Array(queue.positions[0..<5]) == Array(names[0..<5]))
        #expect(Array(queue.positions[15...]) == Array(names[15...]))
        #expect(Set(queue.positions[5..<15]) == Set(names[5..<15]))
        #expect(queue.positions[5..<15] != names[5..<15])
        #expect(queue.playing == queue.positions)
        // Ids moved with their entries.
        #expect(zip(queue.positions, queue.songIDs).allSatisfy { "t\($1 - 1)" == $0 })
    }

    @Test func singleAndConsumeDecideWhatFollows() {
        var queue = queue("a", "b")
        queue.singleMode = .on
        #expect(queue.pausesAfterCurrent)
        #expect(queue.itemAfterCurrentEnds?.identifier == "b", "the next entry is where playback pauses")
        queue.repeatMode = .all
        #expect(!queue.pausesAfterCurrent)
        #expect(queue.shownRepeatMode == .one)
        #expect(queue.itemAfterCurrentEnds?.identifier == "a", "single with repeat replays the entry")
        queue.consumes = true
        #expect(queue.itemAfterCurrentEnds?.identifier == "b", "under consume nothing plays twice")
        var last = PlayQueue()
        last.replace(with: queueItems("a"))
        last.repeatMode = .all
        last.consumes = true
        #expect(last.itemAfterCurrentEnds == nil)
    }
}

extension [PlayerEffect] {
    var edited: Result<[Int], QueueEditError>? {
        compactMap { if case .edited(let result) = $0 { result } else { nil } }.last
    }
    var events: PlayerChanges? {
        compactMap { if case .notifyEvents(let changes) = $0 { changes } else { nil } }.last
    }
    var handoverPlan: [String]? {
        compactMap { effect -> [String]? in
            switch effect {
            case .updateHandover(let plan), .prepareHandover(let plan): plan.map(\.item.identifier)
            default: nil
            }
        }.last
    }
}

/// The core's side of MPD's edits and modes, input by input.
@Suite struct PlayerCoreQueueEditTests {
    @Test func removingTheCurrentEntryWhilePlayingPlaysTheNext() {
        var p = Driver(tracks("a", "b", "c"))
        p.playing()
        let removed = p.send(.editQueue(.remove(positions: 0..<1)))
        #expect(removed.edited == .success([]))
        #expect(removed.stopsTheEngine)
        #expect(removed.startRequest?.item.identifier == "b")
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true)))
        #expect(p.core.state == .playing)
        #expect(p.core.queue.positions == ["b", "c"])

        // The last one, current, while playing: nothing follows it, playback stops.
        p.send(.editQueue(.play(position: 1)))
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true)))
        let last = p.send(.editQueue(.removeSong(id: 3)))
        #expect(last.startRequest == nil)
        #expect(p.core.state == .stopped)
        #expect(p.current == "b")
    }

    @Test func aBadRangeOrAnUnknownIDIsRefusedAndChangesNothing() {
        var p = Driver(tracks("a", "b", "c"), observed: true)
        p.core.notifiesEvents = true
        p.playing()
        let queue = p.core.queue
        for edit: QueueEdit in [
            .remove(positions: 2..<4), .removeSong(id: 99), .move(positions: 0..<1, to: .position(3)), .moveSong(id: 1, to: .position(3)),
            .moveSong(id: 42, to: .position(0)), .shuffle(positions: 1..<5), .play(position: 3), .playSong(id: 0),
            .insert(tracks("x"), at: .position(4)),
        ] {
            let effects = p.send(.editQueue(edit))
            guard case .failure = effects.edited else {
                Issue.record("\(edit) was not refused")
                continue
            }
            #expect(effects.reply == .noSuchContent)
            #expect(!effects.callsTheEngine && !effects.stopsTheEngine)
            #expect(effects.snapshots.isEmpty && effects.events == nil, "\(edit): nothing changed to tell")
        }
        #expect(p.core.queue == queue)
        #expect(p.core.queue.songIDs == queue.songIDs)
        #expect(p.core.state == .playing)
        #expect(p.send(.editQueue(.removeSong(id: 99))).edited == .failure(.noSuchSong(99)))
        #expect(p.send(.editQueue(.remove(positions: 2..<4))).edited == .failure(.badPosition))
    }

    /// MPD 0.23's places relative to the current entry, as the real mpd resolves them: `+N`
    /// counts after it and `-N` before it, once the moved entries are out of the way.
    @Test func placesRelativeToTheCurrentEntryResolveAsMPDs() {
        var p = Driver(tracks("t1", "t2", "t3", "t4"), current: 2)
        p.send(.editQueue(.move(positions: 0..<1, to: .afterCurrent(offset: 0))))
        #expect(p.core.queue.positions == ["t2", "t3", "t1", "t4"])
        p.send(.editQueue(.move(positions: 3..<4, to: .beforeCurrent(offset: 0))))
        #expect(p.core.queue.positions == ["t2", "t4", "t3", "t1"])
        p.send(.editQueue(.move(positions: 0..<2, to: .afterCurrent(offset: 1))))
        #expect(p.core.queue.positions == ["t3", "t1", "t2", "t4"])
        #expect(p.current == "t3")
        #expect(
            p.send(.editQueue(.move(positions: 0..<1, to: .afterCurrent(offset: 5)))).edited
                == .failure(.movesCurrentRelativeToItself))
        #expect(p.send(.editQueue(.move(positions: 1..<2, to: .afterCurrent(offset: 3)))).edited == .failure(.badPosition))
        #expect(p.send(.editQueue(.move(positions: 1..<2, to: .beforeCurrent(offset: 1)))).edited == .failure(.badPosition))
        #expect(p.send(.editQueue(.move(positions: 1..<2, to: .afterCurrent(offset: .max)))).edited == .failure(.badPosition))
        #expect(p.send(.editQueue(.insert(tracks("x"), at: .afterCurrent(offset: 0)))).edited == .success([5]))
        #expect(p.core.queue.positions == ["t3", "x", "t1", "t2", "t4"])
        #expect(p.send(.editQueue(.moveSong(id: 5, to: .afterCurrent(offset: 3)))).edited == .success([]))
        #expect(p.core.queue.positions == ["t3", "t1", "t2", "t4", "x"])

        var empty = Driver([])
        #expect(empty.send(.editQueue(.insert(tracks("x"), at: .afterCurrent(offset: 0)))).edited == .failure(.noCurrentEntry))
    }

    /// Which edits supersede a start waiting on the engine, and which may start playback.
    @Test func editsMeetStartsAsTheCommandsTheyResemble() {
        #expect(PlayerInput.editQueue(.play(position: 0)).precedence == .startsAnew)
        #expect(PlayerInput.editQueue(.playSong(id: 1)).precedence == .startsAnew)
        #expect(PlayerInput.editQueue(.clear).precedence == .supersedes)
        #expect(PlayerInput.editQueue(.remove(positions: 0..<1)).precedence == .mayStart, "like removing an item")
        for edit: QueueEdit in [
            .insert([], at: nil), .move(positions: 0..<1, to: .position(1)), .shuffle(positions: nil), .setSingle(.on),
            .setConsume(true), .setRepeat(true),
        ] {
            #expect(PlayerInput.editQueue(edit).precedence == .independent, "\(edit)")
        }
    }

    @Test func aFullQueueRefusesAnInsertWhole() {
        var configuration = QueuePlayer.Configuration()
        configuration.maximumQueueLength = 4
        var core = PlayerCore(configuration: configuration, at: .now)
        _ = core.handle(.replaceQueue(tracks("a", "b", "c"), startingAt: 0, play: false), at: .now)
        let refused = core.handle(.editQueue(.insert(tracks("x", "y"), at: nil)), at: .now)
        #expect(refused.edited == .failure(.queueFull(maximum: 4)))
        #expect(core.queue.count == 3)
        #expect(core.handle(.editQueue(.insert(tracks("x"), at: nil)), at: .now).edited == .success([4]))
    }

    @Test func consumeRemovesAnEntryThatFinishedOrWasSkipped() {
        var p = Driver(tracks("a", "b", "c", "d"))
        p.send(.editQueue(.setConsume(true)))
        p.playing()
        // Skipped by "next".
        let skipped = p.send(.next)
        #expect(skipped.startRequest?.item.identifier == "b")
        #expect(p.core.queue.positions == ["b", "c", "d"])
        // Finished, handed over gaplessly: removed when its successor starts.
        #expect(skipped.startRequest?.load?.map(\.item.identifier) == ["c", "d"])
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, duration: .seconds(180))))
        p.seconds = 180
        let c = p.core.queue.addedOrder[1]
        p.send(.engineEvent(.streamStarted(c.url), EngineEventContext(handedOver: c)))
        #expect(p.current == "c")
        #expect(p.core.queue.positions == ["c", "d"])
        // Finished and not handed over: removed at its end.
        p.seconds = 360
        let ended = p.send(.engineEvent(.endOfStream))
        #expect(ended.startRequest?.item.identifier == "d")
        #expect(p.core.queue.positions == ["d"])
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, duration: .seconds(180))))
        // The last one: removed, and the player stops with an empty queue.
        p.seconds = 540
        p.send(.engineEvent(.endOfStream))
        #expect(p.core.queue.isEmpty)
        #expect(p.core.state == .stopped)
    }

    /// As MPD 0.23: single without repeat pauses at the start of the next entry (nothing is
    /// handed over to the engine); oneshot does so once and turns itself off.
    @Test func singlePausesAtTheNextEntryAndOneshotTurnsItselfOff() {
        var p = Driver(tracks("a", "b", "c"), observed: true)
        p.core.notifiesEvents = true
        let single = p.send(.editQueue(.setSingle(.oneshot)))
        #expect(single.events == .options)
        #expect(single.snapshots.last?.singleMode == .oneshot)
        let start = p.send(.play)
        #expect(start.startRequest?.load == [], "nothing handed over: the engine ends with a")
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, duration: .seconds(180))))
        p.seconds = 180
        let ended = p.send(.engineEvent(.endOfStream))
        #expect(ended.startRequest == nil)
        #expect(p.current == "b")
        #expect(p.core.state == .paused)
        #expect(ended.nowPlaying??.elapsedPlaybackTime == .zero)
        #expect(p.core.queue.singleMode == .off)
        #expect(ended.events == [.player, .options])
        // Single is off again: b hands over to c.
        let played = p.send(.play)
        #expect(played.startRequest?.load?.map(\.item.identifier) == ["c"])

        // Single on with repeat: the entry plays again (repeat one, as remotes show).
        var q = Driver(tracks("a", "b"))
        q.send(.editQueue(.setSingle(.on)))
        let repeating = q.send(.editQueue(.setRepeat(true)))
        #expect(repeating.contains { if case .showModes(repeat: .one, _) = $0 { true } else { false } })
        #expect(q.send(.play).startRequest?.load?.map(\.item.identifier) == ["a", "a"])
    }

    @Test func shufflingTheQueueKeepsThePlayingEntryPlaying() {
        var p = Driver(tracks("a", "b", "c", "d", "e", "f"), current: 3)
        p.playing()
        let shuffled = p.send(.editQueue(.shuffle(positions: nil)))
        #expect(shuffled.edited == .success([]))
        #expect(!shuffled.callsTheEngine && !shuffled.stopsTheEngine)
        #expect(p.current == "d")
        #expect(p.core.queue.currentPosition == 0)
        #expect(p.core.state == .playing)
        #expect(shuffled.handoverPlan?.first == p.core.queue.addedOrder[1].identifier, "the hand-over follows the new order")
    }

    @Test func insertMoveAndPlayBySongID() throws {
        var p = Driver(tracks("a", "b"))
        p.core.notifiesEvents = true
        let inserted = p.send(.editQueue(.insert(tracks("x", "y"), at: .position(1))))
        #expect(inserted.edited == .success([3, 4]))
        #expect(inserted.events == .queue)
        #expect(p.core.queue.positions == ["a", "x", "y", "b"])
        #expect(p.send(.editQueue(.moveSong(id: 2, to: .position(0)))).edited == .success([]))
        #expect(p.core.queue.positions == ["b", "a", "x", "y"])
        let summary = p.core.queueSummary(at: p.now)
        #expect(summary.currentPosition == 1 && summary.currentSongID == 1)
        #expect(summary.nextPosition == 2 && summary.nextSongID == 3)
        #expect(summary.count == 4 && summary.state == .stopped)

        let play = p.send(.editQueue(.playSong(id: 4)))
        #expect(play.startRequest?.item.identifier == "y")
        let played = p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true)))
        #expect(played.events == .player)
        #expect(p.core.queueEntries(in: 2..<10).map(\.songID) == [3, 4])
        #expect(p.core.queueEntry(songID: 4)?.position == 3)

        let cleared = p.send(.editQueue(.clear))
        #expect(cleared.stopsTheEngine)
        #expect(cleared.events == [.queue, .player])
        #expect(p.core.queue.isEmpty)
        #expect(p.send(.editQueue(.insert(tracks("z"), at: nil))).edited == .success([5]))
    }

    /// Single and consume are kept with the rest, and a state saved before they existed reads
    /// them as off.
    @Test func singleAndConsumeAreSavedAndRestored() throws {
        var p = Driver(tracks("a", "b"), observed: true)
        p.send(.editQueue(.setSingle(.oneshot)))
        let consume = p.send(.editQueue(.setConsume(true)))
        let snapshot = try #require(consume.snapshots.last)
        #expect(snapshot.singleMode == .oneshot && snapshot.consumes)
        let decoded = try JSONDecoder().decode(PlayerSnapshot.self, from: JSONEncoder().encode(snapshot))
        #expect(decoded == snapshot)

        var q = Driver([])
        let ids = q.core.queue.songIDs.count
        q.send(.restore(decoded, items: tracks("a", "b")))
        #expect(q.core.queue.singleMode == .oneshot && q.core.queue.consumes)
        #expect(ids == 0 && q.core.queue.songIDs.allSatisfy { $0 > 0 })

        let old = #"{"addedOrder":[{"identifier":"a"}],"playOrder":[0],"currentIdentifier":"a","positionMilliseconds":0,"volume":1,"rate":1,"repeatMode":"all","shuffleMode":"off"}"#
        let older = try JSONDecoder().decode(PlayerSnapshot.self, from: Data(old.utf8))
        #expect(older.singleMode == .off && !older.consumes && older.repeatMode == .all)
    }

    /// A remote's loop status shows single: repeat on with single is `Track`; asking for
    /// `Playlist` turns single off.
    @Test func aRemoteAskingToLoopTheQueueTurnsSingleOff() {
        var p = Driver(tracks("a", "b"))
        p.send(.editQueue(.setSingle(.on)))
        p.send(.setRepeat(.all))
        #expect(p.core.queue.singleMode == .off)
        #expect(p.core.queue.shownRepeatMode == .all)
    }
}

/// The actor's queue API over the scripted engine, as the MPD face calls it.
@Suite struct QueuePlayerQueueEditTests {
    @Test func insertMoveRemoveAndClearThroughThePlayer() async throws {
        let p = await ScriptedPlayer(["a", "b", "c"])
        let events = Mutex<[PlayerChanges]>([])
        let observation = await p.player.observeEvents { change in events.withLock { $0.append(change) } }
        defer { observation.cancel() }

        let ids = try await p.player.insert(queueItems(["x", "y"]), atPosition: 1)
        #expect(ids == [4, 5])
        #expect(await p.player.queueEntries(in: 0..<100).map(\.item.identifier) == ["a", "x", "y", "b", "c"])
        #expect(p.nowPlaying.playbackQueue.map(\.identifier) == ["a", "x", "y", "b", "c"], "MPRIS sees the same queue")

        #expect(try await p.player.play(songID: 5) == .success)
        #expect(p.current == "y")
        #expect(p.state == .playing)

        try await p.player.moveEntries(atPositions: 3..<5, to: 0)
        #expect(await p.player.queueEntries(in: 0..<100).map(\.songID) == [2, 3, 1, 4, 5])
        #expect(p.current == "y", "a move keeps what plays")

        #expect(try await p.player.removeEntry(songID: 5) == .success)
        // y was last: none follows it, so playback stops, at the first entry.
        #expect(p.current == "b")
        #expect(p.state == .stopped)
        await #expect(throws: QueueEditError.noSuchSong(5)) { try await p.player.removeEntry(songID: 5) }
        await #expect(throws: QueueEditError.badPosition) { try await p.player.moveEntries(atPositions: 0..<2, to: 4) }

        await p.player.clearQueue()
        let summary = await p.player.queueSummary
        #expect(summary.count == 0 && summary.state == .stopped && summary.currentSongID == nil)
        #expect(p.engine.calls.last == "stop")
        #expect(events.withLock { $0 }.contains { $0.contains(.queue) })
    }

    /// MPRIS's loop status shows single as repeat one when repeat is on; a remote's `Playlist`
    /// turns single off. Single without repeat hands the engine nothing: it ends with the entry.
    @Test func singleShowsInTheLoopStatusAndHandsNothingOver() async throws {
        let p = await ScriptedPlayer(["a", "b"])
        await p.player.setSingle(.on)
        #expect(p.commands.changeRepeatModeCommand.currentRepeatType == .off)
        await p.player.setRepeat(true)
        #expect(p.commands.changeRepeatModeCommand.currentRepeatType == .one)
        #expect(await p.player.queueSummary.nextSongID == 1, "the entry plays again")
        _ = await p.commands.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatType: .all))
        #expect(await p.player.queueSummary.singleMode == .off)
        #expect(p.commands.changeRepeatModeCommand.currentRepeatType == .all)

        await p.player.setRepeat(false)
        await p.player.setSingle(.on)
        #expect(await p.commands.playCommand.perform() == .success)
        #expect(p.engine.aboutToFinish() == nil, "the engine is handed nothing after a")
        await p.player.setSingle(.off)
        #expect(p.engine.aboutToFinish()?.lastPathComponent == "b.ogg")
    }
}
