import Logging
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A start of playback for the shell to perform on the engine, in this order: make the engine
/// if there is none, load (after setting the hand-over's successors), seek, set the rate, play.
package struct StartRequest: Sendable, Equatable {
    package var item: QueueItem
    /// Load `item`, with these successors in the hand-over book; nil when it is loaded already.
    package var load: [HandoverSuccessor]?
    package var seek: Duration?
    package var rate: Double?
}

/// Which transport commands remotes may send.
package struct CommandAvailability: Sendable, Equatable {
    /// Play, pause, toggle and previous: the queue has entries.
    package var hasItems: Bool
    /// Next: an entry follows the current one (or the queue repeats).
    package var hasNext: Bool
}

/// What ``PlayerCore`` asks the shell to do, in order. An engine call whose outcome it needs
/// (``start(_:)``, ``pause``, ``seek(_:)``, ``setRate(_:)``, ``readPosition``) or a
/// ``resolve(_:)`` comes last: the core is told how it ended with the matching input.
package enum PlayerEffect: Sendable {
    /// The command's status (the last one given stands).
    case reply(RemoteCommandHandlerStatus)
    case start(StartRequest)
    case pause
    case seek(Duration)
    case setRate(Double)
    /// Read the engine's position (nil without an engine), answered as ``EngineReply/position``.
    case readPosition
    /// Turn a URL into a queue entry, answered with ``PlayerInput/resolved(_:)``.
    case resolve(URL)
    /// Stop the engine (it is loaded); nothing to answer.
    case stopEngine
    case setEngineVolume(Double)
    /// Set the hand-over book's successors and forget what it handed over.
    case prepareHandover([HandoverSuccessor])
    /// Replace the successors, keeping what was handed over.
    case updateHandover([HandoverSuccessor])
    /// Show remotes this stretch of the queue.
    case showQueue([NowPlayingInfo])
    /// Show remotes the current item (nil: none), its elapsed time as of `since`.
    case showNowPlaying(NowPlayingInfo?, since: ContinuousClock.Instant)
    case enableCommands(CommandAvailability)
    /// Show remotes the repeat and shuffle modes given (nil: unchanged), in one batch.
    case showModes(repeat: RepeatType?, shuffle: ShuffleType?)
    case showVolume(Double)
    /// Tell the change observers.
    case notifyObservers(PlayerSnapshot)
    /// Tell the event observers what the input changed (never empty).
    case notifyEvents(PlayerChanges)
    /// How a ``QueueEdit`` ended: the song ids it added (none for other edits), or why nothing changed.
    case edited(Result<[Int], QueueEditError>)
    case saveResumePoint(ResumePoint, of: QueueItem)
    /// Run the position checkpoints (while playing) or not.
    case checkpoints(running: Bool)
    case log(Logger.Level, String)
}
