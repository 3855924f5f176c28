import TestMedia
import Testing

@testable import GStreamerPlayback
@testable import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Claims about the wall clock: how long a user waits, and that playback keeps pace with real
/// time. They need a quiet machine (the rest of the suite running in parallel on two cores
/// delays the pipeline's threads by hundreds of milliseconds), so `Scripts/test` runs suites
/// named `RealTimeTests` alone, one test at a time, after all the others.
@Suite(.serialized) struct RealTimeTests {
    @Test func loadThenPlayReachesPlayingQuickly() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", .ogg, seconds: 2)
        let (engine, log) = try makeEngine()
        // Warm up the plugins once, as a running daemon would have.
        try await engine.load(url)
        await engine.stop()

        let started = ContinuousClock.now
        try await engine.load(url)
        try await engine.play()
        let latency = ContinuousClock.now - started
        print("load + play → PLAYING: \(latency)")
        // A few milliseconds on a quiet machine; a second is what a user starts to notice.
        #expect(latency < .seconds(1))
        let reloaded = try await log.first { $0 == .streamStarted(url) }
        try await log.first(from: reloaded.index) { $0 == .stateChanged(.playing) }
    }

    @Test func positionAdvancesInRealTime() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, _) = try makeEngine()
        try await engine.load(try await media.make("tone", .ogg, seconds: 3))
        try await engine.play()
        let start = try reading(engine)
        try await Task.sleep(for: .seconds(1))
        let end = try reading(engine)
        let played = (end.position - start.position).seconds, wall = (end.instant - start.instant).seconds
        // Each reading is bracketed within 2 ms of wall clock; the sink renders on the system
        // clock, so what is left is its scheduling: 60 ms over a second.
        #expect(abs(played - wall) < 0.06, "\(played) s of media in \(wall) s")
    }

    /// The position with the wall-clock instant it was read at, from a reading that nothing
    /// preempted (the instants before and after it are less than 2 ms apart).
    private func reading(_ engine: GStreamerEngine) throws -> (position: Duration, instant: ContinuousClock.Instant) {
        for _ in 0..<100 {
            let before = ContinuousClock.now
            let position = try #require(engine.position)
            let after = ContinuousClock.now
            if after - before < .milliseconds(2) { return (position, before + (after - before) / 2) }
        }
        throw TimedOut()
    }
}
