import Foundation

// The events a command's handler receives, as in Apple's framework: read-only values, made on
// the main queue when a remote's command arrives. Apple's events have `init()` (NSObject's) and
// no other public initializer; so do these. An event made with `init()` names a command that
// belongs to no centre, and carries zero values.

/// A command sent by a remote, as the handler receives it.
open class MPRemoteCommandEvent: NSObject, @unchecked Sendable {  // immutable after init
    private let sender: MPRemoteCommand
    private let time: TimeInterval

    init(command: MPRemoteCommand, timestamp: TimeInterval) {
        self.sender = command
        self.time = timestamp
        super.init()
    }

    /// An event of a command that belongs to no command centre, stamped now.
    public convenience override init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now())
    }

    /// The command that sent the event.
    open var command: MPRemoteCommand { sender }

    /// When the command arrived, in seconds since the system booted (as on iOS; the clock
    /// does not advance while the system sleeps), so two events' timestamps can be compared.
    open var timestamp: TimeInterval { time }

    /// The time now, on the clock of ``timestamp``.
    static func now() -> TimeInterval { ProcessInfo.processInfo.systemUptime }
}

/// A skip forward or backward by an interval (MPRIS `Seek`, the extension interface's
/// `SkipForward` and `SkipBackward`).
open class MPSkipIntervalCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let seconds: TimeInterval

    init(command: MPRemoteCommand, timestamp: TimeInterval, interval: TimeInterval) {
        self.seconds = interval
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), interval: 0)
    }

    /// How far to skip, in seconds; positive (the command says the direction).
    open var interval: TimeInterval { seconds }
}

/// The start or end of scanning (the extension interface's `BeginSeekForward`, …).
open class MPSeekCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let phase: MPSeekCommandEventType

    init(command: MPRemoteCommand, timestamp: TimeInterval, type: MPSeekCommandEventType) {
        self.phase = type
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), type: .beginSeeking)
    }

    /// Whether the remote began or ended seeking.
    open var type: MPSeekCommandEventType { phase }
}

/// A rating of the current item (the extension interface's `SetRating`).
open class MPRatingCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let value: Float

    init(command: MPRemoteCommand, timestamp: TimeInterval, rating: Float) {
        self.value = rating
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), rating: 0)
    }

    /// The rating, within the command's ``MPRatingCommand/minimumRating`` and
    /// ``MPRatingCommand/maximumRating`` (a remote's value outside them never reaches a handler).
    open var rating: Float { value }
}

/// A change of playback rate (MPRIS `Rate`, the extension interface's `CycleRate`).
open class MPChangePlaybackRateCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let rate: Float

    init(command: MPRemoteCommand, timestamp: TimeInterval, playbackRate: Float) {
        self.rate = playbackRate
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), playbackRate: 0)
    }

    /// The rate to play at: one of the command's ``MPChangePlaybackRateCommand/supportedPlaybackRates``
    /// (a remote's rate is snapped to the nearest; NaN, infinities and negative rates are refused).
    open var playbackRate: Float { rate }
}

/// Like, dislike or bookmark, or taking one back (the extension interface's `Like`, `Dislike`,
/// `Bookmark`).
open class MPFeedbackCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let negative: Bool

    init(command: MPRemoteCommand, timestamp: TimeInterval, isNegative: Bool) {
        self.negative = isNegative
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), isNegative: false)
    }

    /// Whether the feedback is taken back (unlike, remove the bookmark) rather than given.
    open var isNegative: Bool { negative }
}

/// A language option to enable or disable.
///
/// No remote on Linux sends one: MPRIS has no language options.
open class MPChangeLanguageOptionCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let option: MPNowPlayingInfoLanguageOption
    private let extent: MPChangeLanguageOptionSetting

    init(
        command: MPRemoteCommand, timestamp: TimeInterval, languageOption: MPNowPlayingInfoLanguageOption,
        setting: MPChangeLanguageOptionSetting
    ) {
        self.option = languageOption
        self.extent = setting
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with an empty option.
    public convenience init() {
        self.init(
            command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(),
            languageOption: MPNowPlayingInfoLanguageOption(), setting: .none)
    }

    /// The language option to change.
    open var languageOption: MPNowPlayingInfoLanguageOption { option }
    /// How far the change reaches.
    open var setting: MPChangeLanguageOptionSetting { extent }
}

/// A jump to a position in the current item (MPRIS `SetPosition`, and `Seek` while no skip
/// command is offered).
open class MPChangePlaybackPositionCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let position: TimeInterval

    init(command: MPRemoteCommand, timestamp: TimeInterval, positionTime: TimeInterval) {
        self.position = positionTime
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), positionTime: 0)
    }

    /// The position to play from, in seconds from the start of the item; never negative.
    open var positionTime: TimeInterval { position }
}

/// A shuffle mode to set (MPRIS `Shuffle`): the mode itself, never a toggle.
open class MPChangeShuffleModeCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let type: MPShuffleType

    init(command: MPRemoteCommand, timestamp: TimeInterval, shuffleType: MPShuffleType) {
        self.type = shuffleType
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), shuffleType: .off)
    }

    /// The shuffle mode to switch to.
    open var shuffleType: MPShuffleType { type }
    /// Whether the mode should be kept for later playback sessions: always false, as no
    /// remote on Linux can ask for that.
    open var preservesShuffleMode: Bool { false }
}

/// A repeat mode to set (MPRIS `LoopStatus`): the mode itself, never a toggle.
open class MPChangeRepeatModeCommandEvent: MPRemoteCommandEvent, @unchecked Sendable {  // immutable after init
    private let type: MPRepeatType

    init(command: MPRemoteCommand, timestamp: TimeInterval, repeatType: MPRepeatType) {
        self.type = repeatType
        super.init(command: command, timestamp: timestamp)
    }

    /// An event of a command that belongs to no command centre, with a zero value.
    public convenience init() {
        self.init(command: MPRemoteCommand.detached(), timestamp: MPRemoteCommandEvent.now(), repeatType: .off)
    }

    /// The repeat mode to switch to.
    open var repeatType: MPRepeatType { type }
    /// Whether the mode should be kept for later playback sessions: always false, as no
    /// remote on Linux can ask for that.
    open var preservesRepeatMode: Bool { false }
}
