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

    init(_ work: @escaping @Sendable () async throws -> Void) {
        self.work = work
    }

    func rescan() async throws {
        requested += 1
        let wanted = requested
        while true {
            if let current {
                let result = await current.task.result
                if current.answers >= wanted { return try result.get() }
                // Started before this call: another round, started by whoever gets here first.
                if self.current?.task == current.task { self.current = nil }
                continue
            }
            let work = self.work
            current = (Task { try await work() }, requested)
        }
    }
}
