import TestMedia
import Testing

@testable import GStreamerPlayback
@testable import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

@Suite struct ErrorTests {
    @Test func aMissingFileIsReportedWithItsURL() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let missing = media.url("no such file.ogg")
        let (engine, log) = try makeEngine()
        do {
            try await engine.load(missing)
            Issue.record("loading a missing file succeeded")
        } catch {
            #expect(error.kind == .notFound)
            #expect(error.url == missing)
            #expect(error.message.contains("No such file"), "\(error)")
            #expect(error.description.contains(missing.path))
        }
        #expect(engine.currentURL == nil)
        #expect(!log.events.contains { $0.isError }, "a thrown error is not also an event")
        await #expect(throws: PlaybackError.self) { try await engine.play() }
    }

    @Test func aCorruptFileIsReportedAsUnsupported() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let corrupt = try media.makeGarbage("random.ogg")
        let (engine, _) = try makeEngine()
        do {
            try await engine.load(corrupt)
            Issue.record("loading random bytes succeeded")
        } catch {
            #expect(error.kind == .unsupported)
            #expect(error.url == corrupt)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func theEngineRecoversAfterAnError() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let good = try await media.make("good", .ogg, seconds: 1)
        let (engine, log) = try makeEngine()
        await #expect(throws: PlaybackError.self) { try await engine.load(try media.makeGarbage("bad.ogg")) }
        await #expect(throws: PlaybackError.self) { try await engine.load(media.url("missing.flac")) }
        try await engine.load(good)
        try await engine.play()
        try await log.first { $0.isEndOfStream }
        #expect(log.events.contains(.streamStarted(good)))
    }
}
