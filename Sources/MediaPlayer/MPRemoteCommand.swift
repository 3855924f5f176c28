import Foundation
import MediaRemote
import Synchronization

/// A command a remote can send to the app, such as play or skip forward.
///
/// Add a handler with ``addTarget(handler:)``; it runs on the main queue each time a remote
/// sends the command, and its status is what the remote receives. A command is offered to
/// remotes (MPRIS `CanPlay`, `CanGoNext`, …) while it is enabled and has at least one target.
///
/// ```swift
/// let token = MPRemoteCommandCenter.shared().playCommand.addTarget { event in
///     player.play()
///     return .success
/// }
/// ```
///
/// Differences from Apple's: `addTarget(_:action:)` and `removeTarget(_:action:)` are absent
/// (there is no Objective-C runtime to send a selector); use ``addTarget(handler:)``.
open class MPRemoteCommand: NSObject, @unchecked Sendable {  // its state is its link's, behind a lock
    /// Where the command's enablement and targets live.
    let link: any CommandLink

    init(link: any CommandLink) {
        self.link = link
        super.init()
    }

    @available(*, unavailable, message: "use the commands of MPRemoteCommandCenter.shared()")
    public override init() { fatalError("MPRemoteCommand() is unavailable") }

    /// A command of no command centre, which no remote can send: the command of an event an
    /// app makes with `init()`.
    static func detached() -> MPRemoteCommand { MPRemoteCommand(link: LocalLink()) }

    /// A command whose events carry nothing but the command and the time (play, pause, …).
    convenience init(_ remote: RemoteCommand<RemoteCommandEvent>) {
        self.init(
            link: RemoteLink(remote: remote) { _, command, timestamp in
                MPRemoteCommandEvent(command: command, timestamp: timestamp)
            })
    }

    /// Whether remotes may send the command. Default `true`; remotes are offered it only once
    /// it also has a target.
    open var isEnabled: Bool {
        get { link.isEnabled }
        set { link.isEnabled = newValue }
    }

    /// Adds a handler, called on the main queue with each event a remote sends, in the order
    /// targets were added; the first status other than ``MPRemoteCommandHandlerStatus/success``
    /// goes back to the remote and the later targets are not called.
    ///
    /// The remote's reply waits for the handler's status: keep handlers quick, as on iOS.
    ///
    /// - Returns: an opaque object that identifies the target for ``removeTarget(_:)``.
    @discardableResult
    open func addTarget(handler: @escaping (MPRemoteCommandEvent) -> MPRemoteCommandHandlerStatus) -> Any {
        CommandTarget(command: self, remove: link.addTarget(MainQueueBound(handler), of: self))
    }

    /// Removes the target that ``addTarget(handler:)`` returned; `nil` removes every target.
    /// An object that is not a target of this command is ignored.
    open func removeTarget(_ target: Any?) {
        guard let target else { return link.removeAllTargets() }
        guard let target = target as? CommandTarget, target.command == ObjectIdentifier(self) else { return }
        target.remove()
    }
}

/// What ``MPRemoteCommand/addTarget(handler:)`` returns: removes its handler, once.
private final class CommandTarget: NSObject, Sendable {
    let command: ObjectIdentifier
    let remove: @Sendable () -> Void

    init(command: MPRemoteCommand, remove: @escaping @Sendable () -> Void) {
        self.command = ObjectIdentifier(command)
        self.remove = remove
        super.init()
    }
}

/// An app's command handler.
typealias CommandHandler = (MPRemoteCommandEvent) -> MPRemoteCommandHandlerStatus

/// Where an ``MPRemoteCommand`` keeps its enablement and targets.
protocol CommandLink: Sendable {
    var isEnabled: Bool { get nonmutating set }
    /// Adds `handler` as a target of `command`; returns what removes it.
    func addTarget(_ handler: MainQueueBound<CommandHandler>, of command: MPRemoteCommand) -> @Sendable () -> Void
    func removeAllTargets()
}

/// A command kept by MediaRemote, which MPRIS offers and sends: each target is a MediaRemote
/// target that hops to the main queue, makes the app's event there and calls the app's handler.
struct RemoteLink<Event: CommandEvent>: CommandLink {
    let remote: RemoteCommand<Event>
    /// Makes the app's event from MediaRemote's; called on the main queue.
    let makeEvent: @Sendable (Event, MPRemoteCommand, TimeInterval) -> MPRemoteCommandEvent

    var isEnabled: Bool {
        get { remote.isEnabled }
        nonmutating set { remote.isEnabled = newValue }
    }

    func addTarget(_ handler: MainQueueBound<CommandHandler>, of command: MPRemoteCommand) -> @Sendable () -> Void {
        let makeEvent = self.makeEvent
        let target = remote.addTarget { event in
            let timestamp = MPRemoteCommandEvent.now()
            return await MainQueue.run { handler.value(makeEvent(event, command, timestamp)).remoteStatus }
        }
        let remote = self.remote
        return { remote.removeTarget(target) }
    }

    func removeAllTargets() { remote.removeAllTargets() }
}

/// A command no remote on Linux sends (MPRIS has no language options): its enablement and
/// targets are kept here, so an app's code runs unchanged.
final class LocalLink: CommandLink {
    private let state = Mutex<(isEnabled: Bool, targets: [UInt64: MainQueueBound<CommandHandler>], next: UInt64)>(
        (true, [:], 0))

    var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set { state.withLock { $0.isEnabled = newValue } }
    }

    func addTarget(_ handler: MainQueueBound<CommandHandler>, of command: MPRemoteCommand) -> @Sendable () -> Void {
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.targets[state.next] = handler
            return state.next
        }
        return { [weak self] in _ = self?.state.withLock { $0.targets.removeValue(forKey: id) } }
    }

    func removeAllTargets() { state.withLock { $0.targets.removeAll() } }
}

// MARK: The commands with settings of their own

/// Skip forward or backward by an interval (MPRIS `Seek`, the extension interface's
/// `SkipForward` and `SkipBackward`).
open class MPSkipIntervalCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    private let remote: RemoteCommand<SkipIntervalCommandEvent>

    init(_ remote: RemoteCommand<SkipIntervalCommandEvent>) {
        self.remote = remote
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPSkipIntervalCommandEvent(command: command, timestamp: timestamp, interval: event.interval.timeInterval)
            })
    }

    /// The intervals remotes offer, in seconds (`NSNumber`s of `TimeInterval`); the first is
    /// what a plain skip button uses (the extension interface's `SkipForwardIntervals`). Default
    /// `[15]`. Intervals that are not positive and finite (or longer than a million years) are
    /// dropped, as no remote can skip by them.
    open var preferredIntervals: [NSNumber] {
        get { remote.preferredIntervals.map { NSNumber(value: $0.timeInterval) } }
        set {
            remote.preferredIntervals = newValue.map(\.doubleValue)
                .filter { $0.isFinite && $0 > 0 && $0 <= 3.2e13 }
                .map { Duration.seconds($0) }
        }
    }
}

/// Like, dislike or bookmark the current item (the extension interface's `Like`, `Dislike`,
/// `Bookmark`, with `CanLike`, `LikeActive`, `LikeTitle`, …). While one of them is offered, the
/// extension interface's `RadioMode` is true, for remotes that draw radio-style controls as
/// iOS's lock screen does; the previous-track command is still offered and sent, as on iOS.
open class MPFeedbackCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    private let remote: RemoteCommand<FeedbackCommandEvent>

    init(_ remote: RemoteCommand<FeedbackCommandEvent>) {
        self.remote = remote
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPFeedbackCommandEvent(command: command, timestamp: timestamp, isNegative: event.isNegative)
            })
    }

    /// Whether the current item has this feedback (is liked, is bookmarked). Set it after
    /// carrying out a command; remotes show it (`LikeActive`, …).
    open var isActive: Bool {
        get { remote.isActive }
        set { remote.isActive = newValue }
    }

    /// The button's label, in the user's language. Default: "Like", "Dislike" or "Bookmark".
    open var localizedTitle: String {
        get { remote.localizedTitle }
        set { remote.localizedTitle = newValue }
    }

    /// A shorter label for small screens. Default: the default ``localizedTitle``.
    open var localizedShortTitle: String {
        get { remote.localizedShortTitle }
        set { remote.localizedShortTitle = newValue }
    }
}

/// Rate the current item (the extension interface's `SetRating`, with `CanRate` and
/// `RatingRange`).
open class MPRatingCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    private let remote: RemoteCommand<RatingCommandEvent>

    init(_ remote: RemoteCommand<RatingCommandEvent>) {
        self.remote = remote
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPRatingCommandEvent(command: command, timestamp: timestamp, rating: Float(event.rating))
            })
    }

    /// The lowest rating a remote may send; a lower one is refused before any handler runs.
    /// Default 0.
    open var minimumRating: Float {
        get { Float(remote.minimumRating) }
        set { remote.minimumRating = Double(decimalOf: newValue) }
    }

    /// The highest rating a remote may send; a higher one is refused before any handler runs.
    /// Default 1 (MPRIS's `xesam:userRating` scale).
    open var maximumRating: Float {
        get { Float(remote.maximumRating) }
        set { remote.maximumRating = Double(decimalOf: newValue) }
    }
}

/// Change the playback rate (MPRIS `Rate`, `MinimumRate`, `MaximumRate`; the extension
/// interface's `SupportedRates` and `CycleRate`).
open class MPChangePlaybackRateCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    private let remote: RemoteCommand<ChangePlaybackRateCommandEvent>

    init(_ remote: RemoteCommand<ChangePlaybackRateCommandEvent>) {
        self.remote = remote
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPChangePlaybackRateCommandEvent(command: command, timestamp: timestamp, playbackRate: Float(event.playbackRate))
            })
    }

    /// The rates the app plays at (1 is normal speed). A rate a remote asks for is snapped to
    /// the nearest of these. Kept sorted and without duplicates; rates that are not positive
    /// and finite are dropped, and an empty list means `[1]`.
    open var supportedPlaybackRates: [NSNumber] {
        get { remote.supportedPlaybackRates.map { NSNumber(value: $0) } }
        set { remote.supportedPlaybackRates = newValue.map(\.doubleValue) }
    }
}

/// Set the repeat mode (MPRIS `LoopStatus`, writable while the command is offered).
open class MPChangeRepeatModeCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    private let remote: RemoteCommand<ChangeRepeatModeCommandEvent>

    init(_ remote: RemoteCommand<ChangeRepeatModeCommandEvent>) {
        self.remote = remote
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPChangeRepeatModeCommandEvent(command: command, timestamp: timestamp, repeatType: MPRepeatType(event.repeatType))
            })
    }

    /// The repeat mode in effect, as remotes show it (`LoopStatus`). Set it after carrying out
    /// a change. Default ``MPRepeatType/off``.
    open var currentRepeatType: MPRepeatType {
        get { MPRepeatType(remote.currentRepeatType) }
        set { remote.currentRepeatType = newValue.repeatType }
    }
}

/// Set the shuffle mode (MPRIS `Shuffle`, writable while the command is offered).
open class MPChangeShuffleModeCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    private let remote: RemoteCommand<ChangeShuffleModeCommandEvent>

    init(_ remote: RemoteCommand<ChangeShuffleModeCommandEvent>) {
        self.remote = remote
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPChangeShuffleModeCommandEvent(
                    command: command, timestamp: timestamp, shuffleType: MPShuffleType(event.shuffleType))
            })
    }

    /// The shuffle mode in effect, as remotes show it (`Shuffle` is true unless it is
    /// ``MPShuffleType/off``). Set it after carrying out a change. Default ``MPShuffleType/off``.
    open var currentShuffleType: MPShuffleType {
        get { MPShuffleType(remote.currentShuffleType) }
        set { remote.currentShuffleType = newValue.shuffleType }
    }
}

/// Jump to a position in the current item (MPRIS `SetPosition`, and `Seek` while no skip
/// command is offered; with a skip command, `CanSeek`).
open class MPChangePlaybackPositionCommand: MPRemoteCommand, @unchecked Sendable {  // its state lives in MediaRemote's command
    init(_ remote: RemoteCommand<ChangePlaybackPositionCommandEvent>) {
        super.init(
            link: RemoteLink(remote: remote) { event, command, timestamp in
                MPChangePlaybackPositionCommandEvent(
                    command: command, timestamp: timestamp, positionTime: event.positionTime.timeInterval)
            })
    }
}

extension Double {
    /// The `Float` an app wrote, as the decimal it prints: a minimum rating of `0.1` stays 0.1
    /// on the wire, where widening the `Float` would make it 0.10000000149 and refuse a
    /// remote's 0.1.
    init(decimalOf value: Float) {
        self = Double(value.description) ?? Double(value)
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
