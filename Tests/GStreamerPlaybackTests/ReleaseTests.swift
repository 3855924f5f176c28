import TestMedia
import Testing

@testable import GStreamerPlayback
@testable import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `releaseOutput()`: a paused item's pipeline torn down and made again on play, with nothing
/// shown outside but the time the first play takes.
@Suite struct ReleaseTests {
    @Test func aReleasedPauseKeepsItsStateAndPositionAndPlaysOnFromThere() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        let output = OutputLog(engine)
        // Thirty seconds: on a machine loaded enough to read the log seconds late, the tone still
        // plays on when it is read (a 10 s one once ended first, its end of stream then in the log).
        let url = try await media.make("tone", .ogg, seconds: 30)
        try await engine.load(url)
        try await engine.play()
        try await output.wait { $0.buffers.last.map { $0.endPosition >= .seconds(1) } ?? false }
        try await engine.pause()
        let held = try #require(engine.position)
        let duration = engine.duration
        let played = try await log.first { $0 == .stateChanged(.playing) }.index
        let eventsBefore = try await log.first(from: played) { $0 == .stateChanged(.paused) }.index + 1

        #expect(await engine.releaseOutput())
        #expect(engine.position == held)
        #expect(engine.duration == duration)
        #expect(engine.currentURL == url)
        // Once released, again is nothing to do; a pause changes nothing.
        #expect(await !engine.releaseOutput())
        try await engine.pause()
        #expect(engine.position == held)

        try await engine.play()
        try await log.first(from: eventsBefore) { $0 == .stateChanged(.playing) }
        // Nothing but playing was said: no stop, no new stream, no pause again.
        #expect(Array(log.events.dropFirst(eventsBefore)) == [.stateChanged(.playing)])
        // The first sound after it is where it was paused (to the buffer: an accurate seek).
        try await output.wait { $0.streams.count >= 2 && $0.streams.last!.count >= 2 }
        let resumed = try #require(output.streams.last?.first)
        #expect(abs((resumed.position - held).seconds) < 0.05, "held at \(held), \(output.summary)")
        #expect(try await eventually { (engine.position ?? .zero) > held })
    }

    @Test func aSeekWhileReleasedMovesWhereItPlaysFrom() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, _) = try makeEngine()
        let output = OutputLog(engine)
        try await engine.load(try await media.make("tone", .ogg, seconds: 10))
        try await engine.pause()
        #expect(await engine.releaseOutput())
        try await engine.seek(to: .seconds(6))
        #expect(engine.position == .seconds(6))
        await #expect(throws: PlaybackError.self) { try await engine.seek(to: .seconds(60)) }
        #expect(engine.position == .seconds(6))
        try await engine.setRate(1.5)
        #expect(engine.rate == 1.5)

        try await engine.play()
        try await output.wait { $0.buffers.last.map { $0.endPosition >= .seconds(7) } ?? false }
        let resumed = try #require(output.streams.last?.first)
        #expect(abs((resumed.position - .seconds(6)).seconds) < 0.05, "\(output.summary)")
        #expect(abs(output.streams.last!.speed - 1.5) < 0.05, "\(output.summary)")
    }

    @Test func onlyAPausedItemIsReleasedAndAStopAfterItIsAStop() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        #expect(await !engine.releaseOutput())
        try await engine.load(try await media.make("tone", .ogg, seconds: 10))
        try await engine.play()
        #expect(await !engine.releaseOutput())
        try await engine.pause()
        #expect(await engine.releaseOutput())

        await engine.stop()
        try await log.first { $0 == .stateChanged(.stopped) }
        #expect(engine.position == nil)
        // After a stop, play starts the item again from its start.
        try await engine.play()
        #expect(try await eventually { engine.position != nil })
        #expect(try #require(engine.position) < .seconds(1))
    }
}
