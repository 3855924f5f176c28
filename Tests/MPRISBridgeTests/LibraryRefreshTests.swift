@testable import mpris_bridge
import Synchronization
import Testing

/// Rescans run one at a time, whoever asks; asking during one means one more after it, shared.
@Suite(.timeLimit(.minutes(1))) struct LibraryRefreshTests {
    @Test func callsDuringARescanShareTheNextOne() async throws {
        let runs = Mutex(0)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let gates = Mutex(gate.makeAsyncIterator())
        let refresh = LibraryRefresh {
            runs.withLock { $0 += 1 }
            // Each rescan waits until the test lets it end.
            var iterator = gates.withLock { $0 }
            _ = await iterator.next()
        }
        let first = Task { try await refresh.rescan() }
        while runs.withLock({ $0 }) < 1 { await Task.yield() }
        // Five callers while the first rescan runs: one more rescan serves them all.
        let waiting = (0..<5).map { _ in Task { try await refresh.rescan() } }
        for _ in 0..<20 { await Task.yield() }
        #expect(runs.withLock { $0 } == 1)
        open.yield()
        try await first.value
        while runs.withLock({ $0 }) < 2 { await Task.yield() }
        open.yield()
        for task in waiting { try await task.value }
        #expect(runs.withLock { $0 } == 2)
        open.finish()
    }

    @Test func aFailureReachesTheCallersOfThatRescan() async throws {
        struct Broken: Error {}
        let refresh = LibraryRefresh { throw Broken() }
        await #expect(throws: Broken.self) { try await refresh.rescan() }
    }
}
