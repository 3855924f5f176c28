/// Values read lately, kept in two generations: a lookup that finds a value in the older one
/// moves it to the newer, and the older one is dropped whole when the newer one is full.
///
/// An approximation of least-recently-used with no bookkeeping per lookup; it holds at most
/// twice ``capacity`` values. For the few hundred tracks or descriptions a remote is shown at a
/// time, of a library too large to keep.
public struct RecentValues<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// How many values a generation holds.
    public let capacity: Int
    private var current: [Key: Value] = [:]
    private var older: [Key: Value] = [:]

    /// An empty store of generations of `capacity` values (at least one).
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// The value kept for `key`, or nil; a value found in the older generation moves to the newer.
    public mutating func value(for key: Key) -> Value? {
        if let value = current[key] { return value }
        guard let value = older[key] else { return nil }
        insert(value, for: key)
        return value
    }

    /// Whether a value is kept for `key` (without moving it).
    public func contains(_ key: Key) -> Bool { current[key] != nil || older[key] != nil }

    /// Keeps `value` for `key` in the newer generation, which becomes the older one when full.
    public mutating func insert(_ value: Value, for key: Key) {
        if current.count >= capacity {
            older = current
            current = [:]
        }
        current[key] = value
    }

    /// Forgets every value.
    public mutating func removeAll() {
        current = [:]
        older = [:]
    }
}
