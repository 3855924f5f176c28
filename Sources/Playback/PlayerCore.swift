import Logging
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The player's decisions, as a value with no I/O: given an input (a command, an engine event,
/// the outcome of an engine call), it changes its state and says what to do, in order
/// (``PlayerEffect``). ``QueuePlayer`` is the shell that feeds it inputs one at a time and
/// performs the effects; tests drive it directly, without an engine or a clock.
///
/// The clock is an input: each is handled at an instant the caller gives, and a position
/// advances from the instant it was set while playing. The one thing it reads outside itself
/// is where a long item was left (``ResumePointLookup``), read-only.
///
/// Files: this one holds the state and what every decision shares; `+Commands` the remotes'
/// and the app's commands, `+Starting` a start of playback and the engine's replies,
/// `+EngineEvents` the engine's events, `+Publishing` what remotes are shown, `+ResumePoints`
/// where long items are left, `Handover` the gapless successors, `PlayerSnapshot` what is saved.
package struct PlayerCore: Sendable {
    let configuration: QueuePlayer.Configuration
    let resumePoints: ResumePointLookup

    /// The queue, its current entry and modes.
    package internal(set) var queue = PlayQueue()
    package internal(set) var state: PlaybackState = .stopped
    /// The entry the engine has loaded, if any.
    package internal(set) var loaded: QueueItem?
    /// The position at `since`; it advances at `rate` while playing.
    package internal(set) var position: Duration = .zero
    var since: ContinuousClock.Instant
    package internal(set) var rate = 1.0
    /// The rate the engine was last set to; a new engine plays at 1.
    var engineRate = 1.0
    package internal(set) var volume = 1.0
    /// Whether the shell made an engine (it does on the first start).
    package internal(set) var hasEngine = false
    /// What a live stream says it plays now, and the engine's duration for items without one.
    var streamTags: StreamTags?
    var engineDuration: Duration?
    /// Whether the queue changed since remotes were last shown it.
    var queueNeedsPublishing = true
    /// The play-order positions of the entries last shown.
    var publishedWindow = 0..<0
    /// The queue's entries as the last snapshot built them (see ``snapshot(at:)``).
    var savedEntries: SavedEntries?
    /// Whether anyone observes changes (else no snapshot is built for them).
    package var notifiesChanges = false
    /// Whether anyone observes events (``PlayerChanges``).
    package var notifiesEvents = false
    /// What the input being handled changed, besides what ``Observed`` compares: a jump.
    var changes: PlayerChanges = []
    /// What the core waits for: the outcome of the engine call or resolution it asked for last.
    var awaiting: Awaited?
    /// The instant of the input being handled.
    var now: ContinuousClock.Instant
    /// The effects of the input being handled.
    var effects: [PlayerEffect] = []

    /// An engine call or resolution under way, with what its outcome is needed for.
    enum Awaited {
        case start(StartAttempt)
        case pause(fallback: Duration)
        case seek(QueueItem, target: Duration)
        case rate(Double, fallback: Duration)
        case interruption(fallback: Duration)
        case resolution(URL, Resolution)
    }

    /// Why a URL is resolved.
    enum Resolution {
        case open
        case add(after: String?, playsImmediately: Bool)
    }

    /// A start of playback: the item tried, from where, how many tried so far.
    struct StartAttempt {
        var item: QueueItem?
        var start: Duration
        var attempts = 0
        var loadedAfresh = false
    }

    /// A player over an empty queue, stopped, as of `now`.
    package init(
        configuration: QueuePlayer.Configuration = .init(), resumePoints: ResumePointLookup = .none,
        at now: ContinuousClock.Instant
    ) {
        self.configuration = configuration
        self.resumePoints = resumePoints
        self.since = now
        self.now = now
    }

    /// Handles `input` at `now`: the new state, and what to do about it, in order.
    package mutating func handle(_ input: PlayerInput, at now: ContinuousClock.Instant) -> [PlayerEffect] {
        self.now = now
        effects = []
        changes = []
        let before = notifiesEvents ? observed : nil
        switch input {
        case .command(let command): perform(command)
        case .engineEvent(let event, let context): handle(event, context)
        case .engineReplied(let reply): engineReplied(reply)
        case .startEnded(let report): startEnded(report)
        case .resolved(let result): resolved(result)
        case .resumeSupersededStart:
            // The command that superseded a start (a "next" at the end of the queue, an "open"
            // refused) may have left nothing to decide what plays: play as meant.
            if state == .playing, loaded == nil, queue.current != nil { startPlayback(resumingAt: position) }
        case .checkpoint:
            guard state == .playing else { break }
            notifyChange()
            if let item = loaded { rememberPosition(of: item, at: currentPosition) }
        case .saveResumePoint:
            guard state != .stopped, let item = loaded ?? queue.current else { break }
            rememberPosition(of: item, at: currentPosition)
        case .publish: publish()
        case .engineDropped:
            loaded = nil
            hasEngine = false
        case .replaceQueue(let items, let index, let play): replaceQueue(with: items, startingAt: index, play: play)
        case .enqueue(let items, let placement): enqueue(items, at: placement)
        case .updateItems(let update):
            guard queue.updateItems(update) else { break }
            queueChanged()
            publish()
        case .refreshItemDescriptions:
            queueNeedsPublishing = true
            publish()
        case .restore(let snapshot, let items): restore(snapshot, items: items)
        case .editQueue(let edit): self.edit(edit)
        }
        refreshSavedEntries()
        if let before {
            changes.formUnion(before.changes(to: observed))
            if !changes.isEmpty { effects.append(.notifyEvents(changes)) }
        }
        return effects
    }

    /// What an input's events are told from: compared before and after it.
    struct Observed {
        var entriesRevision: Int
        var state: PlaybackState
        var currentSongID: Int?
        var volume: Double
        var modes: (RepeatType, ShuffleType, SingleMode, Bool)

        func changes(to after: Observed) -> PlayerChanges {
            var changes: PlayerChanges = []
            if entriesRevision != after.entriesRevision { changes.insert(.queue) }
            if state != after.state || currentSongID != after.currentSongID { changes.insert(.player) }
            if volume.bitPattern != after.volume.bitPattern { changes.insert(.mixer) }
            if modes != after.modes { changes.insert(.options) }
            return changes
        }
    }

    var observed: Observed {
        Observed(
            entriesRevision: queue.entriesRevision, state: state,
            currentSongID: queue.currentPosition.map { queue.songIDs[$0] }, volume: volume,
            modes: (queue.repeatMode, queue.shuffleMode, queue.singleMode, queue.consumes))
    }

    /// Whether an engine call or resolution is under way (its outcome is the next input).
    package var isAwaiting: Bool { awaiting != nil }

    // MARK: Shared by the decisions

    /// The position at the instant of the input being handled.
    var currentPosition: Duration { playbackPosition(at: now) }

    /// The position at `instant`: while playing (with an item loaded), it advances at the rate.
    package func playbackPosition(at instant: ContinuousClock.Instant) -> Duration {
        // Meaning to play with nothing loaded (a superseded start): the position stands.
        guard state == .playing, loaded != nil else { return position }
        var elapsed = position + (instant - since) * rate
        if let duration = queue.current?.info.playbackDuration ?? engineDuration { elapsed = min(elapsed, duration) }
        return elapsed
    }

    /// Records a new position and state and publishes them.
    mutating func setPosition(_ newPosition: Duration, state newState: PlaybackState) {
        position = newPosition
        since = now
        state = newState
        changes.insert(.player)
        publish()
        // A restart resumes where playback was: every jump is a change to keep.
        notifyChange()
        effects.append(.checkpoints(running: newState == .playing))
    }

    /// Shows `newState` at `newPosition` to remotes as the engine is asked for it, before its
    /// outcome: what a media key's press looks for. Observers (the saved state) hear of it with
    /// the outcome, which records the engine's own position (``setPosition(_:state:)``), so a
    /// pause or a resume is one change for them.
    mutating func show(_ newPosition: Duration, state newState: PlaybackState) {
        position = newPosition
        since = now
        state = newState
        publish()
        effects.append(.checkpoints(running: newState == .playing))
    }

    /// Stops the engine and forgets what it had loaded; first, unless told not to, saves where
    /// the loaded item was left (a stop, or a switch to another item).
    mutating func unload(remembering: Bool = true) {
        effects.append(.prepareHandover([]))
        guard hasEngine, let item = loaded else { return }
        if remembering, state != .stopped { rememberPosition(of: item, at: currentPosition) }
        effects.append(.stopEngine)
        loaded = nil
    }

    /// The queue changed: republish it, re-plan the hand-over, keep the change.
    mutating func queueChanged() {
        queueNeedsPublishing = true
        effects.append(.updateHandover(handoverSuccessors()))
        notifyChange()
    }

    mutating func reply(_ status: RemoteCommandHandlerStatus) {
        effects.append(.reply(status))
    }

    mutating func log(_ level: Logger.Level, _ message: String) {
        effects.append(.log(level, message))
    }
}
