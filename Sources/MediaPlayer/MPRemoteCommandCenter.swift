import Foundation
import MediaRemote

/// The commands remotes can send to the app: media keys, `playerctl`, desktop shells' media
/// controls, head units — everything that speaks MPRIS to the app's player.
///
/// ```swift
/// let center = MPRemoteCommandCenter.shared()
/// center.playCommand.addTarget { _ in
///     player.play()
///     return .success
/// }
/// center.skipForwardCommand.preferredIntervals = [30]
/// ```
///
/// The first call of ``shared()`` publishes the app's MPRIS player on the session bus (see
/// ``LinuxMediaPlayer``), after the main queue's current turn. Each command is offered to
/// remotes while it is enabled and has a target, and handlers run on the main queue.
///
/// | Command | What remotes send |
/// | --- | --- |
/// | play, pause, togglePlayPause, stop | MPRIS `Play`, `Pause`, `PlayPause`, `Stop` |
/// | nextTrack, previousTrack | `Next`, `Previous` |
/// | skipForward, skipBackward | `Seek` by an offset; the extension interface's `SkipForward`, `SkipBackward` |
/// | changePlaybackPosition | `SetPosition`; `Seek` while no skip command is offered |
/// | changePlaybackRate | a write of `Rate` (0 pauses instead); `CycleRate` |
/// | changeRepeatMode, changeShuffleMode | writes of `LoopStatus`, `Shuffle` |
/// | seekForward, seekBackward | `BeginSeekForward`, `EndSeekForward`, … |
/// | like, dislike, bookmark | `Like`, `Dislike`, `Bookmark` |
/// | rating | `SetRating` |
///
/// The extension interface is `org.mprisbridge.Player1`, on the MPRIS object.
///
/// Differences from Apple's:
/// - `addTarget(_:action:)` and `removeTarget(_:action:)` are absent: there is no Objective-C
///   runtime to send a selector. Use ``MPRemoteCommand/addTarget(handler:)``.
/// - ``MPRemoteCommand/addTarget(handler:)`` is `@discardableResult`: an app that never removes
///   its target need not keep the token.
/// - Handlers run on the main queue (the main actor). In a process whose main thread called
///   `dispatchMain()` (an `async` main does), Linux drains that queue on another thread, so
///   `Thread.isMainThread` is false there; under `RunLoop.main.run()` it is true.
/// - ``enableLanguageOptionCommand`` and ``disableLanguageOptionCommand`` keep their targets, but
///   no remote on Linux sends them (MPRIS has no language options).
/// - Remotes cannot ask for a mode to be kept across sessions:
///   ``MPChangeRepeatModeCommandEvent/preservesRepeatMode`` and
///   ``MPChangeShuffleModeCommandEvent/preservesShuffleMode`` are always false.
/// - ``MPRemoteCommandEvent/timestamp`` is seconds since boot as on iOS, read from the Linux
///   monotonic clock.
/// - Invalid settings are dropped instead of kept: a skip interval or rate that is not positive
///   and finite; supported rates are kept sorted and without duplicates.
/// - A rating outside ``MPRatingCommand/minimumRating``…``MPRatingCommand/maximumRating``, a NaN
///   or negative rate, an unknown `LoopStatus` are refused with a D-Bus error before any handler
///   runs.
/// - An event an app makes with `init()` names a command of no centre (on iOS its command is
///   unset).
/// - ``ratingCommand``'s default range is 0 to 1 (MPRIS's `xesam:userRating` scale); Apple
///   documents none.
open class MPRemoteCommandCenter: NSObject, @unchecked Sendable {  // immutable: every command keeps its state in MediaRemote
    private static let center = MPRemoteCommandCenter(MediaPlayerRuntime.shared.commands)

    private let pause, play, stop, togglePlayPause: MPRemoteCommand
    private let enableLanguageOption, disableLanguageOption: MPRemoteCommand
    private let changePlaybackRate: MPChangePlaybackRateCommand
    private let changeRepeatMode: MPChangeRepeatModeCommand
    private let changeShuffleMode: MPChangeShuffleModeCommand
    private let nextTrack, previousTrack: MPRemoteCommand
    private let skipForward, skipBackward: MPSkipIntervalCommand
    private let seekForward, seekBackward: MPRemoteCommand
    private let changePlaybackPosition: MPChangePlaybackPositionCommand
    private let rating: MPRatingCommand
    private let like, dislike, bookmark: MPFeedbackCommand

    init(_ commands: RemoteCommandCenter) {
        pause = MPRemoteCommand(commands.pauseCommand)
        play = MPRemoteCommand(commands.playCommand)
        stop = MPRemoteCommand(commands.stopCommand)
        togglePlayPause = MPRemoteCommand(commands.togglePlayPauseCommand)
        enableLanguageOption = MPRemoteCommand(link: LocalLink())
        disableLanguageOption = MPRemoteCommand(link: LocalLink())
        changePlaybackRate = MPChangePlaybackRateCommand(commands.changePlaybackRateCommand)
        changeRepeatMode = MPChangeRepeatModeCommand(commands.changeRepeatModeCommand)
        changeShuffleMode = MPChangeShuffleModeCommand(commands.changeShuffleModeCommand)
        nextTrack = MPRemoteCommand(commands.nextTrackCommand)
        previousTrack = MPRemoteCommand(commands.previousTrackCommand)
        skipForward = MPSkipIntervalCommand(commands.skipForwardCommand)
        skipBackward = MPSkipIntervalCommand(commands.skipBackwardCommand)
        seekForward = MPRemoteCommand(seeking: commands.seekForwardCommand)
        seekBackward = MPRemoteCommand(seeking: commands.seekBackwardCommand)
        changePlaybackPosition = MPChangePlaybackPositionCommand(commands.changePlaybackPositionCommand)
        rating = MPRatingCommand(commands.ratingCommand)
        like = MPFeedbackCommand(commands.likeCommand)
        dislike = MPFeedbackCommand(commands.dislikeCommand)
        bookmark = MPFeedbackCommand(commands.bookmarkCommand)
        super.init()
    }

    @available(*, unavailable, message: "use MPRemoteCommandCenter.shared()")
    public override init() { fatalError("MPRemoteCommandCenter() is unavailable") }

    /// The app's command centre. The first call publishes the app's MPRIS player.
    open class func shared() -> MPRemoteCommandCenter {
        MediaPlayerRuntime.shared.publishPlayer()
        return center
    }

    // MARK: Playback

    /// Pauses playback (MPRIS `Pause`; `PlayPause` while playing, without a toggle target).
    open var pauseCommand: MPRemoteCommand { pause }
    /// Starts or resumes playback (MPRIS `Play`; `PlayPause` while paused, without a toggle target).
    open var playCommand: MPRemoteCommand { play }
    /// Stops playback (MPRIS `Stop`).
    open var stopCommand: MPRemoteCommand { stop }
    /// Pauses while playing, plays otherwise (MPRIS `PlayPause`, the media key).
    open var togglePlayPauseCommand: MPRemoteCommand { togglePlayPause }
    /// Enables a language option; its events are ``MPChangeLanguageOptionCommandEvent``s. No
    /// remote on Linux sends it: MPRIS has no language options.
    open var enableLanguageOptionCommand: MPRemoteCommand { enableLanguageOption }
    /// Disables a language option; its events are ``MPChangeLanguageOptionCommandEvent``s. No
    /// remote on Linux sends it: MPRIS has no language options.
    open var disableLanguageOptionCommand: MPRemoteCommand { disableLanguageOption }
    /// Changes the playback rate (a write of MPRIS `Rate`).
    open var changePlaybackRateCommand: MPChangePlaybackRateCommand { changePlaybackRate }
    /// Sets the repeat mode (a write of MPRIS `LoopStatus`).
    open var changeRepeatModeCommand: MPChangeRepeatModeCommand { changeRepeatMode }
    /// Sets the shuffle mode (a write of MPRIS `Shuffle`).
    open var changeShuffleModeCommand: MPChangeShuffleModeCommand { changeShuffleMode }

    // MARK: Previous and next

    /// Goes to the next item (MPRIS `Next`, `CanGoNext`).
    open var nextTrackCommand: MPRemoteCommand { nextTrack }
    /// Goes to the previous item (MPRIS `Previous`, `CanGoPrevious`), also while a feedback
    /// command is offered, as on iOS.
    open var previousTrackCommand: MPRemoteCommand { previousTrack }

    // MARK: Skipping and seeking

    /// Skips forward by an interval (MPRIS `Seek` with a positive offset; `SkipForward`).
    open var skipForwardCommand: MPSkipIntervalCommand { skipForward }
    /// Skips backward by an interval (MPRIS `Seek` with a negative offset; `SkipBackward`).
    open var skipBackwardCommand: MPSkipIntervalCommand { skipBackward }
    /// Begins or ends scanning forward (`BeginSeekForward`, `EndSeekForward`); its events are
    /// ``MPSeekCommandEvent``s.
    open var seekForwardCommand: MPRemoteCommand { seekForward }
    /// Begins or ends scanning backward (`BeginSeekBackward`, `EndSeekBackward`); its events
    /// are ``MPSeekCommandEvent``s.
    open var seekBackwardCommand: MPRemoteCommand { seekBackward }
    /// Jumps to a position (MPRIS `SetPosition`).
    open var changePlaybackPositionCommand: MPChangePlaybackPositionCommand { changePlaybackPosition }

    // MARK: Rating and feedback

    /// Rates the current item (`SetRating`).
    open var ratingCommand: MPRatingCommand { rating }
    /// Likes the current item, or takes the like back (`Like`).
    open var likeCommand: MPFeedbackCommand { like }
    /// Dislikes the current item, or takes it back (`Dislike`).
    open var dislikeCommand: MPFeedbackCommand { dislike }
    /// Bookmarks the current item, or removes the bookmark (`Bookmark`).
    open var bookmarkCommand: MPFeedbackCommand { bookmark }
}

extension MPRemoteCommand {
    /// A seek command, whose events are ``MPSeekCommandEvent``s.
    fileprivate convenience init(seeking remote: RemoteCommand<SeekCommandEvent>) {
        self.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPSeekCommandEvent(command: command, timestamp: timestamp, type: MPSeekCommandEventType(event.phase))
            })
    }
}
