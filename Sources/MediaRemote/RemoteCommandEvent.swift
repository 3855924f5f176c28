#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The value a remote sends with a command. Each kind of command has its own
/// event type and its own ``Options``: the settings remotes see.
public protocol CommandEvent: Sendable {
    /// What remotes see of the command besides whether it is available.
    associatedtype Options: Sendable & Equatable = NoCommandOptions
}

/// A command with no settings of its own.
public struct NoCommandOptions: Sendable, Equatable {
    public init() {}
}

/// The event of a plain command (play, pause, stop, toggle, next, previous): it carries nothing.
public struct RemoteCommandEvent: CommandEvent, Equatable {
    public init() {}
}

// MARK: Skipping

/// Skip forward or backward by an interval.
public struct SkipIntervalCommandEvent: CommandEvent, Equatable {
    public typealias Options = SkipIntervalOptions
    /// How far to skip; always positive (the command says the direction).
    public var interval: Duration
    public init(interval: Duration) { self.interval = interval }
}

/// The intervals a skip command prefers, shown by remotes on their skip buttons.
public struct SkipIntervalOptions: Sendable, Equatable {
    /// Positive intervals, the first being the one a plain button press uses.
    public var preferredIntervals: [Duration]
    public init(preferredIntervals: [Duration] = [.seconds(15)]) { self.preferredIntervals = preferredIntervals }
}

extension RemoteCommand where Event == SkipIntervalCommandEvent {
    /// The intervals remotes offer (positive); the first is the default skip.
    public var preferredIntervals: [Duration] {
        get { options.preferredIntervals }
        set { options.preferredIntervals = newValue }
    }
}

// MARK: Scanning

/// Begin or end scanning (fast-forward or rewind while a button is held).
public struct SeekCommandEvent: CommandEvent, Equatable {
    /// Whether scanning starts (button pressed) or ends (button released).
    public enum Phase: Sendable, Equatable {
        case beginSeeking, endSeeking
    }
    /// Whether scanning starts or ends.
    public var phase: Phase
    public init(_ phase: Phase) { self.phase = phase }
}

// MARK: Position

/// Jump to a position in the current item.
public struct ChangePlaybackPositionCommandEvent: CommandEvent, Equatable {
    /// The position to play from, from the start of the item; never negative.
    public var positionTime: Duration
    public init(positionTime: Duration) { self.positionTime = positionTime }
}

// MARK: Rate

/// Play at another rate.
public struct ChangePlaybackRateCommandEvent: CommandEvent, Equatable {
    public typealias Options = PlaybackRateOptions
    /// The requested rate, already snapped to one of the supported rates (1 is normal speed).
    public var playbackRate: Double
    public init(playbackRate: Double) { self.playbackRate = playbackRate }
}

/// The rates an app can play at.
public struct PlaybackRateOptions: Sendable, Equatable {
    /// Positive, finite rates; 1 is normal speed. Kept sorted and free of duplicates.
    public var supportedPlaybackRates: [Double] {
        didSet { supportedPlaybackRates = Self.normalized(supportedPlaybackRates) }
    }

    public init(supportedPlaybackRates: [Double] = [1]) {
        self.supportedPlaybackRates = Self.normalized(supportedPlaybackRates)
    }

    /// Drops rates that are not positive and finite; sorts; an empty list means normal speed only.
    static func normalized(_ rates: [Double]) -> [Double] {
        let valid = Set(rates.filter { $0.isFinite && $0 > 0 }).sorted()
        return valid.isEmpty ? [1] : valid
    }

    /// The slowest supported rate.
    public var minimumRate: Double { supportedPlaybackRates.first ?? 1 }
    /// The fastest supported rate.
    public var maximumRate: Double { supportedPlaybackRates.last ?? 1 }

    /// The supported rate nearest to `rate` (the faster one on a tie), or `nil`
    /// when `rate` is not a positive finite number.
    ///
    /// Any rate a remote asks for lands on a rate the app really plays:
    /// 1.3 becomes 1.25 when the app supports 1, 1.25 and 1.5, never an
    /// unsupported 1.3 that the app would ignore.
    public func nearestSupportedRate(to rate: Double) -> Double? {
        guard rate.isFinite, rate > 0 else { return nil }
        var best = supportedPlaybackRates[0]
        for candidate in supportedPlaybackRates where abs(candidate - rate) <= abs(best - rate) + 1e-9 {
            best = candidate
        }
        return best
    }

    /// The next faster supported rate after `rate`, wrapping from the fastest to the slowest:
    /// what a "rate" button that cycles does.
    public func supportedRate(after rate: Double) -> Double {
        supportedPlaybackRates.first { $0 > rate + 1e-9 } ?? minimumRate
    }
}

extension RemoteCommand where Event == ChangePlaybackRateCommandEvent {
    /// The rates the app plays at; see ``PlaybackRateOptions``.
    public var supportedPlaybackRates: [Double] {
        get { options.supportedPlaybackRates }
        set { options.supportedPlaybackRates = newValue }
    }
}

// MARK: Repeat and shuffle

/// What repeats when the end of an item or of the queue is reached.
public enum RepeatType: Sendable, Hashable, CaseIterable {
    /// Stop at the end of the queue.
    case off
    /// Play the current item again and again.
    case one
    /// Start the queue again after its last item.
    case all
}

/// Set the repeat mode. The event carries the mode to set, never a toggle:
/// a car sets it when it connects, whatever it was.
public struct ChangeRepeatModeCommandEvent: CommandEvent, Equatable {
    public typealias Options = RepeatModeOptions
    /// The mode to switch to.
    public var repeatType: RepeatType
    public init(repeatType: RepeatType) { self.repeatType = repeatType }
}

/// The repeat mode remotes show.
public struct RepeatModeOptions: Sendable, Equatable {
    /// The mode in effect; the app updates it after carrying out a change.
    public var currentRepeatType: RepeatType
    public init(currentRepeatType: RepeatType = .off) { self.currentRepeatType = currentRepeatType }
}

extension RemoteCommand where Event == ChangeRepeatModeCommandEvent {
    /// The repeat mode in effect, as remotes show it. Set it after carrying out a change.
    public var currentRepeatType: RepeatType {
        get { options.currentRepeatType }
        set { options.currentRepeatType = newValue }
    }
}

/// How the queue is ordered.
public enum ShuffleType: Sendable, Hashable, CaseIterable {
    /// In order.
    case off
    /// Items in random order.
    case items
    /// Collections (albums) in random order, items in order within each.
    case collections
}

/// Set the shuffle mode. The event carries the mode to set, never a toggle.
public struct ChangeShuffleModeCommandEvent: CommandEvent, Equatable {
    public typealias Options = ShuffleModeOptions
    /// The mode to switch to.
    public var shuffleType: ShuffleType
    public init(shuffleType: ShuffleType) { self.shuffleType = shuffleType }
}

/// The shuffle mode remotes show.
public struct ShuffleModeOptions: Sendable, Equatable {
    /// The mode in effect; the app updates it after carrying out a change.
    public var currentShuffleType: ShuffleType
    public init(currentShuffleType: ShuffleType = .off) { self.currentShuffleType = currentShuffleType }
}

extension RemoteCommand where Event == ChangeShuffleModeCommandEvent {
    /// The shuffle mode in effect, as remotes show it. Set it after carrying out a change.
    public var currentShuffleType: ShuffleType {
        get { options.currentShuffleType }
        set { options.currentShuffleType = newValue }
    }
}

// MARK: Feedback

/// Like, dislike or bookmark the current item.
public struct FeedbackCommandEvent: CommandEvent, Equatable {
    public typealias Options = FeedbackOptions
    /// `true` to take the feedback back (unlike, remove the bookmark).
    public var isNegative: Bool
    public init(isNegative: Bool = false) { self.isNegative = isNegative }
}

/// What remotes show of a feedback command.
public struct FeedbackOptions: Sendable, Equatable {
    /// Whether the current item has this feedback (is liked, is bookmarked).
    public var isActive: Bool
    /// The button's label, in the user's language ("Love this song").
    public var localizedTitle: String
    /// A shorter label for small screens ("Love").
    public var localizedShortTitle: String

    public init(isActive: Bool = false, localizedTitle: String, localizedShortTitle: String? = nil) {
        self.isActive = isActive
        self.localizedTitle = localizedTitle
        self.localizedShortTitle = localizedShortTitle ?? localizedTitle
    }
}

extension RemoteCommand where Event == FeedbackCommandEvent {
    /// Whether the current item has this feedback. Set it after carrying out a command.
    public var isActive: Bool {
        get { options.isActive }
        set { options.isActive = newValue }
    }
    /// The button's label, in the user's language.
    public var localizedTitle: String {
        get { options.localizedTitle }
        set { options.localizedTitle = newValue }
    }
    /// A shorter label for small screens.
    public var localizedShortTitle: String {
        get { options.localizedShortTitle }
        set { options.localizedShortTitle = newValue }
    }
}

// MARK: Rating

/// Rate the current item. The rating lies within the command's
/// ``RemoteCommand/minimumRating`` and ``RemoteCommand/maximumRating``: a remote's value
/// outside them (or not a number) is refused before any target runs.
public struct RatingCommandEvent: CommandEvent, Equatable {
    public typealias Options = RatingOptions
    /// The rating to give, within the command's range.
    public var rating: Double
    public init(rating: Double) { self.rating = rating }
}

/// The range of ratings remotes may send.
public struct RatingOptions: Sendable, Equatable {
    /// The lowest rating. Default 0.
    public var minimumRating: Double
    /// The highest rating. Default 1, the scale of MPRIS's `xesam:userRating`.
    public var maximumRating: Double

    public init(minimumRating: Double = 0, maximumRating: Double = 1) {
        self.minimumRating = minimumRating
        self.maximumRating = maximumRating
    }

    /// Whether a remote may send `rating`: a number within the range (both ends included).
    public func accepts(_ rating: Double) -> Bool {
        rating >= minimumRating && rating <= maximumRating
    }
}

extension RemoteCommand where Event == RatingCommandEvent {
    /// The lowest rating remotes may send.
    public var minimumRating: Double {
        get { options.minimumRating }
        set { options.minimumRating = newValue }
    }
    /// The highest rating remotes may send.
    public var maximumRating: Double {
        get { options.maximumRating }
        set { options.maximumRating = newValue }
    }
}

// MARK: Volume

/// Set the output volume. Not part of Apple's command centre (iOS owns the
/// volume there); on Linux the app does, and remotes set it through MPRIS.
public struct ChangeVolumeCommandEvent: CommandEvent, Equatable {
    /// Linear volume: 0 is silent, 1 is full; above 1 amplifies. Never negative or NaN.
    public var volume: Double
    public init(volume: Double) { self.volume = volume }
}

// MARK: Opening

/// Play what a URL points at (a file or a stream). Not part of Apple's command
/// centre; on Linux a remote may hand the player a URL (`playerctl open`).
public struct OpenURLCommandEvent: CommandEvent, Equatable {
    public typealias Options = OpenURLOptions
    /// The URL to open; its scheme is one of ``OpenURLOptions/supportedURLSchemes``.
    public var url: URL
    public init(url: URL) { self.url = url }
}

/// What the app can open.
public struct OpenURLOptions: Sendable, Equatable {
    /// Lower-case URL schemes the app plays, such as `file` and `https`.
    public var supportedURLSchemes: [String]
    /// MIME types the app plays, such as `audio/mpeg`.
    public var supportedMIMETypes: [String]

    public init(supportedURLSchemes: [String] = ["file"], supportedMIMETypes: [String] = []) {
        self.supportedURLSchemes = supportedURLSchemes.map { $0.lowercased() }
        self.supportedMIMETypes = supportedMIMETypes
    }
}

extension RemoteCommand where Event == OpenURLCommandEvent {
    /// Lower-case URL schemes the app plays, such as `file` and `https`.
    public var supportedURLSchemes: [String] {
        get { options.supportedURLSchemes }
        set { options.supportedURLSchemes = newValue.map { $0.lowercased() } }
    }
    /// MIME types the app plays, such as `audio/mpeg`.
    public var supportedMIMETypes: [String] {
        get { options.supportedMIMETypes }
        set { options.supportedMIMETypes = newValue }
    }
}

// MARK: The play queue

/// Play an item of the play queue (``NowPlayingInfoCenter/playbackQueue``).
/// Not part of Apple's command centre; on Linux a remote picks an entry of
/// the queue it shows (MPRIS `GoTo`).
public struct PlayItemInQueueCommandEvent: CommandEvent, Equatable {
    /// The ``NowPlayingInfo/effectiveIdentifier`` of the queue entry to play.
    public var identifier: String
    public init(identifier: String) { self.identifier = identifier }
}

/// Insert what a URL points at (a file or a stream) into the play queue.
/// Not part of Apple's command centre; on Linux a remote may add to the queue
/// it shows (MPRIS `AddTrack`).
///
/// The app adds the item to ``NowPlayingInfoCenter/playbackQueue`` (with an
/// identifier unique within the queue), which is how remotes see it arrive.
public struct AddItemToQueueCommandEvent: CommandEvent, Equatable {
    /// The URL to add; its scheme is one of the open-URL command's
    /// ``RemoteCommand/supportedURLSchemes``.
    public var url: URL
    /// The ``NowPlayingInfo/effectiveIdentifier`` of the queue entry the new
    /// item goes after; `nil` puts it at the start of the queue.
    public var afterIdentifier: String?
    /// Whether the new item becomes the current item and plays, as if a
    /// ``PlayItemInQueueCommandEvent`` for it followed.
    public var playsImmediately: Bool

    public init(url: URL, afterIdentifier: String?, playsImmediately: Bool = false) {
        self.url = url
        self.afterIdentifier = afterIdentifier
        self.playsImmediately = playsImmediately
    }
}

/// Remove an entry from the play queue. Not part of Apple's command centre;
/// on Linux a remote may edit the queue it shows (MPRIS `RemoveTrack`).
/// What plays when the current item is removed is the app's choice.
public struct RemoveItemFromQueueCommandEvent: CommandEvent, Equatable {
    /// The ``NowPlayingInfo/effectiveIdentifier`` of the queue entry to remove.
    public var identifier: String
    public init(identifier: String) { self.identifier = identifier }
}
