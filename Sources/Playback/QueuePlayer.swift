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
/// a `RemoteCommandCenter` and shown through a `NowPlayingInfoCenter` (both from `MediaRemote`).
///
/// It is the playback manager of Apple's sample apps. ``start()`` adds a
/// target to every command it supports; from then on a remote's "play",
/// "next", "seek", a new rate, repeat or shuffle mode, a volume, an opened URL
/// and the queue commands (play this entry, add, remove) act on the queue and
/// the engine, and every visible change is published: the current item with
/// its state, position and rate, and the queue in play order.
///
/// The decisions are made by `PlayerCore`, a value with no I/O; this actor orders the
/// operations, feeds the core one input at a time and performs what it asks for.
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
    /// Makes the engine on first use; it may throw (no audio sink, say).
    public typealias EngineFactory = @Sendable () throws -> any PlaybackEngine
    /// Turns a URL a remote asked for into a queue entry (looking it up in
    /// a library, say), or throws to refuse it: the remote then receives
    /// `RemoteCommandHandlerStatus.notPlayable(reason:)` with the error's
    /// description as the reason, so make it a sentence about the URL.
    public typealias URLResolver = @Sendable (URL) async throws -> QueueItem

    let commands: RemoteCommandCenter
    let nowPlaying: NowPlayingInfoCenter
    let configuration: Configuration
    let makeEngine: EngineFactory
    let resolve: URLResolver
    let logger: Logger
    /// Where long items are resumed; nil when none remembers its position.
    let resumePoints: (any ResumePointStore)?

    /// The player's decisions and the state they are made from; this actor performs what it says.
    /// Every change (each input fed to it) is published for ``currentSummary``.
    var core: PlayerCore {
        didSet { publishedSummary.withLock { $0 = core.queueSummaryClock } }
    }
    /// The core's summary after its last change, read without the actor (``currentSummary``).
    let publishedSummary: Mutex<QueueSummaryClock>
    var engine: (any PlaybackEngine)?
    var engineEvents: Task<Void, Never>?
    let changeObservers = Observers<PlayerSnapshot>()
    let eventObservers = Observers<PlayerChanges>()
    /// Tells the observers the position every checkpoint interval while playing.
    var checkpoints: Task<Void, Never>?
    /// The order of sequenced operations: one at a time, in the order asked for.
    private let turns = TurnQueue(width: 1)
    /// Operations accepted that may start playback and have not finished, by acceptance number:
    /// a later command that changes what plays cancels their tasks (see ``accept(_:_:)``).
    private var startsInFlight: [Int: StartInFlight] = [:]
    private var operationsAccepted = 0
    /// Removes each target added by ``start()``.
    private var targets: [@Sendable () -> Void] = []
    /// Keeps remotes' commands waiting while the queue is being restored.
    let remoteCommandHold = RemoteCommandHold()
    /// The gapless hand-over, read on the engine's streaming thread.
    let handover = HandoverBook()
    /// Where the player runs, kept for ``unownedExecutor``; nil for an actor of Swift's own.
    private let executor: (any SerialExecutor)?
    /// The same executor when it also takes tasks: the player's own tasks prefer it, so that
    /// what they call outside the actor (a turn's wait) runs there too, not on Swift's threads.
    let taskExecutor: (any TaskExecutor)?
    /// The player's isolation when no executor is given: a default actor's, on Swift's threads.
    private let defaultIsolation = DefaultIsolation()

    /// The executor given to ``init(commands:nowPlaying:configuration:logger:resumePoints:executor:makeEngine:resolve:)``,
    /// or a default actor's.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? defaultIsolation.unownedExecutor
    }

    /// An accepted operation that may start playback.
    private struct StartInFlight {
        let cancel: @Sendable () -> Void
        /// Waits for the operation of the command that superseded it; nil while none did.
        var supersededBy: (@Sendable () async -> Void)?
    }

    typealias Precedence = PlayerInput.Precedence

    /// A player over an empty queue; call ``start()`` to take the commands.
    ///
    /// - Parameters:
    ///   - commands: the command centre whose commands ``start()`` takes, as remotes send them.
    ///   - nowPlaying: where the current item, its state and the queue's window are published.
    ///   - configuration: what the player offers remotes (rates, intervals, the queue's bounds).
    ///   - logger: where skipped items and engine failures are logged.
    ///   - resumePoints: where long items remember their position (see
    ///     ``ResumePointStore``); nil to start every item at its beginning.
    ///   - executor: where the player runs; nil for Swift's threads. A D-Bus connection's thread
    ///     (`DBus.Connection.executor`) answers a remote's command and shows its outcome with no
    ///     thread woken between; the player then never blocks, but what it runs delays the
    ///     connection's reads.
    ///   - makeEngine: makes the engine when it is first needed (see ``EngineFactory``).
    ///   - resolve: turns a URL a remote opens or adds into a queue entry (see ``URLResolver``).
    public init(
        commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "mpris-bridge.player"), resumePoints: (any ResumePointStore)? = nil,
        executor: (any SerialExecutor)? = nil, makeEngine: @escaping EngineFactory, resolve: @escaping URLResolver
    ) {
        self.executor = executor
        taskExecutor = executor as? any TaskExecutor
        self.resumePoints = resumePoints
        self.commands = commands
        self.nowPlaying = nowPlaying
        self.configuration = configuration
        self.logger = logger
        self.makeEngine = makeEngine
        self.resolve = resolve
        let core = PlayerCore(configuration: configuration, resumePoints: .store(resumePoints), at: .now)
        self.core = core
        publishedSummary = Mutex(core.queueSummaryClock)
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
            c.changeRepeatModeCommand.currentRepeatType = core.queue.shownRepeatMode
            c.changeShuffleModeCommand.currentShuffleType = core.queue.shuffleMode
            targets = [
                target(c.playCommand) { _ in .play },
                target(c.pauseCommand) { _ in .pause },
                target(c.togglePlayPauseCommand) { _ in .togglePlayPause },
                target(c.stopCommand) { _ in .stop },
                target(c.nextTrackCommand) { _ in .next },
                target(c.previousTrackCommand) { _ in .previous },
                target(c.changePlaybackPositionCommand) { .seek(to: $0.positionTime) },
                target(c.skipForwardCommand) { .skip(by: $0.interval) },
                target(c.skipBackwardCommand) { .skip(by: .zero - $0.interval) },
                target(c.changePlaybackRateCommand) { .setRate($0.playbackRate) },
                target(c.changeRepeatModeCommand) { .setRepeat($0.repeatType) },
                target(c.changeShuffleModeCommand) { .setShuffle($0.shuffleType) },
                target(c.changeVolumeCommand) { .setVolume($0.volume) },
                target(c.openURLCommand) { .open($0.url) },
                target(c.playItemInQueueCommand) { .playItem(identifier: $0.identifier) },
                target(c.addItemToQueueCommand) {
                    .addItem(url: $0.url, after: $0.afterIdentifier, playsImmediately: $0.playsImmediately)
                },
                target(c.removeItemFromQueueCommand) { .removeItem(identifier: $0.identifier) },
            ]
        }
        nowPlaying.volume = core.volume
        apply(core.handle(.publish, at: .now))
    }

    /// Adds a target to `command` that runs the core's command for its event as a command (see
    /// ``command(_:_:)``), with the precedence the command has (``PlayerInput/precedence``).
    private func target<Event>(
        _ command: RemoteCommand<Event>, _ playerCommand: @escaping @Sendable (Event) -> PlayerCommand
    ) -> @Sendable () -> Void {
        let hold = remoteCommandHold
        let target = command.addTarget { [weak self] event in
            guard let self else { return .noActionableNowPlayingItem }
            let input = PlayerInput.command(playerCommand(event))
            return await hold.pass { await self.command(input.precedence) { await $0.run(input) } }
        }
        return { command.removeTarget(target) }
    }

    /// Makes the commands remotes send (through the `RemoteCommandCenter`) wait until
    /// ``releaseRemoteCommands()``, or until `timeout` passes; then they run in the order they
    /// arrived. For a player published before its saved queue is restored: a command that
    /// arrives meanwhile (a media key that started the service) acts on the restored queue
    /// instead of an empty one. The app's own calls (``restore(_:items:)``, ``replaceQueue(with:startingAt:play:)``)
    /// are not held.
    public nonisolated func holdRemoteCommands(for timeout: Duration = .seconds(10)) {
        // Meanwhile play and pause are shown available (see `apply(_:)`); the queue's own
        // availability is shown again once the hold ends.
        remoteCommandHold.close(for: timeout) { [weak self] in
            Task { await self?.showCommandAvailability() }
        }
    }

    private func showCommandAvailability() {
        apply(.enableCommands(core.commandAvailability))
    }

    /// Lets the commands held by ``holdRemoteCommands(for:)`` run, in their order.
    public nonisolated func releaseRemoteCommands() {
        remoteCommandHold.open()
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
            player.apply(player.core.handle(.engineDropped, at: .now))
        }
    }

    /// Saves where the current item is now with the ``ResumePointStore`` (when it remembers its
    /// position), as pausing does: for an app about to close its store. ``shutDown()`` does it too.
    public func saveResumePoint() {
        apply(core.handle(.saveResumePoint, at: .now))
    }

    /// Calls `observer` with the player's state after every change a restart
    /// should keep (the queue, the current entry, every play, pause, stop,
    /// seek, rate and track change, volume, modes: repeat, shuffle, single, consume), whichever
    /// remote or API made it, and while playing every
    /// ``Configuration/positionCheckpointInterval``, for as long as the returned observation is
    /// kept. What a change touched is ``observeEvents(_:)``'s to say.
    public func observeChanges(_ observer: @escaping @Sendable (PlayerSnapshot) -> Void) -> Observation {
        core.notifiesChanges = true
        return changeObservers.add(observer)
    }

    // MARK: The queue from the app

    /// Replaces the queue with `items`, makes the one at `index` current and,
    /// when `play` is true, plays it; otherwise the player is stopped there.
    /// Returns the status a "play" would have.
    @discardableResult
    public func replaceQueue(with items: [QueueItem], startingAt index: Int = 0, play: Bool)
        async -> RemoteCommandHandlerStatus
    {
        let input = PlayerInput.replaceQueue(items, startingAt: index, play: play)
        return await command(input.precedence) { await $0.run(input) }
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
    /// `RemoteCommandHandlerStatus.notPlayable(reason:)` when they would not fit in the
    /// queue's maximum length.
    @discardableResult
    public func enqueue(_ items: [QueueItem], at placement: QueuePlacement) async -> RemoteCommandHandlerStatus {
        await sequenced { await $0.run(.enqueue(items, at: placement)) }
    }

    /// Replaces each entry for which `update` returns a new item (its file's tags changed on
    /// disk, say), keeping its place, its identifier and playback: remotes see the new fields.
    public func updateItems(_ update: @escaping @Sendable (QueueItem) -> QueueItem?) async {
        _ = await sequenced { await $0.run(.updateItems(update)) }
    }

    /// Shows again what the catalogs of catalogued entries say of them (a rescan retagged some
    /// tracks, say): the current entry and the window remotes are shown are asked for anew.
    /// Playback, the queue and its identifiers are unchanged.
    public func refreshItemDescriptions() async {
        _ = await sequenced { await $0.run(.refreshItemDescriptions) }
    }

    /// Restores a saved state, paused at its position (stopped when the position is 0),
    /// with `items` the entries the snapshot names, in its added order (missing ones left out).
    public func restore(_ snapshot: PlayerSnapshot, items: [QueueItem]) async {
        _ = await sequenced { await $0.run(.restore(snapshot, items: items)) }
    }

    /// The state a restart should keep, as of now.
    ///
    /// Every track change and checkpoint makes one: the queue's entries are built again only
    /// after the queue changed, and shared otherwise, so a saver comparing two snapshots of a
    /// long queue compares one array buffer, not 50,000 entries.
    public var snapshot: PlayerSnapshot { core.snapshot(at: .now) }

    /// The queue in play order.
    public var items: [QueueItem] { core.queue.items }
    /// The number of entries in the queue (without building ``items``).
    public var itemCount: Int { core.queue.count }
    /// Whether the player is playing, paused or stopped.
    public var playbackState: PlaybackState { core.state }

    // MARK: Sequencing

    /// Runs `operation` after every operation asked for before it, and returns its result. It
    /// runs on a task of its own: a caller that goes away does not cancel it.
    func sequenced<T: Sendable>(
        _ precedence: Precedence = .independent, _ operation: @escaping @Sendable (isolated QueuePlayer) async -> T
    ) async -> T {
        let (task, number) = accept(precedence, operation)
        let result = await task.value
        startsInFlight[number] = nil
        return result
    }

    /// Runs a queue edit as a command (see ``command(_:_:)``, with the edit's precedence):
    /// its status, and how the edit ended.
    func edit(_ edit: QueueEdit) async -> (status: RemoteCommandHandlerStatus, edited: Result<[Int], QueueEditError>) {
        let input = PlayerInput.editQueue(edit)
        let (task, number) = accept(input.precedence) { await $0.runReporting(input) }
        let result = await task.value
        if let later = startsInFlight.removeValue(forKey: number)?.supersededBy { await later() }
        return (result.status, result.edited ?? .success([]))
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
        let task = Task(executorPreference: taskExecutor) { [self] () async -> T in
            await turn.wait()
            return await runInTurn(turn, precedence, operation)
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

    /// Runs an accepted operation once its turn came, and passes the turn on: all on the actor,
    /// with no other of its jobs between the operation's end, the resumption of a start it
    /// superseded and the turn passed.
    private func runInTurn<T: Sendable>(
        _ turn: Turn, _ precedence: Precedence, _ operation: @escaping @Sendable (isolated QueuePlayer) async -> T
    ) async -> T {
        defer { turn.pass() }
        // The operation holds no remote's turn: what it starts (the engine's events) must not pass one.
        return await Turn.$held.withValue(nil) {
            let result = await operation(self)
            if precedence.mayStart { await resumeSupersededStart() }
            return result
        }
    }

    /// Plays again after a start was superseded, unless a later command supersedes this
    /// operation too (the core decides whether a start was left meaning to play).
    private func resumeSupersededStart() async {
        guard !Task.isCancelled else { return }
        _ = await run(.resumeSupersededStart)
    }

    /// Whether `error` says a later command cancelled the call.
    static func isSuperseded(_ error: any Error) -> Bool {
        (error as? PlaybackError)?.kind == .superseded || error is CancellationError
    }
}

/// An actor with nothing in it, whose executor a ``QueuePlayer`` given none shares.
private actor DefaultIsolation {}
