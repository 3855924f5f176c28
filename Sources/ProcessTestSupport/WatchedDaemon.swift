/// A long-running server for one test (a bus daemon, a sound server) that never outlives the
/// test process.
///
/// It runs under a watchdog shell whose stdin is a pipe from the test process. When that pipe
/// closes (``stop()``, or the test process dying in any way, even SIGKILL), the shell kills the
/// daemon with SIGKILL and reaps it. The shell is the daemon's parent, so the daemon's pid
/// cannot be reused while the shell can signal it.
public final class WatchedDaemon: Sendable {
    /// The daemon's process id.
    public let pid: Int32
    /// The process id of the watchdog shell that owns the daemon.
    public var watchdogPID: Int32 { watchdog.pid }
    /// What the daemon printed so far (its stderr too, when merged at start), one line each.
    public var output: String { watchdog.capturedStdout }

    private let watchdog: ChildProcess

    /// The watchdog: `$1` says whether the daemon's stderr joins its stdout (`merged` or
    /// `apart`), the rest is the daemon's command. Prints `pid N`, then what the daemon prints;
    /// waits for end of file on stdin and kills and reaps the daemon. SIGPIPE is ignored after
    /// the daemon starts (so the daemon keeps the default) and before the `echo`, so a test
    /// process that already died cannot stop the shell before `read`.
    package static let watchdogScript = """
        merge=$1; shift
        if [ "$merge" = merged ]; then "$@" 2>&1 & else "$@" & fi
        daemon=$!
        trap '' PIPE
        trap 'kill -9 "$daemon" 2>/dev/null; wait "$daemon"; exit 0' HUP INT TERM
        echo "pid $daemon"
        read -r line
        kill -9 "$daemon" 2>/dev/null
        wait "$daemon"
        exit 0
        """

    private init(pid: Int32, watchdog: ChildProcess) {
        self.pid = pid
        self.watchdog = watchdog
    }

    deinit {
        // A daemon that was never stopped: the watchdog still kills and reaps it.
        watchdog.closeStdin()
    }

    /// Starts `executable` with `arguments` under a watchdog and waits until `isReady` accepts
    /// a line it printed.
    ///
    /// - Parameters:
    ///   - executable: A path (resolve names first, for a clear error when one is missing).
    ///   - environment: The daemon's environment; nil is the test process's.
    ///   - mergingStderr: Whether the daemon's stderr lines reach `isReady` and ``output``
    ///     too (for daemons that say they are ready on stderr).
    ///   - startupTimeout: How long to wait for readiness.
    ///   - isReady: Called with each line the daemon prints, in order, until it returns true.
    /// - Returns: The daemon, ready.
    /// - Throws: ``ChildProcessError/timedOut(command:pid:timeout:stdout:stderr:)`` (after
    ///   stopping everything) if it is not ready in time, or
    ///   ``ChildProcessError/outputEnded(command:pid:stdout:stderr:)`` if it exited first;
    ///   ``ChildProcessError`` if the shell cannot be started.
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        mergingStderr: Bool = false, startupTimeout: Duration = .seconds(5),
        until isReady: (_ line: String) -> Bool
    ) async throws -> WatchedDaemon {
        let watchdog = try ChildProcess(
            launching: "/bin/sh",
            ["-c", watchdogScript, "watchdog", mergingStderr ? "merged" : "apart", executable] + arguments,
            environment: environment, deliversLines: true, killsOnDeinit: false)
        var pid: Int32?
        var ready = false
        do {
            // On timeout, ask the watchdog to kill and reap the daemon: that ends stdout too.
            let stopDaemon: @Sendable () -> Bool = { [watchdog] in
                watchdog.closeStdin()
                return true
            }
            _ = try await watchdog.waitForLine(timeout: startupTimeout, onTimeout: stopDaemon) { line in
                // The shell's "pid" line and the daemon's own may come in either order.
                if pid == nil, line.hasPrefix("pid "), let value = Int32(line.dropFirst(4)) {
                    pid = value
                } else if !ready {
                    ready = isReady(line)
                }
                return pid != nil && ready
            }
        } catch {
            await stop(watchdog)
            throw error
        }
        return WatchedDaemon(pid: pid!, watchdog: watchdog)
    }

    /// Stops the daemon: closes the watchdog's stdin, so the shell kills the daemon with SIGKILL
    /// and reaps it, then reaps the shell. If the shell is not gone within 5 seconds, its
    /// process group (shell and daemon) is killed with SIGKILL. When this returns, neither
    /// ``pid`` nor ``watchdogPID`` exists any more. Idempotent; completes even in a cancelled
    /// task.
    public func stop() async {
        await Self.stop(watchdog)
    }

    private static func stop(_ watchdog: ChildProcess) async {
        watchdog.closeStdin()
        // An unstructured task: it does not inherit cancellation, so a cancelled test still
        // gives the shell its chance to reap the daemon.
        let fallback = Task { [child = watchdog.child] in
            do { try await Task.sleep(for: .seconds(5)) } catch { return }
            child.kill()
        }
        _ = await watchdog.child.waitUntilReaped()
        fallback.cancel()
    }
}
