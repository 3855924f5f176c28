import AsyncSupport
import Logging
import MediaRemote
import MusicLibrary
import Playback
import Synchronization

/// The daemon's resume points: where the library's long tracks were left, kept in the index
/// (`resume_points`, by path) and in memory, so the player's questions never wait on the disk.
///
/// The player asks from its own task (``ResumePointStore``): the answers come from a dictionary
/// read from the index once at start (a few hundred bytes a point, and only tracks played that
/// remember have one). Saves update the dictionary at once, and a writer task on a thread of
/// its own writes the latest point of each track saved since its last pass, a row each, then
/// tells the tree (``onWritten``) and rests a second: however often the player saves, the disk
/// and the tree's remotes hear at most one batch a second.
final class LibraryResumePoints: ResumePointStore {
    let policy: ResumePolicy
    private let logger: Logger
    private let shared: Shared
    private let wakeUp: AsyncStream<Void>.Continuation
    private let writer: Task<Void, Never>
    /// The writes run here: each commits to the disk, which blocks its thread.
    private let writingThread = BlockingExecutor(label: "mpris-bridge.resume-points", width: 1)

    /// What the writer task shares with the store.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private struct State {
        var library: MusicLibrary?
        var points: [Track.ID: ResumePoint] = [:]
        /// Saved and not yet written, by track.
        var unwritten: [Track.ID: ResumePoint] = [:]
        var onWritten: (@Sendable ([Track.ID]) -> Void)?
        /// Whether the last write failed, so a failing disk is said once, not per save.
        var failing = false
    }

    /// The pause between two passes of the writer.
    static let passInterval: Duration = .seconds(1)

    init(policy: ResumePolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
        let (wakeUps, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.wakeUp = wakeUp
        let shared = Shared()
        self.shared = shared
        writer = Task(executorPreference: writingThread) {
            for await _ in wakeUps {
                Self.writeUnwritten(shared, logger: logger)
                try? await Task.sleep(for: Self.passInterval)
            }
        }
    }

    /// Reads the points `library` holds, and saves into it from now on.
    func open(_ library: MusicLibrary) {
        let points: [Track.ID: ResumePoint]
        do {
            points = try library.resumePoints().mapValues { ResumePoint(position: $0.position, isFinished: $0.isFinished) }
        } catch {
            logger.warning("the places in long tracks cannot be read: \(error)")
            points = [:]
        }
        shared.state.withLock { state in
            state.library = library
            // Saved before the library was open (nothing plays before, but a point is a point).
            state.points = points.merging(state.points) { _, new in new }
        }
        logger.info("\(points.count) long tracks remember where they were left")
        if !shared.state.withLock({ $0.unwritten.isEmpty }) { wakeUp.yield() }
    }

    /// Called after each batch of points written, with their tracks, on the writer's thread.
    func setOnWritten(_ body: @escaping @Sendable ([Track.ID]) -> Void) {
        shared.state.withLock { $0.onWritten = body }
    }

    /// How much of `track` was played, 0 to 1, or nil when it never was: the tree's rows.
    func progress(of track: Track) -> Double? {
        shared.state.withLock { $0.points[track.id] }?.progress(ofDuration: track.duration)
    }

    /// Writes what is saved and not yet written, and stops the writer.
    func close() async {
        wakeUp.finish()
        writer.cancel()
        await writer.value
        let (shared, logger) = (self.shared, self.logger)
        await Task(executorPreference: writingThread) { Self.writeUnwritten(shared, logger: logger) }.value
    }

    // MARK: ResumePointStore

    /// A library track (an entry keyed by its path) that the policy accepts, by its length,
    /// genres and folder as its now-playing information says (read from the index once, kept).
    func remembersPosition(of item: QueueItem) -> Bool {
        guard !policy.isNone, let path = item.catalogKey else { return false }
        let info = item.info
        return policy.remembersPosition(path: path, duration: info.playbackDuration, genres: info.genres)
    }

    func resumePoint(of item: QueueItem) -> ResumePoint? {
        guard let path = item.catalogKey else { return nil }
        return shared.state.withLock { $0.points[path] }
    }

    func save(_ point: ResumePoint, of item: QueueItem) {
        guard let path = item.catalogKey else { return }
        let changed = shared.state.withLock { state -> Bool in
            guard state.points[path] != point else { return false }
            state.points[path] = point
            state.unwritten[path] = point
            return state.library != nil
        }
        if changed { wakeUp.yield() }
    }

    // MARK: Writing

    private static func writeUnwritten(_ shared: Shared, logger: Logger) {
        let taken = shared.state.withLock { state -> (MusicLibrary, [Track.ID: ResumePoint], (@Sendable ([Track.ID]) -> Void)?)? in
            guard let library = state.library else { return nil }
            defer { state.unwritten = [:] }
            return (library, state.unwritten, state.onWritten)
        }
        guard let (library, batch, onWritten) = taken, !batch.isEmpty else { return }
        var failure: (any Error)?
        for (path, point) in batch {
            do {
                try library.saveResumePoint(
                    TrackResumePoint(position: point.position, isFinished: point.isFinished), ofTrack: path)
            } catch {
                failure = error
            }
        }
        let saidBefore = shared.state.withLock { state in
            defer { state.failing = failure != nil }
            return state.failing
        }
        if let failure, !saidBefore {
            logger.error("cannot save places in long tracks: \(failure); they are kept until the daemon stops")
        }
        onWritten?(Array(batch.keys))
    }
}
