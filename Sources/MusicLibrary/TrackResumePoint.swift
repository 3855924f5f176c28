/// Where a long track was left, as the index keeps it: what a player's resume point (Playback's
/// `ResumePoint`) is saved as, with no rule of the player's about when an item counts as finished.
public struct TrackResumePoint: Sendable, Hashable {
    /// Where the track was left, from its start; kept in whole milliseconds.
    public var position: Duration
    /// Whether the track was played to its end.
    public var isFinished: Bool

    public init(position: Duration, isFinished: Bool = false) {
        self.position = position
        self.isFinished = isFinished
    }

    /// A finished point, at zero.
    public static let finished = TrackResumePoint(position: .zero, isFinished: true)
}
