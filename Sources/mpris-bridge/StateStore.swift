import GStreamerPlayback
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeps the player's state in `state.json` so a restart resumes where it was.
///
/// Saves are coalesced: the player reports every change, and a writer task
/// writes only the newest state once the previous write is done, so a burst
/// of changes costs one or two writes and nothing runs while nothing changes.
final class StateStore: Sendable {
    let path: String
    private let logger: Logger
    private let pending: AsyncStream<PlayerSnapshot>.Continuation
    private let writer: Task<Void, Never>

    init(directory: String, logger: Logger) {
        let path = directory + "/state.json"
        self.path = path
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: PlayerSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        pending = continuation
        writer = Task {
            for await snapshot in stream { Self.write(snapshot, to: path, logger: logger) }
        }
    }

    /// The saved state, or nil when there is none or it cannot be read (said in the log).
    func load() -> PlayerSnapshot? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try JSONDecoder().decode(PlayerSnapshot.self, from: data)
        } catch {
            logger.warning("ignoring the saved state in \(path): \(error)")
            return nil
        }
    }

    /// Saves `snapshot` soon, replacing any save not yet written.
    func save(_ snapshot: PlayerSnapshot) { pending.yield(snapshot) }

    /// Writes `snapshot` now, after any pending save, and stops the writer.
    func close(with snapshot: PlayerSnapshot) async {
        pending.finish()
        await writer.value
        Self.write(snapshot, to: path, logger: logger)
    }

    private static func write(_ snapshot: PlayerSnapshot, to path: String, logger: Logger) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(snapshot)
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            try makeDirectory(folder)
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            logger.error("cannot save the player's state to \(path): \(error)")
        }
    }
}
