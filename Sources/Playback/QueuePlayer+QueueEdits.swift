import AsyncSupport
import MediaRemote
import Synchronization

/// The queue as MPD sees it: entries at positions in the queue's own order
/// (``PlayQueue/addedOrder``, which shuffle mode leaves alone), each with a song id that is
/// positive, unique for the life of the process, never reused and kept as the entry moves;
/// edited by position or id, sequenced with every other command. An edit whose position,
/// range or id is wrong throws ``QueueEditError`` and changes nothing.
extension QueuePlayer {
    /// The player and its queue at a glance (MPD's `status`), built without any entry: the
    /// same cost for 5 entries or 50,000. Elapsed time and duration are included.
    public var queueSummary: QueueSummary { core.queueSummary(at: .now) }

    /// ``queueSummary`` without waiting for the actor: the summary the player published after
    /// the last input it handled (a command, an edit, an engine event), its elapsed time
    /// extrapolated to now at the playback rate. It equals ``queueSummary`` read at the same
    /// instant; an input being handled right now shows once it has been. For MPD's `status`,
    /// which a client may send many times a second.
    public nonisolated var currentSummary: QueueSummary { currentSummary(at: .now) }

    /// The current entry (MPD's `currentsong`) as the player published it after the last input
    /// it handled, read without waiting for the actor, as ``currentSummary`` is; nil when the
    /// queue is empty.
    public nonisolated var currentEntry: QueueEntry? { publishedSummary.withLock { $0.currentEntry } }

    /// ``currentSummary`` at `instant` (not before the last input).
    package nonisolated func currentSummary(at instant: ContinuousClock.Instant) -> QueueSummary {
        publishedSummary.withLock { $0 }.summary(at: instant)
    }

    /// ``queueSummary`` at `instant`, read on the actor.
    package func queueSummary(at instant: ContinuousClock.Instant) -> QueueSummary { core.queueSummary(at: instant) }

    /// The entries at `positions` in the queue's own order, clamped to the queue.
    public func queueEntries(in positions: Range<Int>) -> [QueueEntry] { core.queueEntries(in: positions) }

    /// The song ids in the queue's own order, with the ``QueueSummary/revision`` they are of:
    /// what MPD's `plchanges` compares with an earlier revision's. The queue's array, not a copy.
    public var queueSongIDs: (revision: Int, songIDs: [Int]) { (core.queue.entriesRevision, core.queue.songIDs) }

    /// The entry with song id `songID`; nil when none has it (removed, or never given).
    public func queueEntry(songID: Int) -> QueueEntry? { core.queueEntry(songID: songID) }

    /// Calls `observer` after each change with what it touched: the entries (``PlayerChanges/queue``),
    /// playback (play, pause, stop, a seek, another entry current: ``PlayerChanges/player``),
    /// the volume (``PlayerChanges/mixer``), the modes (``PlayerChanges/options``); for as long
    /// as the returned observation is kept. Computed by the core for each input, so it says
    /// exactly what changed, and the position's checkpoints, which change nothing, are not told.
    public func observeEvents(_ observer: @escaping @Sendable (PlayerChanges) -> Void) -> Observation {
        core.notifiesEvents = true
        return eventObservers.add(observer)
    }

    /// Inserts `items` at `position` (nil: the end), in their order, without changing what
    /// plays, and returns their song ids. Shuffle on, each takes a random place in the play
    /// order after the entry that plays next (as MPD does), so a successor already handed to
    /// the engine stays next.
    ///
    /// - Throws: ``QueueEditError/badPosition`` when `position` is not within `0...count`;
    ///   ``QueueEditError/queueFull(maximum:)`` when they would not all fit.
    @discardableResult
    public func insert(_ items: [QueueItem], atPosition position: Int? = nil) async throws(QueueEditError) -> [Int] {
        try await edit(.insert(items, at: position.map(QueueDestination.position))).edited.get()
    }

    /// Inserts `items` at `destination`, a position or a place relative to the current entry
    /// (MPD's `add URI +0`), as ``insert(_:atPosition:)`` does.
    ///
    /// - Throws: ``QueueEditError/badPosition``, ``QueueEditError/noCurrentEntry`` (a relative
    ///   place with none current) or ``QueueEditError/queueFull(maximum:)``.
    @discardableResult
    public func insert(_ items: [QueueItem], at destination: QueueDestination) async throws(QueueEditError) -> [Int] {
        try await edit(.insert(items, at: destination)).edited.get()
    }

    /// Removes the entries at `positions`. The current entry removed while playing is followed
    /// by the one after it in play order, which plays (paused stays paused); when none follows
    /// (and repeat is not all), playback stops. Returns the status of that start.
    ///
    /// - Throws: ``QueueEditError/badPosition`` when `positions` is not within the queue.
    @discardableResult
    public func removeEntries(atPositions positions: Range<Int>) async throws(QueueEditError)
        -> RemoteCommandHandlerStatus
    {
        try await checked(edit(.remove(positions: positions)))
    }

    /// Removes the entry with song id `songID`, as ``removeEntries(atPositions:)`` does.
    ///
    /// - Throws: ``QueueEditError/noSuchSong(_:)``.
    @discardableResult
    public func removeEntry(songID: Int) async throws(QueueEditError) -> RemoteCommandHandlerStatus {
        try await checked(edit(.removeSong(id: songID)))
    }

    /// Moves the entries at `positions` so that the first lands at `destination` and the others
    /// follow it (MPD's `move START:END TO`); ids and what plays stay. Shuffle off, the play
    /// order follows; shuffle on, what plays next is unchanged.
    ///
    /// - Throws: ``QueueEditError/badPosition`` when `positions` is not within the queue or
    ///   `destination` not within `0...count - positions.count`.
    public func moveEntries(atPositions positions: Range<Int>, to destination: Int) async throws(QueueEditError) {
        _ = try await checked(edit(.move(positions: positions, to: .position(destination))))
    }

    /// Moves the entries at `positions` to `destination`, a position or a place relative to
    /// the current entry (MPD 0.23's `move 3 +0`: right after it), resolved as the move runs.
    ///
    /// - Throws: ``QueueEditError/badPosition``, ``QueueEditError/noCurrentEntry``, or
    ///   ``QueueEditError/movesCurrentRelativeToItself`` when `positions` holds the current entry.
    public func moveEntries(atPositions positions: Range<Int>, to destination: QueueDestination)
        async throws(QueueEditError)
    {
        _ = try await checked(edit(.move(positions: positions, to: destination)))
    }

    /// Moves the entry with song id `songID` to `destination`.
    ///
    /// - Throws: ``QueueEditError/noSuchSong(_:)``, or ``QueueEditError/badPosition`` when
    ///   `destination` is not within `0..<count`.
    public func moveEntry(songID: Int, to destination: Int) async throws(QueueEditError) {
        _ = try await checked(edit(.moveSong(id: songID, to: .position(destination))))
    }

    /// Moves the entry with song id `songID` to `destination`, absolute or relative to the
    /// current entry, as a move by positions does.
    ///
    /// - Throws: ``QueueEditError/noSuchSong(_:)``, or as that method does.
    public func moveEntry(songID: Int, to destination: QueueDestination) async throws(QueueEditError) {
        _ = try await checked(edit(.moveSong(id: songID, to: destination)))
    }

    /// Stops and empties the queue; song ids given before are never given again.
    public func clearQueue() async {
        _ = await edit(.clear)
    }

    /// Reorders the entries at `positions` (all when nil) at random: MPD's `shuffle`, which
    /// changes the queue's own order, not shuffle mode. While playing or paused, the current
    /// entry goes first in the range and plays on; stopped, it is shuffled like the others.
    ///
    /// - Throws: ``QueueEditError/badPosition`` when `positions` is not within the queue.
    public func shuffleEntries(atPositions positions: Range<Int>? = nil) async throws(QueueEditError) {
        _ = try await checked(edit(.shuffle(positions: positions)))
    }

    /// Plays the entry at `position` from its start (a long item resumes where it was left),
    /// as a remote's "play this entry" does; returns once it plays.
    ///
    /// - Throws: ``QueueEditError/badPosition`` when there is no entry at `position`.
    @discardableResult
    public func play(position: Int) async throws(QueueEditError) -> RemoteCommandHandlerStatus {
        try await checked(edit(.play(position: position)))
    }

    /// Plays the entry with song id `songID`, as ``play(position:)`` does.
    ///
    /// - Throws: ``QueueEditError/noSuchSong(_:)``.
    @discardableResult
    public func play(songID: Int) async throws(QueueEditError) -> RemoteCommandHandlerStatus {
        try await checked(edit(.playSong(id: songID)))
    }

    /// Sets MPD's single mode (see ``SingleMode``). Remotes' loop status shows it: repeat off
    /// and single is `None` (MPRIS has no "stop after this track"), repeat on and single is
    /// `Track`; a remote then asking for `Playlist` turns single off.
    public func setSingle(_ mode: SingleMode) async {
        _ = await edit(.setSingle(mode))
    }

    /// Sets MPD's consume mode: on, an entry is removed from the queue once it played to its
    /// end (when the next one starts) or was skipped by "next". Nothing is replayed under
    /// consume, not even under repeat one (as MPD).
    public func setConsume(_ on: Bool) async {
        _ = await edit(.setConsume(on))
    }

    /// Sets MPD's repeat flag: on loops the queue (repeat one, set by another remote, stays
    /// one), off turns repeat off. Single is left as it is, unlike a remote's `Playlist`.
    public func setRepeat(_ on: Bool) async {
        _ = await edit(.setRepeat(on))
    }

    /// The status of an edit that went through, or its error.
    private func checked(
        _ result: (status: RemoteCommandHandlerStatus, edited: Result<[Int], QueueEditError>)
    ) throws(QueueEditError) -> RemoteCommandHandlerStatus {
        _ = try result.edited.get()
        return result.status
    }
}
