import MediaRemote

/// The player and its queue at a glance, as MPD's `status` reads them: no entry is built, so
/// it costs the same for a queue of 5 entries or 50,000.
///
/// Positions are in the queue's own order (``PlayQueue/addedOrder``), which shuffle leaves
/// alone; song ids are ``PlayQueue/songIDs``.
public struct QueueSummary: Sendable, Equatable {
    /// The number of entries.
    public var count: Int
    /// Changes with every change of the entries in their own order (added, removed, moved,
    /// replaced, reshuffled by ``QueuePlayer/shuffleEntries(atPositions:)``); not with shuffle
    /// mode's play order alone. MPD's playlist version.
    public var revision: Int
    /// The current entry's position (MPD's `song`); nil when the queue is empty. Stopped, it
    /// is where "play" starts.
    public var currentPosition: Int?
    /// The current entry's song id (MPD's `songid`); nil when the queue is empty.
    public var currentSongID: Int?
    /// What plays after the current entry when it ends, under repeat, shuffle, single and
    /// consume (MPD's `nextsong`, which single without repeat does not hide: the next entry is
    /// where playback pauses); nil at the end of the queue.
    public var nextPosition: Int?
    /// The song id of the entry at ``nextPosition``.
    public var nextSongID: Int?
    /// Playing, paused, stopped (or interrupted: paused by the system).
    public var state: PlaybackState
    /// Repeat as set (MPD's `repeat` is on for `.one` and `.all`; `.one` set by an MPRIS
    /// remote reads in MPD as repeat with single).
    public var repeatMode: RepeatType
    /// Shuffle mode: MPD's `random` (the play order drawn at random, positions unchanged).
    public var shuffleMode: ShuffleType
    /// MPD's single mode.
    public var singleMode: SingleMode
    /// MPD's consume mode.
    public var consumes: Bool
    /// Linear volume: 1 is the engine's full level; it may reach 10 (amplified), as MPRIS allows.
    public var volume: Double
    /// The position in the current entry now (zero when stopped).
    public var elapsed: Duration
    /// The current entry's length when known: its own, else the engine's; nil for a live
    /// stream or before the engine said.
    public var duration: Duration?
    /// The playback rate (1: normal).
    public var rate: Double
}

/// A ``QueueSummary`` as the player last published it, with what tells its elapsed time at any
/// later instant: between two inputs nothing but the position moves, and it moves at the rate.
package struct QueueSummaryClock: Sendable, Equatable {
    /// The summary; its ``QueueSummary/elapsed`` is the position at ``advancingSince``.
    package var summary: QueueSummary
    /// Since when the position advances (playing something loaded); nil while it stands.
    package var advancingSince: ContinuousClock.Instant?
    /// The length the advancing position stops at; nil when unknown.
    package var elapsedLimit: Duration?
    /// The entry at ``QueueSummary/currentPosition``.
    package var currentEntry: QueueEntry?

    /// The summary at `instant`, as the core computes it then if no input came between.
    package func summary(at instant: ContinuousClock.Instant) -> QueueSummary {
        var summary = summary
        if let since = advancingSince {
            var elapsed = summary.elapsed + (instant - since) * summary.rate
            if let limit = elapsedLimit { elapsed = min(elapsed, limit) }
            summary.elapsed = elapsed
        }
        return summary
    }
}

/// An entry of the queue with its place and song id, as MPD lists it.
public struct QueueEntry: Sendable, Equatable {
    /// Its position in the queue's own order (``PlayQueue/addedOrder``).
    public var position: Int
    /// Positive, unique for the life of the process, kept as the entry moves.
    public var songID: Int
    /// What it plays: ``QueueItem/catalogKey`` for a library track, ``QueueItem/info`` for a stream.
    public var item: QueueItem
}

/// Where entries go in the queue's own order: a position, or a place relative to the current
/// entry (MPD 0.23's `+N` and `-N`), resolved when the edit runs, so no other edit comes between.
public enum QueueDestination: Sendable, Equatable {
    /// This position, once the entries are in place.
    case position(Int)
    /// `offset` places after the current entry (MPD's `+0` is right after it), counted once the
    /// entries moved are out of the way.
    case afterCurrent(offset: Int)
    /// `offset` places before the current entry (MPD's `-0` is right before it).
    case beforeCurrent(offset: Int)
}

/// Why a queue edit was refused; nothing changed.
public enum QueueEditError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A position or range not within the queue (positions `0..<count`; a destination or an
    /// insertion point may be `count`).
    case badPosition
    /// No entry has this song id.
    case noSuchSong(Int)
    /// A place relative to the current entry, with none current (MPD: ACK 55).
    case noCurrentEntry
    /// A move relative to the current entry of a range that holds it.
    case movesCurrentRelativeToItself
    /// The queue would exceed its maximum length (``QueuePlayer/Configuration/maximumQueueLength``).
    case queueFull(maximum: Int)

    /// The reason as MPD's ACK line words it.
    public var description: String {
        switch self {
        case .badPosition: "Bad song index"
        case .noSuchSong: "No such song"
        case .noCurrentEntry: "No current song"
        case .movesCurrentRelativeToItself: "Cannot move current song relative to itself"
        case .queueFull(let maximum): "the queue is full (\(maximum) entries)"
        }
    }
}

/// What one change of the player touched, as MPD's idle subsystems see it; computed by the core
/// for each input (see ``QueuePlayer/observeEvents(_:)``).
public struct PlayerChanges: OptionSet, Sendable, Hashable {
    /// The bits: one per member below.
    public let rawValue: UInt8
    /// The set of the members whose bits `rawValue` holds.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The entries in their own order changed (MPD's `playlist`).
    public static let queue = PlayerChanges(rawValue: 1 << 0)
    /// Play, pause, stop, a seek, a rate change, or another entry current (MPD's `player`).
    public static let player = PlayerChanges(rawValue: 1 << 1)
    /// The volume (MPD's `mixer`).
    public static let mixer = PlayerChanges(rawValue: 1 << 2)
    /// Repeat, shuffle, single or consume (MPD's `options`).
    public static let options = PlayerChanges(rawValue: 1 << 3)
}
