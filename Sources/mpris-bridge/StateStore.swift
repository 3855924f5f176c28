import AsyncSupport
import CMalloc
import Logging
import MusicLibrary
import Playback
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
/// The state is `state.sqlite` (a ``StateDatabase``): each save writes only
/// what changed since the last, so a track change, a seek or a checkpoint while
/// playing rewrites one row, and a queue edit the rows of the entries it added,
/// removed or moved, however long the queue. Each save is one transaction,
/// synced when it commits, so a power cut leaves the previous save or the new
/// one. Saves are coalesced: a writer task writes only the newest state once the
/// previous write is done, so a burst of changes costs one or two writes and
/// nothing runs while nothing changes.
///
/// Earlier versions kept the state in `state.json` and `resume.json`; the first
/// ``load()`` that finds them and no saved database moves them into it.
final class StateStore: Sendable {
    var path: String { writes.path }
    private let pending: AsyncStream<PlayerSnapshot>.Continuation
    private let writer: Task<Void, Never>
    /// Settings not written yet, the newest value per key: a burst of changes writes each once.
    private let pendingSettings = PendingSettings()
    private let settingsChanged: AsyncStream<Void>.Continuation
    private let settingsWriter: Task<Void, Never>
    private let writes: Writes
    /// Where the writes run: each is synced to the disk, which blocks its thread, so never on
    /// one of those Swift's tasks share.
    private let writingThread = BlockingExecutor(label: "mpris-bridge.state-writes", width: 1)

    init(directory: String, logger: Logger) {
        let (stream, continuation) = AsyncStream.makeStream(of: PlayerSnapshot.self, bufferingPolicy: .bufferingNewest(1))
        pending = continuation
        let writes = Writes(folder: directory, logger: logger)
        self.writes = writes
        writer = Task(executorPreference: writingThread) {
            for await snapshot in stream { writes.write(snapshot) }
        }
        let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        settingsChanged = changed
        let pendingSettings = self.pendingSettings
        settingsWriter = Task(executorPreference: writingThread) {
            for await _ in changes {
                for (key, value) in pendingSettings.take() { writes.writeSetting(key, value) }
            }
        }
    }

    /// The saved state, or nil when there is none or it cannot be read (said in the log).
    /// Moves an earlier version's JSON files into the database.
    func load() -> PlayerSnapshot? { writes.load() }

    /// Saves `snapshot` soon, replacing any save not yet written.
    func save(_ snapshot: PlayerSnapshot) { pending.yield(snapshot) }

    /// A setting saved with ``saveSetting(_:_:)``, or nil (never saved, or unreadable).
    func setting(_ key: String) -> String? { writes.setting(key) }

    /// Saves a setting (nil removes it) soon, on the writing thread, in order with the other
    /// settings and before ``close(with:)`` returns; a failure is said in the log.
    func saveSetting(_ key: String, _ value: String?) {
        pendingSettings.set(key, value)
        settingsChanged.yield()
    }

    /// Writes `snapshot` (nil: none, as when the daemon stops before it restored the saved
    /// state) now, after any pending save and setting, stops the writers and closes the database.
    func close(with snapshot: PlayerSnapshot?) async {
        pending.finish()
        settingsChanged.finish()
        await writer.value
        await settingsWriter.value
        let writes = self.writes
        let pendingSettings = self.pendingSettings
        await Task(executorPreference: writingThread) {
            // Saved after the settings writer's last turn.
            for (key, value) in pendingSettings.take() { writes.writeSetting(key, value) }
            if let snapshot { writes.write(snapshot) }
            writes.closeDatabase()
        }.value
    }
}

/// Settings saved but not written yet: the newest value per key (nil: remove it).
private final class PendingSettings: Sendable {
    private let values = Mutex<[String: String?]>([:])

    func set(_ key: String, _ value: String?) { values.withLock { $0[key] = .some(value) } }

    /// The settings not written yet, no longer pending.
    func take() -> [String: String?] {
        values.withLock { values in
            defer { values = [:] }
            return values
        }
    }
}

/// The writing side of a ``StateStore``: the database, opened when first needed, and whether
/// saving fails.
private final class Writes: Sendable {
    let folder: String
    let logger: Logger
    private let state = Mutex(State())

    struct State {
        var database: StateDatabase?
        /// Whether the last write failed, so a failing disk is reported once, not per save.
        var failing = false
    }

    init(folder: String, logger: Logger) {
        self.folder = folder
        self.logger = logger
    }

    var path: String { folder + "/state.sqlite" }

    func load() -> PlayerSnapshot? {
        state.withLock { state -> PlayerSnapshot? in
            var saved: PlayerSnapshot?
            if FileManager.default.fileExists(atPath: path) {
                do {
                    let database = try state.database ?? StateDatabase(path: path)
                    state.database = database
                    saved = try database.read()
                } catch {
                    state.database = nil
                    let damaged = (error as? SQLiteError)?.isCorruption ?? false
                    // A folder that cannot be written: the state is read as the file has it, and
                    // the first save says the folder cannot be written.
                    if !damaged, let snapshot = try? StateDatabase(path: path, immutable: true).read() {
                        return snapshot
                    }
                    logger.warning("ignoring the saved state in \(path): \(StateStore.sentence(for: error))")
                    // Replaced at the next save, as a damaged file always was.
                    if damaged { StateDatabase.remove(at: path) }
                    return nil
                }
            }
            guard LegacyStateFiles.exist(in: folder) else { return saved }
            // Left behind by a move that stopped between the database's commit and their removal.
            if saved != nil {
                LegacyStateFiles.remove(in: folder)
                return saved
            }
            let legacy: PlayerSnapshot?
            do {
                legacy = try LegacyStateFiles.read(in: folder)
            } catch {
                logger.warning("ignoring the saved state in \(folder)/state.json: \(StateStore.sentence(for: error))")
                return nil
            }
            guard let legacy else { return nil }
            // Removed only once the database holds what they said; else read again at the next start.
            if write(legacy, in: &state) {
                LegacyStateFiles.remove(in: folder)
                logger.notice("moved the saved state from \(folder)/state.json into \(path)")
            }
            return legacy
        }
    }

    func write(_ snapshot: PlayerSnapshot) {
        state.withLock { _ = write(snapshot, in: &$0) }
    }

    func setting(_ key: String) -> String? {
        state.withLock { state in
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            let database = state.database ?? (try? StateDatabase(path: path))
            state.database = state.database ?? database
            return try? database?.setting(key)
        }
    }

    func writeSetting(_ key: String, _ value: String?) {
        state.withLock { state in
            do {
                try openForWriting(&state).setSetting(key, value)
            } catch {
                logger.error("cannot save the setting \(key) in \(folder): \(StateStore.sentence(for: error))")
            }
        }
    }

    func closeDatabase() {
        state.withLock { $0.database = nil }
    }

    /// Writes `snapshot`; whether it is saved. A failure is said once until a write succeeds again.
    private func write(_ snapshot: PlayerSnapshot, in state: inout State) -> Bool {
        do {
            let rows = try openForWriting(&state).write(snapshot)
            // Writing a long queue whole takes megabytes of small allocations, freed again at
            // once: give them back rather than keep them while idle.
            if rows >= Self.longQueue { _ = malloc_trim(0) }
            if state.failing {
                state.failing = false
                logger.notice("the player's state is saved to \(folder) again")
            }
            return true
        } catch {
            // Opened afresh by the next save, which writes everything.
            state.database = nil
            if !state.failing {
                state.failing = true
                logger.error(
                    "cannot save the player's state in \(folder): \(StateStore.sentence(for: error)); playback goes on, and a restart resumes from the last save")
            }
            return false
        }
    }

    /// The database, opened (the folder made first) unless it is already.
    private func openForWriting(_ state: inout State) throws -> StateDatabase {
        if let opened = state.database { return opened }
        try makeDirectory(folder)
        let database = try StateDatabase(path: path)
        state.database = database
        return database
    }

    /// The number of rows past which a write trims the heap after it.
    static let longQueue = 5_000
}

extension StateStore {
    /// What went wrong, as a sentence for the log rather than a dump of an error value.
    static func sentence(for error: any Error) -> String {
        switch error {
        case let error as SQLiteError: return error.message
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
