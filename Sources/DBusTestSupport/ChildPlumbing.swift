import Glibc
import Synchronization

// The moving parts behind ChildProcess: one pump thread moving bytes through the child's three
// pipes, one waiter thread noticing its exit, and the lifecycle that decides when to reap it.

/// Something a child wrote on stdout or stderr, or the end of that stream.
enum PipeEvent {
    case data([UInt8])
    case end
}

/// Receives the events of one output pipe, in order, on the pump thread.
typealias PipeSink = @Sendable (PipeEvent) -> Void

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

    func handle(_ event: PipeEvent) {
        switch event {
        case .data(let chunk):
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
        case .end:
            let rest = pending.withLock { pending in
                defer { pending = [] }
                return pending
            }
            if !rest.isEmpty { continuation.yield(String(decoding: rest, as: UTF8.self)) }
            continuation.finish()
        }
    }
}

/// Moves bytes between the test process and a child's pipes on a dedicated thread.
///
/// The pump thread owns the descriptors: it writes queued input to the child's stdin, reads
/// stdout and stderr into their sinks, and closes each descriptor when it is done with it. Other
/// threads talk to it only through `shared` plus one byte on a wake-up pipe.
final class StdioPump: Sendable {
    private struct Shared {
        var pendingInput: [UInt8] = []
        var closeStdinRequested = false
        var stopRequested = false
        /// False once stdin is closed: later input is dropped.
        var stdinAcceptsInput = true
        /// Write end of the wake-up pipe; nil once the pump has finished and closed it.
        var wakeWriteFD: Int32?
    }

    private let shared: Mutex<Shared>

    init(wakeWriteFD: Int32) {
        shared = Mutex(Shared(wakeWriteFD: wakeWriteFD))
    }

    /// Queues `bytes` for the child's stdin; dropped if stdin is closed or closing.
    func enqueue(_ bytes: [UInt8]) {
        shared.withLock { state in
            guard state.stdinAcceptsInput, !state.closeStdinRequested else { return }
            state.pendingInput.append(contentsOf: bytes)
            Self.wake(state)
        }
    }

    /// Closes the child's stdin once all queued input is written.
    func closeStdin() {
        shared.withLock { state in
            state.closeStdinRequested = true
            Self.wake(state)
        }
    }

    /// Reads whatever output is already buffered, closes every descriptor and finishes, without
    /// waiting for end-of-file (used once the child is dead but something else may hold a pipe).
    func stop() {
        shared.withLock { state in
            state.stopRequested = true
            Self.wake(state)
        }
    }

    private static func wake(_ state: Shared) {
        guard let fd = state.wakeWriteFD else { return }
        var byte: UInt8 = 1
        // Non-blocking: if the pipe is full, a wake-up is already pending.
        _ = write(fd, &byte, 1)
    }

    /// The pump thread's loop. Returns after every descriptor it was given is closed.
    func run(stdinFD: Int32, outputs: [(fd: Int32, sink: PipeSink)], wakeReadFD: Int32) {
        blockSIGPIPEOnCurrentThread()
        var stdinFD: Int32? = stdinFD
        var outputs: [(fd: Int32, sink: PipeSink, open: Bool)] = outputs.map { ($0.fd, $0.sink, true) }
        var input: [UInt8] = []
        var inputOffset = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)

        func closeStdin() {
            if let fd = stdinFD { close(fd) }
            stdinFD = nil
            input = []
            inputOffset = 0
            shared.withLock { state in
                state.stdinAcceptsInput = false
                state.pendingInput = []
            }
        }

        /// Reads once from output `index`; returns false when nothing more is available now.
        func readOutput(_ index: Int) -> Bool {
            let count = buffer.withUnsafeMutableBytes { read(outputs[index].fd, $0.baseAddress, $0.count) }
            if count > 0 {
                outputs[index].sink(.data(Array(buffer[0..<count])))
                return true
            }
            if count < 0 && errno == EINTR { return true }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
            close(outputs[index].fd)  // end of file, or an error that will not go away
            outputs[index].open = false
            outputs[index].sink(.end)
            return false
        }

        while true {
            let (newInput, closeRequested, stopRequested) = shared.withLock { state in
                defer { state.pendingInput = [] }
                return (state.pendingInput, state.closeStdinRequested, state.stopRequested)
            }
            if !newInput.isEmpty {
                input.removeFirst(inputOffset)
                inputOffset = 0
                input.append(contentsOf: newInput)
            }
            if stopRequested {
                // Bounded, in case something that escaped the kill keeps writing.
                for index in outputs.indices {
                    var reads = 0
                    while outputs[index].open, reads < 64, readOutput(index) { reads += 1 }
                }
                break
            }
            if stdinFD != nil, closeRequested, inputOffset == input.count {
                closeStdin()
            }
            if stdinFD == nil, !outputs.contains(where: \.open) { break }

            var pollFDs = [pollfd(fd: wakeReadFD, events: Int16(POLLIN), revents: 0)]
            var polledOutputs: [Int] = []
            for index in outputs.indices where outputs[index].open {
                polledOutputs.append(index)
                pollFDs.append(pollfd(fd: outputs[index].fd, events: Int16(POLLIN), revents: 0))
            }
            let pollsStdin = stdinFD != nil && inputOffset < input.count
            if pollsStdin, let fd = stdinFD {
                pollFDs.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0))
            }
            if poll(&pollFDs, nfds_t(pollFDs.count), -1) < 0 {
                if errno == EINTR { continue }
                // Cannot happen with valid descriptors; stop instead of spinning.
                shared.withLock { $0.stopRequested = true }
                continue
            }
            if pollFDs[0].revents != 0 {
                var scratch = [UInt8](repeating: 0, count: 64)
                while scratch.withUnsafeMutableBytes({ read(wakeReadFD, $0.baseAddress, $0.count) }) > 0 {}
            }
            for (slot, index) in polledOutputs.enumerated() where pollFDs[slot + 1].revents != 0 {
                _ = readOutput(index)
            }
            if pollsStdin, let fd = stdinFD, pollFDs[pollFDs.count - 1].revents != 0 {
                let written = input.withUnsafeBytes { bytes in
                    write(fd, bytes.baseAddress! + inputOffset, bytes.count - inputOffset)
                }
                if written >= 0 {
                    inputOffset += written
                } else if errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK {
                    closeStdin()  // EPIPE: the child closed its stdin or exited
                }
            }
        }

        if stdinFD != nil { closeStdin() }
        for index in outputs.indices where outputs[index].open {
            close(outputs[index].fd)
            outputs[index].open = false
            outputs[index].sink(.end)
        }
        // Write end first: `wake` writes under the lock, and writing to a pipe without a reader
        // would raise SIGPIPE on the caller's thread.
        shared.withLock { state in
            if let fd = state.wakeWriteFD { close(fd) }
            state.wakeWriteFD = nil
            state.stdinAcceptsInput = false
        }
        close(wakeReadFD)
    }
}

/// Decides when a child is reaped, and whether its pid may still be signalled.
///
/// The child is reaped only once it has exited *and* the pump has closed its pipes. Until then
/// it stays a zombie, which keeps its pid and process-group id from being reused, so `kill`
/// can signal `-pid` and `pid` without ever hitting an unrelated process.
final class ChildLifecycle: Sendable {
    let pid: Int32
    let pump: StdioPump

    private struct State {
        var exited = false
        var pumpFinished = false
        var killed = false
        /// Someone else reaped the child (SIGCHLD ignored, or a stray `waitpid(-1)`).
        var pidLost = false
        /// Set once reaped: exit code, or 128 + signal; -1 if unknown.
        var status: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    private let state = Mutex(State())

    init(pid: Int32, pump: StdioPump) {
        self.pid = pid
        self.pump = pump
    }

    /// The waiter thread's body: blocks in `waitid` until the child exits, without reaping it.
    func waitForChildExit() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno == EINTR { continue }
            childExited(pidLost: true)
            return
        }
        childExited(pidLost: false)
    }

    private func childExited(pidLost: Bool) {
        state.withLock { state in
            state.exited = true
            state.pidLost = pidLost
            if state.killed {
                pump.stop()
            } else {
                // Nothing will read stdin any more. Output is still read until every holder of
                // the pipes (the child, or something it left running) has closed them.
                pump.closeStdin()
            }
            reapIfDone(&state)
        }
    }

    func pumpFinished() {
        state.withLock { state in
            state.pumpFinished = true
            reapIfDone(&state)
        }
    }

    private func reapIfDone(_ state: inout State) {
        guard state.exited, state.pumpFinished, state.status == nil else { return }
        var status: Int32 = -1
        if !state.pidLost {
            var raw: Int32 = 0
            var result: pid_t
            repeat { result = waitpid(pid, &raw, 0) } while result < 0 && errno == EINTR
            if result == pid { status = shellStatus(fromWaitStatus: raw) }
        }
        state.status = status
        for waiter in state.waiters { waiter.resume(returning: status) }
        state.waiters = []
    }

    /// Sends SIGKILL to the child's process group and to the child, unless it is already reaped.
    /// Returns true if it was not reaped yet.
    @discardableResult
    func kill() -> Bool {
        state.withLock { state in
            guard state.status == nil, !state.pidLost else { return false }
            state.killed = true
            _ = Glibc.kill(-pid, SIGKILL)
            _ = Glibc.kill(pid, SIGKILL)  // in case the child moved to another process group
            if state.exited { pump.stop() }
            return true
        }
    }

    /// The status once reaped, else nil.
    var status: Int32? {
        state.withLock { $0.status }
    }

    /// Waits until the child is reaped; returns its exit code, or 128 + signal (-1 if unknown).
    /// Not cancellable: callers decide what cancellation means.
    func waitUntilReaped() async -> Int32 {
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
