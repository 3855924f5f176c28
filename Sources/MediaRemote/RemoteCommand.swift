import AsyncSupport
import Synchronization

/// What a command's handler reports back to whoever sent the command.
///
/// A remote (playerctl, a desktop shell, a head unit) receives `success` as a
/// plain reply and every other status as a named error with a human message.
public enum RemoteCommandHandlerStatus: Sendable, Hashable {
    /// The command was carried out.
    case success
    /// The content the command asked for does not exist (for example an unknown item).
    case noSuchContent
    /// Nothing is loaded that the command could act on.
    case noActionableNowPlayingItem
    /// The device that should carry out the command (an output, a network player) is unavailable.
    case deviceNotFound
    /// The command could not be carried out for another reason.
    case commandFailed
    /// The content exists but the player will not play it; `reason` says why,
    /// for people ("/etc/passwd is not audio", "… is outside the library").
    /// A Linux addition: remotes receive `NotPlayable` with the reason.
    case notPlayable(reason: String)
}

/// Identifies one target added with ``RemoteCommand/addTarget(_:)``, so it can be removed.
public struct RemoteCommandTarget: Sendable, Hashable {
    let id: UInt64
}

/// One command a remote can send to the app, such as play or change repeat mode.
///
/// The app adds one or more targets: async handlers that carry the command out
/// and return a ``RemoteCommandHandlerStatus``. A command is *available* to
/// remotes only while it is enabled **and** has at least one target; an
/// unavailable command is advertised as such (for example `CanGoNext` false)
/// and sending it has no effect.
///
/// Unlike Apple's framework, disabling a command is enough to withdraw it: no
/// `removeTarget` is needed to leave "radio mode" (see ``RemoteCommandCenter``).
///
/// Thread safety: every member may be used from any thread or task.
public final class RemoteCommand<Event: CommandEvent>: Sendable {
    /// A target's handler. It may suspend; the remote's reply waits for it.
    public typealias Handler = @Sendable (Event) async -> RemoteCommandHandlerStatus

    /// The command's name, as used in error messages ("play", "changeRepeatMode").
    public let name: String
    private let state: Mutex<State>
    private let changes: ChangeNotifier

    struct State {
        var isEnabled = true
        var targets: [(target: RemoteCommandTarget, handler: Handler)] = []
        var nextTarget: UInt64 = 0
        var options: Event.Options
    }

    init(_ name: String, options: Event.Options, changes: ChangeNotifier) {
        self.name = name
        self.state = Mutex(State(options: options))
        self.changes = changes
    }

    /// Whether remotes may send this command. Default `true`; the command is
    /// still unavailable until a target is added.
    public var isEnabled: Bool {
        get { state.withLock { $0.isEnabled } }
        set { mutate { $0.isEnabled = newValue } }
    }

    /// Whether the command is enabled and has a target: what remotes are told.
    public var isAvailable: Bool {
        state.withLock { $0.isEnabled && !$0.targets.isEmpty }
    }

    /// The command's settings that remotes see, such as preferred skip intervals.
    /// Typed accessors (``RemoteCommand/preferredIntervals``, …) are usually nicer.
    public var options: Event.Options {
        get { state.withLock { $0.options } }
        set { mutate { $0.options = newValue } }
    }

    /// Adds a handler. Targets run in the order they were added; see ``perform(_:)``.
    @discardableResult
    public func addTarget(_ handler: @escaping Handler) -> RemoteCommandTarget {
        mutate { state in
            let target = RemoteCommandTarget(id: state.nextTarget)
            state.nextTarget += 1
            state.targets.append((target, handler))
            return target
        }
    }

    /// Removes one target; removing one that is already gone does nothing.
    public func removeTarget(_ target: RemoteCommandTarget) {
        mutate { $0.targets.removeAll { $0.target == target } }
    }

    /// Removes every target, which makes the command unavailable.
    public func removeAllTargets() {
        mutate { $0.targets.removeAll() }
    }

    /// Sends the command to its targets, as a remote does.
    ///
    /// Returns `nil`, running nothing, when the command is unavailable.
    /// Otherwise the targets run one after another in the order they were
    /// added; the first status other than `success` stops the run and is
    /// returned, so a later target never acts on a command an earlier one refused.
    public func perform(_ event: Event) async -> RemoteCommandHandlerStatus? {
        let handlers = state.withLock { state in
            state.isEnabled ? state.targets.map { $0.handler } : []
        }
        guard !handlers.isEmpty else { return nil }
        for handler in handlers {
            let status = await handler(event)
            if status != .success { return status }
        }
        return .success
    }

    /// Applies a change and tells the command centre's observers if what remotes see changed.
    private func mutate<T>(_ body: (inout State) -> T) -> T {
        let (result, changed) = state.withLock { state -> (T, Bool) in
            let before = (state.isEnabled && !state.targets.isEmpty, state.isEnabled, state.options)
            let result = body(&state)
            let after = (state.isEnabled && !state.targets.isEmpty, state.isEnabled, state.options)
            return (result, before != after)
        }
        if changed { changes.noteChange() }
        return result
    }
}

extension RemoteCommand where Event == RemoteCommandEvent {
    /// Sends the command to its targets; see ``perform(_:)``.
    public func perform() async -> RemoteCommandHandlerStatus? {
        await perform(RemoteCommandEvent())
    }
}

/// Calls observers when something remotes see changes; defers the calls inside a batch.
final class ChangeNotifier: Sendable {
    private let observers = Observers<Void>()
    private let batch = Mutex(ChangeBatch<Void>())

    func noteChange() {
        if batch.withLock({ $0.hold(()) }) != nil { observers.notify() }
    }

    func batch<T>(_ body: () throws -> T) rethrows -> T {
        batch.withLock { $0.begin() }
        defer {
            let changed = batch.withLock { batch in batch.end() && !batch.takeHeld().isEmpty }
            // Once for the whole batch, however many changes it made.
            if changed { observers.notify() }
        }
        return try body()
    }

    func add(_ observer: @escaping @Sendable () -> Void) -> Observation { observers.add { observer() } }
}
