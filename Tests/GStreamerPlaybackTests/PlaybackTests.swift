import DBusTestSupport
import Testing

@testable import GStreamerPlayback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite struct PlaybackTests {
    @Test(arguments: TestMedia.Format.allCases)
    func playsEachFormatToTheEnd(format: TestMedia.Format) async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", format, seconds: 1)
        let (engine, log) = try makeEngine()

        try await engine.load(url)
        #expect(log.events.first == .streamStarted(url))
        // MP3 has no length header: its duration is first unknown (nil), then estimated.
        let reported = try await log.first { $0.duration != nil && $0.duration! != nil }.entry.event.duration
        let duration = try #require(reported ?? nil)
        // MP3 adds encoder padding; Opus ends a few samples short.
        #expect(abs(duration.seconds - 1) < 0.1, "duration \(duration)")
        #expect(engine.duration == duration)
        #expect(engine.position == .zero)

        let started = ContinuousClock.now
        try await engine.play()
        #expect(log.events.contains(.stateChanged(.playing)))
        let end = try await log.first(timeout: .seconds(5)) { $0.isEndOfStream }
        let playedFor = end.entry.time - started
        #expect(abs(playedFor.seconds - duration.seconds) < 0.25, "played for \(playedFor)")
        #expect(!log.events.contains { $0.isError })
    }

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
        #expect(latency < .milliseconds(500))
        #expect(log.events.last == .stateChanged(.playing))
    }
}
