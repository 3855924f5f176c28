import Glibc

// Low-level process plumbing: pipes, posix_spawn, PATH lookup, the environment and
// helper threads. Everything here is internal; ChildProcess is the public face.

/// glibc functions that Swift's `Glibc` module hides (they need `_GNU_SOURCE`), looked up once.
enum GNU {
    typealias Pipe2 = @Sendable @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    typealias AddCloseFrom = @Sendable @convention(c) (
        UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32
    ) -> Int32

    /// `pipe2(2)`: creates both ends with `O_CLOEXEC` atomically, so a child spawned by another
    /// thread at the same moment cannot inherit them.
    static let pipe2: Pipe2? = symbol("pipe2")
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+): the child keeps only fds 0, 1, 2,
    /// even if some other code in the test process opened descriptors without `O_CLOEXEC`.
    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }
}

func errnoDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// Both ends of a pipe; both have `FD_CLOEXEC` and are numbered 3 or above.
struct PipeEnds {
    var read: Int32
    var write: Int32

    static func make() throws(SystemCallError) -> PipeEnds {
        var fds: [Int32] = [-1, -1]
        let result: Int32
        if let pipe2 = GNU.pipe2 {
            result = pipe2(&fds, O_CLOEXEC)
        } else {
            result = pipe(&fds)
            if result == 0 {
                _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            }
        }
        guard result == 0 else { throw .init("pipe2", errno) }
        // A test process started with 0, 1 or 2 closed would hand those numbers out; the dup2
        // file actions would then clobber one pipe end with another.
        for index in 0..<2 where fds[index] < 3 {
            let moved = fcntl(fds[index], F_DUPFD_CLOEXEC, 3)
            let code = errno
            close(fds[index])
            fds[index] = moved
            guard moved >= 0 else {
                for fd in fds where fd >= 0 { close(fd) }
                throw .init("fcntl(F_DUPFD_CLOEXEC)", code)
            }
        }
        return PipeEnds(read: fds[0], write: fds[1])
    }

    func closeBoth() {
        close(read)
        close(write)
    }
}

func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
}

/// The environment of the test process, read from `environ`.
func currentEnvironment() -> [String: String] {
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

/// Finds an executable like a shell does: names containing "/" are used as they are, other
/// names are searched in `searchPath` (a colon-separated list; an empty entry means ".").
/// Returns nil when nothing executable is found.
func resolveExecutable(_ name: String, searchPath: String) -> String? {
    func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }
    if name.contains("/") {
        return isExecutableFile(name) ? name : nil
    }
    guard !name.isEmpty else { return nil }
    for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
        let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
        if isExecutableFile(candidate) { return candidate }
    }
    return nil
}

/// A child started by `launchChild`, with the parent's ends of its three standard pipes.
struct LaunchedChild {
    let pid: Int32
    /// Write end of the child's stdin; non-blocking.
    let stdinFD: Int32
    /// Read end of the child's stdout; non-blocking.
    let stdoutFD: Int32
    /// Read end of the child's stderr; non-blocking.
    let stderrFD: Int32
}

/// Starts `path` with `arguments` (argv[0] included) and `environment` through `posix_spawn`.
///
/// The child gets an empty signal mask and default dispositions for every signal, whatever the
/// calling thread has blocked or ignored (Swift test worker threads block SIGTERM and SIGCHLD),
/// and its own process group, so that killing `-pid` also stops what it started itself.
func launchChild(
    path: String, arguments: [String], environment: [String: String]
) throws(SystemCallError) -> LaunchedChild {
    let stdinPipe = try PipeEnds.make()
    let stdoutPipe: PipeEnds
    do { stdoutPipe = try PipeEnds.make() } catch {
        stdinPipe.closeBoth()
        throw error
    }
    let stderrPipe: PipeEnds
    do { stderrPipe = try PipeEnds.make() } catch {
        stdinPipe.closeBoth()
        stdoutPipe.closeBoth()
        throw error
    }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // dup2 clears FD_CLOEXEC on 0, 1 and 2; every other descriptor of ours is O_CLOEXEC.
    posix_spawn_file_actions_adddup2(&actions, stdinPipe.read, 0)
    posix_spawn_file_actions_adddup2(&actions, stdoutPipe.write, 1)
    posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, 2)
    if let addCloseFrom = GNU.addCloseFrom {
        _ = addCloseFrom(&actions, 3)
    }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var emptyMask = sigset_t()
    sigemptyset(&emptyMask)
    posix_spawnattr_setsigmask(&attributes, &emptyMask)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
        &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] =
        environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }

    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)

    // The child has its own copies now (or was never started).
    close(stdinPipe.read)
    close(stdoutPipe.write)
    close(stderrPipe.write)
    guard result == 0 else {
        close(stdinPipe.write)
        close(stdoutPipe.read)
        close(stderrPipe.read)
        throw .init("posix_spawn", result)
    }
    setNonBlocking(stdinPipe.write)
    setNonBlocking(stdoutPipe.read)
    setNonBlocking(stderrPipe.read)
    return LaunchedChild(
        pid: pid, stdinFD: stdinPipe.write, stdoutFD: stdoutPipe.read, stderrFD: stderrPipe.read)
}

/// Decodes a `waitpid` status the way shells do: the exit code, or 128 + the signal number.
func shellStatus(fromWaitStatus status: Int32) -> Int32 {
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

/// Blocks SIGPIPE on the calling thread, so a write to a pipe whose reader is gone fails with
/// EPIPE instead of killing the test process. Only for threads this library owns.
func blockSIGPIPEOnCurrentThread() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &set, nil)
}

private final class ThreadStart {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Runs `body` on a new detached POSIX thread, for blocking calls (`poll`, `waitid`) that must
/// stay off the Swift concurrency pool. Returns 0 or the `pthread_create` error number.
func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
    let start = Unmanaged.passRetained(ThreadStart(body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    pthread_attr_setstacksize(&attributes, 256 * 1024)  // these threads only loop over syscalls
    var thread = pthread_t()
    let result = pthread_create(&thread, &attributes, { argument in
        Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }, start)
    if result != 0 {
        Unmanaged<ThreadStart>.fromOpaque(start).release()
    }
    return result
}

/// A failed system call: its name and `errno`.
struct SystemCallError: Error, CustomStringConvertible {
    let call: String
    let code: Int32
    init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }
    var description: String { "\(call): \(errnoDescription(code))" }
}
