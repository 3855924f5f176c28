/// Runs the library's rescans one at a time, however many callers ask: the start, the folder
/// watch, a remote's `Rescan`, `mpris-bridge scan` from a terminal.
///
/// A call returns once a rescan that started after the call has finished (its error, if it
/// failed), so a caller always sees the folder as it was when it asked. Calls that come while
/// one runs share the next one: a burst of requests costs at most two rescans.
actor LibraryRefresh {
    private let work: @Sendable () async throws -> Void
    /// Requests so far, and the running rescan with the number of requests it answers.
    private var requested = 0
    private var current: (task: Task<Void, any Error>, answers: Int)?
    /// Set by ``stop()``: no rescan starts after it.
    private var stopped = false

    init(_ work: @escaping @Sendable () async throws -> Void) {
        self.work = work
    }

    /// Throws `CancellationError` when the calling task is cancelled, or once the refresh is stopped.
    func rescan() async throws {
        requested += 1
        let wanted = requested
        while true {
            if let current {
                // A caller cancelled stops waiting; the rescan goes on for the others.
                guard let result = await valueUnlessCancelled(of: Task { await current.task.result }) else {
                    throw CancellationError()
                }
                if current.answers >= wanted { return try result.get() }
                // Started before this call: another round, started by whoever gets here first.
                if self.current?.task == current.task { self.current = nil }
                continue
            }
            guard !stopped else { throw CancellationError() }
            let work = self.work
            current = (Task { try await work() }, requested)
        }
    }

    /// Stops the running rescan (the child scanner with it) and refuses later ones; returns
    /// without waiting for the rescan to end.
    func stop() {
        stopped = true
        current?.task.cancel()
    }
}
