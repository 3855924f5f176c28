import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``PlayerCore`` is told: a command, an engine event, or the outcome of an effect it asked for.
package enum PlayerInput: Sendable {
    /// A remote's command.
    case command(PlayerCommand)
    /// An event of the engine, with what the shell read for it from the hand-over book
    /// (shared with the engine's streaming thread) and the engine.
    case engineEvent(PlaybackEvent, EngineEventContext = EngineEventContext())
    /// How the engine call the core asked for ended (``PlayerEffect/pause``, ``PlayerEffect/seek(_:)``,
    /// ``PlayerEffect/setRate(_:)``, ``PlayerEffect/readPosition``).
    case engineReplied(EngineReply)
    /// How a ``PlayerEffect/start(_:)`` ended.
    case startEnded(StartReport)
    /// What a ``PlayerEffect/resolve(_:)`` gave.
    case resolved(Result<QueueItem, any Error>)
    /// An operation that may start playback ended and no later command superseded it: play
    /// again when a start it made was superseded.
    case resumeSupersededStart
    /// The position checkpoint's interval elapsed.
    case checkpoint
    /// The app asks for the current item's resume point to be saved now.
    case saveResumePoint
    /// Publish everything as it is (the player takes the commands).
    case publish
    /// The engine was stopped and dropped (the player shuts down).
    case engineDropped

    // The app's queue API (see ``QueuePlayer``'s methods of the same names).
    /// New entries, the one at the index current; played when `play`, else stopped there.
    case replaceQueue([QueueItem], startingAt: Int, play: Bool)
    /// Entries added without changing what plays.
    case enqueue([QueueItem], at: QueuePlayer.QueuePlacement)
    /// Entries replaced in place by what the closure returns for them (nil: unchanged).
    case updateItems(@Sendable (QueueItem) -> QueueItem?)
    /// The current entry and the window shown anew, as their catalogs now describe them.
    case refreshItemDescriptions
    /// A saved state, with the entries it names that still exist, in its added order.
    case restore(PlayerSnapshot, items: [QueueItem])
    /// An edit of the queue by position or song id, or of MPD's modes (``QueueEdit``).
    case editQueue(QueueEdit)
}

extension PlayerInput {
    /// How an operation meets starts of playback, which a later command supersedes by
    /// cancelling the task that waits on the engine (the shell's ``QueuePlayer/accept(_:_:)``).
    package struct Precedence: Sendable, Equatable {
        /// It may start playback (and wait on the engine for it): a later command that
        /// supersedes starts cancels it.
        package var mayStart = false
        /// It changes what plays or stops it: from its arrival it cancels every operation
        /// accepted before it that may start playback.
        package var supersedesStarts = false

        package static let independent = Precedence()
        package static let mayStart = Precedence(mayStart: true)
        package static let supersedes = Precedence(supersedesStarts: true)
        package static let startsAnew = Precedence(mayStart: true, supersedesStarts: true)
    }

    /// How this input, run as an operation of its own, meets starts of playback.
    package var precedence: Precedence {
        switch self {
        case .command(let command):
            switch command {
            case .play: .mayStart
            case .pause, .stop: .supersedes
            case .togglePlayPause, .next, .previous, .open, .playItem: .startsAnew
            case .addItem(_, _, let playsImmediately): playsImmediately ? .startsAnew : .independent
            // Removing the current entry plays the next one, but chooses nothing to play.
            case .removeItem: .mayStart
            case .seek, .skip, .setRate, .setRepeat, .setShuffle, .setVolume: .independent
            }
        case .replaceQueue(_, _, let play): play ? .startsAnew : .supersedes
        case .editQueue(let edit):
            switch edit {
            case .play, .playSong: .startsAnew
            case .clear: .supersedes
            // Removing the current entry while playing plays the next one.
            case .remove, .removeSong: .mayStart
            case .insert, .move, .moveSong, .shuffle, .setSingle, .setConsume, .setRepeat: .independent
            }
        // An event may start the next item.
        case .engineEvent: .mayStart
        default: .independent
        }
    }
}

/// A remote's command, as ``PlayerCore`` reads it.
package enum PlayerCommand: Sendable {
    case play, pause, togglePlayPause, stop, next, previous
    case seek(to: Duration)
    /// Seeks this far from the current position (negative: back).
    case skip(by: Duration)
    case setRate(Double)
    case setRepeat(RepeatType)
    case setShuffle(ShuffleType)
    case setVolume(Double)
    case open(URL)
    case playItem(identifier: String)
    case addItem(url: URL, after: String?, playsImmediately: Bool)
    case removeItem(identifier: String)
}

/// What the shell read for an engine event: the gauges and the hand-over book belong to the
/// engine and its streaming thread, not to the core.
package struct EngineEventContext: Sendable {
    /// For `streamStarted`, the entry handed over whose stream started (taken out of the book);
    /// for `error`, the entry handed over with the failing URL; nil otherwise.
    package var handedOver: QueueItem?
    /// The engine's duration when `streamStarted` named an entry handed over.
    package var duration: Duration?

    package init(handedOver: QueueItem? = nil, duration: Duration? = nil) {
        self.handedOver = handedOver
        self.duration = duration
    }
}

/// How an engine call ended.
package enum EngineOutcome: Sendable {
    case done
    /// A later command cancelled it (``PlaybackError/Kind/superseded`` or a cancelled task).
    case superseded(any Error)
    case failed(any Error)
}

/// How an engine call the core asked for ended, with the engine's position read after it.
package struct EngineReply: Sendable {
    package var outcome: EngineOutcome
    /// The engine's position once the call ended; nil without an engine or a pipeline.
    package var position: Duration?

    package init(_ outcome: EngineOutcome, position: Duration? = nil) {
        self.outcome = outcome
        self.position = position
    }
}

/// How far a ``PlayerEffect/start(_:)`` went, and how it ended.
package struct StartReport: Sendable {
    package var outcome: EngineOutcome
    /// Whether an engine exists once the start ended (it is made on the first start).
    package var engineExists = true
    /// Whether the load began (what the previous item's stream said is forgotten from there).
    package var loadBegan = false
    /// Whether the item loaded, and the engine's duration then.
    package var loaded = false
    package var duration: Duration?
    /// Whether the engine took the rate asked for.
    package var rateApplied = false
    /// The engine's position once playing.
    package var position: Duration?

    package init(
        _ outcome: EngineOutcome, engineExists: Bool = true, loadBegan: Bool = false, loaded: Bool = false,
        duration: Duration? = nil, rateApplied: Bool = false, position: Duration? = nil
    ) {
        self.outcome = outcome
        self.engineExists = engineExists
        self.loadBegan = loadBegan
        self.loaded = loaded
        self.duration = duration
        self.rateApplied = rateApplied
        self.position = position
    }
}
