import Glibc
import ProcessTestSupport
import Subprocess
import Synchronization

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Why a private bus could not be started.
public enum PrivateBusError: Error, Sendable, CustomStringConvertible {
    /// No `dbus-daemon` executable (install the `dbus-daemon` package).
    case daemonNotFound(name: String, searchPath: String)
    /// The daemon printed no address within `timeout`; what it printed is attached.
    case noAddress(daemon: String, timeout: Duration, stdout: String, stderr: String)

    public var description: String {
        switch self {
        case .daemonNotFound(let name, let searchPath):
            return "\(name) not found (PATH=\(searchPath)); install the dbus-daemon package"
        case .noAddress(let daemon, let timeout, let stdout, let stderr):
            return "\(daemon) printed no bus address within \(timeout)"
                + (stdout.isEmpty ? "" : "\n--- stdout ---\n\(stdout)")
                + (stderr.isEmpty ? "" : "\n--- stderr ---\n\(stderr)")
        }
    }
}

/// A private D-Bus session bus for one test: its own `dbus-daemon`, reachable only by the
/// clients this test points at ``address``.
///
/// ```swift
/// try await PrivateBus.with { bus in
///     let reply = try await bus.run("dbus-send", ["--print-reply", "--dest=org.freedesktop.DBus",
///         "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"]).check()
/// }
/// ```
///
/// The daemon never outlives the test process: it runs under a watchdog shell whose stdin is a
/// pipe from the test process. When that pipe closes (``stop()``, or the test process dying in
/// any way, even SIGKILL), the shell kills the daemon with SIGKILL and reaps it. The shell is
/// the daemon's parent, so the daemon's pid cannot be reused while the shell can signal it.
public final class PrivateBus: Sendable {
    /// The bus address printed by the daemon, e.g. `unix:abstract=/tmp/dbus-…,guid=…`.
    public let address: String
    /// The `dbus-daemon` process id.
    public let daemonPID: Int32
    /// The process id of the watchdog shell that owns the daemon.
    public var watchdogPID: Int32 { watchdog.pid }

    private let watchdog: ChildProcess

    /// The absolute path of the Python interpreter that has the `dbus` module (python3-dbus).
    /// Not the `python3` first on PATH, which may be a pyenv build without it.
    public static let systemPython = "/usr/bin/python3"

    /// The watchdog: `$1` is the daemon executable, `$2` `--session` or `--config-file=PATH`. Prints `pid N` and, from the daemon, the
    /// address; then waits for end of file on stdin and kills and reaps the daemon.
    /// SIGPIPE is ignored after the daemon starts (so the daemon keeps the default) and before
    /// the `echo`, so a test process that already died cannot stop the shell before `read`.
    static let watchdogScript = """
        "$1" "$2" --nofork --nopidfile --print-address=1 &
        daemon=$!
        trap '' PIPE
        trap 'kill -9 "$daemon" 2>/dev/null; wait "$daemon"; exit 0' HUP INT TERM
        echo "pid $daemon"
        read -r line
        kill -9 "$daemon" 2>/dev/null
        wait "$daemon"
        exit 0
        """

    private init(address: String, daemonPID: Int32, watchdog: ChildProcess) {
        self.address = address
        self.daemonPID = daemonPID
        self.watchdog = watchdog
    }

    deinit {
        // A bus that was never stopped: the watchdog still kills and reaps the daemon.
        watchdog.closeStdin()
    }

    /// Starts `dbus-daemon --session --nofork --nopidfile --print-address=1` under a watchdog
    /// and waits for its address.
    ///
    /// - Parameters:
    ///   - daemon: The daemon executable, a path or a name looked up in PATH.
    ///   - startupTimeout: How long to wait for the address.
    /// - Throws: ``PrivateBusError/daemonNotFound(name:searchPath:)`` if the daemon is not
    ///   installed; ``PrivateBusError/noAddress(daemon:timeout:stdout:stderr:)`` (after
    ///   stopping everything) if it prints no address in time; ``ChildProcessError`` if the
    ///   shell cannot be started.
    ///   - configuration: A bus configuration file to use instead of the standard session
    ///     bus's (`dbus-daemon --config-file`): to test a policy or service activation. It
    ///     must `<listen>` on a unix socket.
    ///   - environment: The daemon's environment, which services it activates inherit; nil
    ///     is the test process's.
    public static func start(
        daemon: String = "dbus-daemon", configuration: String? = nil, environment: [String: String]? = nil,
        startupTimeout: Duration = .seconds(5)
    ) async throws -> PrivateBus {
        let searchPath = currentEnvironment()["PATH"] ?? "/usr/bin:/bin"
        guard let executable = ChildProcess.executable(daemon),
            let daemonPath = try? await executable.resolveExecutablePath(in: .inherit).string
        else {
            throw PrivateBusError.daemonNotFound(name: daemon, searchPath: searchPath)
        }
        let watchdog = try ChildProcess(
            launching: "/bin/sh",
            ["-c", watchdogScript, "private-bus-watchdog", daemonPath, configuration.map { "--config-file=\($0)" } ?? "--session"],
            environment: environment, deliversLines: true, killsOnDeinit: false)

        // The shell's "pid" line and the daemon's address may come in either order.
        var daemonPID: Int32?
        var address: String?
        do {
            // On timeout, ask the watchdog to kill and reap the daemon: that ends stdout too.
            let stopDaemon: @Sendable () -> Bool = { [watchdog] in
                watchdog.closeStdin()
                return true
            }
            _ = try await watchdog.waitForLine(timeout: startupTimeout, onTimeout: stopDaemon) { line in
                if line.hasPrefix("pid "), let pid = Int32(line.dropFirst(4)) {
                    daemonPID = pid
                } else if !line.isEmpty, address == nil {
                    address = line
                }
                return daemonPID != nil && address != nil
            }
        } catch {
            await Self.stop(watchdog)
            throw PrivateBusError.noAddress(
                daemon: daemonPath, timeout: startupTimeout, stdout: watchdog.capturedStdout,
                stderr: watchdog.capturedStderr)
        }
        return PrivateBus(address: address!, daemonPID: daemonPID!, watchdog: watchdog)
    }

    /// Stops the bus: closes the watchdog's stdin, so the shell kills the daemon with SIGKILL
    /// and reaps it, then reaps the shell. If the shell is not gone within 5 seconds, its
    /// process group (shell and daemon) is killed with SIGKILL. When this returns, neither
    /// ``daemonPID`` nor ``watchdogPID`` exists any more. Idempotent; completes even in a
    /// cancelled task.
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

    /// Starts a bus (see ``start(daemon:configuration:environment:startupTimeout:)``), runs
    /// `body` with it, and stops the bus, also when `body` throws.
    nonisolated(nonsending)
    public static func with<Result>(
        configuration: String? = nil, environment: [String: String]? = nil,
        _ body: (PrivateBus) async throws -> Result
    ) async throws -> Result {
        let bus = try await start(configuration: configuration, environment: environment)
        do {
            let result = try await body(bus)
            await bus.stop()
            return result
        } catch {
            await bus.stop()
            throw error
        }
    }

    /// The test process's environment with both `DBUS_SESSION_BUS_ADDRESS` and
    /// `DBUS_SYSTEM_BUS_ADDRESS` set to ``address``, so that a client under test cannot reach
    /// the machine's real buses, and `DBUS_STARTER_ADDRESS`/`DBUS_STARTER_BUS_TYPE` removed.
    public var environment: [String: String] {
        var environment = currentEnvironment()
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        environment["DBUS_STARTER_ADDRESS"] = nil
        environment["DBUS_STARTER_BUS_TYPE"] = nil
        return environment
    }

    /// The ``environment`` for ``systemPython``, without `PYTHONHOME`, which a pyenv setup may
    /// point at another interpreter's library.
    private var pythonEnvironment: [String: String] {
        var environment = self.environment
        environment["PYTHONHOME"] = nil
        return environment
    }

    /// Runs a client to completion against this bus (``environment`` set); see
    /// ``ChildProcess/run(_:_:environment:input:timeout:)``.
    public func run(
        _ executable: String, _ arguments: [String], input: String? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> ProcessOutput {
        try await ChildProcess.run(
            executable, arguments, environment: environment, input: input, timeout: timeout)
    }

    /// Runs `script` with ``systemPython`` (`python3 -c script arguments…`) against this bus;
    /// `import dbus` works there. In the script, `sys.argv[1:]` is `arguments`.
    public func python(
        _ script: String, _ arguments: [String] = [], input: String? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> ProcessOutput {
        try await ChildProcess.run(
            Self.systemPython, ["-c", script] + arguments, environment: pythonEnvironment,
            input: input, timeout: timeout)
    }

    /// Starts a long-running client against this bus (``environment`` set), such as
    /// `dbus-monitor` or `gdbus monitor`; see ``ChildProcess/spawn(_:_:environment:)``.
    /// Stopping the bus does not stop the client; releasing or killing the ChildProcess does.
    public func spawn(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess.spawn(executable, arguments, environment: environment)
    }

    /// Starts `script` with ``systemPython`` against this bus as a long-running child, with
    /// unbuffered output (`-u`) so each `print` reaches ``ChildProcess/stdoutLines`` at once.
    public func spawnPython(_ script: String, _ arguments: [String] = []) throws -> ChildProcess {
        try ChildProcess.spawn(
            Self.systemPython, ["-u", "-c", script] + arguments, environment: pythonEnvironment)
    }
}
