import Synchronization
import TestMedia
import Testing

@testable import GStreamerPlayback
@testable import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hands over the item after each one of a list, as a play queue would.
final class QueueProvider: Sendable {
    private let order: [URL]
    private let calls = Mutex<[(item: URL, time: ContinuousClock.Instant)]>([])

    /// `order`: every item in play order, the first one included.
    init(_ order: [URL]) { self.order = order }

    /// How often the engine asked.
    var callCount: Int { calls.withLock { $0.count } }
    /// How often the engine asked what follows `item`.
    func callCount(after item: URL) -> Int { calls.withLock { $0.filter { $0.item == item }.count } }
    /// When the engine first asked.
    var firstCall: ContinuousClock.Instant? { calls.withLock { $0.first?.time } }

    /// The URL after `item`; nil after the last one (or for an item not in the list).
    func successor(of item: URL) -> URL? {
        calls.withLock { $0.append((item, .now)) }
        guard let index = order.firstIndex(of: item), index + 1 < order.count else { return nil }
        return order[index + 1]
    }
}

@Suite struct GaplessTests {
    /// Plays `first` then `second` (1 s each) with a provider that hands over `second` after
    /// `first`, as a play queue would.
    static func playTwo(
        _ engine: GStreamerEngine, _ log: EventLog, _ first: URL, _ second: URL
    ) async throws -> QueueProvider {
        let provider = QueueProvider([first, second])
        engine.setSuccessorProvider { provider.successor(of: $0) }
        try await engine.load(first)
        try await engine.play()
        return provider
    }

    /// With ReplayGain too: its elements sit between the items and the output, and each item's
    /// tags set its gain as it starts.
    @Test(arguments: [ReplayGainMode.off, .album])
    func handsOverToTheNextItemWithoutAGap(replayGain: ReplayGainMode) async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 1)
        let second = try await media.make("second", .flac, seconds: 1, tags: TestMedia.Tags(title: "Second"))
        let (engine, log) = try makeEngine(replayGain: replayGain)
        let output = OutputLog(engine)
        _ = try await Self.playTwo(engine, log, first, second)

        let started = try await log.first { $0 == .streamStarted(second) }
        let end = try await log.first(from: started.index) { $0.isEndOfStream }
        // When events reach this task is no measure (it jitters on a busy machine): only the order.
        #expect(started.index < end.index)
        #expect(engine.currentURL == second)

        // Everything has played by the end of stream. The second item starts on the pipeline
        // clock exactly where the first one ends, from its own start: no gap, no overlap.
        let streams = output.streams
        try #require(streams.count == 2, "\(output.summary)")
        #expect(abs((streams[0].end - streams[0].start).seconds - 1) < 0.001)
        #expect(streams[1].first?.position == .zero)
        let gap = streams[1].start - streams[0].end
        print("gapless: gap between the two items \(gap)")
        #expect(abs(gap.seconds) < 0.001, "gap \(gap)")
        #expect(abs((streams[1].end - streams[1].start).seconds - 1) < 0.001)

        let afterHandOver = Array(log.events[started.index...])
        #expect(afterHandOver.contains(.durationChanged(.seconds(1))))
        #expect(afterHandOver.contains { if case .tagsChanged(let tags) = $0 { tags.title == "Second" } else { false } })
        #expect(!log.events.contains { $0.isError })
        #expect(log.events.filter { if case .streamStarted = $0 { true } else { false } } == [
            .streamStarted(first), .streamStarted(second),
        ])
    }

    @Test func handsOverWhenTheProviderIsAskedDuringPlayback() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 3)
        let second = try await media.make("second", .flac, seconds: 1)
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        let provider = QueueProvider([first, second])
        engine.setSuccessorProvider { provider.successor(of: $0) }
        try await engine.load(first)
        try await engine.seek(to: .seconds(1))
        let playRequested = ContinuousClock.now
        try await engine.play()
        let started = try await log.first { $0 == .streamStarted(second) }
        // A local file is read about a second ahead: the provider is asked once what follows the
        // first, while it plays, not while it prerolled.
        #expect(provider.callCount(after: first) == 1)
        #expect(try #require(provider.firstCall) > playRequested)
        // The 2 s left of the first item play before the second starts. Events reach this task
        // late on a busy machine, never early; the stream start reaches the output when the
        // last buffer of the first item (0.1 s) starts playing.
        #expect(started.entry.time - playRequested > .milliseconds(1800))
        try await log.first(from: started.index) { $0.isEndOfStream }
        // By the pipeline clock: the first item from 1 s on for 2 s, then the second, seamlessly.
        let streams = output.streams
        try #require(streams.count >= 2, "\(output.summary)")
        let (rest, next) = (streams[streams.count - 2], streams[streams.count - 1])
        #expect(abs(try #require(rest.first).position.seconds - 1) < 0.001)
        #expect(abs((rest.end - rest.start).seconds - 2) < 0.001)
        #expect(abs((next.start - rest.end).seconds) < 0.001)
    }

    @Test func rateCarriesOverTheHandOver() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 1)
        let second = try await media.make("second", .flac, seconds: 1)
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        try await engine.setRate(2)
        _ = try await Self.playTwo(engine, log, first, second)
        let started = try await log.first { $0 == .streamStarted(second) }
        try await log.first(from: started.index) { $0.isEndOfStream }

        // Both items play twice as fast as the pipeline clock, and the second starts half a
        // second after the first, when the first has played its second: no stall.
        let streams = output.streams
        try #require(streams.count == 2, "\(output.summary)")
        #expect(abs(streams[0].speed - 2) < 0.01, "\(output.summary)")
        #expect(abs(streams[1].speed - 2) < 0.01, "\(output.summary)")
        #expect(abs((streams[1].start - streams[0].start).seconds - 0.5) < 0.001, "\(output.summary)")
        // scaletempo (GStreamer 1.22) does not output the last window of a stream when it ends,
        // 25 ms at rate 2: that much is missing at the end of the first item, and no more.
        let missing = streams[1].start - streams[0].end
        #expect(missing >= .zero && missing < .milliseconds(30), "\(output.summary)")
        #expect(engine.rate == 2)
        #expect(!log.events.contains { $0.isError })
    }

    @Test func withoutAProviderTheItemEnds() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        let only = try await media.make("only", .ogg, seconds: 1)
        let provider = QueueProvider([only])
        engine.setSuccessorProvider { provider.successor(of: $0) }
        try await engine.load(only)
        try await engine.play()
        try await log.first { $0.isEndOfStream }
        #expect(provider.callCount >= 1)
        #expect(log.events.filter { if case .streamStarted = $0 { true } else { false } }.count == 1)
    }

    @Test func theSuccessorProviderChainsShortItems() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let items = [
            try await media.make("one", .flac, seconds: 1), try await media.make("two", .flac, seconds: 1),
            try await media.make("three", .flac, seconds: 1),
        ]
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        let asked = Mutex<[URL]>([])
        engine.setSuccessorProvider { item in
            asked.withLock { $0.append(item) }
            return items.firstIndex(of: item).flatMap { items.indices.contains($0 + 1) ? items[$0 + 1] : nil }
        }
        try await engine.load(items[0])
        let playRequested = ContinuousClock.now
        try await engine.play()
        let end = try await log.first { $0.isEndOfStream }
        // Events reach this task late on a busy machine, never early.
        #expect(end.entry.time - playRequested > .seconds(3), "3 × 1 s took \(end.entry.time - playRequested)")
        #expect(log.events.filter { if case .streamStarted = $0 { true } else { false } } == items.map(PlaybackEvent.streamStarted))
        #expect(asked.withLock { $0 } == items)
        // By the pipeline clock: three seconds, one after the other.
        let streams = output.streams
        try #require(streams.count == 3, "\(output.summary)")
        for (index, stream) in streams.enumerated() {
            #expect(abs(stream.start.seconds - Double(index)) < 0.001, "item \(index) from \(stream.start)")
            #expect(abs(stream.end.seconds - Double(index + 1)) < 0.001, "item \(index) to \(stream.end)")
        }
    }

    @Test func aMissingNextItemIsReportedWhenTheCurrentOneEnds() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .ogg, seconds: 1)
        let missing = media.url("missing.ogg")
        let (engine, log) = try makeEngine()
        let provider = QueueProvider([first, missing])
        engine.setSuccessorProvider { provider.successor(of: $0) }
        try await engine.load(first)
        let playRequested = ContinuousClock.now
        try await engine.play()
        let failure = try await log.first { $0.isError }
        // The first item played to its end: a second after play() was asked (events reach this
        // task late on a busy machine, never early).
        #expect(failure.entry.time - playRequested > .seconds(1))
        #expect(failure.entry.event.playbackError?.url == missing)
        #expect(failure.entry.event.playbackError?.kind == .notFound)
        #expect(!log.events.contains(.endOfStream))
        try await log.first(from: failure.index) { $0 == .stateChanged(.stopped) }
        #expect(engine.currentURL == nil)
    }

    @Test func aCorruptNextItemIsReportedWithItsOwnURL() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .ogg, seconds: 1)
        let corrupt = try media.makeGarbage("corrupt.ogg")
        let (engine, log) = try makeEngine()
        engine.setSuccessorProvider { $0 == first ? corrupt : nil }
        do {
            // The 1 s item is read whole while it prerolls, so its successor fails right away.
            try await engine.load(first)
            try await engine.play()
        } catch {
            // Which call sees it depends on when the successor fails: the one waiting then, or
            // the next one, which finds the engine stopped.
            #expect(
                error.kind == .notLoaded
                    || (error.kind == .other && error.message.hasPrefix("Stopped because the next item failed")),
                "\(error)")
        }
        let failed = try await log.first { $0.isError }
        let failure = failed.entry.event.playbackError
        #expect(failure?.url == corrupt)
        #expect(failure?.kind == .unsupported)
        // The engine stops. A consumer told it was paused or playing is told it stopped; when the
        // successor failed before the first item was prerolled (a busy machine), it was never told
        // anything but stopped, and nothing is repeated.
        let reported = log.events[..<failed.index].compactMap { event -> EngineState? in
            if case .stateChanged(let state) = event { state } else { nil }
        }
        if let last = reported.last, last != .stopped {
            try await log.first(from: failed.index) { $0 == .stateChanged(.stopped) }
        }
        #expect(engine.position == nil)
        #expect(engine.currentURL == nil)
    }
}

/// A seek while a 1 s item plays, so within a second of wall-clock time: run alone, after the
/// other suites (Scripts/test). Under their load the item could end before the seek.
@Suite struct GaplessRealTimeTests {
    @Test func seekingAfterTheHandOverWasPreparedKeepsIt() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 1)
        let second = try await media.make("second", .flac, seconds: 1)
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        let provider = try await GaplessTests.playTwo(engine, log, first, second)
        // A 1 s file is read whole at once: the hand-over is prepared in a few milliseconds.
        #expect(try await eventually { provider.callCount >= 1 })
        let seekRequested = ContinuousClock.now
        try await engine.seek(to: .milliseconds(500))
        // Where it seeked to, and since then at most as far as the clock went.
        let position = try #require(engine.position)
        let sinceSeek = ContinuousClock.now - seekRequested
        #expect(position >= .milliseconds(500) && position <= .milliseconds(500) + sinceSeek, "at \(position)")

        let started = try await log.first { $0 == .streamStarted(second) }
        let end = try await log.first(from: started.index) { $0.isEndOfStream }
        // 0.5 s of the first and 1 s of the second (events reach this task late on a busy
        // machine, never early), and the second only once.
        #expect(end.entry.time - seekRequested > .milliseconds(1500), "\(log.events)")
        #expect(log.events.filter { $0 == .streamStarted(second) }.count == 1)
        #expect(!log.events.contains { $0.isError })
        // By the pipeline clock: the first item from 0.5 s, then all of the second, seamlessly.
        let streams = output.streams
        try #require(streams.count >= 2, "\(output.summary)")
        let (rest, next) = (streams[streams.count - 2], streams[streams.count - 1])
        #expect(abs(try #require(rest.first).position.seconds - 0.5) < 0.001)
        #expect(next.first?.position == .zero)
        #expect(abs((next.start - rest.end).seconds) < 0.001)
        #expect(abs((next.end - next.start).seconds - 1) < 0.001)
    }
}
