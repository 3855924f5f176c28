/// Runs one step of a stopping service (releasing a name, stopping playback), bounded by the
/// service group's deadline.
///
/// Once the group's graceful shutdown has taken ``Daemon/shutdownDeadline``, the group cancels
/// its services: the step running then is no longer waited for, and the error names it (the
/// exit status then says the shutdown failed). A step that begins after that is started and
/// not waited for: the process is exiting.
func shutdownStep(_ name: String, _ body: @escaping @Sendable () async -> Void) async throws {
    let step = Task { await body() }
    guard !Task.isCancelled else { return }
    guard await valueUnlessCancelled(of: step) != nil else { throw ShutdownDeadlinePassed(step: name) }
}

/// A stopping service's step that was still running when the shutdown's deadline passed.
struct ShutdownDeadlinePassed: Error, CustomStringConvertible {
    let step: String
    var description: String {
        "shutting down took more than \(Daemon.shutdownDeadline.components.seconds) s (\(step)); exiting anyway"
    }
}
