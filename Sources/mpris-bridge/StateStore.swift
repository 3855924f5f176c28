import CMalloc
import GStreamerPlayback
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the player's state in the state folder so a restart, even after a
/// crash or a power cut, resumes where playback was.
///
/// Two files: `state.json`, the whole state (queue, modes, volume, the
/// current entry and its position), and `resume.json`, just the current
/// entry and position. A change that leaves everything else as it was — a
/// track change, a seek, a checkpoint while playing — writes only the small
/// file, so the queue is not rewritten every few seconds. Each save carries a
/// sequence number, and the resume point counts only when it is newer than
/// the state it refines.
///
/// Every file is written whole or not at all: to a temporary file, synced,
/// renamed over the old one, and the folder synced, so a power cut leaves
/// the previous save or the new one. Saves are coalesced: a writer task
/// writes only the newest state once the previous write is done, so a burst
/// of changes costs one or two writes and nothing runs while nothing changes.
final class StateStore: Sendable {
    var path: String { writes.path }
    var resumePath: String { writes.resumePath }
    private let logger: Logger
    private let pending: AsyncStream<PlayerSnapshot>.Continuation
    private let writer: Task<Void, Never>
    private let writes: Writes

    init(directory: String, logger: Logger) {
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: PlayerSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        pending = continuation
        let writes = Writes(folder: directory, logger: logger)
        self.writes = writes
        writer = Task {
            for await snapshot in stream { writes.write(snapshot) }
        }
    }

    /// The saved state, with the resume point applied when it is newer, or nil
    /// when there is none or it cannot be read (said in the log).
    func load() -> PlayerSnapshot? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let saved: SavedState
        do {
            saved = try JSONDecoder().decode(SavedState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            logger.warning("ignoring the saved state in \(path): \(Self.sentence(for: error))")
            return nil
        }
        var snapshot = saved.snapshot
        var sequence = saved.sequence
        if let data = try? Data(contentsOf: URL(fileURLWithPath: resumePath)),
            let resume = try? JSONDecoder().decode(ResumePoint.self, from: data), resume.sequence > saved.sequence
        {
            snapshot.currentIdentifier = resume.currentIdentifier
            snapshot.positionMilliseconds = resume.positionMilliseconds
            sequence = resume.sequence
        }
        writes.written.withLock {
            $0.sequence = sequence
            $0.state = snapshot
        }
        return snapshot
    }

    /// Saves `snapshot` soon, replacing any save not yet written.
    func save(_ snapshot: PlayerSnapshot) { pending.yield(snapshot) }

    /// Writes `snapshot` now, after any pending save, and stops the writer.
    func close(with snapshot: PlayerSnapshot) async {
        pending.finish()
        await writer.value
        writes.write(snapshot)
    }
}

/// The writing side of a ``StateStore``: what was last written, and the files.
private final class Writes: Sendable {
    let folder: String
    let logger: Logger
    let written = Mutex(Written())

    struct Written {
        /// The sequence number of the newest file written or read.
        var sequence = 0
        /// The state as last written whole, to tell what changed since.
        var state: PlayerSnapshot?
        /// Whether the last write failed, so a failing disk is reported once, not per save.
        var failing = false
    }

    init(folder: String, logger: Logger) {
        self.folder = folder
        self.logger = logger
    }

    var path: String { folder + "/state.json" }
    var resumePath: String { folder + "/resume.json" }

    func write(_ snapshot: PlayerSnapshot) {
        let (sequence, resumeOnly) = written.withLock { written in
            written.sequence += 1
            return (written.sequence, written.state.map { Self.samePlace($0, snapshot) } ?? false)
        }
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try makeDirectory(folder)
            if resumeOnly {
                let resume = ResumePoint(
                    sequence: sequence, currentIdentifier: snapshot.currentIdentifier,
                    positionMilliseconds: snapshot.positionMilliseconds)
                try Self.replaceFile(at: resumePath, with: encoder.encode(resume))
                // Equal but for the place: keep the player's copy, which later snapshots share,
                // so the next comparison is of one array with itself, not entry by entry.
                written.withLock { $0.state = snapshot }
            } else {
                try Self.replaceFile(at: path, with: encoder.encode(SavedState(snapshot: snapshot, sequence: sequence)))
                written.withLock { $0.state = snapshot }
                // Encoding a long queue takes tens of megabytes of small allocations, freed
                // again at once: give them back rather than keep them while idle.
                if snapshot.addedOrder.count >= Self.longQueue { _ = malloc_trim(0) }
            }
            let recovered = written.withLock { written in
                defer { written.failing = false }
                return written.failing
            }
            if recovered { logger.notice("the player's state is saved to \(folder) again") }
        } catch {
            let first = written.withLock { written in
                defer { written.failing = true }
                return !written.failing
            }
            if first {
                logger.error(
                    "cannot save the player's state in \(folder): \(StateStore.sentence(for: error)); playback goes on, and a restart resumes from the last save")
            }
        }
    }

    /// The length of queue past which a whole-state write trims the heap after it.
    static let longQueue = 5_000

    /// Whether two states differ at most in the current entry and its position.
    private static func samePlace(_ saved: PlayerSnapshot, _ new: PlayerSnapshot) -> Bool {
        var new = new
        new.currentIdentifier = saved.currentIdentifier
        new.positionMilliseconds = saved.positionMilliseconds
        return new == saved
    }

    /// Replaces the file at `path` with `data`, atomically and durably (see the type's comment).
    private static func replaceFile(at path: String, with data: Data) throws(StateStore.StorageError) {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StateStore.StorageError(errno: errno, doing: "create", path: temporary) }
        var failure: StateStore.StorageError?
        let count = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if count != data.count {
            failure = StateStore.StorageError(errno: count < 0 ? errno : ENOSPC, doing: "write", path: temporary)
        } else if fsync(descriptor) != 0 {
            failure = StateStore.StorageError(errno: errno, doing: "write", path: temporary)
        }
        Glibc.close(descriptor)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let failure = StateStore.StorageError(errno: errno, doing: "replace", path: path)
            unlink(temporary)
            throw failure
        }
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        let folderDescriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            Glibc.close(folderDescriptor)
        }
    }

}

extension StateStore {
    /// A failed file operation, said as a sentence: what was done to which file, and the system's reason.
    struct StorageError: Error, CustomStringConvertible {
        var reason: String
        var doing: String
        var path: String
        init(errno code: Int32, doing: String, path: String) {
            reason = String(cString: strerror(code))
            self.doing = doing
            self.path = path
        }
        var description: String { "cannot \(doing) \(path): \(reason)" }
    }

    /// What went wrong, as a sentence for the log rather than a dump of an error value.
    static func sentence(for error: any Error) -> String {
        switch error {
        case let error as StorageError: return error.description
        case let error as CocoaError:
            let file = error.filePath ?? error.url?.path(percentEncoded: false) ?? "the file"
            if let underlying = error.underlying as? POSIXError {
                return "\(file): \(String(cString: strerror(underlying.code.rawValue)))"
            }
            switch error.code {
            case .fileReadNoSuchFile, .fileNoSuchFile: return "\(file) does not exist"
            case .fileReadNoPermission, .fileWriteNoPermission: return "\(file): permission denied"
            case .fileWriteOutOfSpace: return "\(file): the disk is full"
            case .fileReadCorruptFile: return "\(file) is damaged"
            case .fileWriteVolumeReadOnly: return "\(file): the file system is read-only"
            default: return "\(file) cannot be used (error \(error.code.rawValue))"
            }
        case let error as DecodingError:
            switch error {
            case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
                .valueNotFound(_, let context):
                return "it is not a state file this version reads (\(context.debugDescription))"
            @unknown default: return "it is not a state file this version reads"
            }
        default: return "\(error)"
        }
    }
}

/// `state.json`: a ``PlayerSnapshot``'s fields and the save's sequence number.
private struct SavedState: Codable {
    var snapshot: PlayerSnapshot
    var sequence: Int

    private enum Keys: String, CodingKey { case saveSequence }

    init(snapshot: PlayerSnapshot, sequence: Int) {
        self.snapshot = snapshot
        self.sequence = sequence
    }

    init(from decoder: any Decoder) throws {
        snapshot = try PlayerSnapshot(from: decoder)
        // Files from before the resume point have no number: older than any resume point.
        sequence = try decoder.container(keyedBy: Keys.self).decodeIfPresent(Int.self, forKey: .saveSequence) ?? 0
    }

    func encode(to encoder: any Encoder) throws {
        try snapshot.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(sequence, forKey: .saveSequence)
    }
}

/// `resume.json`: where playback was, newer than `state.json` when its sequence number is higher.
private struct ResumePoint: Codable {
    var sequence: Int
    var currentIdentifier: String?
    var positionMilliseconds: Int64
}
