import AsyncSupport
import MediaRemote
import Testing

@Suite("RemoteCommandCenter")
struct RemoteCommandCenterTests {
    let center = RemoteCommandCenter()
    let changes = Recorder<Void>()

    let observation: Observation

    init() { observation = center.observeChanges { [changes] in changes.record(()) } }

    @Test func observersHearEnablingAndDisablingButNotTheSameValue() {
        center.playCommand.isEnabled = true  // already enabled
        #expect(changes.count == 0)
        center.playCommand.isEnabled = false
        #expect(changes.count == 1)
        center.playCommand.isEnabled = false
        #expect(changes.count == 1)
        center.playCommand.isEnabled = true
        #expect(changes.count == 2)
    }

    @Test func observersHearTargetsOnlyWhenAvailabilityChanges() {
        let command = center.nextTrackCommand
        let first = command.addTarget { _ in .success }
        #expect(changes.count == 1, "first target makes the command available")
        let second = command.addTarget { _ in .success }
        #expect(changes.count == 1, "a second target changes nothing remotes see")
        command.removeTarget(first)
        #expect(changes.count == 1)
        command.removeTarget(second)
        #expect(changes.count == 2, "last target removed makes the command unavailable")
        center.stopCommand.isEnabled = false
        #expect(changes.count == 3)
        center.stopCommand.addTarget { _ in .success }
        #expect(changes.count == 3, "a target on a disabled command leaves it unavailable")
    }

    @Test func observersHearOptionChangesButNotTheSameOptions() {
        center.skipForwardCommand.preferredIntervals = [.seconds(30)]
        #expect(changes.count == 1)
        center.skipForwardCommand.preferredIntervals = [.seconds(30)]
        #expect(changes.count == 1)
        center.changeRepeatModeCommand.currentRepeatType = .all
        #expect(changes.count == 2)
        center.changeRepeatModeCommand.currentRepeatType = .all
        #expect(changes.count == 2)
        center.changePlaybackRateCommand.supportedPlaybackRates = [1, 2]
        #expect(changes.count == 3)
        center.changePlaybackRateCommand.supportedPlaybackRates = [2, 1, 1, 0]  // normalises to [1, 2]
        #expect(changes.count == 3)
        center.likeCommand.isActive = true
        #expect(changes.count == 4)
    }

    @Test func batchUpdatesAnnounceOnceEvenWhenNested() {
        let result = center.performBatchUpdates {
            center.playCommand.addTarget { _ in .success }
            center.pauseCommand.addTarget { _ in .success }
            center.performBatchUpdates {
                center.stopCommand.isEnabled = false
                center.changeShuffleModeCommand.currentShuffleType = .items
            }
            #expect(changes.count == 0, "the inner batch must not announce")
            center.skipBackwardCommand.preferredIntervals = [.seconds(5)]
            #expect(changes.count == 0)
            return 42
        }
        #expect(result == 42)
        #expect(changes.count == 1)
        center.performBatchUpdates { center.playCommand.isEnabled = true }  // no visible change
        #expect(changes.count == 1)
    }

    @Test func cancelStopsObservation() {
        let other = Recorder<Void>()
        let observation = center.observeChanges { other.record(()) }
        center.playCommand.isEnabled = false
        #expect(other.count == 1)
        observation.cancel()
        observation.cancel()  // a second cancel does nothing
        center.playCommand.isEnabled = true
        #expect(other.count == 1)
        #expect(changes.count == 2, "other observers keep observing")
    }

    enum Feedback: CaseIterable, Sendable {
        case like, dislike, bookmark
        func command(in center: RemoteCommandCenter) -> RemoteCommand<FeedbackCommandEvent> {
            switch self {
            case .like: center.likeCommand
            case .dislike: center.dislikeCommand
            case .bookmark: center.bookmarkCommand
            }
        }
    }

    @Test(arguments: Feedback.allCases)
    func anAvailableFeedbackCommandMeansRadioMode(feedback: Feedback) {
        let command = feedback.command(in: center)
        #expect(command.isEnabled)
        #expect(!center.isInRadioMode, "enabled without a target is not available")
        command.addTarget { _ in .success }
        #expect(center.isInRadioMode)
        command.isEnabled = false  // targets stay
        #expect(!center.isInRadioMode, "disabling alone restores the normal controls")
        command.isEnabled = true
        #expect(center.isInRadioMode)
    }

    @Test func hasAvailableCommandFollowsEveryKindOfCommand() {
        #expect(!center.hasAvailableCommand)
        center.changeVolumeCommand.addTarget { _ in .success }
        #expect(center.hasAvailableCommand)
        center.changeVolumeCommand.isEnabled = false
        #expect(!center.hasAvailableCommand)
        center.bookmarkCommand.addTarget { _ in .success }
        #expect(center.hasAvailableCommand)
        center.bookmarkCommand.removeAllTargets()
        #expect(!center.hasAvailableCommand)
    }
}
