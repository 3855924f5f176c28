import TestMedia
import Testing

@testable import GStreamerPlayback
@testable import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The context switches of one thread of this process so far, from /proc (nil once it is gone).
func contextSwitches(ofThread id: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/task/\(id)/status", encoding: .utf8) else {
        return nil
    }
    // voluntary_ctxt_switches and nonvoluntary_ctxt_switches
    return status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
        .compactMap { line in Int(line.split(separator: ":").last!.filter { !$0.isWhitespace }) }
        .reduce(0, +)
}

@Suite struct LifecycleTests {
    @Test func aPausedEngineLetsItsBusThreadSleep() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let (engine, log) = try makeEngine()
        try await engine.load(try await media.make("tone", .ogg, seconds: 2))
        try await engine.play()
        try await engine.pause()
        try await log.first { $0 == .stateChanged(.paused) }
        let thread = try #require(engine.busThreadID)
        // Messages posted while pausing may still reach the bus just after; the claim is about
        // what follows: no periodic wake-up at all while paused.
        try await Task.sleep(for: .milliseconds(200))
        let before = try #require(contextSwitches(ofThread: thread))
        try await Task.sleep(for: .milliseconds(500))
        let after = try #require(contextSwitches(ofThread: thread))
        #expect(after == before, "the bus thread woke \(after - before) times in 500 ms")
    }

    @Test func releasingTheEngineEndsItsBusThreadAndItsEvents() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", .ogg, seconds: 2)
        var engine: GStreamerEngine? = try GStreamerEngine(audioSink: testSink)
        let events = engine!.events
        try await engine!.load(url)
        try await engine!.play()
        let thread = try #require(engine!.busThreadID)
        #expect(contextSwitches(ofThread: thread) != nil)
        engine = nil  // while playing
        var count = 0
        for await _ in events { count += 1 }  // finishes once the engine is gone
        #expect(count > 0)
        // If the bus thread held the last reference, it detached itself and ends right after.
        let deadline = ContinuousClock.now + .seconds(2)
        while contextSwitches(ofThread: thread) != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(contextSwitches(ofThread: thread) == nil, "the bus thread is still running")
    }

    @Test func manyEnginesComeAndGo() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let url = try await media.make("tone", .wav, seconds: 1)
        for _ in 0..<10 {
            let engine = try GStreamerEngine(audioSink: testSink)
            try await engine.load(url)
            try await engine.play()
        }
    }
}
