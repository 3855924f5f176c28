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

/// Stopping or releasing an engine while playbin switches items on its streaming threads.
///
/// playbin runs a hand-over on a streaming thread: `about-to-finish`, then it activates the next
/// item's decoder (a state change of that decoder). A stop (the pipeline to NULL) at that moment
/// used to deadlock: the stopping thread waited for the streaming thread, which waited for a
/// state lock the stopping thread held (or it joined its own task: "Trying to join task ... from
/// its thread would deadlock"). Very short items chained by a successor provider keep a hand-over
/// in flight almost all the time, so many stops at random moments hit that window.
@Suite struct ShutdownTests {
    /// A ring of short items in formats whose parsers run their own streaming threads.
    private static func ring(in media: MediaFolder) async throws -> [URL] {
        let formats: [TestMedia.Format] = [.mp3, .flac, .ogg, .mp3, .wav, .flac]
        var items: [URL] = []
        for (index, format) in formats.enumerated() {
            items.append(try await media.make("item\(index)", format, seconds: index.isMultiple(of: 2) ? 0.2 : 0.3))
        }
        return items
    }

    /// Each item is followed by the next one of the ring, for ever.
    private static func chain(_ engine: GStreamerEngine, through items: [URL]) {
        engine.setSuccessorProvider { item in
            items.firstIndex(of: item).map { items[($0 + 1) % items.count] }
        }
    }

    /// A normal stop takes milliseconds; a deadlocked one never returns. 10 s leaves room for a
    /// machine loaded with the rest of the test suite: a round (a load reads and prerolls a file)
    /// once took over 3 s while the 50,000-track index tests wrote beside it.
    private static let bound: Duration = .seconds(10)

    @Test func stoppingDuringHandOversAlwaysReturns() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let items = try await Self.ring(in: media)
        let (engine, log) = try makeEngine()
        Self.chain(engine, through: items)
        for round in 0..<40 {
            // The whole round is bounded: a load stops the pipeline too.
            let finished = await returns(within: Self.bound) {
                try? await engine.load(items[round % items.count])
                try? await engine.play()
                try? await Task.sleep(for: .milliseconds(Int.random(in: 0...250)))
                await engine.stop()
            }
            guard finished else {
                Issue.record("a round of load, play and stop did not finish within \(Self.bound) (round \(round))")
                return
            }
            #expect(engine.position == nil)
        }
        // Hand-overs really happened while the rounds played.
        #expect(log.events.filter { if case .streamStarted = $0 { true } else { false } }.count > 40)
        // GStreamer 1.22's playbin may finish an asynchronous change to PLAYING on a thread of
        // its task pool, walking its children while a hand-over on a streaming thread gives the
        // next item's decoder its URI; that decoder can then read a URI being replaced and fail
        // ("No element accepted URI", its text garbled). No lock of the engine's can order that
        // thread; the failure is the next item's, reported as an error event. Any other error
        // fails the test.
        let errors = log.events.filter { event in
            guard case .error(let error) = event else { return false }
            return !error.message.contains("No element accepted URI")
        }
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func releasingDuringHandOversAlwaysReturns() async throws {
        let media = try MediaFolder()
        defer { media.remove() }
        let items = try await Self.ring(in: media)
        for round in 0..<20 {
            // The box holds the only reference: its release, on another task, runs the deinit,
            // which stops the pipeline.
            let box = EngineBox(try GStreamerEngine(audioSink: testSink))
            Self.chain(try #require(box.engine), through: items)
            let finished = await returns(within: Self.bound) {
                try? await box.engine?.load(items[round % items.count])
                try? await box.engine?.play()
                try? await Task.sleep(for: .milliseconds(Int.random(in: 0...250)))
                box.release()
            }
            guard finished else {
                Issue.record("a round of load, play and release did not finish within \(Self.bound) (round \(round))")
                return
            }
        }
    }
}

/// Holds the only reference to an engine so that another task can drop it.
private final class EngineBox: Sendable {
    private let reference: Mutex<GStreamerEngine?>
    init(_ engine: GStreamerEngine) { reference = Mutex(engine) }
    var engine: GStreamerEngine? { reference.withLock { $0 } }
    /// Drops the reference; the engine's deinit runs here unless a call still holds it.
    func release() {
        let engine = reference.withLock { engine in
            defer { engine = nil }
            return engine
        }
        _ = consume engine
    }
}

/// Whether `body` finished within `limit`. It runs in a task of its own, which is abandoned (and
/// keeps its thread) when it does not finish: a deadlock fails the test instead of hanging it.
private func returns(within limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let outcome = Outcome()
    Task.detached {
        await body()
        outcome.settle(true)
    }
    let timer = Task.detached {
        try? await Task.sleep(for: limit)
        outcome.settle(false)
    }
    defer { timer.cancel() }
    return await outcome.value
}

/// The first of two racing answers.
private final class Outcome: Sendable {
    private let state = Mutex<(answer: Bool?, waiter: CheckedContinuation<Bool, Never>?)>((nil, nil))

    func settle(_ answer: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.answer == nil else { return nil }
            state.answer = answer
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: answer)
    }

    var value: Bool {
        get async {
            await withCheckedContinuation { continuation in
                let answer = state.withLock { state -> Bool? in
                    if let answer = state.answer { return answer }
                    state.waiter = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        }
    }
}
