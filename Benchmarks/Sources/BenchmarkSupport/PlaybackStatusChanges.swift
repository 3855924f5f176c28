import DBus
import Synchronization

/// A player's `PlaybackStatus` changes, each with the time it arrived
/// (``monotonicNanoseconds()``), read from its `PropertiesChanged` signals by one task: a
/// signal stream iterated by several tasks would end at the first one's cancellation.
public final class PlaybackStatusChanges: Sendable {
    private final class Seen: Sendable {
        let changes = Mutex<[(status: String, at: UInt64)]>([])
    }
    private let seen = Seen()
    private let reader = Mutex<Task<Void, Never>?>(nil)
    /// Where ``next(_:)`` looks from: the changes before it were taken.
    private let cursor = Mutex(0)

    /// Reads `stream`, the player's `PropertiesChanged` signals, until dropped.
    public init(_ stream: AsyncThrowingStream<Message, any Error>) {
        let task = Task { [seen] in
            do {
                for try await message in stream {
                    let at = monotonicNanoseconds()
                    let (interface, changed, _) = try message.decode(as: String.self, [String: Variant].self, [String].self)
                    guard interface == "org.mpris.MediaPlayer2.Player", let value = changed["PlaybackStatus"],
                        let status = try? value.get(String.self)
                    else { continue }
                    seen.changes.withLock { $0.append((status, at)) }
                }
            } catch {}
        }
        reader.withLock { $0 = task }
    }

    deinit { reader.withLock { $0?.cancel() } }

    /// Waits (`timeout` at most) for the first change to `status` that arrived at `notBefore`
    /// (nanoseconds, ``monotonicNanoseconds()``) or later, and returns when it arrived (the
    /// reader's time stamp, not when this noticed it).
    public func next(_ status: String, notBefore: UInt64, timeout: Duration = .seconds(10)) async throws -> UInt64 {
        try await waitFor(status, timeout: timeout) { changes in
            changes.first { $0.status == status && $0.at >= notBefore }?.at
        }
    }

    /// Waits (`timeout` at most) for the next change to `status` after those already taken by
    /// this method, and returns when it arrived.
    @discardableResult
    public func next(_ status: String, timeout: Duration = .seconds(30)) async throws -> UInt64 {
        try await waitFor(status, timeout: timeout) { changes in
            cursor.withLock { cursor in
                guard let index = changes[cursor...].firstIndex(where: { $0.status == status }) else { return nil }
                cursor = index + 1
                return changes[index].at
            }
        }
    }

    private func waitFor(
        _ status: String, timeout: Duration, _ find: ([(status: String, at: UInt64)]) -> UInt64?
    ) async throws -> UInt64 {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = seen.changes.withLock({ find($0) }) { return found }
            try await Task.sleep(for: .microseconds(200))
        }
        throw BenchmarkFailure(description: "no PropertiesChanged with PlaybackStatus \(status) within \(timeout)")
    }
}
