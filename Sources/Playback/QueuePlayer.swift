import AsyncSupport
import Logging
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A player: a ``PlayQueue`` played by a ``PlaybackEngine``, controlled through
/// a ``RemoteCommandCenter`` and shown through a ``NowPlayingInfoCenter``.
///
/// It is the playback manager of Apple's sample apps. ``start()`` adds a
/// target to every command it supports; from then on a remote's "play",
/// "next", "seek", a new rate, repeat or shuffle mode, a volume, an opened URL
/// and the queue commands (play this entry, add, remove) act on the queue and
/// the engine, and every visible change is published: the current item with
/// its state, position and rate, and the queue in play order.
///
/// Guarantees:
/// - **Sequenced.** Commands and engine events run one at a time, in arrival
///   order, each to its end (including the engine's state changes), so a
///   stop followed at once by a play never fails (a restart of the pipeline
///   racing its own stop is how players fail after "stop, play").
/// - **Replies after the fact.** A command's status is returned once the
///   engine reached the state asked for: "play" succeeds once audio plays.
/// - **Gapless.** When an item is about to end, the engine is handed the item
///   that follows (the same one under repeat one) and the queue advances
///   when that one really starts.
/// - **Failures move on.** An item that cannot be played (missing, corrupt,
///   unreachable) is logged and skipped; playback stops only when no item
///   in the queue can play.
/// - **Lazy.** The engine is made on the first "play", so a player that was
///   restored paused costs no engine (no pipeline) until someone listens.
public actor QueuePlayer {
    /// What the player offers remotes.
    public struct Configuration: Sendable {
        /// Rates a remote may pick; others snap to the nearest, and the rate reported is the
        /// one that plays (a remote asking for any rate must get an answer it can show).
        public var supportedRates: [Double] = [0.5, 0.75, 1, 1.25, 1.5, 2]
        /// The skip intervals remotes offer.
        public var skipIntervals: [Duration] = [.seconds(10)]
        /// Past this position, "previous" restarts the item instead of going back.
        public var restartThreshold: Duration = .seconds(3)
        /// The most entries the queue holds. A remote's "open" or "add track"
        /// past it is refused, and ``QueuePlayer/replaceQueue(with:startingAt:play:)``
        /// keeps the first this many: any client may add, and every entry costs memory.
        public var maximumQueueLength = 65_536
        /// While playing, how often observers of ``QueuePlayer/observeChanges(_:)``
        /// hear the position, so a saved state is never older than this after a
        /// crash or a power cut. Nothing wakes up while paused or stopped.
        public var positionCheckpointInterval: Duration = .seconds(15)
        /// How much of the queue remotes are shown (``NowPlayingInfoCenter/playbackQueue``,
        /// MPRIS `TrackList`): the entries this far before and after the current one, in play
        /// order. MPRIS describes the track list as the tracks recently played or about to
        /// play; a 50,000-entry list would cost every client and the player megabytes on each
        /// change. The whole queue is still what plays, and what the commands work on.
        public var shownQueueWindow = QueueWindow(before: 5, after: 50)
        /// URL schemes ``QueuePlayer`` opens; the engine must play them.
        public var supportedURLSchemes: [String] = ["file", "http", "https"]
        /// MIME types it plays, as remotes are told: the registered names and
        /// those of GStreamer's type finders, for every format a music library
        /// holds (the default fits `GStreamerEngine`; another engine states its own).
        public var supportedMIMETypes: [String] = [
            "audio/mpeg", "audio/ogg", "audio/opus", "audio/flac", "audio/x-flac", "audio/x-wav", "audio/wav",
            "audio/x-vorbis+ogg", "audio/mp4", "audio/aac", "audio/x-matroska", "audio/webm", "audio/x-aiff",
            "audio/x-wavpack", "audio/x-ape", "audio/x-musepack", "audio/x-ttafile", "audio/x-ac3", "audio/x-eac3",
            "audio/x-caf", "audio/x-dsf", "audio/x-w64", "audio/x-ms-wma", "audio/x-speex",
        ]

        /// The defaults above.
        public init() {}
    }

    /// A stretch of the queue around its current entry, in play order.
    public struct QueueWindow: Sendable, Equatable {
        /// Entries shown before the current one.
        public var before: Int
        /// Entries shown after the current one.
        public var after: Int

        public init(before: Int, after: Int) {
            self.before = max(before, 0)
            self.after = max(after, 0)
        }

        /// The play-order positions shown when the current entry is at `current` (the start of
        /// the queue when nothing is current).
        func positions(around current: Int?) -> Range<Int> {
            let center = current ?? 0
            // `Int.max` stands for "the whole queue"; no bound may overflow.
            let lower = before >= center ? 0 : center - before
            let end = after >= Int.max - center ? Int.max : center + after + 1
            return lower..<end
        }
    }

    /// Makes the engine on first use; it may throw (no audio sink, say).
    public typealias EngineFactory = @Sendable () throws -> any PlaybackEngine
    /// Turns a URL a remote asked for into a queue entry (looking it up in
    /// a library, say), or throws to refuse it: the remote then receives
    /// ``RemoteCommandHandlerStatus/notPlayable(reason:)`` with the error's
    /// description as the reason, so make it a sentence about the URL.
    public typealias URLResolver = @Sendable (URL) async throws -> QueueItem

    private let commands: RemoteCommandCenter
    private let nowPlaying: NowPlayingInfoCenter
    private let configuration: Configuration
    private let makeEngine: EngineFactory
    private let resolve: URLResolver
    private let logger: Logger
    /// Where long items are resumed; nil when none remembers its position.
    private let resumePoints: (any ResumePointStore)?

    private var engine: (any PlaybackEngine)?
    private var engineEvents: Task<Void, Never>?
    private var queue = PlayQueue()
    /// The queue's entries and play order as ``snapshot`` last built them, at a queue revision.
    private var savedEntries: (revision: Int, entries: [PlayerSnapshot.Entry], playOrder: [Int]) = (0, [], [])
    private var state: PlaybackState = .stopped
    /// The entry the engine has loaded, if any.
    private var loaded: QueueItem?
    /// The position at `since`; it advances at `rate` while playing.
    private var position: Duration = .zero
    private var since = ContinuousClock.now
    private var rate = 1.0
    /// The rate the engine was last set to; a new engine plays at 1.
    private var engineRate = 1.0
    private var volume = 1.0
    /// What a live stream says it plays now, and the engine's duration for items without one.
    private var streamTags: StreamTags?
    private var engineDuration: Duration?
    /// Whether the queue changed since remotes were last shown it.
    private var queueNeedsPublishing = true
    /// The play-order positions of the entries last shown.
    private var publishedWindow = 0..<0
    private var changeObservers: [@Sendable (PlayerSnapshot) -> Void] = []
    /// Tells the observers the position every checkpoint interval while playing.
    private var checkpoints: Task<Void, Never>?
    /// The order of sequenced operations: one at a time, in the order asked for.
    private let turns = TurnQueue(width: 1)
    /// Operations accepted that may start playback and have not finished, by acceptance number:
    /// a later command that changes what plays cancels their tasks (see ``accept(_:_:)``).
    private var startsInFlight: [Int: StartInFlight] = [:]
    private var operationsAccepted = 0
    /// Removes each target added by ``start()``.
    private var targets: [@Sendable () -> Void] = []
    /// The gapless hand-over, read on the engine's streaming thread.
    private let handover = Handover()

    /// An accepted operation that may start playback.
    private struct StartInFlight {
        let cancel: @Sendable () -> Void
        /// Waits for the operation of the command that superseded it; nil while none did.
        var supersededBy: (@Sendable () async -> Void)?
    }

    /// How an operation meets starts of playback.
    private struct Precedence {
        /// It may start playback (and wait on the engine for it): a later command that
        /// supersedes starts cancels it.
        var mayStart = false
        /// It changes what plays or stops it: from its arrival it cancels every operation
        /// accepted before it that may start playback.
        var supersedesStarts = false

        static let independent = Precedence()
        static let mayStart = Precedence(mayStart: true)
        static let supersedes = Precedence(supersedesStarts: true)
        static let startsAnew = Precedence(mayStart: true, supersedesStarts: true)
    }

    /// Shared with the engine's streaming thread, hence a class around a lock.
    private final class Handover: Sendable {
        struct State {
            /// What follows the current item, and what follows that, by the URL of the item they
            /// follow: the engine may ask for both before it announces the first.
            var successors: [(after: URL, item: QueueItem)] = []
            /// Entries handed over whose stream has not started yet, oldest first.
            var handedOver: [QueueItem] = []

            /// The entry to play after the item at `url`, recorded as handed over.
            mutating func handOver(after url: URL) -> QueueItem? {
                guard let next = successors.first(where: { $0.after == url })?.item else { return nil }
                // Asked again for the same item (after a seek near its end): one hand-over, not two.
                if handedOver.last?.identifier != next.identifier { handedOver.append(next) }
                return next
            }

            /// The handed-over entry whose stream just started, dropping any handed over before it.
            mutating func started(_ url: URL) -> QueueItem? {
                guard let index = handedOver.firstIndex(where: { $0.url == url }) else { return nil }
                let item = handedOver[index]
                handedOver.removeFirst(index + 1)
                return item
            }
        }
        private let state = Mutex(State())
        func withLock<T>(_ body: (inout State) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// A player over an empty queue; call ``start()`` to take the commands.
    ///
    /// - Parameter resumePoints: where long items remember their position (see
    ///   ``ResumePointStore``); nil to start every item at its beginning.
    public init(
        commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "mpris-bridge.player"), resumePoints: (any ResumePointStore)? = nil,
        makeEngine: @escaping EngineFactory, resolve: @escaping URLResolver
    ) {
        self.resumePoints = resumePoints
        self.commands = commands
        self.nowPlaying = nowPlaying
        self.configuration = configuration
        self.logger = logger
        self.makeEngine = makeEngine
        self.resolve = resolve
    }

    // MARK: Life cycle

    /// Adds targets to the commands, configures their options and publishes the current state.
    public func start() {
        guard targets.isEmpty else { return }
        let c = commands
        c.performBatchUpdates {
            c.changePlaybackRateCommand.supportedPlaybackRates = configuration.supportedRates
            c.skipForwardCommand.preferredIntervals = configuration.skipIntervals
            c.skipBackwardCommand.preferredIntervals = configuration.skipIntervals
            c.openURLCommand.supportedURLSchemes = configuration.supportedURLSchemes
            c.openURLCommand.supportedMIMETypes = configuration.supportedMIMETypes
            c.changeRepeatModeCommand.currentRepeatType = queue.repeatMode
            c.changeShuffleModeCommand.currentShuffleType = queue.shuffleMode
            targets = [
                target(c.playCommand, { _ in .mayStart }) { player, _ in await player.play() },
                target(c.pauseCommand, { _ in .supersedes }) { player, _ in await player.pause() },
                target(c.togglePlayPauseCommand, { _ in .startsAnew }) { player, _ in
                    player.state == .playing ? await player.pause() : await player.play()
                },
                target(c.stopCommand, { _ in .supersedes }) { player, _ in await player.stop() },
                target(c.nextTrackCommand, { _ in .startsAnew }) { player, _ in await player.next() },
                target(c.previousTrackCommand, { _ in .startsAnew }) { player, _ in await player.previous() },
                target(c.changePlaybackPositionCommand) { player, event in await player.seek(to: event.positionTime) },
                target(c.skipForwardCommand) { player, event in
                    await player.seek(to: player.currentPosition + event.interval)
                },
                target(c.skipBackwardCommand) { player, event in
                    await player.seek(to: player.currentPosition - event.interval)
                },
                target(c.changePlaybackRateCommand) { player, event in await player.setRate(event.playbackRate) },
                target(c.changeRepeatModeCommand) { player, event in player.setRepeat(event.repeatType) },
                target(c.changeShuffleModeCommand) { player, event in player.setShuffle(event.shuffleType) },
                target(c.changeVolumeCommand) { player, event in player.setVolume(event.volume) },
                target(c.openURLCommand, { _ in .startsAnew }) { player, event in await player.open(event.url) },
                target(c.playItemInQueueCommand, { _ in .startsAnew }) { player, event in
                    await player.playItem(identifier: event.identifier)
                },
                target(c.addItemToQueueCommand, { $0.playsImmediately ? .startsAnew : .independent }) { player, event in
                    await player.addItem(url: event.url, after: event.afterIdentifier, playsImmediately: event.playsImmediately)
                },
                // Removing the current entry plays the next one, but chooses nothing to play.
                target(c.removeItemFromQueueCommand, { _ in .mayStart }) { player, event in
                    await player.removeItem(identifier: event.identifier)
                },
            ]
        }
        nowPlaying.volume = volume
        publish()
    }

    /// Adds a target to `command` that runs `body` as a command (see ``command(_:_:)``), with
    /// the precedence the event gives it.
    private func target<Event>(
        _ command: RemoteCommand<Event>, _ precedence: @escaping @Sendable (Event) -> Precedence = { _ in .independent },
        _ body: @escaping @Sendable (isolated QueuePlayer, Event) async -> RemoteCommandHandlerStatus
    ) -> @Sendable () -> Void {
        let target = command.addTarget { [weak self] event in
            guard let self else { return .noActionableNowPlayingItem }
            return await self.command(precedence(event)) { await body($0, event) }
        }
        return { command.removeTarget(target) }
    }

    /// Removes the targets and stops the engine. Call before dropping the player.
    public func shutDown() async {
        saveResumePoint()
        for remove in targets { remove() }
        targets = []
        checkpoints?.cancel()
        checkpoints = nil
        // A start still waiting on the engine gives way, so it cannot hold up the shutdown.
        for start in startsInFlight.values { start.cancel() }
        await sequenced { player in
            await player.engine?.stop()
            player.engineEvents?.cancel()
            player.engine = nil
            player.loaded = nil
        }
    }

    /// Saves where the current item is now with the ``ResumePointStore`` (when it remembers its
    /// position), as pausing does: for an app about to close its store. ``shutDown()`` does it too.
    public func saveResumePoint() {
        guard state != .stopped, let item = loaded ?? queue.current else { return }
        rememberPosition(of: item, at: currentPosition)
    }

    /// Calls `observer` with the player's state after every change a restart
    /// should keep (the queue, the current entry, every play, pause, stop,
    /// seek, rate and track change, volume, modes), and while playing every
    /// ``Configuration/positionCheckpointInterval``.
    public func observeChanges(_ observer: @escaping @Sendable (PlayerSnapshot) -> Void) {
        changeObservers.append(observer)
    }

    // MARK: The queue from the app

    /// Replaces the queue with `items`, makes the one at `index` current and,
    /// when `play` is true, plays it; otherwise the player is stopped there.
    /// Returns the status a "play" would have.
    @discardableResult
    public func replaceQueue(with items: [QueueItem], startingAt index: Int = 0, play: Bool)
        async -> RemoteCommandHandlerStatus
    {
        return await command(play ? .startsAnew : .supersedes) { player in
            await player.unload()
            player.queue.replace(with: Array(items.prefix(player.configuration.maximumQueueLength)), currentIndex: index)
            player.queueChanged()
            player.setPosition(.zero, state: .stopped)
            return play ? await player.play() : .success
        }
    }

    /// Where ``enqueue(_:at:)`` puts items in the play order.
    public enum QueuePlacement: Sendable {
        /// Right after the current entry (first, when nothing is current), in their order.
        case next
        /// At the end.
        case last
    }

    /// Adds `items` to the queue without changing what plays: after the current entry, or
    /// at the end. Remotes see the queue change. Refused whole with
    /// ``RemoteCommandHandlerStatus/notPlayable(reason:)`` when they would not fit in the
    /// queue's maximum length.
    @discardableResult
    public func enqueue(_ items: [QueueItem], at placement: QueuePlacement) async -> RemoteCommandHandlerStatus {
        await sequenced { player in
            guard !items.isEmpty else { return .success }
            guard player.queue.count + items.count <= player.configuration.maximumQueueLength else {
                return .notPlayable(reason: "the queue is full (\(player.configuration.maximumQueueLength) entries)")
            }
            switch placement {
            case .next:
                var after = player.queue.current?.identifier
                for item in items { after = player.queue.insert(item, after: after)?.identifier ?? after }
            case .last:
                for item in items { player.queue.append(item) }
            }
            player.queueChanged()
            player.publish()
            return .success
        }
    }

    /// Replaces each entry for which `update` returns a new item (its file's tags changed on
    /// disk, say), keeping its place, its identifier and playback: remotes see the new fields.
    public func updateItems(_ update: @escaping @Sendable (QueueItem) -> QueueItem?) async {
        await sequenced { player in
            guard player.queue.updateItems(update) else { return }
            player.queueChanged()
            player.publish()
        }
    }

    /// Shows again what the catalogs of catalogued entries say of them (a rescan retagged some
    /// tracks, say): the current entry and the window remotes are shown are asked for anew.
    /// Playback, the queue and its identifiers are unchanged.
    public func refreshItemDescriptions() async {
        await sequenced { player in
            player.queueNeedsPublishing = true
            player.publish()
        }
    }

    /// Restores a saved state, paused at its position (stopped when the position is 0),
    /// with `items` the entries the snapshot names, in its added order (missing ones left out).
    public func restore(_ snapshot: PlayerSnapshot, items: [QueueItem]) async {
        await sequenced { player in
            await player.unload()
            let known = Set(items.map(\.identifier))
            let kept = snapshot.addedOrder.enumerated().filter { known.contains($0.element.identifier) }.map(\.offset)
            // Entries that vanished leave holes in the saved order: renumber what is left.
            let renumbered = Dictionary(uniqueKeysWithValues: kept.enumerated().map { ($0.element, $0.offset) })
            let playOrder = snapshot.playOrder.compactMap { renumbered[$0] }
            let currentIdentifier = snapshot.currentIdentifier
            var restored = PlayQueue()
            if !restored.restore(
                addedOrder: items, playOrder: playOrder.count == items.count ? playOrder : Array(items.indices),
                currentIndex: 0, repeatMode: snapshot.repeatMode.repeatType, shuffleMode: snapshot.shuffleMode.shuffleType)
            {
                restored.replace(with: items)
            }
            var position = Duration.zero
            if let currentIdentifier, restored.moveTo(identifier: currentIdentifier) {
                position = .milliseconds(max(snapshot.positionMilliseconds, 0))
            }
            player.queue = restored
            // A queue of its own, whose revisions say nothing of the entries built before.
            player.savedEntries.revision = -1
            player.queueNeedsPublishing = true
            player.rate = snapshot.rate.isFinite && snapshot.rate > 0 ? snapshot.rate : 1
            player.volume = snapshot.volume.isFinite ? min(max(snapshot.volume, 0), 10) : 1
            player.nowPlaying.volume = player.volume
            player.setPosition(position, state: position > .zero ? .paused : .stopped)
            player.commands.performBatchUpdates {
                player.commands.changeRepeatModeCommand.currentRepeatType = restored.repeatMode
                player.commands.changeShuffleModeCommand.currentShuffleType = restored.shuffleMode
            }
        }
    }

    /// The state a restart should keep, as of now.
    ///
    /// Every track change and checkpoint makes one: the queue's entries are built again only
    /// after the queue changed, and shared otherwise, so a saver comparing two snapshots of a
    /// long queue compares one array buffer, not 50,000 entries.
    public var snapshot: PlayerSnapshot {
        if savedEntries.revision != queue.revision {
            savedEntries = (
                queue.revision, queue.addedOrder.map { item in
                    PlayerSnapshot.Entry(identifier: item.identifier, url: item.catalogKey == nil ? item.url : nil)
                },
                queue.playOrder
            )
        }
        return PlayerSnapshot(
            addedOrder: savedEntries.entries, playOrder: savedEntries.playOrder, currentIdentifier: queue.current?.identifier,
            positionMilliseconds: Int64(currentPosition / .milliseconds(1)), volume: volume, rate: rate,
            repeatMode: .init(queue.repeatMode), shuffleMode: .init(queue.shuffleMode))
    }

    /// The queue in play order.
    public var items: [QueueItem] { queue.items }
    /// The number of entries in the queue (without building ``items``).
    public var itemCount: Int { queue.count }
    /// Whether the player is playing, paused or stopped.
    public var playbackState: PlaybackState { state }

    // MARK: Sequencing

    /// Runs `operation` after every operation asked for before it, and returns its result. It
    /// runs on a task of its own: a caller that goes away does not cancel it.
    private func sequenced<T: Sendable>(
        _ precedence: Precedence = .independent, _ operation: @escaping @Sendable (isolated QueuePlayer) async -> T
    ) async -> T {
        let (task, number) = accept(precedence, operation)
        let result = await task.value
        startsInFlight[number] = nil
        return result
    }

    /// Runs a command's `operation` as ``sequenced(_:_:)`` does and returns its status; a
    /// command superseded meanwhile answers once the command that superseded it took effect.
    private func command(
        _ precedence: Precedence,
        _ operation: @escaping @Sendable (isolated QueuePlayer) async -> RemoteCommandHandlerStatus
    ) async -> RemoteCommandHandlerStatus {
        let (task, number) = accept(precedence, operation)
        let status = await task.value
        if let later = startsInFlight.removeValue(forKey: number)?.supersededBy { await later() }
        return status
    }

    /// Takes `operation`'s place in the player's order and starts its task, which waits for its
    /// turn. The place is taken before anything else, so a remote's next command, which may be
    /// delivered from here on (the remote's turn is passed), comes after it.
    ///
    /// This is the one way a command supersedes another: one that ``Precedence/supersedesStarts``
    /// cancels, on arrival, the tasks of the operations before it that ``Precedence/mayStart``,
    /// running or still waiting for their turn. Their changes to the queue stand; a start of
    /// playback in a cancelled task ends at once (the engine's wait included) and leaves the
    /// player meaning to play, for the later command to decide from (see
    /// ``resumeSupersededStart()``).
    private func accept<T: Sendable>(
        _ precedence: Precedence, _ operation: @escaping @Sendable (isolated QueuePlayer) async -> T
    ) -> (Task<T, Never>, number: Int) {
        let turn = turns.reserveTakingOver()
        let task = Task { () async -> T in
            await turn.wait()
            defer { turn.pass() }
            // The operation holds no remote's turn: what it starts (the engine's events) must not pass one.
            return await Turn.$held.withValue(nil) {
                let result = await operation(self)
                if precedence.mayStart { await self.resumeSupersededStart() }
                return result
            }
        }
        if precedence.supersedesStarts {
            let later: @Sendable () async -> Void = { _ = await task.value }
            for number in startsInFlight.keys {
                startsInFlight[number]?.cancel()
                startsInFlight[number]?.supersededBy = later
            }
        }
        let number = operationsAccepted
        operationsAccepted += 1
        if precedence.mayStart { startsInFlight[number] = StartInFlight(cancel: { task.cancel() }) }
        return (task, number)
    }

    /// Plays again after a start was superseded, unless a later command supersedes this
    /// operation too: the command that superseded it (a "next" at the end of the queue, an
    /// "open" of a URL refused) may have left nothing to decide what plays.
    private func resumeSupersededStart() async {
        guard state == .playing, loaded == nil, !Task.isCancelled, queue.current != nil else { return }
        _ = await startPlayback(resumingAt: position)
    }

    /// Whether `error` says a later command cancelled the call.
    private static func isSuperseded(_ error: any Error) -> Bool {
        (error as? PlaybackError)?.kind == .superseded || error is CancellationError
    }

    // MARK: Commands

    private func play() async -> RemoteCommandHandlerStatus {
        guard queue.current != nil else { return .noActionableNowPlayingItem }
        if state == .playing { return .success }
        return await startPlayback(resumingAt: state == .stopped ? .zero : currentPosition)
    }

    private func pause() async -> RemoteCommandHandlerStatus {
        guard queue.current != nil else { return .noActionableNowPlayingItem }
        if state == .interrupted {
            // The engine is paused already; the end of the interruption must not resume.
            setPosition(position, state: .paused)
            return .success
        }
        guard state == .playing else { return .success }
        let now = currentPosition
        // Nothing loaded while playing: a start was superseded, and nothing plays to pause.
        if let engine, loaded != nil {
            do {
                try await engine.pause()
            } catch where Self.isSuperseded(error) {
                // A later command decides what plays; this one's word, paused, stands until then.
                loaded = nil
            } catch {
                logger.warning("pausing failed: \(error)")
                return .commandFailed
            }
        }
        setPosition(engine?.position ?? now, state: .paused)
        if let item = loaded ?? queue.current { rememberPosition(of: item, at: position) }
        return .success
    }

    private func stop() async -> RemoteCommandHandlerStatus {
        await unload()
        setPosition(.zero, state: .stopped)
        return .success
    }

    private func next() async -> RemoteCommandHandlerStatus {
        guard queue.current != nil else { return .noActionableNowPlayingItem }
        guard queue.moveToNext() else { return .noSuchContent }
        return await changedItem()
    }

    private func previous() async -> RemoteCommandHandlerStatus {
        guard queue.current != nil else { return .noActionableNowPlayingItem }
        if currentPosition > configuration.restartThreshold || !queue.moveToPrevious() {
            return await seek(to: .zero)
        }
        return await changedItem()
    }

    /// After next, previous or a removal: plays the new current item if the player was playing,
    /// else rests on it at its start (paused stays paused).
    private func changedItem() async -> RemoteCommandHandlerStatus {
        let wasPlaying = state == .playing
        await unload()
        if wasPlaying { return await startPlayback(resumingAt: .zero) }
        setPosition(.zero, state: state == .stopped ? .stopped : .paused)
        return .success
    }

    private func seek(to target: Duration) async -> RemoteCommandHandlerStatus {
        guard let item = queue.current else { return .noActionableNowPlayingItem }
        guard !item.isLiveStream else { return .commandFailed }
        var target = max(target, .zero)
        if let duration = item.info.playbackDuration ?? engineDuration { target = min(target, duration) }
        if let engine, loaded?.identifier == item.identifier {
            do {
                try await engine.seek(to: target)
            } catch where Self.isSuperseded(error) {
                // A later command decides what plays; it starts from here.
                loaded = nil
                position = target
                since = .now
                return .success
            } catch {
                logger.warning("seeking \(item.url) failed: \(error)")
                return .commandFailed
            }
        }
        setPosition(target, state: state == .stopped && target > .zero ? .paused : state)
        if state != .stopped { rememberPosition(of: item, at: target) }
        return .success
    }

    private func setRate(_ newRate: Double) async -> RemoteCommandHandlerStatus {
        guard newRate.isFinite, newRate > 0 else { return .commandFailed }
        let now = currentPosition
        if let engine, loaded != nil {
            do {
                try await engine.setRate(newRate)
                engineRate = newRate
            } catch {
                logger.warning("changing the rate failed: \(error)")
                return .commandFailed
            }
        }
        rate = newRate
        setPosition(engine?.position ?? now, state: state)
        return .success
    }

    private func setRepeat(_ mode: RepeatType) -> RemoteCommandHandlerStatus {
        queue.repeatMode = mode
        commands.changeRepeatModeCommand.currentRepeatType = mode
        queueChanged()
        publish()
        return .success
    }

    private func setShuffle(_ mode: ShuffleType) -> RemoteCommandHandlerStatus {
        queue.setShuffle(mode)
        commands.changeShuffleModeCommand.currentShuffleType = mode
        queueChanged()
        publish()
        return .success
    }

    private func setVolume(_ newVolume: Double) -> RemoteCommandHandlerStatus {
        volume = newVolume.isFinite ? min(max(newVolume, 0), 10) : volume
        engine?.volume = volume
        nowPlaying.volume = volume
        notifyChange()
        return .success
    }

    /// Plays `url` now: it goes after the current entry and becomes current.
    private func open(_ url: URL) async -> RemoteCommandHandlerStatus {
        if let full = queueIsFull { return full }
        let item: QueueItem
        do {
            item = try await resolved(url)
        } catch {
            logger.notice("cannot open \(url): \(error)")
            return .notPlayable(reason: "\(error)")
        }
        let inserted: QueueItem?
        if let current = queue.current {
            inserted = queue.insert(item, after: current.identifier)
        } else {
            inserted = queue.append(item)
        }
        guard let inserted, queue.moveTo(identifier: inserted.identifier) else { return .commandFailed }
        queueChanged()
        await unload()
        return await startPlayback(resumingAt: .zero)
    }

    private func playItem(identifier: String) async -> RemoteCommandHandlerStatus {
        guard queue.moveTo(identifier: identifier) else { return .noSuchContent }
        await unload()
        return await startPlayback(resumingAt: .zero)
    }

    /// The entry for `url`, resolved on a task of its own: a command superseded meanwhile still
    /// adds its entry (only its start of playback gives way).
    private func resolved(_ url: URL) async throws -> QueueItem {
        let resolve = self.resolve
        return try await Task { try await resolve(url) }.value
    }

    /// The refusal of one more entry when the queue holds its maximum, or nil when there is room.
    private var queueIsFull: RemoteCommandHandlerStatus? {
        guard queue.count >= configuration.maximumQueueLength else { return nil }
        return .notPlayable(reason: "the queue is full (\(configuration.maximumQueueLength) entries)")
    }

    private func addItem(url: URL, after: String?, playsImmediately: Bool) async -> RemoteCommandHandlerStatus {
        if let full = queueIsFull { return full }
        let item: QueueItem
        do {
            item = try await resolved(url)
        } catch {
            logger.notice("cannot add \(url): \(error)")
            return .notPlayable(reason: "\(error)")
        }
        guard let inserted = queue.insert(item, after: after) else { return .noSuchContent }
        queueChanged()
        guard playsImmediately, queue.moveTo(identifier: inserted.identifier) else {
            publish()
            return .success
        }
        await unload()
        return await startPlayback(resumingAt: .zero)
    }

    private func removeItem(identifier: String) async -> RemoteCommandHandlerStatus {
        let wasCurrent = queue.current?.identifier == identifier
        guard queue.remove(identifier: identifier) else { return .noSuchContent }
        queueChanged()
        guard wasCurrent else {
            publish()
            return .success
        }
        return await changedItem()
    }

    // MARK: Playing

    /// Loads the current item (unless loaded), seeks to `resumingAt` and plays. When an item
    /// cannot be played it is skipped, and the next one is tried, until one plays or every
    /// item of the queue failed once. A failing audio output is no item's fault: the player
    /// stops where it is and answers ``RemoteCommandHandlerStatus/deviceNotFound``.
    ///
    /// A later command supersedes the start by cancelling its task: the start then ends at once,
    /// answers ``RemoteCommandHandlerStatus/success`` (the later command has the last word), and
    /// leaves the player meaning to play from `start` with nothing loaded, unpublished.
    private func startPlayback(resumingAt start: Duration) async -> RemoteCommandHandlerStatus {
        var attempts = 0
        var start = start
        while let item = queue.current, attempts < max(queue.count, 1) {
            attempts += 1
            do {
                try Task.checkCancellation()
                let engine = try engineInUse()
                var loadedAfresh = false
                if loaded?.identifier != item.identifier {
                    // A start from the beginning of a long item resumes where it was left; a
                    // resumed start (a restored queue's position) keeps its own.
                    if start == .zero { start = resumePosition(of: item) }
                    try await load(item, on: engine)
                    if start > .zero, !item.isLiveStream { try await engine.seek(to: start) }
                    loadedAfresh = true
                }
                if engineRate != rate, !item.isLiveStream {
                    try await engine.setRate(rate)
                    engineRate = rate
                }
                try await engine.play()
                setPosition(engine.position ?? start, state: .playing)
                // In progress from here: a finished item is one no longer.
                if loadedAfresh { rememberPosition(of: item, at: start, finishing: false) }
                return .success
            } catch where Self.isSuperseded(error) {
                // A later command took over: not the item's fault, and not for this start to go
                // on. The player means to play as asked; the later command decides from there.
                logger.info("starting \(item.url) was superseded by a later command")
                loaded = nil
                position = start
                since = .now
                state = .playing
                return .success
            } catch let error as PlaybackError where error.kind == .outputDevice {
                logger.warning("the audio output failed: \(error.message)")
                await unload(remembering: false)
                setPosition(.zero, state: .stopped)
                return .deviceNotFound
            } catch {
                logger.warning("cannot play \(item.url): \(error)")
                loaded = nil
                start = .zero
                if engine == nil { break }  // no engine at all: nothing will play
                // Like a listener's "next": repeat one must not retry the same failing item.
                guard queue.moveToNext(), queue.current?.identifier != item.identifier else { break }
                queueChanged()
            }
        }
        await unload(remembering: false)
        setPosition(.zero, state: .stopped)
        return .commandFailed
    }

    private func load(_ item: QueueItem, on engine: any PlaybackEngine) async throws {
        handover.withLock { $0 = Handover.State() }
        loaded = nil
        streamTags = nil
        engineDuration = nil
        // Before loading: a short item is about to finish while it prerolls, and the engine
        // asks then what follows it.
        prepareHandover(after: item)
        try await engine.load(item.url)
        loaded = item
        engineDuration = engine.duration
    }

    /// The engine, made on first use.
    private func engineInUse() throws -> any PlaybackEngine {
        if let engine { return engine }
        let engine = try makeEngine()
        engine.volume = volume
        let handover = self.handover
        engine.setSuccessorProvider { item in handover.withLock { $0.handOver(after: item)?.url } }
        self.engine = engine
        engineRate = 1
        engineEvents = Task { [weak self] in
            for await event in engine.events {
                guard let self else { return }
                // An event may start the next item, which a later command supersedes.
                await self.sequenced(.mayStart) { await $0.handle(event) }
            }
        }
        return engine
    }

    /// Stops the engine and forgets what it had loaded; first, unless told not to, saves where
    /// the loaded item was left (a stop, or a switch to another item).
    private func unload(remembering: Bool = true) async {
        handover.withLock { $0 = Handover.State() }
        guard let engine, let item = loaded else { return }
        if remembering, state != .stopped { rememberPosition(of: item, at: currentPosition) }
        await engine.stop()
        loaded = nil
    }

    /// Tells the engine what follows `current` (the loaded item; it is the queue's current one),
    /// and what follows that, for gapless hand-overs.
    private func prepareHandover(after current: QueueItem? = nil) {
        var successors: [(after: URL, item: QueueItem)] = []
        // An item to resume is loaded and sought when the one before it ends: a hand-over
        // would start it at its beginning.
        if let current = current ?? loaded, let next = queue.itemAfterCurrentEnds, resumePosition(of: next) == .zero {
            successors.append((current.url, next))
            var ahead = queue  // a copy: only its current index moves
            if ahead.advanceAfterEnd(), let afterNext = ahead.itemAfterCurrentEnds, resumePosition(of: afterNext) == .zero {
                successors.append((next.url, afterNext))
            }
        }
        handover.withLock { $0.successors = successors }
    }

    // MARK: Engine events

    private func handle(_ event: PlaybackEvent) async {
        switch event {
        case .streamStarted(let url):
            // A stream the player loaded itself was handled by `load`; only a hand-over moves the queue.
            let handedOver = handover.withLock { $0.started(url) }
            guard let handedOver, queue.moveTo(identifier: handedOver.identifier) else { return }
            // The item before it played to its end.
            if let finished = loaded { rememberFinished(finished) }
            loaded = handedOver
            streamTags = nil
            engineDuration = engine?.duration
            prepareHandover()
            setPosition(.zero, state: state == .stopped ? .playing : state)
            rememberPosition(of: handedOver, at: .zero, finishing: false)
        case .durationChanged(let duration):
            guard duration != engineDuration else { return }
            engineDuration = duration
            if queue.current?.info.playbackDuration == nil { publish() }
        case .tagsChanged(let tags):
            guard queue.current?.isLiveStream == true, tags != streamTags else { return }
            streamTags = tags
            publish()
        case .endOfStream:
            guard let finished = loaded, state == .playing, isNearTheEnd else { return }
            await unload(remembering: false)
            rememberFinished(finished)
            // An item that was not handed over (one to resume) is loaded now; at the end of the
            // queue, the player rests stopped at its first entry.
            if queue.itemAfterCurrentEnds != nil, queue.advanceAfterEnd() {
                queueChanged()
                _ = await startPlayback(resumingAt: .zero)
                return
            }
            _ = queue.moveTo(index: 0)
            setPosition(.zero, state: .stopped)
        case .error(let error):
            let handedOver = handover.withLock { state in state.handedOver.first { $0.url == error.url } }
            let failed: QueueItem? = if error.url == nil || error.url == loaded?.url { loaded } else { handedOver }
            // An error about an item since replaced is stale.
            guard let failed else { return }
            let wasPlaying = state == .playing
            guard error.kind != .outputDevice else {
                // No item's fault: stay on it, stopped, rather than fail through the queue.
                logger.warning("the audio output failed: \(error.message)")
                await unload(remembering: false)
                _ = queue.moveTo(identifier: failed.identifier)
                setPosition(.zero, state: .stopped)
                return
            }
            logger.warning("playback of \(failed.url) failed: \(error.message)")
            await unload(remembering: false)
            _ = queue.moveTo(identifier: failed.identifier)
            guard wasPlaying, queue.moveToNext(), queue.current?.identifier != failed.identifier else {
                setPosition(.zero, state: .stopped)
                return
            }
            _ = await startPlayback(resumingAt: .zero)
        case .interruption(.began):
            // Paused by the system, not by the listener: shown as interrupted, and resumed at the end.
            guard state == .playing else { return }
            logger.info("interrupted by a more important stream: paused until it ends")
            setPosition(engine?.position ?? currentPosition, state: .interrupted)
            if let item = loaded { rememberPosition(of: item, at: position) }
        case .interruption(.ended):
            // A pause, stop or new item chosen meanwhile was the listener's word; it stands.
            guard state == .interrupted else { return }
            logger.info("the interruption ended: resuming")
            _ = await startPlayback(resumingAt: position)
        case .buffering, .stateChanged:
            break
        }
    }

    /// Whether the loaded item has (nearly) played to its end: an end-of-stream
    /// left over from an item since replaced must not move the queue.
    private var isNearTheEnd: Bool {
        guard let duration = engineDuration ?? queue.current?.info.playbackDuration else { return true }
        return currentPosition >= duration - .seconds(1)
    }

    // MARK: Publishing

    private var currentPosition: Duration {
        // Meaning to play with nothing loaded (a superseded start): the position stands.
        guard state == .playing, loaded != nil else { return position }
        var elapsed = position + (ContinuousClock.now - since) * rate
        if let duration = queue.current?.info.playbackDuration ?? engineDuration { elapsed = min(elapsed, duration) }
        return elapsed
    }

    /// Records a new position and state and publishes them.
    private func setPosition(_ newPosition: Duration, state newState: PlaybackState) {
        position = newPosition
        since = .now
        state = newState
        publish()
        // A restart resumes where playback was: every jump is a change to keep.
        notifyChange()
        if newState == .playing, checkpoints == nil {
            let interval = configuration.positionCheckpointInterval
            checkpoints = Task { [weak self] in
                while (try? await Task.sleep(for: interval)) != nil {
                    await self?.checkpoint()
                }
            }
        } else if newState != .playing {
            checkpoints?.cancel()
            checkpoints = nil
        }
    }

    private func checkpoint() {
        guard state == .playing else { return }
        notifyChange()
        if let item = loaded { rememberPosition(of: item, at: currentPosition) }
    }

    // MARK: Resume points

    /// Where `item` starts when it is loaded from its beginning: its resume point, unless it has
    /// none, finished, or one past its end.
    private func resumePosition(of item: QueueItem) -> Duration {
        guard let store = resumePoints, !item.isLiveStream, store.remembersPosition(of: item),
            let point = store.resumePoint(of: item), !point.isFinished, point.position > .zero
        else { return .zero }
        if let duration = item.info.playbackDuration, point.position >= duration { return .zero }
        return point.position
    }

    /// Saves where `item` was left, when it remembers its position: within the last
    /// ``ResumePoint/finishingShare`` it counts as finished, unless `finishing` is false.
    private func rememberPosition(of item: QueueItem, at position: Duration, finishing: Bool = true) {
        guard let store = resumePoints, !item.isLiveStream, store.remembersPosition(of: item) else { return }
        let duration = item.info.playbackDuration ?? (item.identifier == loaded?.identifier ? engineDuration : nil)
        let point = finishing ? ResumePoint(leftAt: position, of: duration) : ResumePoint(position: position)
        store.save(point, of: item)
    }

    /// Saves that `item` played to its end: it starts from its beginning next time.
    private func rememberFinished(_ item: QueueItem) {
        guard let store = resumePoints, !item.isLiveStream, store.remembersPosition(of: item) else { return }
        store.save(.finished, of: item)
    }

    /// The queue changed: republish it, re-prepare the hand-over, refresh what the commands offer.
    private func queueChanged() {
        queueNeedsPublishing = true
        prepareHandover()
        notifyChange()
    }

    private func publish() {
        // The window moves with the current entry as well as with the queue; the centre sends
        // nothing when what it shows is unchanged.
        let window = configuration.shownQueueWindow.positions(around: queue.currentIndex)
        if queueNeedsPublishing || window != publishedWindow {
            queueNeedsPublishing = false
            publishedWindow = window
            nowPlaying.playbackQueue = queue.items(inPlayOrder: window).map(\.info)
        }
        let hasItems = !queue.isEmpty
        let hasNext = queue.currentIndex.map { $0 + 1 < queue.count || queue.repeatMode == .all } ?? false
        commands.performBatchUpdates {
            commands.playCommand.isEnabled = hasItems
            commands.pauseCommand.isEnabled = hasItems
            commands.togglePlayPauseCommand.isEnabled = hasItems
            commands.nextTrackCommand.isEnabled = hasNext
            commands.previousTrackCommand.isEnabled = hasItems
        }
        guard let item = queue.current else {
            nowPlaying.publish(nil, at: since)
            return
        }
        var info = item.info
        if let streamTags {
            info.title = streamTags.title ?? info.title
            if let artist = streamTags.artist { info.artists = [artist] }
            info.albumTitle = streamTags.album ?? streamTags.organization ?? info.albumTitle
        }
        if info.playbackDuration == nil, !info.isLiveStream { info.playbackDuration = engineDuration }
        info.playbackState = state
        info.elapsedPlaybackTime = position
        info.playbackRate = rate
        info.defaultPlaybackRate = 1
        info.playbackQueueIndex = queue.currentIndex
        info.playbackQueueCount = queue.count
        nowPlaying.publish(info, at: since)
    }

    private func notifyChange() {
        guard !changeObservers.isEmpty else { return }
        let snapshot = self.snapshot
        for observer in changeObservers { observer(snapshot) }
    }
}

/// What a restart keeps of a ``QueuePlayer``: the queue, the current entry
/// and its position, the volume, the rate, repeat and shuffle. `Codable`, so
/// it can be saved as JSON.
public struct PlayerSnapshot: Sendable, Codable, Equatable {
    /// A saved entry: the app looks its item up again by identifier or URL.
    public struct Entry: Sendable, Codable, Equatable {
        public var identifier: String
        /// The entry's URL; nil for an entry of a ``QueueItemCatalog``, found again by its
        /// identifier (a URL for each of 50,000 library entries would be most of what is saved).
        public var url: URL?
        public init(identifier: String, url: URL?) {
            self.identifier = identifier
            self.url = url
        }
    }

    /// Repeat modes as saved.
    public enum Repeat: String, Sendable, Codable {
        case off, one, all
        init(_ type: RepeatType) {
            switch type {
            case .off: self = .off
            case .one: self = .one
            case .all: self = .all
            }
        }
        var repeatType: RepeatType {
            switch self {
            case .off: .off
            case .one: .one
            case .all: .all
            }
        }
    }

    /// Shuffle modes as saved.
    public enum Shuffle: String, Sendable, Codable {
        case off, items, collections
        init(_ type: ShuffleType) {
            switch type {
            case .off: self = .off
            case .items: self = .items
            case .collections: self = .collections
            }
        }
        var shuffleType: ShuffleType {
            switch self {
            case .off: .off
            case .items: .items
            case .collections: .collections
            }
        }
    }

    /// The entries in the order they were added.
    public var addedOrder: [Entry]
    /// Indices into `addedOrder`, in play order (shuffled or not).
    public var playOrder: [Int]
    /// The current entry.
    public var currentIdentifier: String?
    /// The position in the current entry, in milliseconds.
    public var positionMilliseconds: Int64
    /// Linear volume, 0 to 10.
    public var volume: Double
    /// The playback rate.
    public var rate: Double
    public var repeatMode: Repeat
    public var shuffleMode: Shuffle

    public init(
        addedOrder: [Entry], playOrder: [Int], currentIdentifier: String?, positionMilliseconds: Int64,
        volume: Double, rate: Double, repeatMode: Repeat, shuffleMode: Shuffle
    ) {
        self.addedOrder = addedOrder
        self.playOrder = playOrder
        self.currentIdentifier = currentIdentifier
        self.positionMilliseconds = positionMilliseconds
        self.volume = volume
        self.rate = rate
        self.repeatMode = repeatMode
        self.shuffleMode = shuffleMode
    }
}
