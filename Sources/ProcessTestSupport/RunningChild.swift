import Dispatch
import Glibc
import Subprocess
import Synchronization

// The moving parts behind ChildProcess: the pid handed to the spawning thread, the output
// captured and split into lines, the input queued for the child, and when it may be signalled.

/// Subprocess writes a child's stdin on whichever thread its task runs, and a write to a pipe
/// whose reader is gone would raise SIGPIPE there and end the test process; ignored, the write
/// fails with EPIPE instead. Children start with default dispositions all the same (Subprocess
/// resets every signal's), so none of them inherits this.
let ignoreSIGPIPE: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
}()

/// The pid, or why the child did not start: handed from the child's task to the spawning
/// thread, which waits for it.
final class Launch: Sendable {
    private let outcome = Mutex<Result<Int32, ChildProcessError>?>(nil)
    private let reported = DispatchSemaphore(value: 0)

    /// Records the first outcome; returns false if one was already recorded.
    @discardableResult
    func report(_ result: Result<Int32, ChildProcessError>) -> Bool {
        let first = outcome.withLock { outcome in
            guard outcome == nil else { return false }
            outcome = result
            return true
        }
        if first { reported.signal() }
        return first
    }

    func wait() -> Result<Int32, ChildProcessError> {
        reported.wait()
        return outcome.withLock { $0! }
    }
}

/// All bytes received so far from one output pipe.
final class ByteBuffer: Sendable {
    private let bytes = Mutex<[UInt8]>([])

    func append(_ chunk: [UInt8]) {
        bytes.withLock { $0.append(contentsOf: chunk) }
    }

    var text: String {
        bytes.withLock { String(decoding: $0, as: UTF8.self) }
    }
}

/// Splits a byte stream at "\n" and yields each line (without the "\n") to an AsyncStream.
final class LineSplitter: Sendable {
    private let pending = Mutex<[UInt8]>([])
    private let continuation: AsyncStream<String>.Continuation

    init(_ continuation: AsyncStream<String>.Continuation) {
        self.continuation = continuation
    }

    func append(_ chunk: [UInt8]) {
        let lines: [String] = pending.withLock { pending in
            pending.append(contentsOf: chunk)
            var lines: [String] = []
            var start = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                lines.append(String(decoding: pending[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            pending.removeFirst(start)
            return lines
        }
        for line in lines { continuation.yield(line) }
    }

    func finish() {
        let rest = pending.withLock { pending in
            defer { pending = [] }
            return pending
        }
        if !rest.isEmpty { continuation.yield(String(decoding: rest, as: UTF8.self)) }
        continuation.finish()
    }
}

/// A child between its start and its reaping: the output it wrote, the input queued for it,
/// and the signals that may still reach it.
///
/// Subprocess reaps the child once the task's closure returns, and not before, so while the
/// closure runs the pid and the process-group id cannot be reused (the child is alive, or a
/// zombie). ``kill()`` signals them only until the closure ends.
package final class RunningChild: Sendable {
    let stdout = ByteBuffer()
    let stderr = ByteBuffer()
    private let input: AsyncStream<[UInt8]>
    private let inputContinuation: AsyncStream<[UInt8]>.Continuation

    private struct State {
        var pid: Int32?
        /// False once stdin is closed or closing: later input is dropped.
        var acceptsInput = true
        /// False once the closure ends: Subprocess reaps the child right after, and its pid
        /// may then be reused.
        var signalsAllowed = true
        /// Set once reaped: exit code, or 128 + signal; -1 if unknown.
        var status: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    private let state = Mutex(State())

    init() {
        (input, inputContinuation) = AsyncStream.makeStream(of: [UInt8].self)
    }

    func started(pid: Int32) {
        state.withLock { $0.pid = pid }
    }

    /// Queues `bytes` for the child's stdin; dropped if stdin is closed or closing.
    func enqueue(_ bytes: [UInt8]) {
        state.withLock { state in
            guard state.acceptsInput else { return }
            inputContinuation.yield(bytes)
        }
    }

    /// Closes the child's stdin once all queued input is written.
    func closeStdin() {
        state.withLock { state in
            state.acceptsInput = false
            inputContinuation.finish()
        }
    }

    /// The body of Subprocess's closure: writes queued input, reads stdout and stderr until
    /// they end (at end of file, or when Subprocess sees the child exit), then closes stdin.
    func serve(
        stdin writer: StandardInputWriter, stdout output: SubprocessOutputSequence,
        stderr errorOutput: SubprocessOutputSequence, lines: LineSplitter?
    ) async {
        async let written: Void = writeInput(to: writer)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await Self.read(output) { chunk in
                    self.stdout.append(chunk)
                    lines?.append(chunk)
                }
                lines?.finish()
            }
            group.addTask {
                await Self.read(errorOutput) { self.stderr.append($0) }
            }
        }
        // Both outputs ended: the child is gone or will not be heard from, so nothing more
        // is written to its stdin.
        closeStdin()
        await written
        state.withLock { $0.signalsAllowed = false }
    }

    private func writeInput(to writer: StandardInputWriter) async {
        for await chunk in input {
            do { _ = try await writer.write(chunk) } catch { break }  // EPIPE: it stopped reading
        }
        closeStdin()
        try? await writer.finish()
    }

    private static func read(_ output: SubprocessOutputSequence, _ sink: ([UInt8]) -> Void) async {
        do {
            for try await buffer in output {
                sink(buffer.withUnsafeBytes { Array($0) })
            }
        } catch {
            // A read error ends the stream like end of file: the status tells what happened.
        }
    }

    func reaped(status: Int32) {
        closeStdin()
        let waiters = state.withLock { state in
            state.signalsAllowed = false
            state.status = status
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    /// Sends SIGKILL to the child's process group and to the child, unless it is being reaped.
    /// Returns true if it sent them.
    @discardableResult
    package func kill() -> Bool {
        state.withLock { state in
            guard state.signalsAllowed, let pid = state.pid else { return false }
            _ = Glibc.kill(-pid, SIGKILL)
            _ = Glibc.kill(pid, SIGKILL)  // in case the child moved to another process group
            return true
        }
    }

    /// Waits until the child is reaped; returns its exit code, or 128 + signal (-1 if unknown).
    /// Not cancellable: callers decide what cancellation means.
    package func waitUntilReaped() async -> Int32 {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if let status = state.status {
                    continuation.resume(returning: status)
                } else {
                    state.waiters.append(continuation)
                }
            }
        }
    }
}

/// The environment of the test process, read from `environ`.
package func currentEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let pair = String(cString: pointer)
        if let equals = pair.firstIndex(of: "=") {
            let key = String(pair[..<equals])
            if result[key] == nil {  // getenv semantics: the first definition wins
                result[key] = String(pair[pair.index(after: equals)...])
            }
        }
        entry += 1
    }
    return result
}
