import ProcessTestSupport
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

/// The sink every test plays into: no sound card, real-time pacing.
let testSink = "fakesink sync=true"

/// An engine on ``testSink`` whose events are recorded from the start.
func makeEngine(replayGain: ReplayGainMode = .off) throws -> (GStreamerEngine, EventLog) {
    let engine = try GStreamerEngine(audioSink: testSink, replayGain: replayGain)
    return (engine, EventLog(engine.events))
}

/// A temporary folder with generated media in it; `remove()` it when done.
struct MediaFolder {
    let folder: TemporaryDirectory

    init() throws { folder = try TemporaryDirectory(prefix: "engine") }

    /// Generates `seconds` of a tone as `format` under `name` and returns its file URL.
    func make(
        _ name: String, _ format: TestMedia.Format = .flac, seconds: Double = 1,
        tags: TestMedia.Tags = TestMedia.Tags()
    ) async throws -> URL {
        let path = folder.path + "/" + name + "." + format.fileExtension
        try await TestMedia.generate(format, seconds: seconds, tags: tags, at: path)
        return URL(fileURLWithPath: path)
    }

    /// Writes `bytes` random bytes under `name` (a corrupt file with any extension).
    /// A file of `bytes` pseudo-random bytes, the same every time: random ones now and then
    /// look like a frame of some format to GStreamer's type finders, and play.
    func makeGarbage(_ name: String, bytes: Int = 20_000) throws -> URL {
        let path = folder.path + "/" + name
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let data = Data((0..<bytes).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 32)
        })
        try data.write(to: URL(fileURLWithPath: path))
        return URL(fileURLWithPath: path)
    }

    func url(_ name: String) -> URL { URL(fileURLWithPath: folder.path + "/" + name) }

    var path: String { folder.path }

    func remove() { folder.remove() }
}

/// Records an engine's events with the instant each arrived, and lets a test wait for one.
final class EventLog: Sendable {
    struct Entry: Sendable {
        let event: PlaybackEvent
        let time: ContinuousClock.Instant
    }

    private struct State {
        var entries: [Entry] = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    init(_ events: AsyncStream<PlaybackEvent>) {
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.append(Entry(event: event, time: .now))
            }
        }
    }

    /// Everything recorded so far.
    var entries: [Entry] { state.withLock { $0.entries } }
    var events: [PlaybackEvent] { entries.map(\.event) }
    var count: Int { state.withLock { $0.entries.count } }

    private func append(_ entry: Entry) {
        let waiters = state.withLock { state in
            state.entries.append(entry)
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The first event at index `from` or later that satisfies `predicate`, waiting up to
    /// `timeout` for it; fails the test (and throws) if it does not come.
    @discardableResult
    func first(
        from index: Int = 0, timeout: Duration = .seconds(10),
        sourceLocation: SourceLocation = #_sourceLocation,
        where predicate: @escaping @Sendable (PlaybackEvent) -> Bool
    ) async throws -> (entry: Entry, index: Int) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = state.withLock { state in
                state.entries.indices.dropFirst(index).first { predicate(state.entries[$0].event) }
                    .map { (state.entries[$0], $0) }
            }
            if let found { return found }
            guard ContinuousClock.now < deadline else {
                Issue.record("No matching event within \(timeout); got \(events)", sourceLocation: sourceLocation)
                throw TimedOut()
            }
            await waitForAppend(until: deadline)
        }
    }

    /// Returns after the next event arrives or at `deadline`.
    private func waitForAppend(until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline)
            self?.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
        defer { timer.cancel() }
        let seen = count
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.entries.count != seen || ContinuousClock.now >= deadline { return true }
                state.waiters[id] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

struct TimedOut: Error {}

/// Records the buffers that reach an engine's output, with their timestamps by the pipeline
/// clock (``GStreamerEngine/observeOutput(_:)``), and lets a test wait for them.
///
/// Rates, gaps and where a stream starts are measured on these timestamps rather than against
/// the wall clock: the sink plays each buffer when the pipeline clock reaches its running time,
/// so they say what is heard and when, and a busy machine does not change them (it delays the
/// test's own readings of the wall clock, and the streaming threads, by any amount).
final class OutputLog: Sendable {
    private let state = Mutex<(buffers: [OutputBuffer], waiters: [CheckedContinuation<Void, Never>])>(([], []))

    init(_ engine: GStreamerEngine) {
        engine.observeOutput { [weak self] buffer in self?.append(buffer) }
    }

    var buffers: [OutputBuffer] { state.withLock { $0.buffers } }

    /// The buffers of each stream (item) in the order they played, those of a stream that a
    /// flushing seek cut in two counted as one stream from the seek on.
    var streams: [[OutputBuffer]] {
        var streams: [[OutputBuffer]] = []
        for buffer in buffers {
            if let last = streams.last?.last, last.stream == buffer.stream, last.flushes == buffer.flushes {
                streams[streams.count - 1].append(buffer)
            } else {
                streams.append([buffer])
            }
        }
        return streams
    }

    /// One line per stream: its flush epoch, positions and running times (for failure messages).
    var summary: String {
        streams.map { stream in
            let first = stream.first!, last = stream.last!
            return "stream \(first.stream)/flush \(first.flushes): \(stream.count) buffers, position "
                + "\(first.position.seconds)–\(last.endPosition.seconds) "
                + "at \(first.start.seconds)–\(last.end.seconds)"
        }.joined(separator: "; ")
    }

    private func append(_ buffer: OutputBuffer) {
        let waiters = state.withLock { state in
            state.buffers.append(buffer)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until `condition` holds for the buffers recorded so far, for at most `timeout`;
    /// fails the test (and throws) if it does not.
    func wait(
        timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
        until condition: @escaping @Sendable (OutputLog) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = state.withLock { $0.buffers.count }
            if condition(self) { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("The output did not get there within \(timeout)", sourceLocation: sourceLocation)
                throw TimedOut()
            }
            // The next buffer (they come every few milliseconds while playing) or the deadline.
            let timer = Task { [weak self] in
                try? await Task.sleep(until: deadline)
                self?.wakeAll()
            }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.buffers.count != seen || ContinuousClock.now >= deadline { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            timer.cancel()
        }
    }

    private func wakeAll() {
        let waiters = state.withLock { state in
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension Array where Element == OutputBuffer {
    /// The running time at which the first buffer starts and the last one ends.
    var start: Duration { first?.start ?? .zero }
    var end: Duration { last?.end ?? .zero }
    /// Media played per second of pipeline clock, over all the buffers.
    var speed: Double {
        guard let first, let last, last.end > first.start else { return 0 }
        return (last.endPosition - first.position) / (last.end - first.start)
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout`. For values the
/// engine exposes only by reading (position), never for events.
func eventually(
    timeout: Duration = .seconds(5), _ condition: () -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
    return true
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension PlaybackEvent {
    var isEndOfStream: Bool { self == .endOfStream }
    var isError: Bool {
        if case .error = self { return true }
        return false
    }
    var playbackError: PlaybackError? {
        if case .error(let error) = self { return error }
        return nil
    }
    var duration: Duration?? {
        if case .durationChanged(let duration) = self { return .some(duration) }
        return nil
    }
}
