import MediaRemote
import Playback
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A store in memory whose items named `book…` remember their position, keyed by file name
/// (as a library keys them by path, whatever the queue entry's identifier); it records every save.
final class BookResumePoints: ResumePointStore {
    private let state = Mutex<(points: [String: ResumePoint], saves: [String])>(([:], []))

    init(_ points: [String: ResumePoint] = [:]) {
        state.withLock { $0.points = points }
    }

    subscript(name: String) -> ResumePoint? { state.withLock { $0.points[name] } }
    /// Each save as `name@seconds` or `name finished`, in order.
    var saves: [String] { state.withLock { $0.saves } }

    func remembersPosition(of item: QueueItem) -> Bool { item.url.lastPathComponent.hasPrefix("book") }
    func resumePoint(of item: QueueItem) -> ResumePoint? {
        state.withLock { $0.points[Self.name(item)] }
    }
    func save(_ point: ResumePoint, of item: QueueItem) {
        state.withLock { state in
            state.points[Self.name(item)] = point
            state.saves.append(
                point.isFinished ? "\(Self.name(item)) finished" : "\(Self.name(item))@\(point.position.components.seconds)")
        }
    }
    private static func name(_ item: QueueItem) -> String { item.url.deletingPathExtension().lastPathComponent }
}

/// What a ``QueuePlayer`` does with a ``ResumePointStore``: long items start where they were
/// left, are saved as they are left, finish at their end, and are never handed over gaplessly
/// into the middle. (The scripted engine's items are 60 s long.)
@Suite struct ResumePointTests {
    @Test func aLongItemLeftByPauseResumesThereWhenPlayedAgain() async throws {
        let points = BookResumePoints()
        let p = await ScriptedPlayer(["book", "song"], resumePoints: points)
        _ = await p.commands.playCommand.perform()
        #expect(points["book"] == ResumePoint(position: .zero), "started: in progress at 0")
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(30)))
        _ = await p.commands.pauseCommand.perform()
        #expect(points["book"] == ResumePoint(position: .seconds(30)))
        // Elsewhere, then back: it resumes at 30 s.
        #expect(await p.commands.nextTrackCommand.perform() == .success)
        #expect(await p.commands.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: "song")) == .success)
        #expect(points["song"] == nil, "a song remembers nothing")
        #expect(await p.commands.playItemInQueueCommand.perform(PlayItemInQueueCommandEvent(identifier: "book")) == .success)
        #expect(p.engine.calls.suffix(3) == ["load book.ogg", "seek 30.0 seconds", "play"])
        #expect(p.current == "book")
        #expect(p.nowPlaying.nowPlayingInfo?.elapsedPlaybackTime == .seconds(30))
    }

    @Test func stoppingSavesThePositionAndPlayAfterStopResumesThere() async throws {
        let points = BookResumePoints()
        let p = await ScriptedPlayer(["book"], resumePoints: points)
        _ = await p.commands.playCommand.perform()
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(42)))
        _ = await p.commands.stopCommand.perform()
        #expect(p.nowPlaying.nowPlayingInfo?.elapsedPlaybackTime == .zero, "MPRIS shows a stopped player at 0")
        #expect(points["book"]?.position ?? .zero >= .seconds(42))
        let saved = try #require(points["book"]?.position)
        _ = await p.commands.playCommand.perform()
        // Where it was stopped: 42 s and however long the player played on before the stop.
        #expect(p.engine.calls.suffix(3) == ["load book.ogg", "seek \(saved)", "play"])
    }

    @Test func aPointInTheLastPercentCountsAsFinishedAndTheNextPlayStartsAtZero() async throws {
        let points = BookResumePoints()
        let p = await ScriptedPlayer(["book"], resumePoints: points)
        _ = await p.commands.playCommand.perform()
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .milliseconds(59_500)))
        _ = await p.commands.pauseCommand.perform()
        #expect(points["book"] == .finished)
        _ = await p.commands.stopCommand.perform()
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.calls.suffix(2) == ["load book.ogg", "play"], "from its beginning: no seek")
        #expect(points["book"] == ResumePoint(position: .zero), "in progress again")
    }

    @Test func anItemPlayedToItsEndIsFinished() async throws {
        let points = BookResumePoints(["book": ResumePoint(position: .seconds(20))])
        let p = await ScriptedPlayer(["book"], resumePoints: points)
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.calls == ["load book.ogg", "seek 20.0 seconds", "play"])
        p.engine.state.withLock { $0.position = .seconds(60) }
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(60)))
        p.engine.emit(.endOfStream)
        try await p.waitFor("book", .stopped)
        #expect(points["book"] == .finished)
        #expect(points.saves.last == "book finished")
    }

    /// The engine cannot seek into an item it hands over: an item with a saved point is not
    /// offered; the one before it ends, and the player loads it and seeks.
    @Test func anItemToResumeIsNotHandedOverButLoadedAndSoughtWhenTheOneBeforeEnds() async throws {
        let points = BookResumePoints(["book": ResumePoint(position: .seconds(20))])
        let p = await ScriptedPlayer(["song", "book"], resumePoints: points)
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.aboutToFinish() == nil, "no gapless hand-over into the middle of the book")
        p.engine.state.withLock { $0.position = .seconds(60) }
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(60)))
        p.engine.emit(.endOfStream)
        try await p.waitFor("book", .playing)
        #expect(p.engine.calls.suffix(4) == ["stop", "load book.ogg", "seek 20.0 seconds", "play"], "\(p.engine.calls)")
        #expect(p.nowPlaying.nowPlayingInfo?.elapsedPlaybackTime == .seconds(20))
    }

    @Test func aHandOverFinishesTheItemBeforeAndStartsTheNextInProgress() async throws {
        let points = BookResumePoints()
        let p = await ScriptedPlayer(["book-1", "book-2"], resumePoints: points)
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.aboutToFinish()?.lastPathComponent == "book-2.ogg", "never started: handed over gaplessly")
        p.engine.startHandedOverStream(URL(fileURLWithPath: "/music/book-2.ogg"))
        try await p.waitFor("book-2", .playing)
        #expect(points["book-1"] == .finished)
        #expect(points["book-2"] == ResumePoint(position: .zero))
    }

    /// A restart restores the queue at its own saved position, which wins over the resume point.
    @Test func aRestoredQueueResumesAtItsOwnPosition() async throws {
        let points = BookResumePoints(["book": ResumePoint(position: .seconds(30))])
        let p = await ScriptedPlayer([], resumePoints: points)
        let snapshot = PlayerSnapshot(
            addedOrder: [.init(identifier: "book", url: nil)], playOrder: [0], currentIdentifier: "book",
            positionMilliseconds: 12_000, volume: 1, rate: 1, repeatMode: .off, shuffleMode: .off)
        await p.player.restore(snapshot, items: queueItems(["book"]))
        _ = await p.commands.playCommand.perform()
        #expect(p.engine.calls == ["load book.ogg", "seek 12.0 seconds", "play"])
    }

    @Test func theCheckpointWhilePlayingAndTheShutdownSaveThePosition() async throws {
        var configuration = QueuePlayer.Configuration()
        configuration.positionCheckpointInterval = .milliseconds(50)
        let points = BookResumePoints()
        let p = await ScriptedPlayer(["book"], configuration: configuration, resumePoints: points)
        _ = await p.commands.playCommand.perform()
        _ = await p.commands.changePlaybackPositionCommand.perform(
            ChangePlaybackPositionCommandEvent(positionTime: .seconds(10)))
        let before = points.saves.count
        // A checkpoint saves again, without any command.
        let deadline = ContinuousClock.now + .seconds(5)
        while points.saves.count == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(points.saves.count > before)
        #expect(points["book"].map { $0.position >= .seconds(10) && !$0.isFinished } == true)
        let saves = points.saves.count
        await p.player.shutDown()
        #expect(points.saves.count > saves, "the shutdown saves where it was")
    }

    @Test func aPointsProgressAndFinishingShare() {
        #expect(ResumePoint(leftAt: .seconds(30), of: .seconds(60)).progress(ofDuration: .seconds(60)) == 0.5)
        #expect(ResumePoint(leftAt: .milliseconds(99_000), of: .seconds(100)) == .finished)
        #expect(ResumePoint(leftAt: .milliseconds(98_900), of: .seconds(100)).isFinished == false)
        #expect(ResumePoint(leftAt: .seconds(5), of: nil).progress(ofDuration: nil) == nil)
        #expect(ResumePoint.finished.progress(ofDuration: nil) == 1)
        #expect(ResumePoint(position: .seconds(-3)).position == .zero)
    }
}
