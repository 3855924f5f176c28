/// The observers of one kind of change, kept inside their owner's locked state.
///
/// The owner adds and removes observers under its lock, and takes ``all`` under the same lock
/// as the change it announces, then calls them after releasing it: an observer may call back
/// into the owner, and one added or removed meanwhile is called for the changes after, or not,
/// never for half of one. Calls are in no particular order.
public struct ObserverList<Change>: Sendable {
    /// Names one observer of a list, to remove it.
    public struct Token: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private var observers: [UInt64: @Sendable (Change) -> Void] = [:]
    private var next: UInt64 = 0

    public init() {}

    /// Adds `observer`; the token removes it again.
    public mutating func add(_ observer: @escaping @Sendable (Change) -> Void) -> Token {
        defer { next += 1 }
        observers[next] = observer
        return Token(id: next)
    }

    /// Removes the observer `token` names; nothing when it was removed already.
    public mutating func remove(_ token: Token) {
        observers[token.id] = nil
    }

    /// The observers now, to call once the owner's lock is released.
    public var all: [@Sendable (Change) -> Void] { Array(observers.values) }

    /// Whether no observer is registered.
    public var isEmpty: Bool { observers.isEmpty }
}
