import Synchronization

/// Collects what `@Sendable` handlers and observers see, for the tests to check afterwards.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    func record(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
    var count: Int { values.count }
}
