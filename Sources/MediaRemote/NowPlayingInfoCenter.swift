import AsyncSupport
import Synchronization

/// Publishes what is playing: Apple's `MPNowPlayingInfoCenter` in shape.
///
/// The app publishes a ``NowPlayingInfo`` whenever something remotes show
/// changes: a new item, play, pause, a seek, a new rate. It does **not**
/// publish while time simply passes: remotes extrapolate the position from
/// the elapsed time, the rate and the instant of publication, and so does
/// ``position(at:)``.
///
/// Observers hear about each publication with the previous and new values
/// and whether the position jumped (``NowPlayingUpdate/isPositionJump``),
/// which is what MPRIS's `Seeked` signal needs.
///
/// The centre also holds the play queue remotes show (``playbackQueue``);
/// its observers (``observeQueue(_:)``) hear about each change of it.
///
/// Thread safety: every member may be used from any thread or task.
public final class NowPlayingInfoCenter: Sendable {
    /// How far a published position may differ from the extrapolated one
    /// before it counts as a jump. Players report positions with some jitter;
    /// a real seek is much larger.
    public static let jumpTolerance: Duration = .milliseconds(250)

    private let state: Mutex<State>
    private let observers = Observers<NowPlayingUpdate>()
    private let queueObservers = Observers<PlaybackQueueUpdate>()

    struct State {
        var info: NowPlayingInfo?
        var publishedAt: ContinuousClock.Instant
        var volume: Double = 1
        var queue: [NowPlayingInfo] = []
    }

    /// Creates a centre with nothing loaded and full volume.
    public init() {
        state = Mutex(State(publishedAt: .now))
    }

    /// The last published value; `nil` when nothing is loaded. Setting it publishes it now.
    public var nowPlayingInfo: NowPlayingInfo? {
        get { state.withLock { $0.info } }
        set { publish(newValue) }
    }

    /// The play queue remotes show, in play order: each entry's item fields
    /// (identifier, title, artists, duration, artwork, …); playback fields
    /// such as the state or the elapsed time are ignored. Empty by default.
    ///
    /// For a long queue, show the stretch around the current item (a few
    /// before it, some dozens after), moved as playback goes on: every
    /// remote is sent what changes here, and ``NowPlayingInfo/playbackQueueIndex``
    /// and ``NowPlayingInfo/playbackQueueCount`` tell where it is in the whole.
    ///
    /// Each entry's ``NowPlayingInfo/effectiveIdentifier`` must be unique
    /// within the queue: remotes name entries by it (the queue commands of
    /// ``RemoteCommandCenter`` carry it), and the current item is the entry
    /// with the identifier of ``nowPlayingInfo``. Setting a different queue
    /// tells the queue observers; setting an equal one does nothing.
    public var playbackQueue: [NowPlayingInfo] {
        get { state.withLock { $0.queue } }
        set {
            let update = state.withLock { state -> PlaybackQueueUpdate? in
                guard state.queue != newValue else { return nil }
                defer { state.queue = newValue }
                return PlaybackQueueUpdate(previous: state.queue, current: newValue)
            }
            if let update { queueObservers.notify(update) }
        }
    }

    /// The instant the current value was published.
    public var publishedAt: ContinuousClock.Instant { state.withLock { $0.publishedAt } }

    /// The output volume remotes show: linear, 0 is silent and 1 full. Set it
    /// after the app changed its volume; negative or NaN values become 0.
    public var volume: Double {
        get { state.withLock { $0.volume } }
        set {
            let volume = newValue.isNaN ? 0 : max(newValue, 0)
            let update = state.withLock { state -> NowPlayingUpdate? in
                guard state.volume != volume else { return nil }
                state.volume = volume
                return NowPlayingUpdate(
                    previous: state.info, current: state.info, publishedAt: state.publishedAt, volume: volume,
                    isPositionJump: false)
            }
            if let update { observers.notify(update) }
        }
    }

    /// Publishes `info` as of `instant` (normally now) and tells the observers.
    ///
    /// Publishing a value equal to the current one, at a moment when the
    /// extrapolated position matches it, still tells observers; they compare
    /// values and announce only what changed.
    public func publish(_ info: NowPlayingInfo?, at instant: ContinuousClock.Instant = .now) {
        let update = state.withLock { state in
            let previous = state.info
            let jump = Self.isJump(from: previous, publishedAt: state.publishedAt, to: info, at: instant)
            state.info = info
            state.publishedAt = instant
            return NowPlayingUpdate(
                previous: previous, current: info, publishedAt: instant, volume: state.volume, isPositionJump: jump)
        }
        observers.notify(update)
    }

    /// The position of the current item at `instant`, extrapolated from the
    /// last publication; `nil` when nothing is loaded.
    public func position(at instant: ContinuousClock.Instant = .now) -> Duration? {
        let (info, publishedAt) = state.withLock { ($0.info, $0.publishedAt) }
        guard let info else { return nil }
        return info.extrapolatedPosition(after: max(instant - publishedAt, .zero))
    }

    /// Calls `observer` after each publication and volume change, synchronously
    /// on the publishing thread, in publication order, for as long as the returned observation
    /// is kept. It must be quick.
    public func observe(_ observer: @escaping @Sendable (NowPlayingUpdate) -> Void) -> Observation {
        observers.add(observer)
    }

    /// Calls `observer` after each change of ``playbackQueue``, with the
    /// previous and new queues, synchronously on the thread that set it. It must be quick.
    ///
    /// When two threads set the queue at once, their observer calls may run
    /// concurrently and finish in either order; an observer that keeps state
    /// should read ``playbackQueue`` for the latest value. The observer is called for as long as
    /// the returned observation is kept.
    public func observeQueue(_ observer: @escaping @Sendable (PlaybackQueueUpdate) -> Void) -> Observation {
        queueObservers.add(observer)
    }

    /// Whether going from `previous` to `next` moves the position of the same
    /// item away from where it would have been by more than ``jumpTolerance``
    /// (a seek, or the item starting over).
    static func isJump(
        from previous: NowPlayingInfo?, publishedAt: ContinuousClock.Instant, to next: NowPlayingInfo?,
        at instant: ContinuousClock.Instant
    ) -> Bool {
        guard let previous, let next, previous.effectiveIdentifier == next.effectiveIdentifier, !next.isLiveStream
        else { return false }
        let expected = previous.extrapolatedPosition(after: max(instant - publishedAt, .zero))
        let difference = next.elapsedPlaybackTime - expected
        return difference > jumpTolerance || difference < .zero - jumpTolerance
    }
}

/// One publication (or volume change) as observers see it.
public struct NowPlayingUpdate: Sendable {
    /// The value before; `nil` when nothing was loaded.
    public let previous: NowPlayingInfo?
    /// The value now; `nil` when nothing is loaded.
    public let current: NowPlayingInfo?
    /// The instant `current` was published.
    public let publishedAt: ContinuousClock.Instant
    /// The output volume now.
    public let volume: Double
    /// Whether the position of the same item jumped (a seek, or a restart of the item).
    public let isPositionJump: Bool

    /// Whether a different item (or none) is now loaded.
    public var isNewItem: Bool { previous?.effectiveIdentifier != current?.effectiveIdentifier }
}

/// One change of the play queue as observers see it.
public struct PlaybackQueueUpdate: Sendable {
    /// The queue before the change.
    public let previous: [NowPlayingInfo]
    /// The queue now; never equal to ``previous``.
    public let current: [NowPlayingInfo]
}
