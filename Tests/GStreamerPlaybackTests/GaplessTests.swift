import DBusTestSupport
import Synchronization
import Testing

@testable import GStreamerPlayback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Hands over each URL of a list once, in order, as a play queue would.
final class QueueProvider: Sendable {
    private let queue: Mutex<[URL]>
    private let calls = Mutex(0)

    init(_ urls: [URL]) { queue = Mutex(urls) }

    /// How often the engine asked.
    var callCount: Int { calls.withLock { $0 } }

    /// The next URL, which stays next until `advance()` (the consumer's reaction to
    /// `.streamStarted`).
    func next() -> URL? {
        calls.withLock { $0 += 1 }
        return queue.withLock { $0.first }
    }

    func advance() { queue.withLock { if !$0.isEmpty { $0.removeFirst() } } }
}

@Suite struct GaplessTests {
    /// Plays `first` then `second` (1 s each) with a provider; returns the log and the instant
    /// PLAYING was reached.
    private func playTwo(
        _ engine: GStreamerEngine, _ log: EventLog, _ first: URL, _ second: URL
    ) async throws -> (provider: QueueProvider, playing: ContinuousClock.Instant) {
        let provider = QueueProvider([second])
        engine.setNextItemProvider { provider.next() }
        try await engine.load(first)
        try await engine.play()
        // Timed like the events it is compared with: as the event log received it.
        let playing = try await log.first { $0 == .stateChanged(.playing) }.entry.time
        // The consumer advances its queue when the next item really starts.
        Task {
            _ = try? await log.first(timeout: .seconds(5)) { $0 == .streamStarted(second) }
            provider.advance()
        }
        return (provider, playing)
    }

    @Test func handsOverToTheNextItemWithoutAGap() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 1)
        let second = try await media.make("second", .flac, seconds: 1, tags: TestMedia.Tags(title: "Second"))
        let (engine, log) = try makeEngine()
        let (_, playing) = try await playTwo(engine, log, first, second)

        let samples = try await PositionSamples.record(engine, log, second, since: playing)
        let gap = try samples.start(ofItem: 2) - samples.start(ofItem: 1) - .seconds(1)
        print("gapless: gap between the two items \(gap), from \(samples.count) position samples")
        #expect(abs(gap.seconds) < 0.005, "gap \(gap)")

        let started = try await log.first { $0 == .streamStarted(second) }
        let end = try await log.first(from: started.index) { $0.isEndOfStream }
        // When events reach this task is no measure (it jitters on a busy machine): only the order.
        #expect(started.index < end.index)
        #expect(engine.currentURL == second)

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
        let provider = QueueProvider([second])
        engine.setNextItemProvider { provider.next() }
        try await engine.load(first)
        try await engine.seek(to: .seconds(1))
        try await engine.play()
        let playing = try await log.first { $0 == .stateChanged(.playing) }.entry.time
        // A local file is read about a second ahead: the provider is asked while the first plays.
        #expect(provider.callCount == 0)
        let started = try await log.first { $0 == .streamStarted(second) }
        #expect(provider.callCount == 1)
        // The 2 s left of the first item play before the second starts (events reach this task
        // late on a busy machine, never early).
        #expect(started.entry.time - playing > .milliseconds(1800))
        try await log.first(from: started.index) { $0.isEndOfStream }
    }

    @Test func rateCarriesOverTheHandOver() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 1)
        let second = try await media.make("second", .flac, seconds: 1)
        let (engine, log) = try makeEngine()
        try await engine.setRate(2)
        let (_, playing) = try await playTwo(engine, log, first, second)

        let samples = try await PositionSamples.record(engine, log, second, since: playing, rate: 2)
        // Both items advance twice as fast as the clock, and the second starts when the first
        // has played its second in half a second: no gap, no stall.
        #expect(abs(try samples.speed(ofItem: 1) - 2) < 0.05)
        #expect(abs(try samples.speed(ofItem: 2) - 2) < 0.05)
        let gap = try samples.start(ofItem: 2) - samples.start(ofItem: 1) - .milliseconds(500)
        #expect(abs(gap.seconds) < 0.005, "gap \(gap)")
        #expect(engine.rate == 2)
        #expect(!log.events.contains { $0.isError })
    }

    @Test func seekingAfterTheHandOverWasPreparedKeepsIt() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .flac, seconds: 1)
        let second = try await media.make("second", .flac, seconds: 1)
        let (engine, log) = try makeEngine()
        let (provider, _) = try await playTwo(engine, log, first, second)
        // A 1 s file is read whole at once: the hand-over is prepared in a few milliseconds.
        #expect(try await eventually { provider.callCount >= 1 })
        try await engine.seek(to: .milliseconds(500))
        let position = try #require(engine.position)
        #expect(position >= .milliseconds(500) && position < .milliseconds(800), "at \(position)")
        let seeked = ContinuousClock.now

        let started = try await log.first { $0 == .streamStarted(second) }
        let end = try await log.first(from: started.index) { $0.isEndOfStream }
        // 0.5 s of the first and 1 s of the second (events reach this task late on a busy
        // machine, never early), and the second only once.
        #expect(end.entry.time - seeked > .milliseconds(1400), "\(log.events)")
        #expect(log.events.filter { $0 == .streamStarted(second) }.count == 1)
        #expect(!log.events.contains { $0.isError })
    }

    @Test func withoutAProviderTheItemEnds() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        let provider = QueueProvider([])
        engine.setNextItemProvider { provider.next() }
        try await engine.load(try await media.make("only", .ogg, seconds: 1))
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
        let asked = Mutex<[URL]>([])
        engine.setSuccessorProvider { item in
            asked.withLock { $0.append(item) }
            return items.firstIndex(of: item).flatMap { items.indices.contains($0 + 1) ? items[$0 + 1] : nil }
        }
        try await engine.load(items[0])
        try await engine.play()
        let playing = ContinuousClock.now
        let end = try await log.first { $0.isEndOfStream }
        #expect(end.entry.time - playing > .milliseconds(2900), "3 × 1 s took \(end.entry.time - playing)")
        #expect(log.events.filter { if case .streamStarted = $0 { true } else { false } } == items.map(PlaybackEvent.streamStarted))
        #expect(asked.withLock { $0 } == items)
    }

    @Test func aMissingNextItemIsReportedWhenTheCurrentOneEnds() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let first = try await media.make("first", .ogg, seconds: 1)
        let missing = media.url("missing.ogg")
        let (engine, log) = try makeEngine()
        let provider = QueueProvider([missing])
        engine.setNextItemProvider { provider.next() }
        try await engine.load(first)
        try await engine.play()
        let playing = ContinuousClock.now
        let failure = try await log.first { $0.isError }
        // The first item played to its end: a second after PLAYING (events reach this task
        // late on a busy machine, never early).
        #expect(failure.entry.time - playing > .milliseconds(900))
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
        let failure = try await log.first { $0.isError }.entry.event.playbackError
        #expect(failure?.url == corrupt)
        #expect(failure?.kind == .unsupported)
        try await log.first { $0 == .stateChanged(.stopped) }
    }
}

/// The position of an engine sampled against the wall clock while two items play, to measure
/// the gap between them and their speed without relying on when events reach the test (their
/// delivery jitters when the machine is busy).
struct PositionSamples {
    struct Sample {
        /// Since PLAYING, at the middle of the position query.
        var wall: Duration
        var position: Duration
        var item: Int
    }

    var samples: [Sample]
    var rate: Double

    var count: Int { samples.count }

    /// Samples every 10 ms until the end of stream; item 2 starts with `.streamStarted(second)`.
    static func record(
        _ engine: GStreamerEngine, _ log: EventLog, _ second: URL, since playing: ContinuousClock.Instant,
        rate: Double = 1
    ) async throws -> PositionSamples {
        var samples: [Sample] = []
        while !log.events.contains(.endOfStream), ContinuousClock.now - playing < .seconds(5) {
            let before = ContinuousClock.now
            let position = engine.position
            let after = ContinuousClock.now
            let item = log.events.contains(.streamStarted(second)) ? 2 : 1
            // Clear of the ends of each 1 s item (and of late event delivery), and not preempted.
            if let position, position > .milliseconds(150), position < .milliseconds(850),
                after - before < .milliseconds(1)
            {
                samples.append(Sample(wall: (before - playing) + (after - before) / 2, position: position, item: item))
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return PositionSamples(samples: samples, rate: rate)
    }

    /// When `item` started, in wall clock since PLAYING: the median of wall − position / rate.
    func start(ofItem item: Int) throws -> Duration {
        let values = samples.filter { $0.item == item }.map { $0.wall - $0.position / rate }.sorted()
        try #require(values.count > 5, "too few samples of item \(item)")
        return values[values.count / 2]
    }

    /// Position advanced per wall-clock second during `item`, from its first and last samples.
    func speed(ofItem item: Int) throws -> Double {
        let mine = samples.filter { $0.item == item }
        let first = try #require(mine.first), last = try #require(mine.last)
        try #require(last.wall - first.wall > .milliseconds(100))
        return (last.position - first.position) / (last.wall - first.wall)
    }
}
