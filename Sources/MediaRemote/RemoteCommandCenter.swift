import AsyncSupport
/// Every command a remote can send to the app, Apple's `MPRemoteCommandCenter`
/// in shape.
///
/// Create one per player, add targets to the commands the app supports, and
/// hand the centre to a front end such as the MPRIS service, which advertises
/// each available command (`CanPlay`, `CanGoNext`, …) and forwards what
/// remotes send.
///
/// ```swift
/// let commands = RemoteCommandCenter()
/// commands.playCommand.addTarget { _ in player.play(); return .success }
/// commands.nextTrackCommand.addTarget { _ in await player.next() }
/// ```
///
/// **Radio mode.** While any feedback command (like, dislike, bookmark) is
/// available, remotes show a radio-style control set with no previous-track
/// button (``isInRadioMode``). Disabling the feedback commands restores the
/// normal controls.
///
/// Observers registered with ``observeChanges(_:)`` hear about every change
/// remotes can see (enablement, targets, options); wrap several changes in
/// ``performBatchUpdates(_:)`` to announce them once.
public final class RemoteCommandCenter: Sendable {
    private let changes = ChangeNotifier()

    /// Starts or resumes playback (MPRIS `Play`).
    public let playCommand: RemoteCommand<RemoteCommandEvent>
    /// Pauses playback (MPRIS `Pause`).
    public let pauseCommand: RemoteCommand<RemoteCommandEvent>
    /// Stops playback and returns to the start of the item (MPRIS `Stop`).
    public let stopCommand: RemoteCommand<RemoteCommandEvent>
    /// Pauses when playing, plays otherwise (MPRIS `PlayPause`, the media key).
    public let togglePlayPauseCommand: RemoteCommand<RemoteCommandEvent>
    /// Goes to the next item (MPRIS `Next`).
    public let nextTrackCommand: RemoteCommand<RemoteCommandEvent>
    /// Goes to the previous item (MPRIS `Previous`); not offered in radio mode.
    public let previousTrackCommand: RemoteCommand<RemoteCommandEvent>
    /// Skips forward by an interval; ``RemoteCommand/preferredIntervals`` says which.
    public let skipForwardCommand: RemoteCommand<SkipIntervalCommandEvent>
    /// Skips backward by an interval; ``RemoteCommand/preferredIntervals`` says which.
    public let skipBackwardCommand: RemoteCommand<SkipIntervalCommandEvent>
    /// Begins or ends scanning forward.
    public let seekForwardCommand: RemoteCommand<SeekCommandEvent>
    /// Begins or ends scanning backward.
    public let seekBackwardCommand: RemoteCommand<SeekCommandEvent>
    /// Jumps to a position in the current item (MPRIS `SetPosition`, and `Seek` without skip commands).
    public let changePlaybackPositionCommand: RemoteCommand<ChangePlaybackPositionCommandEvent>
    /// Changes the rate; ``RemoteCommand/supportedPlaybackRates`` says which rates exist.
    public let changePlaybackRateCommand: RemoteCommand<ChangePlaybackRateCommandEvent>
    /// Sets the repeat mode; the event carries the mode to set (MPRIS `LoopStatus`).
    public let changeRepeatModeCommand: RemoteCommand<ChangeRepeatModeCommandEvent>
    /// Sets the shuffle mode; the event carries the mode to set (MPRIS `Shuffle`).
    public let changeShuffleModeCommand: RemoteCommand<ChangeShuffleModeCommandEvent>
    /// Likes the current item, or takes the like back (`isNegative`). Enables radio mode.
    public let likeCommand: RemoteCommand<FeedbackCommandEvent>
    /// Dislikes the current item, or takes it back. Enables radio mode.
    public let dislikeCommand: RemoteCommand<FeedbackCommandEvent>
    /// Bookmarks the current item, or removes the bookmark. Enables radio mode.
    public let bookmarkCommand: RemoteCommand<FeedbackCommandEvent>
    /// Rates the current item within the command's ``RemoteCommand/minimumRating`` and
    /// ``RemoteCommand/maximumRating`` (the extension interface's `SetRating`).
    public let ratingCommand: RemoteCommand<RatingCommandEvent>
    /// Sets the output volume (a Linux addition: iOS owns the volume).
    public let changeVolumeCommand: RemoteCommand<ChangeVolumeCommandEvent>
    /// Opens and plays a URL (a Linux addition, for `playerctl open`).
    public let openURLCommand: RemoteCommand<OpenURLCommandEvent>
    /// Plays an entry of ``NowPlayingInfoCenter/playbackQueue`` (a Linux addition, MPRIS `GoTo`).
    public let playItemInQueueCommand: RemoteCommand<PlayItemInQueueCommandEvent>
    /// Inserts a URL into the play queue (a Linux addition, MPRIS `AddTrack`). Remotes may edit
    /// the queue only while this and ``removeItemFromQueueCommand`` are both available.
    public let addItemToQueueCommand: RemoteCommand<AddItemToQueueCommandEvent>
    /// Removes an entry from the play queue (a Linux addition, MPRIS `RemoveTrack`).
    public let removeItemFromQueueCommand: RemoteCommand<RemoveItemFromQueueCommandEvent>

    /// Creates a centre whose commands are all enabled and have no targets, so none is available yet.
    public init() {
        playCommand = RemoteCommand("play", options: .init(), changes: changes)
        pauseCommand = RemoteCommand("pause", options: .init(), changes: changes)
        stopCommand = RemoteCommand("stop", options: .init(), changes: changes)
        togglePlayPauseCommand = RemoteCommand("togglePlayPause", options: .init(), changes: changes)
        nextTrackCommand = RemoteCommand("nextTrack", options: .init(), changes: changes)
        previousTrackCommand = RemoteCommand("previousTrack", options: .init(), changes: changes)
        skipForwardCommand = RemoteCommand("skipForward", options: .init(), changes: changes)
        skipBackwardCommand = RemoteCommand("skipBackward", options: .init(), changes: changes)
        seekForwardCommand = RemoteCommand("seekForward", options: .init(), changes: changes)
        seekBackwardCommand = RemoteCommand("seekBackward", options: .init(), changes: changes)
        changePlaybackPositionCommand = RemoteCommand("changePlaybackPosition", options: .init(), changes: changes)
        changePlaybackRateCommand = RemoteCommand("changePlaybackRate", options: .init(), changes: changes)
        changeRepeatModeCommand = RemoteCommand("changeRepeatMode", options: .init(), changes: changes)
        changeShuffleModeCommand = RemoteCommand("changeShuffleMode", options: .init(), changes: changes)
        likeCommand = RemoteCommand("like", options: .init(localizedTitle: "Like"), changes: changes)
        dislikeCommand = RemoteCommand("dislike", options: .init(localizedTitle: "Dislike"), changes: changes)
        bookmarkCommand = RemoteCommand("bookmark", options: .init(localizedTitle: "Bookmark"), changes: changes)
        ratingCommand = RemoteCommand("rating", options: .init(), changes: changes)
        changeVolumeCommand = RemoteCommand("changeVolume", options: .init(), changes: changes)
        openURLCommand = RemoteCommand("openURL", options: .init(), changes: changes)
        playItemInQueueCommand = RemoteCommand("playItemInQueue", options: .init(), changes: changes)
        addItemToQueueCommand = RemoteCommand("addItemToQueue", options: .init(), changes: changes)
        removeItemFromQueueCommand = RemoteCommand("removeItemFromQueue", options: .init(), changes: changes)
    }

    /// Whether remotes should show radio-style controls: a feedback command is
    /// available, so there is no previous-track button.
    public var isInRadioMode: Bool {
        likeCommand.isAvailable || dislikeCommand.isAvailable || bookmarkCommand.isAvailable
    }

    /// Whether any command is available at all.
    public var hasAvailableCommand: Bool {
        [playCommand, pauseCommand, stopCommand, togglePlayPauseCommand, nextTrackCommand, previousTrackCommand]
            .contains(where: \.isAvailable)
            || skipForwardCommand.isAvailable || skipBackwardCommand.isAvailable
            || seekForwardCommand.isAvailable || seekBackwardCommand.isAvailable
            || changePlaybackPositionCommand.isAvailable || changePlaybackRateCommand.isAvailable
            || changeRepeatModeCommand.isAvailable || changeShuffleModeCommand.isAvailable
            || isInRadioMode || ratingCommand.isAvailable || changeVolumeCommand.isAvailable || openURLCommand.isAvailable
            || playItemInQueueCommand.isAvailable || addItemToQueueCommand.isAvailable
            || removeItemFromQueueCommand.isAvailable
    }

    /// Calls `observer` after every change remotes can see: a command enabled
    /// or disabled, a target added or removed where that changes availability,
    /// or new options. It runs synchronously on the thread that made the change
    /// (after the change is visible), so it must be quick. The observer is called for as long
    /// as the returned observation is kept.
    public func observeChanges(_ observer: @escaping @Sendable () -> Void) -> Observation {
        changes.add(observer)
    }

    /// Runs `body` and announces its changes to observers once, at the end.
    /// Batches nest.
    public func performBatchUpdates<T>(_ body: () throws -> T) rethrows -> T {
        try changes.batch(body)
    }
}
