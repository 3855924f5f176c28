import AsyncSupport
import Logging
import MediaRemote
import MusicLibrary
import Playback
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The MPD protocol's commands over the player, the queue, the library and the audio session
/// the daemon's MPRIS face serves: a third face of the same state, with nothing of its own but
/// what MPD names that MPRIS does not (song ids, update jobs).
///
/// Playback goes through the same ``RemoteCommandCenter`` as MPRIS (so a command behaves alike
/// from playerctl and from mpc), the queue's edits through ``QueuePlayer``, reads through the
/// index of ``MusicLibrary``; every change, whoever made it, is told to idle clients
/// (``changes``).
public final class MPDCommands: MPDCommandHandler {
    /// What the commands act on.
    public struct Environment: Sendable {
        public var commands: RemoteCommandCenter
        public var nowPlaying: NowPlayingInfoCenter
        public var player: QueuePlayer
        public var audioSession: AudioSession
        public var library: MusicLibrary
        /// The queue entry of a library track (the daemon's catalog entry, as MPRIS queues it).
        public var queueItem: @Sendable (Track.ID) -> QueueItem
        /// A queue entry for a URL a client adds that is not a library path (a stream); throws
        /// with a sentence about the URL to refuse it.
        public var resolveURL: @Sendable (URL) async throws -> QueueItem
        /// Rescans the library (the daemon's one rescan at a time); returns once done.
        public var rescan: @Sendable () async throws -> Void
        /// When the daemon started (`uptime`).
        public var startedAt: ContinuousClock.Instant

        public init(
            commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter, player: QueuePlayer,
            audioSession: AudioSession, library: MusicLibrary, queueItem: @escaping @Sendable (Track.ID) -> QueueItem,
            resolveURL: @escaping @Sendable (URL) async throws -> QueueItem,
            rescan: @escaping @Sendable () async throws -> Void, startedAt: ContinuousClock.Instant = .now
        ) {
            self.commands = commands
            self.nowPlaying = nowPlaying
            self.player = player
            self.audioSession = audioSession
            self.library = library
            self.queueItem = queueItem
            self.resolveURL = resolveURL
            self.rescan = rescan
            self.startedAt = startedAt
        }
    }

    typealias Command = @Sendable (MPDCommands, _ arguments: [String], _ client: MPDClient) async throws(MPDError) -> MPDResponse

    let environment: Environment
    let logger: Logger
    public let changes: MPDChanges
    /// Reads of the index and image files run here, never on the sockets' thread nor Swift's
    /// shared threads: a slow disk delays only the client that asked.
    let reads = BlockingExecutor(label: "mpris-bridge.mpd.reads", width: 4)
    let state = Mutex(State())
    /// Library tracks by path, for the songs of `currentsong` and `playlistinfo`.
    let trackCache = TrackCache()
    /// The last answers to `list` and `count`, by arguments.
    let listingCache = ListingCache()
    /// The observations of the player, the now-playing centre and the session, kept while this lives.
    private let observations = Mutex<[Observation]>([])

    struct State {
        /// The running `update`'s job number; nil when none runs.
        var updateJob: Int?
        var lastUpdateJob = 0
        /// How long the player played before it last started, and since when it plays.
        var played: Duration = .zero
        var playingSince: ContinuousClock.Instant?
        /// The last covers read, by song and kind, for clients that read them in chunks: at most
        /// four (two generations of two).
        var covers = RecentValues<String, Cover>(capacity: 2)
        /// The song id of the entry last playing or paused. mpd has no current song in a queue
        /// that has not played since it was filled (nor after `random` changes while stopped):
        /// stopped, the player's current entry is shown only if it is this one.
        var lastActiveSongID: Int?
        /// Whether the client asked for ReplayGain `auto` (played here as album gain).
        var replayGainAuto = false
        /// The song ids of the queue's last few revisions, oldest first, for `plchanges`: noted
        /// when a client reads the version (`status`), not at each edit, as holding an array the
        /// queue then changes costs it a copy (at 50,000 entries, per edit of a long command list).
        var queueHistory: [(revision: Int, songIDs: [Int])] = []
    }

    public var commands: [String: MPDPermissions] { MPDCommands.table.mapValues(\.permission) }

    /// Commands over `environment`; `changes` is where every change is told to idle clients
    /// (the daemon posts the library's to it too).
    public init(environment: Environment, changes: MPDChanges = MPDChanges(), logger: Logger) async {
        self.environment = environment
        self.changes = changes
        self.logger = logger
        let observations = await observe()
        self.observations.withLock { $0 = observations }
    }

    public func handle(_ request: MPDRequest, client: MPDClient) async throws(MPDError) -> MPDResponse {
        guard let command = MPDCommands.table[request.name] else {
            throw MPDError(.unknown, "unknown command \"\(request.name)\"")
        }
        do {
            return try await command.run(self, request.arguments, client)
        } catch where error.code == .argument && Arguments.countMessages.contains(error.message) {
            throw MPDError(.argument, "\(error.message) for \"\(request.name)\"")
        }
    }

    static let table: [String: (permission: MPDPermissions, run: Command)] = {
        var table: [String: (permission: MPDPermissions, run: Command)] = [:]
        for (name, permission, run) in statusCommands + playbackCommands + queueCommands + databaseCommands
            + playlistCommands + outputCommands + artworkCommands
        {
            table[name] = (permission, run)
        }
        return table
    }()

    // MARK: Watching what changes

    /// Follows the player and the audio session, and posts what changed; counts playing time.
    private func observe() async -> [Observation] {
        let changes = self.changes
        let player = await environment.player.observeEvents { [weak self] events in
            if events.contains(.player) { Task { await self?.noteActiveEntry() } }
            var subsystems: MPDSubsystems = []
            if events.contains(.queue) { subsystems.insert(.playlist) }
            if events.contains(.player) { subsystems.insert(.player) }
            if events.contains(.mixer) { subsystems.insert(.mixer) }
            if events.contains(.options) { subsystems.insert(.options) }
            changes.post(subsystems)
        }
        let session = environment.audioSession.observe { changes.post([.output, .options]) }
        // Publications come in order, after the player's state changed: the playing-time clock.
        let nowPlaying = environment.nowPlaying.observe { [weak self] update in
            self?.notePlaying(update.current?.playbackState == .playing)
        }
        return [player, session, nowPlaying]
    }

    /// Remembers the entry playing or paused now (see ``State/lastActiveSongID``).
    func noteActiveEntry() async {
        _ = visibleCurrent(await environment.player.queueSummary)
    }

    /// The current entry's position and song id as mpd shows them: playing or paused, the
    /// player's; stopped, only the entry that last played (nil for a queue not played since).
    func visibleCurrent(_ summary: QueueSummary) -> (position: Int, songID: Int)? {
        guard let position = summary.currentPosition, let id = summary.currentSongID else { return nil }
        if summary.state != .stopped {
            state.withLock { $0.lastActiveSongID = id }
            return (position, id)
        }
        return state.withLock { $0.lastActiveSongID } == id ? (position, id) : nil
    }

    /// Starts or stops the playing-time clock as the player plays or not.
    private func notePlaying(_ playing: Bool) {
        state.withLock { state in
            if playing, state.playingSince == nil { state.playingSince = .now }
            if !playing, let since = state.playingSince {
                state.played += .now - since
                state.playingSince = nil
            }
        }
    }

    // MARK: Arguments

    /// Reads the library (or a file) off the shared threads; an error reading becomes `ACK [52]`.
    /// Cancelling the calling task cancels the read's (a long walk checks `Task.isCancelled`).
    func read<T: Sendable>(_ body: @escaping @Sendable (MusicLibrary) throws -> T) async throws(MPDError) -> T {
        let library = environment.library
        let reading = Task(executorPreference: reads) { Result { try body(library) } }
        let result: Result<T, any Error> = await withTaskCancellationHandler {
            await reading.value
        } onCancel: {
            reading.cancel()
        }
        switch result {
        case .success(let value): return value
        case .failure(let error as MPDError): throw error
        case .failure(let error): throw MPDError(.system, "cannot read the library: \(error)")
        }
    }
}

/// Reading a command's arguments as mpd 0.23 does, each failure an `ACK [2@0]` worded as
/// mpd's (clients show these words, and some match them).
enum Arguments {
    /// What ``MPDCommands/handle(_:client:)`` completes with ` for "COMMAND"`, as mpd words them.
    static let countMessages: Set<String> = ["wrong number of arguments", "too few arguments", "too many arguments"]

    static func count(_ arguments: [String], _ range: ClosedRange<Int>) throws(MPDError) {
        guard !range.contains(arguments.count) else { return }
        if range.count == 1 { throw .argument("wrong number of arguments") }
        throw .argument(arguments.count < range.lowerBound ? "too few arguments" : "too many arguments")
    }

    static func integer(_ text: String) throws(MPDError) -> Int {
        guard let value = Int(text) else { throw .argument("Integer expected: \(text)") }
        guard value.magnitude <= UInt(Int32.max) else { throw .argument("Number too large: \(text)") }
        return value
    }

    /// A number within `0...maximum`; as mpd, a negative one is "too large" (it reads unsigned).
    static func unsigned(_ text: String, maximum: Int = Int(Int32.max)) throws(MPDError) -> Int {
        guard let value = Int(text) else { throw .argument("Integer expected: \(text)") }
        guard (0...maximum).contains(value) else { throw .argument("Number too large: \(text)") }
        return value
    }

    static func boolean(_ text: String) throws(MPDError) -> Bool {
        switch text {
        case "0": return false
        case "1": return true
        default: throw .argument("Boolean (0/1) expected: \(text)")
        }
    }

    /// Seconds as mpd reads them (`12`, `12.5`), finite and not negative unless `signed`.
    static func seconds(_ text: String, signed: Bool = false) throws(MPDError) -> Double {
        guard let value = Double(text), value.isFinite, abs(value) < 1e9 else {
            throw .argument("Float expected: \(text)")
        }
        guard signed || value >= 0 else { throw .argument("Negative value not allowed: \(text)") }
        return value
    }

    /// `POS` (one entry) or `START:END` (END exclusive; `START:` to the end) within `0..<count`;
    /// an END past the queue is cut to it (mpd's `playlistinfo` and `delete` do the same).
    /// A START at the end is an empty range (mpd's `delete N` on N entries does nothing); `-1`
    /// is the whole queue, as mpd's old clients write it.
    static func range(_ text: String, count: Int, openEndAllowed: Bool = true) throws(MPDError) -> Range<Int> {
        if text == "-1" { return 0..<count }
        let (start, end) = try bounds(text)
        guard start <= count else { throw .argument("Bad song index") }
        if end == nil, !text.contains(":") { return start..<min(start + 1, count) }
        guard end != nil || openEndAllowed else { throw .argument("Integer or range expected: \(text)") }
        return start..<max(start, min(end ?? count, count))
    }

    /// Entries that must all be there (`move`): no open end, nothing past the queue.
    static func entries(_ text: String, count: Int) throws(MPDError) -> Range<Int> {
        let (start, end) = try bounds(text)
        if text.contains(":"), end == nil { throw .argument("Open-ended range not supported") }
        let range = start..<(end ?? start + 1)
        guard range.upperBound <= count, !range.isEmpty else { throw .argument("Bad song index") }
        return range
    }

    /// A range's numbers as written (`START`, `START:`, `START:END`), read and checked as mpd
    /// does; END is nil when open or absent.
    static func bounds(_ text: String) throws(MPDError) -> (start: Int, end: Int?) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let start = Int(parts[0]) else { throw .argument("Integer or range expected: \(text)") }
        guard start >= 0 else { throw .argument("Number is negative: \(text)") }
        guard start <= Int(Int32.max) else { throw .argument("Number too large: \(text)") }
        guard parts.count == 2, !parts[1].isEmpty else { return (start, nil) }
        guard let end = Int(parts[1]) else { throw .argument("Integer or range expected: \(text)") }
        guard end >= 0 else { throw .argument("Number is negative: \(text)") }
        guard end <= Int(Int32.max) else { throw .argument("Number too large: \(text)") }
        guard end >= start else { throw .argument("Malformed range: \(text)") }
        return (start, end)
    }
}
