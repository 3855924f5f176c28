/// Changes held back while a batch is open, for an owner that announces a batch of changes
/// once, when its outermost batch ends. A value kept in the owner's locked state.
///
/// ```swift
/// state.withLock { $0.batch.begin() }
/// // …changes: each `hold(change)` returns nil while the batch is open…
/// if state.withLock({ $0.batch.end() }) { announce(state.withLock { $0.batch.takeHeld() }) }
/// ```
public struct ChangeBatch<Change: Sendable>: Sendable {
    private var depth = 0
    private var held: [Change] = []

    public init() {}

    /// Whether a batch is open: changes are held until the outermost one ends.
    public var isOpen: Bool { depth > 0 }

    /// Opens a batch; batches nest.
    public mutating func begin() { depth += 1 }

    /// Closes the innermost batch; true when that was the outermost one, whose held changes
    /// ``takeHeld()`` then gives. Closing with none open does nothing and answers false.
    public mutating func end() -> Bool {
        guard depth > 0 else { return false }
        depth -= 1
        return depth == 0
    }

    /// Holds `change` while a batch is open (answering nil); with none open, answers it, to
    /// announce now.
    public mutating func hold(_ change: Change) -> Change? {
        guard depth > 0 else { return change }
        held.append(change)
        return nil
    }

    /// The changes held since the last take, in the order they came; none are kept.
    public mutating func takeHeld() -> [Change] {
        defer { held = [] }
        return held
    }
}
