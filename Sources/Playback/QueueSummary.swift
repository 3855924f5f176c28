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
    /// The current entry's position and song id; nil when the queue is empty.
    public var currentPosition: Int?
    public var currentSongID: Int?
    /// What plays after the current entry when it ends, under repeat, shuffle, single and
    /// consume (MPD's `nextsong`, which single without repeat does not hide: the next entry is
    /// where playback pauses); nil at the end of the queue.
    public var nextPosition: Int?
    public var nextSongID: Int?
    /// Playing, paused, stopped (or interrupted: paused by the system).
    public var state: PlaybackState
    public var repeatMode: RepeatType
    public var shuffleMode: ShuffleType
    public var singleMode: SingleMode
    public var consumes: Bool
    /// Linear volume: 1 is the engine's full level; it may reach 10 (amplified), as MPRIS allows.
    public var volume: Double
    /// The position in the current entry now, and its length when known (nil for a live
    /// stream or before the engine said).
    public var elapsed: Duration
    public var duration: Duration?
    /// The playback rate (1: normal).
    public var rate: Double
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

/// Why a queue edit was refused; nothing changed.
public enum QueueEditError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A position or range not within the queue (positions `0..<count`; a destination or an
    /// insertion point may be `count`).
    case badPosition
    /// No entry has this song id.
    case noSuchSong(Int)
    /// The queue would exceed its maximum length (``QueuePlayer/Configuration/maximumQueueLength``).
    case queueFull(maximum: Int)

    public var description: String {
        switch self {
        case .badPosition: "Bad song index"
        case .noSuchSong: "No such song"
        case .queueFull(let maximum): "the queue is full (\(maximum) entries)"
        }
    }
}

/// What one change of the player touched, as MPD's idle subsystems see it; computed by the core
/// for each input (see ``QueuePlayer/observeEvents(_:)``).
public struct PlayerChanges: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
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
