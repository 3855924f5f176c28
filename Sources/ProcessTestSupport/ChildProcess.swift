import AsyncSupport
import Glibc
import Subprocess

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// What a finished child process left behind.
public struct ProcessOutput: Sendable, Equatable, CustomStringConvertible {
    /// The executable as given, followed by its arguments.
    public var command: [String]
    /// The exit code, or 128 + the signal number if a signal killed the child (as in shells);
    /// -1 if the status could not be collected.
    public var status: Int32
    /// Everything the child wrote on stdout, decoded as UTF-8 (invalid bytes replaced).
    public var stdout: String
    /// Everything the child wrote on stderr, decoded as UTF-8 (invalid bytes replaced).
    public var stderr: String

    public init(command: [String], status: Int32, stdout: String, stderr: String) {
        self.command = command
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// True if the child exited with status 0.
    public var succeeded: Bool { status == 0 }

    /// Returns `self` if the child exited with status 0, else throws
    /// ``ChildProcessError/nonZeroExit(_:)``, whose description shows the command, the status
    /// and stderr.
    @discardableResult
    public func check() throws(ChildProcessError) -> ProcessOutput {
        guard succeeded else { throw .nonZeroExit(self) }
        return self
    }

    public var description: String {
        "`\(formatCommand(command))` exited with status \(status)"
            + formatCaptured("stdout", stdout) + formatCaptured("stderr", stderr)
    }
}

/// Why running or talking to a child process failed. Descriptions show the command and what
/// the child had written so far, so a failing test explains itself.
public enum ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// No executable file `name` was found (in `searchPath` if the name has no "/").
    case executableNotFound(name: String, searchPath: String)
    /// The child could not be started (its pipes or the spawn failed).
    case launchFailed(command: [String], reason: String)
    /// The child did not finish within `timeout`; it was killed and reaped.
    case timedOut(command: [String], pid: Int32, timeout: Duration, stdout: String, stderr: String)
    /// The child exited with a non-zero status (from ``ProcessOutput/check()``).
    case nonZeroExit(ProcessOutput)
    /// The child's stdout ended before a line the caller waited for.
    case outputEnded(command: [String], pid: Int32, stdout: String, stderr: String)

    /// What the child had written when it timed out or closed stdout early; nil for the
    /// other cases (it never ran, or its output is in ``ProcessOutput``).
    public var capturedOutput: (stdout: String, stderr: String)? {
        switch self {
        case .timedOut(_, _, _, let stdout, let stderr), .outputEnded(_, _, let stdout, let stderr): (stdout, stderr)
        case .executableNotFound, .launchFailed, .nonZeroExit: nil
        }
    }

    public var description: String {
        switch self {
        case .executableNotFound(let name, let searchPath):
            return name.contains("/")
                ? "executable not found: \(name)"
                : "executable not found: \(name) (PATH=\(searchPath))"
        case .launchFailed(let command, let reason):
            return "cannot start `\(formatCommand(command))`: \(reason)"
        case .timedOut(let command, let pid, let timeout, let stdout, let stderr):
            return "`\(formatCommand(command))` (pid \(pid)) did not finish within \(timeout); killed"
                + formatCaptured("stdout", stdout) + formatCaptured("stderr", stderr)
        case .nonZeroExit(let output):
            return output.description
        case .outputEnded(let command, let pid, let stdout, let stderr):
            return "`\(formatCommand(command))` (pid \(pid)) closed stdout before the expected line"
                + formatCaptured("stdout", stdout) + formatCaptured("stderr", stderr)
        }
    }
}

/// A child process started with swift-subprocess, with its stdin, stdout and stderr on pipes.
///
/// Use ``run(_:_:environment:input:timeout:)`` for a command that finishes, and
/// ``spawn(_:_:environment:)`` for a long-running one (a monitor, a service).
///
/// Guarantees, whatever the calling thread's signal mask: the child starts with no blocked
/// signals and default signal handlers; it gets only fds 0, 1 and 2 from the test process; it
/// leads its own process group, so ``kill()`` also stops what it started. Subprocess's `run`
/// scopes a child to a closure; here that closure runs in a task of its own, which serves the
/// pipes until the child exits and then lets Subprocess reap it, so a `ChildProcess` can
/// outlive the call that started it. Releasing a spawned `ChildProcess` kills the child.
public final class ChildProcess: Sendable {
    /// The child's process id. It is also its process-group id.
    public let pid: Int32
    /// The executable as given, followed by its arguments.
    public let command: [String]
    /// Each line the child writes on stdout (without the "\n"), as it arrives; a last line
    /// without "\n" is delivered at end of file, then the stream finishes. Meant for one
    /// consumer at a time; cancelling the task that iterates it finishes the stream.
    /// Empty for children started by ``run(_:_:environment:input:timeout:)``.
    public let stdoutLines: AsyncStream<String>

    package let child: RunningChild
    private let killsOnDeinit: Bool

    /// The tasks that serve children run here, on dispatch threads, not on the few threads
    /// Swift's tasks share: `spawn` blocks its thread until the child's task reports the pid,
    /// and spawns on every shared thread at once would otherwise wait for each other forever.
    private static let executor = BlockingExecutor(label: "ProcessTestSupport.ChildProcess", width: 2)

    /// Starts a child. `environment` nil means the test process's environment; its PATH is
    /// used to find `executable` when the name has no "/".
    package init(
        launching executable: String, _ arguments: [String], environment: [String: String]?,
        deliversLines: Bool, killsOnDeinit: Bool
    ) throws(ChildProcessError) {
        let command = [executable] + arguments
        let searchPath = (environment ?? currentEnvironment())["PATH"] ?? "/usr/bin:/bin"
        guard let resolved = Self.executable(executable) else {
            throw .executableNotFound(name: executable, searchPath: searchPath)
        }
        _ = ignoreSIGPIPE
        let (lines, linesContinuation) = AsyncStream.makeStream(of: String.self)
        let splitter = deliversLines ? LineSplitter(linesContinuation) : nil
        if !deliversLines { linesContinuation.finish() }
        let child = RunningChild()
        let launch = Launch()
        let subprocessEnvironment: Subprocess.Environment =
            environment.map { environment in
                .custom(Dictionary(uniqueKeysWithValues: environment.compactMap { key, value in
                    Subprocess.Environment.Key(rawValue: key).map { ($0, value) }
                }))
            } ?? .inherit
        var options = PlatformOptions()
        options.processGroupID = 0  // its own group, led by the child
        // argv[0] is the name as given, as a shell passes it.
        let subprocessArguments = Arguments(executablePathOverride: executable, remainingValues: arguments)

        Task(executorPreference: Self.executor) {
            do {
                let result = try await Subprocess.run(
                    resolved, arguments: subprocessArguments, environment: subprocessEnvironment,
                    platformOptions: options, input: .inputWriter, output: .sequence, error: .sequence
                ) { execution in
                    child.started(pid: execution.processIdentifier.value)
                    launch.report(.success(execution.processIdentifier.value))
                    await child.serve(
                        stdin: execution.standardInputWriter, stdout: execution.standardOutput,
                        stderr: execution.standardError, lines: splitter)
                }
                child.reaped(status: Self.shellStatus(result.terminationStatus))
            } catch {
                // Before the child started: why it did not. After: its status is unknown.
                let reason = ChildProcessError.launchFailure(error, command: command, searchPath: searchPath)
                if !launch.report(.failure(reason)) { child.reaped(status: -1) }
                linesContinuation.finish()
            }
        }
        switch launch.wait() {
        case .success(let pid): self.pid = pid
        case .failure(let error): throw error
        }
        self.command = command
        self.stdoutLines = lines
        self.child = child
        self.killsOnDeinit = killsOnDeinit
    }

    deinit {
        if killsOnDeinit { child.kill() }
    }

    /// `executable` for Subprocess: a name to look up in PATH, or a path; nil for a path that
    /// names nothing executable.
    package static func executable(_ name: String) -> Executable? {
        guard name.contains("/") else { return .name(name) }
        var info = stat()
        guard stat(name, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(name, X_OK) == 0 else { return nil }
        return .path(FilePath(name))
    }

    /// The exit code, or 128 + the signal number, as shells report a status.
    static func shellStatus(_ status: TerminationStatus) -> Int32 {
        switch status {
        case .exited(let code): return code
        case .signaled(let signal): return 128 + signal
        }
    }

    // MARK: Running a command to completion

    /// Runs a command to completion and returns its status and output.
    ///
    /// - Parameters:
    ///   - executable: A path, or a name looked up in the PATH of `environment`.
    ///   - arguments: The arguments after the executable name.
    ///   - environment: The child's complete environment; nil inherits the test process's.
    ///   - input: Written to the child's stdin, which is then closed; nil closes it at once.
    ///   - timeout: How long to wait for the child to exit. When it expires the child's
    ///     process group is killed with SIGKILL and reaped, and
    ///     ``ChildProcessError/timedOut(command:pid:timeout:stdout:stderr:)`` is thrown with
    ///     the output captured so far.
    /// - Returns: The output; a non-zero status is not an error (see ``ProcessOutput/check()``).
    /// - Throws: ``ChildProcessError``, or `CancellationError` if the task is cancelled (the
    ///   child is then killed and reaped first).
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        input: String? = nil, timeout: Duration = .seconds(30)
    ) async throws -> ProcessOutput {
        let child = try ChildProcess(
            launching: executable, arguments, environment: environment,
            deliversLines: false, killsOnDeinit: true)
        if let input { child.write(input) }
        child.closeStdin()
        let (status, timedOut) = await child.waitUntilReaped(killingAfter: timeout)
        if timedOut { throw child.timeoutError(timeout) }
        try Task.checkCancellation()
        return ProcessOutput(
            command: child.command, status: status, stdout: child.capturedStdout,
            stderr: child.capturedStderr)
    }

    // MARK: Long-running children

    /// Starts a long-running child and returns at once.
    ///
    /// Read its stdout through ``stdoutLines`` (or ``waitForLine(timeout:where:)``), feed its
    /// stdin with ``write(_:)`` and ``closeStdin()``, and end it with ``kill()`` or
    /// ``waitForExit(timeout:)``. Output is buffered without limit, so a child nobody reads
    /// never blocks.
    ///
    /// - Parameters:
    ///   - executable: A path, or a name looked up in the PATH of `environment`.
    ///   - arguments: The arguments after the executable name.
    ///   - environment: The child's complete environment; nil inherits the test process's.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws(ChildProcessError) -> ChildProcess {
        try ChildProcess(
            launching: executable, arguments, environment: environment,
            deliversLines: true, killsOnDeinit: true)
    }

    /// Queues `text` (as UTF-8) for the child's stdin and returns at once; the child's task
    /// writes it, in order. Dropped if stdin is already closed or the child stopped reading.
    public func write(_ text: String) {
        child.enqueue(Array(text.utf8))
    }

    /// Closes the child's stdin after everything queued by ``write(_:)``; the child then reads
    /// end of file. Idempotent.
    public func closeStdin() {
        child.closeStdin()
    }

    /// Sends SIGKILL to the child's process group and to the child. Does nothing once the
    /// child is being reaped, so it can never hit a process that reused the pid. Idempotent.
    /// Use ``waitForExit()`` to wait until it is gone.
    public func kill() {
        child.kill()
    }

    /// Waits until the child has exited and been reaped, and returns its exit code, or
    /// 128 + the signal number that killed it (-1 if unknown).
    ///
    /// The output the child wrote before it exited is captured by then; what something it
    /// left running writes later on the same pipes is not waited for. Cancelling the waiting
    /// task kills the child, so this still returns promptly.
    public func waitForExit() async -> Int32 {
        await withTaskCancellationHandler {
            await child.waitUntilReaped()
        } onCancel: {
            child.kill()
        }
    }

    /// Like ``waitForExit()``, but if the child is not gone after `timeout`, kills it, waits
    /// until it is reaped and throws
    /// ``ChildProcessError/timedOut(command:pid:timeout:stdout:stderr:)``.
    public func waitForExit(timeout: Duration) async throws -> Int32 {
        let (status, timedOut) = await waitUntilReaped(killingAfter: timeout)
        if timedOut { throw timeoutError(timeout) }
        return status
    }

    /// Reads ``stdoutLines`` until a line satisfies `predicate` and returns that line. Lines
    /// before it are consumed.
    ///
    /// - Throws: ``ChildProcessError/timedOut(command:pid:timeout:stdout:stderr:)`` after
    ///   `timeout`, having killed the child (a test that waited in vain is failing anyway,
    ///   and the kill is what ends the wait); ``ChildProcessError/outputEnded(command:pid:stdout:stderr:)``
    ///   if stdout ends first; errors thrown by `predicate`.
    public func waitForLine(
        timeout: Duration = .seconds(10), where predicate: (String) throws -> Bool
    ) async throws -> String {
        let child = self.child
        do {
            return try await waitForLine(timeout: timeout, onTimeout: { child.kill() }, where: predicate)
        } catch let error as ChildProcessError {
            if case .timedOut = error { _ = await child.waitUntilReaped() }
            throw error
        }
    }

    /// ``waitForLine(timeout:where:)`` with a choice of how to end the wait on timeout:
    /// `onTimeout` must make stdout end (kill the child, or ask it to exit) and returns
    /// whether it did anything.
    package func waitForLine(
        timeout: Duration, onTimeout: @escaping @Sendable () -> Bool,
        where predicate: (String) throws -> Bool
    ) async throws -> String {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                do { try await Task.sleep(for: timeout) } catch { return false }
                return onTimeout()
            }
            for await line in stdoutLines where try predicate(line) {
                group.cancelAll()
                return line
            }
            group.cancelAll()
            let timedOut = try await group.next() ?? false
            if timedOut { throw timeoutError(timeout) }
            try Task.checkCancellation()
            throw ChildProcessError.outputEnded(
                command: command, pid: pid, stdout: capturedStdout, stderr: capturedStderr)
        }
    }

    /// Everything the child has written on stdout so far.
    public var capturedStdout: String { child.stdout.text }

    /// Everything the child has written on stderr so far.
    public var capturedStderr: String { child.stderr.text }

    // MARK: Internals

    /// Waits until reaped; kills the child if that takes longer than `timeout`, or if the
    /// task is cancelled. `timedOut` is true if the timeout had to kill it.
    func waitUntilReaped(killingAfter timeout: Duration) async -> (status: Int32, timedOut: Bool) {
        let child = self.child
        return await withTaskCancellationHandler {
            await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    do { try await Task.sleep(for: timeout) } catch { return false }
                    return child.kill()
                }
                let status = await child.waitUntilReaped()
                group.cancelAll()
                let timedOut = await group.next() ?? false
                return (status, timedOut)
            }
        } onCancel: {
            child.kill()
        }
    }

    func timeoutError(_ timeout: Duration) -> ChildProcessError {
        .timedOut(
            command: command, pid: pid, timeout: timeout, stdout: capturedStdout,
            stderr: capturedStderr)
    }
}

extension ChildProcessError {
    /// A failure of Subprocess's `run` before the child started, as this library reports it.
    static func launchFailure(_ error: any Error, command: [String], searchPath: String) -> Self {
        if let error = error as? SubprocessError, error.code == .executableNotFound {
            return .executableNotFound(name: command[0], searchPath: searchPath)
        }
        return .launchFailed(command: command, reason: String(describing: error))
    }
}

/// Renders a command line so that it could be pasted into a shell.
func formatCommand(_ command: [String]) -> String {
    command.map { argument in
        let plain = !argument.isEmpty && argument.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                || "-_./=:,+@%".unicodeScalars.contains(scalar)
        }
        return plain ? argument : "'" + argument.replacing("'", with: "'\\''") + "'"
    }.joined(separator: " ")
}

private func formatCaptured(_ name: String, _ text: String) -> String {
    text.isEmpty ? "" : "\n--- \(name) ---\n" + text + (text.hasSuffix("\n") ? "" : "\n") + "---"
}
