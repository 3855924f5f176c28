import Synchronization

/// The observers of one kind of change.
///
/// An owner keeps one list per kind of change it announces: ``add(_:)`` registers an observer
/// for as long as the returned ``Observation`` is kept, and ``notify(_:)`` calls every observer
/// registered at that moment, on the calling thread, outside any lock, so an observer may call
/// back into its owner. An owner notifies after the change is visible, never while holding a
/// lock of its own. Observers are called in the order they were added, so what an owner's
/// first observer does (a daemon's D-Bus signal, say) is never behind the work of one added later.
public final class Observers<Change>: Sendable {
    private struct State {
        /// In the order added.
        var observers: [(id: UInt64, observer: @Sendable (Change) -> Void)] = []
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Registers `observer` until the returned observation is cancelled or dropped.
    public func add(_ observer: @escaping @Sendable (Change) -> Void) -> Observation {
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.observers.append((state.next, observer))
            return state.next
        }
        return Observation { [weak self] in self?.state.withLock { $0.observers.removeAll { $0.id == id } } }
    }

    /// Calls every observer registered now with `change`, in the order they were added.
    public func notify(_ change: Change) {
        // A closure, not the key path `\.observer`: in this generic class a key path is made
        // anew at each call, its types looked up by their mangled names (tens of microseconds).
        for observer in state.withLock({ $0.observers.map { $0.observer } }) { observer(change) }
    }

    /// Whether no observer is registered.
    public var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }
}

extension Observers where Change == Void {
    /// Calls every observer registered now.
    public func notify() { notify(()) }
}

/// A registered observer (see ``Observers``). The registration lasts while this value is
/// kept: it ends at ``cancel()`` or when the last reference goes, whichever comes first, so an
/// observer whose owner forgot it is never called again.
public final class Observation: Sendable {
    private let ending: Mutex<(@Sendable () -> Void)?>

    /// An observation that `end` closes, once.
    public init(_ end: @escaping @Sendable () -> Void) {
        ending = Mutex(end)
    }

    /// Stops the observation. Calling it again does nothing.
    public func cancel() {
        ending.withLock { end in
            defer { end = nil }
            return end
        }?()
    }

    deinit { cancel() }
}
