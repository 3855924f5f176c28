import MediaRemote
import Playback
import Testing

/// MPD's `status` reads the player's summary without waiting for the actor: what it reads must
/// be what the actor holds, after every kind of change.
@Suite struct CurrentSummaryTests {
    @Test func theSummaryReadWithoutTheActorIsTheActorsOwnAfterEditsAndCommands() async throws {
        let p = await ScriptedPlayer(["a", "b", "c"])
        func expectSame(_ step: String) async {
            let now = ContinuousClock.now
            let isolated = await p.player.queueSummary(at: now)
            #expect(p.player.currentSummary(at: now) == isolated, "after \(step)")
            let entry = await isolated.currentSongID.asyncMap { await p.player.queueEntry(songID: $0) } ?? nil
            #expect(p.player.currentEntry == entry, "after \(step)")
        }
        await expectSame("the queue was set, stopped")
        #expect(await p.commands.playCommand.perform() == .success)
        await expectSame("play")
        try await Task.sleep(for: .milliseconds(20))
        await expectSame("playing a while")
        #expect(p.player.currentSummary.state == .playing)
        _ = try await p.player.insert(queueItems(["d"]))
        await expectSame("an insert")
        #expect(p.player.currentSummary.count == 4)
        #expect(await p.commands.nextTrackCommand.perform() == .success)
        await expectSame("next")
        #expect(p.player.currentSummary.currentPosition == 1)
        #expect(await p.commands.pauseCommand.perform() == .success)
        await expectSame("pause")
        #expect(p.player.currentSummary.state == .paused)
        #expect(await p.commands.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatType: .all)) == .success)
        await expectSame("repeat")
        await p.player.clearQueue()
        await expectSame("clear")
        #expect(p.player.currentSummary.count == 0)
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async -> T) async -> T? {
        guard let self else { return nil }
        return await transform(self)
    }
}
