import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `mpris-bridge scan` as a child process.
///
/// Indexing loads GStreamer's discoverer and its decoders, and memory a
/// process has touched stays with it. Scanning in a child keeps the serving
/// daemon small (GStreamer is loaded there only to play), and a file that
/// crashes a decoder cannot take the daemon down.
struct ScanProcess {
    /// The arguments after `mpris-bridge`.
    var arguments: [String]

    struct Failure: Error, CustomStringConvertible {
        var status: Int32
        var description: String { "the library scan exited with status \(status)" }
    }

    /// Starts the scan and waits for it; cancelling the task stops the child.
    func run() async throws {
        let argv = (["mpris-bridge"] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let error = posix_spawn(&pid, "/proc/self/exe", nil, nil, argv, environ)
        guard error == 0 else { throw Failure(status: -error) }
        let child = pid
        let status = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                // waitpid blocks, so it waits on a thread of its own, not on the cooperative pool.
                DispatchQueue.global().async {
                    var status: Int32 = 0
                    while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                    continuation.resume(returning: status)
                }
            }
        } onCancel: {
            kill(child, SIGTERM)
        }
        try Task.checkCancellation()
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else { throw Failure(status: exited ? code : 128 + status & 0x7f) }
    }
}
