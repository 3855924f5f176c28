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
    public var watchdogPID: Int32 { daemon.watchdogPID }

    private let daemon: WatchedDaemon

    /// The absolute path of the Python interpreter that has the `dbus` module (python3-dbus).
    /// Not the `python3` first on PATH, which may be a pyenv build without it.
    public static let systemPython = "/usr/bin/python3"

    private init(address: String, daemon: WatchedDaemon) {
        self.address = address
        self.daemonPID = daemon.pid
        self.daemon = daemon
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
        var address: String?
        do {
            let daemon = try await WatchedDaemon.start(
                daemonPath,
                [configuration.map { "--config-file=\($0)" } ?? "--session", "--nofork", "--nopidfile", "--print-address=1"],
                environment: environment, startupTimeout: startupTimeout
            ) { line in
                if !line.isEmpty { address = line }
                return address != nil
            }
            return PrivateBus(address: address!, daemon: daemon)
        } catch let error as ChildProcessError {
            let (stdout, stderr) = error.capturedOutput ?? ("", "\(error)")
            throw PrivateBusError.noAddress(daemon: daemonPath, timeout: startupTimeout, stdout: stdout, stderr: stderr)
        }
    }

    /// Stops the bus: closes the watchdog's stdin, so the shell kills the daemon with SIGKILL
    /// and reaps it, then reaps the shell. If the shell is not gone within 5 seconds, its
    /// process group (shell and daemon) is killed with SIGKILL. When this returns, neither
    /// ``daemonPID`` nor ``watchdogPID`` exists any more. Idempotent; completes even in a
    /// cancelled task.
    public func stop() async {
        await daemon.stop()
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
    public var pythonEnvironment: [String: String] {
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
