import MediaRemote
import Playback
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Three-minute tracks; those named `book…` are long items that remember where they were left.
func tracks(_ names: String...) -> [QueueItem] {
    names.map {
        QueueItem(
            identifier: $0, url: URL(fileURLWithPath: "/music/\($0).ogg"),
            info: NowPlayingInfo(title: $0, playbackDuration: .seconds(180)))
    }
}

/// The player's core, driven directly: no engine, no clock (each input at an instant the test
/// picks), no actor. What the shell would do is read off the effects.
struct Driver {
    var core: PlayerCore
    let start = ContinuousClock.now
    /// Seconds since `start` of the next input.
    var seconds = 0
    /// Where long items were left, as a store would answer.
    static let bookmarks: [String: ResumePoint] = ["book2": ResumePoint(position: .seconds(40))]

    init(_ items: [QueueItem], current: Int = 0, observed: Bool = false) {
        let lookup = ResumePointLookup { item in
            item.identifier.hasPrefix("book") ? Self.bookmarks[item.identifier] : nil
        }
        core = PlayerCore(resumePoints: lookup, at: start)
        core.notifiesChanges = observed
        _ = core.handle(.replaceQueue(items, startingAt: current, play: false), at: start)
    }

    var now: ContinuousClock.Instant { start + .seconds(seconds) }

    @discardableResult
    mutating func send(_ input: PlayerInput) -> [PlayerEffect] { core.handle(input, at: now) }

    @discardableResult
    mutating func send(_ command: PlayerCommand) -> [PlayerEffect] { send(.command(command)) }

    /// Plays the current item: the start asked for, and the engine's report that it plays.
    mutating func playing(at position: Duration = .zero) {
        let start = send(.play)
        precondition(start.startRequest != nil, "no start in \(start)")
        send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, duration: .seconds(180), position: position)))
    }

    var current: String? { core.queue.current?.identifier }
}

extension [PlayerEffect] {
    var reply: RemoteCommandHandlerStatus? {
        compactMap { if case .reply(let status) = $0 { status } else { nil } }.last
    }
    var startRequest: StartRequest? {
        compactMap { if case .start(let request) = $0 { request } else { nil } }.first
    }
    /// What the now-playing centre is shown last (`.some(nil)`: nothing current).
    var nowPlaying: NowPlayingInfo?? {
        compactMap { effect -> NowPlayingInfo?? in
            if case .showNowPlaying(let info, _) = effect { .some(info) } else { nil }
        }.last
    }
    /// Each resume point saved, as `name@seconds` or `name finished`.
    var savedPoints: [String] {
        compactMap { effect in
            guard case .saveResumePoint(let point, let item) = effect else { return nil }
            return point.isFinished
                ? "\(item.identifier) finished" : "\(item.identifier)@\(point.position.components.seconds)"
        }
    }
    var stopsTheEngine: Bool { contains { if case .stopEngine = $0 { true } else { false } } }
    var callsTheEngine: Bool {
        contains {
            switch $0 {
            case .start, .pause, .seek, .setRate: true
            default: false
            }
        }
    }
    var snapshots: [PlayerSnapshot] {
        compactMap { if case .notifyObservers(let snapshot) = $0 { snapshot } else { nil } }
    }
}

@Suite struct PlayerCoreTests {
    @Test func playOnAnEmptyQueueHasNothingToPlay() {
        var p = Driver([])
        let effects = p.send(.play)
        #expect(effects.reply == .noActionableNowPlayingItem)
        #expect(!effects.callsTheEngine)
        #expect(p.core.state == .stopped)
    }

    @Test func playLoadsTheCurrentItemAndPublishesOnceItPlays() {
        var p = Driver(tracks("a", "b"))
        let start = p.send(.play)
        let request = try! #require(start.startRequest)
        #expect(request.item.identifier == "a")
        #expect(request.load?.map(\.item.identifier) == ["b"], "b is handed over when a ends")
        #expect(request.seek == nil)
        #expect(start.reply == nil, "the command answers once the engine plays")
        #expect(p.core.state == .stopped)

        let played = p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, position: .zero)))
        #expect(played.reply == .success)
        #expect(p.core.state == .playing)
        #expect(p.core.loaded?.identifier == "a")
        #expect(played.nowPlaying??.title == "a")
        #expect(played.nowPlaying??.playbackState == .playing)
        #expect(played.contains { if case .checkpoints(running: true) = $0 { true } else { false } })
    }

    @Test func positionAdvancesWithTheClockAtTheRate() {
        var p = Driver(tracks("a"))
        p.playing()
        p.seconds = 10
        #expect(p.core.playbackPosition(at: p.now) == .seconds(10))
        p.send(.setRate(2))
        // A loaded item changes rate on the engine; the engine's position after it is the new base.
        let rated = p.send(.engineReplied(EngineReply(.done, position: .seconds(10))))
        #expect(rated.reply == .success)
        p.seconds = 15
        #expect(p.core.playbackPosition(at: p.now) == .seconds(20))
    }

    @Test func nextAtTheEndStopsWithRepeatOffAndWrapsWithRepeatAll() {
        var p = Driver(tracks("a", "b"), current: 1)
        p.playing()
        let refused = p.send(.next)
        #expect(refused.reply == .noSuchContent)
        #expect(!refused.callsTheEngine && !refused.stopsTheEngine)
        #expect(p.current == "b")
        #expect(p.core.state == .playing)

        p.send(.setRepeat(.all))
        let wrapped = p.send(.next)
        #expect(p.current == "a")
        #expect(wrapped.stopsTheEngine)
        #expect(wrapped.startRequest?.item.identifier == "a")
    }

    @Test func nextWhilePausedRestsOnTheNextItemWithoutLoadingIt() {
        var p = Driver(tracks("a", "b"))
        p.playing()
        p.send(.pause)
        p.send(.engineReplied(EngineReply(.done, position: .seconds(5))))
        let effects = p.send(.next)
        #expect(effects.reply == .success)
        #expect(!effects.callsTheEngine)
        #expect(p.current == "b")
        #expect(p.core.state == .paused)
        #expect(effects.nowPlaying??.title == "b")
        #expect(effects.nowPlaying??.elapsedPlaybackTime == .zero)
    }

    /// A pause arriving while a start waits on the engine: the shell cancels the start, which
    /// leaves the player meaning to play with nothing loaded; the pause then needs no engine
    /// call, rests paused where the start meant to begin, and nothing starts again.
    @Test func aPauseWhileAStartWaitsSupersedesTheStart() {
        var p = Driver(tracks("book1", "b"))
        p.send(.play)
        let superseded = p.send(.startEnded(StartReport(.superseded(CancellationError()), loadBegan: true)))
        #expect(superseded.reply == .success)
        #expect(p.core.state == .playing)
        #expect(p.core.loaded == nil)
        #expect(superseded.nowPlaying == nil, "the later command publishes, not the superseded start")

        let pause = p.send(.pause)
        #expect(!pause.contains { if case .pause = $0 { true } else { false } }, "nothing plays to pause")
        let paused = p.send(.engineReplied(EngineReply(.done, position: nil)))
        #expect(paused.reply == .success)
        #expect(p.core.state == .paused)
        #expect(paused.nowPlaying??.playbackState == .paused)
        #expect(paused.savedPoints == ["book1@0"])

        #expect(p.send(.resumeSupersededStart).isEmpty, "the pause had the last word")
    }

    /// A later command that chose nothing (a "next" at the end of the queue) leaves the
    /// superseded start's intent standing: playing again is asked for.
    @Test func aSupersededStartThatNothingReplacedStartsAgain() {
        var p = Driver(tracks("a"))
        p.send(.play)
        p.send(.startEnded(StartReport(.superseded(CancellationError()))))
        #expect(p.send(.next).reply == .noSuchContent)
        let again = p.send(.resumeSupersededStart)
        #expect(again.startRequest?.item.identifier == "a")
    }

    /// Which commands supersede a start waiting on the engine (the shell cancels its task),
    /// and which may start playback themselves (and may be superseded).
    @Test func commandsThatChangeWhatPlaysSupersedeAWaitingStart() {
        let url = URL(fileURLWithPath: "/music/c.ogg")
        for command: PlayerCommand in [.pause, .stop, .next, .previous, .togglePlayPause, .open(url), .playItem(identifier: "a")] {
            #expect(PlayerInput.command(command).precedence.supersedesStarts, "\(command)")
        }
        for command: PlayerCommand in [.seek(to: .zero), .setVolume(1), .setRate(2), .setRepeat(.all), .removeItem(identifier: "a")] {
            #expect(!PlayerInput.command(command).precedence.supersedesStarts, "\(command)")
        }
        #expect(PlayerInput.command(.addItem(url: url, after: nil, playsImmediately: true)).precedence == .startsAnew)
        #expect(PlayerInput.command(.addItem(url: url, after: nil, playsImmediately: false)).precedence == .independent)
        #expect(PlayerInput.command(.play).precedence == .mayStart, "a play gives way, but replaces nothing")
        #expect(PlayerInput.replaceQueue([], startingAt: 0, play: false).precedence == .supersedes)
        #expect(PlayerInput.engineEvent(.endOfStream).precedence == .mayStart)
    }

    /// A toggle reads the state it finds: playing pauses, anything else plays.
    @Test func toggleDecidesFromTheStateAtItsTurn() {
        var p = Driver(tracks("a"))
        #expect(p.send(.togglePlayPause).startRequest != nil)
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true)))
        #expect(p.send(.togglePlayPause).contains { if case .pause = $0 { true } else { false } })
    }

    @Test func aHandedOverSuccessorThatStartsMovesTheQueueWithoutReloading() {
        var p = Driver(tracks("book1", "b", "c"), observed: true)
        p.playing()
        p.seconds = 180
        let b = p.core.queue.item(at: 1)!
        let started = p.send(.engineEvent(.streamStarted(b.url), EngineEventContext(handedOver: b, duration: .seconds(181))))
        #expect(!started.callsTheEngine && !started.stopsTheEngine, "the engine plays b already")
        #expect(p.current == "b")
        #expect(p.core.loaded?.identifier == "b")
        #expect(started.nowPlaying??.title == "b")
        #expect(started.nowPlaying??.elapsedPlaybackTime == .zero)
        // book1 finished; b is in progress (the shell saves it only if its store remembers b).
        #expect(started.savedPoints == ["book1 finished", "b@0"])
        #expect(started.snapshots.last?.currentIdentifier == "b")
        // Planned anew for the engine: c follows b.
        let plan = started.compactMap { if case .updateHandover(let plan) = $0 { plan } else { nil } }.last
        #expect(plan?.map(\.item.identifier) == ["c"])
    }

    @Test func theEndOfAnItemNotHandedOverLoadsTheNextAndTheEndOfTheQueueStops() {
        // book2 has a resume point: it is not handed over, but loaded and sought when a ends.
        var p = Driver(tracks("a", "book2"))
        let request = p.send(.play).startRequest
        #expect(request?.load?.isEmpty == true)
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, duration: .seconds(180))))
        p.seconds = 180
        let ended = p.send(.engineEvent(.endOfStream))
        #expect(ended.stopsTheEngine)
        #expect(ended.startRequest?.item.identifier == "book2")
        #expect(ended.startRequest?.seek == .seconds(40))
        p.send(.startEnded(StartReport(.done, loadBegan: true, loaded: true, duration: .seconds(180), position: .seconds(40))))

        p.seconds += 140
        let last = p.send(.engineEvent(.endOfStream))
        #expect(!last.callsTheEngine)
        #expect(last.savedPoints == ["book2 finished"])
        #expect(p.current == "a", "the player rests at the first entry")
        #expect(p.core.state == .stopped)
    }

    @Test func anEndOfStreamLongBeforeTheEndIsStale() {
        var p = Driver(tracks("a", "b"))
        p.playing()
        p.seconds = 30
        #expect(p.send(.engineEvent(.endOfStream)).isEmpty)
        #expect(p.current == "a")
    }

    @Test func aSeekPublishesTheJumpClampedToTheDuration() {
        var p = Driver(tracks("book1"), observed: true)
        p.playing()
        p.seconds = 20
        let seek = p.send(.seek(to: .seconds(600)))
        #expect(seek.contains { if case .seek(.seconds(180)) = $0 { true } else { false } })
        let sought = p.send(.engineReplied(EngineReply(.done)))
        #expect(sought.reply == .success)
        #expect(sought.nowPlaying??.elapsedPlaybackTime == .seconds(180))
        #expect(sought.snapshots.last?.positionMilliseconds == 180_000)
        #expect(sought.savedPoints == ["book1 finished"], "a seek to the end finishes a long item")

        let back = p.send(.skip(by: .seconds(-30)))
        #expect(back.contains { if case .seek(.seconds(150)) = $0 { true } else { false } })
    }

    @Test func pausingSavesWhereALongItemWasLeft() {
        var p = Driver(tracks("book1", "b"))
        p.playing()
        p.seconds = 30
        #expect(p.send(.pause).contains { if case .pause = $0 { true } else { false } })
        let paused = p.send(.engineReplied(EngineReply(.done, position: .seconds(31))))
        #expect(paused.savedPoints == ["book1@31"])
        #expect(p.core.state == .paused)
        #expect(p.core.playbackPosition(at: p.now) == .seconds(31))
        // Items that do not remember are the shell's to skip: it saves only what its store remembers.
        var q = Driver(tracks("a"))
        q.playing()
        q.send(.pause)
        #expect(q.send(.engineReplied(EngineReply(.done, position: .seconds(3)))).savedPoints == ["a@3"])
    }

    /// A pause, and a resume of what the engine holds, are shown to remotes before the engine is
    /// asked (a media key's press looks for the new state at once); the reply and the one change
    /// observers hear (the saved state) come with the engine's outcome, and a failure shows the
    /// state the player is really in.
    @Test func aPauseOrResumeIsShownAsTheEngineIsAskedAndObservedOnceWithItsOutcome() {
        var p = Driver(tracks("a", "b"), observed: true)
        p.playing()
        p.seconds = 20
        let pause = p.send(.pause)
        let shown = try! #require(pause.firstIndex { if case .showNowPlaying(let info, _) = $0 { info?.playbackState == .paused } else { false } })
        let asked = try! #require(pause.firstIndex { if case .pause = $0 { true } else { false } })
        #expect(shown < asked, "shown paused before the engine is asked")
        #expect(pause.reply == nil, "the reply waits for the engine")
        #expect(pause.snapshots.isEmpty, "observers hear of it with the outcome")
        let paused = p.send(.engineReplied(EngineReply(.done, position: .seconds(20) + .milliseconds(3))))
        #expect(paused.reply == .success)
        #expect(paused.snapshots.count == 1)
        #expect(paused.nowPlaying??.elapsedPlaybackTime == .seconds(20) + .milliseconds(3), "the engine's position replaces the estimate")

        let resume = p.send(.play)
        let shownPlaying = try! #require(resume.firstIndex { if case .showNowPlaying(let info, _) = $0 { info?.playbackState == .playing } else { false } })
        let started = try! #require(resume.firstIndex { if case .start = $0 { true } else { false } })
        #expect(shownPlaying < started, "shown playing before the engine is asked")
        #expect(resume.startRequest?.load == nil, "the item the engine holds is resumed, not loaded")

        // The engine fails to pause: the player plays on, and shows so.
        let played = p.send(.startEnded(StartReport(.done, position: .seconds(20))))
        #expect(played.reply == .success)
        p.send(.pause)
        let failed = p.send(.engineReplied(EngineReply(.failed(PlaybackError(kind: .other, url: nil, message: "no")))))
        #expect(failed.reply == .commandFailed)
        #expect(p.core.state == .playing)
        #expect(failed.nowPlaying??.playbackState == .playing)
    }

    @Test func aFailingItemIsSkippedAndAFailingQueueStops() {
        var p = Driver(tracks("a", "b"))
        p.send(.play)
        let failure = PlaybackError(kind: .unsupported, url: nil, message: "corrupt")
        let skipped = p.send(.startEnded(StartReport(.failed(failure), loadBegan: true)))
        #expect(p.current == "b")
        #expect(skipped.startRequest?.item.identifier == "b")
        let stopped = p.send(.startEnded(StartReport(.failed(failure), loadBegan: true)))
        #expect(stopped.reply == .commandFailed)
        #expect(p.core.state == .stopped)
        #expect(stopped.startRequest == nil)
    }

    @Test func aFailingOutputStopsOnTheItem() {
        var p = Driver(tracks("a", "b"))
        p.send(.play)
        let failure = PlaybackError(kind: .outputDevice, url: nil, message: "no sink")
        let effects = p.send(.startEnded(StartReport(.failed(failure), loadBegan: true)))
        #expect(effects.reply == .deviceNotFound)
        #expect(p.current == "a")
        #expect(p.core.state == .stopped)
    }

    @Test func anInterruptionPausesAndItsEndResumes() {
        var p = Driver(tracks("a"))
        p.playing()
        p.seconds = 12
        #expect(p.send(.engineEvent(.interruption(.began))).contains { if case .readPosition = $0 { true } else { false } })
        p.send(.engineReplied(EngineReply(.done, position: .seconds(12))))
        #expect(p.core.state == .interrupted)
        let resumed = p.send(.engineEvent(.interruption(.ended)))
        #expect(resumed.startRequest?.item.identifier == "a")
        #expect(resumed.startRequest?.load == nil, "still loaded: only played again")
    }

    @Test func aVolumeAMixerSetIsShownAndSavedButNotSentBackToTheEngine() {
        var p = Driver(tracks("a"), observed: true)
        p.playing()
        let effects = p.send(.engineEvent(.volumeChanged(0.25)))
        #expect(p.core.volume == 0.25)
        #expect(effects.contains { if case .showVolume(0.25) = $0 { true } else { false } })
        #expect(!effects.contains { if case .setEngineVolume = $0 { true } else { false } })
        #expect(effects.contains { if case .notifyObservers(let snapshot) = $0 { snapshot.volume == 0.25 } else { false } })
        // Out of range or not a number: clamped, or ignored.
        p.send(.engineEvent(.volumeChanged(20)))
        #expect(p.core.volume == 10)
        p.send(.engineEvent(.volumeChanged(.nan)))
        #expect(p.core.volume == 10)
    }

    @Test func theSnapshotIsAPureReadThatSharesTheEntriesUntilTheQueueChanges() {
        var p = Driver(tracks("a", "b"))
        let first = p.core.snapshot(at: p.now)
        #expect(first == p.core.snapshot(at: p.now))
        #expect(first.addedOrder.map(\.identifier) == ["a", "b"])
        p.send(.enqueue(tracks("c"), at: .last))
        #expect(p.core.snapshot(at: p.now).addedOrder.map(\.identifier) == ["a", "b", "c"])
    }

    @Test func theQueueFullRefusesAnOpenWithoutResolvingIt() {
        var configuration = QueuePlayer.Configuration()
        configuration.maximumQueueLength = 1
        var core = PlayerCore(configuration: configuration, at: .now)
        _ = core.handle(.replaceQueue(tracks("a"), startingAt: 0, play: false), at: .now)
        let effects = core.handle(.command(.open(URL(fileURLWithPath: "/music/b.ogg"))), at: .now)
        #expect(effects.reply == .notPlayable(reason: "the queue is full (1 entries)"))
        #expect(!effects.contains { if case .resolve = $0 { true } else { false } })
    }
}
