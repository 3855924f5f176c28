/// Where a long item (an audiobook, a podcast episode) was left, so that playing it again
/// resumes there: Apple's remembered position (`MPMediaItem.bookmarkTime`) and
/// `playbackProgress`.
///
/// Invariants: ``position`` is never negative; a finished point's position is zero, since a
/// finished item starts again from its beginning.
public struct ResumePoint: Sendable, Hashable, Codable {
    /// Where the item was left, from its start. Zero when ``isFinished``.
    public var position: Duration
    /// Whether the item was played to its end, or left within ``finishingShare`` of it.
    public var isFinished: Bool

    /// The last share of an item (1 %) within which leaving it counts as finishing it: the
    /// closing credits of an audiobook, the outro of an episode.
    public static let finishingShare = 0.01

    /// A point at `position`, or a finished one (at zero).
    public init(position: Duration, isFinished: Bool = false) {
        self.isFinished = isFinished
        self.position = isFinished ? .zero : max(position, .zero)
    }

    /// The point of an item `duration` long (nil when unknown) left at `position`: finished
    /// when within the last ``finishingShare`` of it.
    public init(leftAt position: Duration, of duration: Duration?) {
        let finished =
            if let duration, duration > .zero {
                position >= duration - duration * Self.finishingShare
            } else {
                false
            }
        self.init(position: position, isFinished: finished)
    }

    /// A finished point: the item was played to its end.
    public static let finished = ResumePoint(position: .zero, isFinished: true)

    /// How much of an item `duration` long was played, from 0 to 1: 1 when finished; nil when
    /// unfinished and the duration is unknown or zero.
    public func progress(ofDuration duration: Duration?) -> Double? {
        if isFinished { return 1 }
        guard let duration, duration > .zero else { return nil }
        return min(max(position / duration, 0), 1)
    }
}

/// Remembers where long items were left, for a ``QueuePlayer``: which items remember their
/// position, and where each one was left. An app's own store keeps them wherever it keeps its
/// library; `mpris-bridge` keeps them in its index.
///
/// What the player does with it:
/// - **Starting** an item it loads afresh (a remote's play after stop, next, previous, a
///   queue entry, an opened URL, an item after the end of another), it asks ``resumePoint(of:)``
///   and starts at its position unless the point is finished. A resumed start of a restored
///   queue keeps the queue's own saved position. Once it plays, it saves the point it started
///   at (unfinished), so a finished item becomes in progress again.
/// - **Saving**: on pause, seek, stop, a switch to another item, its shutdown, and every
///   ``QueuePlayer/Configuration/positionCheckpointInterval`` while playing, it saves
///   ``ResumePoint/init(leftAt:of:)``; an item that plays to its end, by itself or handed
///   over to the next one, is saved ``ResumePoint/finished``.
/// - **Gapless hand-overs**: an item with an unfinished point is never handed over
///   gaplessly (the engine cannot seek into an item it hands over): the item before it ends,
///   and the player loads it and seeks to its point.
///
/// Requirements: every member is called on the player's task, so it must answer from memory
/// and return at once; ``save(_:of:)`` writes asynchronously, and may coalesce saves of the
/// same item (the latest wins). It is called only for items ``remembersPosition(of:)``
/// accepted, never for live streams.
public protocol ResumePointStore: AnyObject, Sendable {
    /// Whether `item` remembers where it was left (it is long, or an audiobook or a podcast,
    /// say). The answer may change only when the store's rules do.
    func remembersPosition(of item: QueueItem) -> Bool

    /// Where `item` was left, or nil when it never played.
    func resumePoint(of item: QueueItem) -> ResumePoint?

    /// Remembers that `item` was left at `point`, replacing what was saved for it.
    func save(_ point: ResumePoint, of item: QueueItem)
}
