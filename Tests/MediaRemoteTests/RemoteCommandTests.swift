import MediaRemote
import Testing

@Suite("RemoteCommand")
struct RemoteCommandTests {
    let center = RemoteCommandCenter()

    @Test func isAvailableOnlyWhenEnabledAndHasATarget() {
        let command = center.playCommand
        #expect(command.isEnabled)
        #expect(!command.isAvailable, "enabled but no target")
        command.addTarget { _ in .success }
        #expect(command.isAvailable)
        command.isEnabled = false
        #expect(!command.isAvailable, "has a target but disabled")
        command.isEnabled = true
        #expect(command.isAvailable)
    }

    @Test func performOnUnavailableCommandReturnsNilAndRunsNothing() async {
        let ran = Recorder<Int>()
        #expect(await center.playCommand.perform() == nil, "no target")
        center.playCommand.addTarget { _ in ran.record(1); return .success }
        center.playCommand.isEnabled = false
        #expect(await center.playCommand.perform() == nil, "disabled")
        #expect(ran.values.isEmpty)
    }

    @Test func targetsRunInTheOrderTheyWereAdded() async {
        let ran = Recorder<Int>()
        for index in 1...3 { center.nextTrackCommand.addTarget { _ in ran.record(index); return .success } }
        #expect(await center.nextTrackCommand.perform() == .success)
        #expect(ran.values == [1, 2, 3])
    }

    @Test func firstNonSuccessStatusStopsTheRunAndIsReturned() async {
        let ran = Recorder<Int>()
        let command = center.pauseCommand
        command.addTarget { _ in ran.record(1); return .success }
        command.addTarget { _ in ran.record(2); return .noActionableNowPlayingItem }
        command.addTarget { _ in ran.record(3); return .commandFailed }
        #expect(await command.perform() == .noActionableNowPlayingItem)
        #expect(ran.values == [1, 2], "the third target must not act on a refused command")
    }

    @Test(arguments: [
        RemoteCommandHandlerStatus.success, .noSuchContent, .noActionableNowPlayingItem, .deviceNotFound, .commandFailed,
        .notPlayable(reason: "not audio"),
    ])
    func everyStatusIsPassedThrough(status: RemoteCommandHandlerStatus) async {
        center.stopCommand.addTarget { _ in status }
        #expect(await center.stopCommand.perform() == status)
    }

    @Test func removingTargets() async {
        let ran = Recorder<String>()
        let command = center.togglePlayPauseCommand
        let first = command.addTarget { _ in ran.record("first"); return .success }
        let second = command.addTarget { _ in ran.record("second"); return .success }
        command.removeTarget(first)
        command.removeTarget(first)  // already gone: nothing happens
        #expect(command.isAvailable)
        #expect(await command.perform() == .success)
        #expect(ran.values == ["second"])
        command.removeTarget(second)
        #expect(!command.isAvailable)
        #expect(await command.perform() == nil)
        #expect(ran.values == ["second"])

        command.addTarget { _ in ran.record("third"); return .success }
        command.addTarget { _ in ran.record("fourth"); return .success }
        command.removeAllTargets()
        #expect(!command.isAvailable)
        #expect(await command.perform() == nil)
        #expect(ran.values == ["second"])
    }

    @Test(arguments: RepeatType.allCases)
    func repeatEventCarriesTheRequestedType(type: RepeatType) async {
        let received = Recorder<RepeatType>()
        center.changeRepeatModeCommand.addTarget { event in received.record(event.repeatType); return .success }
        #expect(await center.changeRepeatModeCommand.perform(ChangeRepeatModeCommandEvent(repeatType: type)) == .success)
        #expect(received.values == [type])
    }

    @Test(arguments: ShuffleType.allCases)
    func shuffleEventCarriesTheRequestedType(type: ShuffleType) async {
        let received = Recorder<ShuffleType>()
        center.changeShuffleModeCommand.addTarget { event in received.record(event.shuffleType); return .success }
        #expect(
            await center.changeShuffleModeCommand.perform(ChangeShuffleModeCommandEvent(shuffleType: type)) == .success)
        #expect(received.values == [type])
    }

    @Test func currentRepeatAndShuffleTypesCanBeSet() {
        #expect(center.changeRepeatModeCommand.currentRepeatType == .off)
        #expect(center.changeShuffleModeCommand.currentShuffleType == .off)
        center.changeRepeatModeCommand.currentRepeatType = .one
        center.changeShuffleModeCommand.currentShuffleType = .collections
        #expect(center.changeRepeatModeCommand.currentRepeatType == .one)
        #expect(center.changeRepeatModeCommand.options == RepeatModeOptions(currentRepeatType: .one))
        #expect(center.changeShuffleModeCommand.currentShuffleType == .collections)
        #expect(center.changeShuffleModeCommand.options == ShuffleModeOptions(currentShuffleType: .collections))
    }
}
