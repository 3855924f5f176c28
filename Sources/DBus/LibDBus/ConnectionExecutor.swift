// The connection's own thread: it sleeps in `poll` on libdbus's descriptors and a pipe, reads,
// dispatches handlers inline, runs the work enqueued for it and sleeps again.
//
// Why not Dispatch sources: libdispatch's Linux event loop sees a readable socket on its manager
// thread and wakes another thread for the queue, and re-arming pokes the manager again; every
// incoming call paid two thread wakes before it was read. Here the thread that `poll` wakes reads
// it. Why not `dbus_connection_read_write_dispatch(conn, 100)`: a message queued from another
// thread would wait for the poll timeout; here the pipe (written for enqueued work, which is how
// libdbus's wake-up-main function and every other thread reach the loop) ends the poll at once.

import Dispatch
import Glibc
import Synchronization

/// The thread of one ``Connection``, as an executor: what runs on it runs where the connection
/// reads and writes, with no thread woken in between.
///
/// Each connection has a thread of its own that waits for its socket, reads each message,
/// routes it and writes replies and signals. Work given to this executor runs on that thread
/// too, one job at a time in the order enqueued, between the connection's reads: an actor
/// whose `unownedExecutor` is this one (``Connection/executor``), or a task started with it
/// as its executor preference, answers a call and sends the signal that follows on the
/// thread that read the call. Such work must not block: while it runs, the connection reads
/// nothing.
///
/// Once the connection is closed its thread ends; work still given to the executor then runs,
/// still one job at a time and in order, on a serial dispatch queue.
public final class ConnectionExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    // `inbox` is shared under its lock; every other stored property is read and written by the
    // loop (its thread, or the fallback queue once it ended) only.

    private enum Job: @unchecked Sendable {  // a closure is `@Sendable` or made on the loop, and runs on the loop
        case closure(() -> Void)
        case executor(UnownedJob)
    }

    private struct Inbox: ~Copyable {
        var jobs: [Job] = []
        /// The loop is in (or about to enter) `poll` and needs the pipe to wake.
        var sleeping = false
        /// The loop's thread has ended: jobs go to `fallback`.
        var ended = false
    }

    private let inbox = Mutex(Inbox())
    /// The pipe's ends: the loop polls the first, `submit` writes a byte to the second. Open
    /// until `deinit`: a writer that saw the loop asleep may write after the loop ended.
    private let wakeDescriptor: Int32
    private let wakeWriter: Int32
    /// The loop's thread, `pthread_self()`; 0 before it starts.
    private let threadID = Atomic<UInt>(0)
    /// Where jobs run, in order, once the thread has ended.
    private let fallback = DispatchQueue(label: "dbus.connection.closed")
    private static let fallbackKey = DispatchSpecificKey<ObjectIdentifier>()

    struct Watch {
        let descriptor: Int32
        let events: Int16
        var enabled: Bool
        let handle: (Int16) -> Void
    }

    struct Timer {
        var deadline: UInt64
        let interval: UInt64?
        var enabled: Bool
        let fire: () -> Void
    }

    private var watches: [Int: Watch] = [:]
    private var timers: [Int: Timer] = [:]
    private var nextIdentifier = 0
    private var stopRequested = false
    /// Jobs of the batch being run that follow the one running now.
    private var laterInBatch = 0
    /// The buffer the next batch is taken into.
    private var spare: [Job] = []

    /// Starts the thread. Internal: a ``Connection`` makes its own.
    ///
    /// - Throws: `LimitsExceeded` when the process has no descriptor for the pipe or cannot
    ///   start a thread: the connection is refused rather than the process stopped.
    init() throws(DBusError) {
        var ends: [Int32] = [-1, -1]
        let made = pipe(&ends)
        let failure = errno
        guard made == 0 else {
            throw DBusError(.limitsExceeded, "No pipe for the connection's thread: \(String(cString: strerror(failure)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
        fallback.setSpecific(key: Self.fallbackKey, value: ObjectIdentifier(self))
        let context = Unmanaged.passRetained(ThreadStart(executor: self)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            start.executor.run()
            return nil
        }, context)
        guard status == 0 else {
            // The pipe is closed by `deinit`, which runs for an initializer that throws here.
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            throw DBusError(.limitsExceeded, "No thread for the connection: pthread_create failed with \(status)")
        }
        pthread_detach(thread)
    }

    private final class ThreadStart {
        let executor: ConnectionExecutor
        init(executor: ConnectionExecutor) { self.executor = executor }
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWriter)
    }

    // MARK: Executor

    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.executor(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() { preconditionIsCurrent() }

    public func isSameExclusiveExecutionContext(other: ConnectionExecutor) -> Bool { other === self }

    // MARK: The loop's interface (internal)

    /// Whether the caller runs on this loop: its thread, or the queue that replaced it.
    var isCurrent: Bool {
        let thread = threadID.load(ordering: .acquiring)
        if thread != 0, pthread_equal(pthread_self(), thread) != 0 { return true }
        return DispatchQueue.getSpecific(key: Self.fallbackKey) == ObjectIdentifier(self)
    }

    func preconditionIsCurrent() {
        precondition(isCurrent, "Not on the D-Bus connection's thread")
    }

    /// Whether nothing waits to run on the loop after the job running now: work done at once
    /// then keeps the order it would have had enqueued. On the loop's thread only.
    var hasNothingEnqueued: Bool {
        guard threadID.load(ordering: .relaxed) == UInt(pthread_self()), laterInBatch == 0 else { return false }
        return inbox.withLock { $0.jobs.isEmpty }
    }

    /// Runs `work` on the loop after what is already enqueued; from any thread.
    func async(execute work: @escaping @Sendable () -> Void) {
        submit(.closure(work))
    }

    /// Runs `work` on the loop, once; `work` may keep what is not `Sendable` because only the
    /// loop runs it. For the loop's own callbacks (libdbus asks for a drain).
    func schedule(_ work: @escaping () -> Void) {
        preconditionIsCurrent()
        submit(.closure(work))
    }

    private func submit(_ job: Job) {
        // The loop's own thread never needs waking: it runs what it enqueued before it sleeps.
        let onLoop = threadID.load(ordering: .relaxed) == UInt(pthread_self())
        let wake = inbox.withLock { inbox -> Bool in
            if inbox.ended {
                // Under the lock, as the jobs left when the loop ended were: in the order it saw them.
                fallback.async { [self] in runJob(job) }
                return false
            }
            inbox.jobs.append(job)
            guard inbox.sleeping, !onLoop else { return false }
            inbox.sleeping = false
            return true
        }
        if wake {
            var one: UInt8 = 1
            _ = write(wakeWriter, &one, 1)
        }
    }

    /// Watches `descriptor` for `events` (`POLLIN`, `POLLOUT`); `handle` gets what `poll`
    /// reported. On the loop.
    func addWatch(descriptor: Int32, events: Int16, enabled: Bool, handle: @escaping (Int16) -> Void) -> Int {
        preconditionIsCurrent()
        nextIdentifier += 1
        watches[nextIdentifier] = Watch(descriptor: descriptor, events: events, enabled: enabled, handle: handle)
        return nextIdentifier
    }

    func setWatch(_ identifier: Int, enabled: Bool) {
        preconditionIsCurrent()
        watches[identifier]?.enabled = enabled
    }

    func removeWatch(_ identifier: Int) {
        preconditionIsCurrent()
        watches[identifier] = nil
    }

    /// A timer that fires `fire` at `deadline` (`DispatchTime`'s uptime nanoseconds), then
    /// every `interval` if given; disabled, it keeps its place without firing. On the loop.
    func addTimer(deadline: UInt64, interval: UInt64?, enabled: Bool, fire: @escaping () -> Void) -> Int {
        preconditionIsCurrent()
        nextIdentifier += 1
        timers[nextIdentifier] = Timer(deadline: deadline, interval: interval, enabled: enabled, fire: fire)
        return nextIdentifier
    }

    func setTimer(_ identifier: Int, deadline: UInt64?, enabled: Bool) {
        preconditionIsCurrent()
        if let deadline { timers[identifier]?.deadline = deadline }
        timers[identifier]?.enabled = enabled
    }

    func removeTimer(_ identifier: Int) {
        preconditionIsCurrent()
        timers[identifier] = nil
    }

    /// Ends the thread once the job running now returns; what is enqueued after runs on a
    /// serial dispatch queue. On the loop.
    func stop() {
        preconditionIsCurrent()
        stopRequested = true
    }

    // MARK: The loop

    private func runJob(_ job: Job) {
        switch job {
        case .closure(let work):
            work()
        case .executor(let job):
            // Both conformances enqueue here. A job runs isolated to this serial executor and with
            // it as task executor: an actor whose executor this is, called from a task that
            // prefers it, then runs inline, with no second trip through the inbox.
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var descriptors: [pollfd] = []
        var owners: [Int] = []
        var drainBuffer = [UInt8](repeating: 0, count: 64)
        while true {
            // The enqueued work, in batches, until none is left; anything it enqueues runs too.
            while !stopRequested {
                // Two buffers swapped in turn, so that taking a batch allocates nothing.
                var batch = spare
                spare = []  // `batch` the buffer's only owner: appending to it later copies nothing
                inbox.withLock { inbox in
                    inbox.sleeping = false
                    swap(&batch, &inbox.jobs)
                }
                if batch.isEmpty {
                    spare = batch
                    break
                }
                for (index, job) in batch.enumerated() {
                    laterInBatch = batch.count - index - 1
                    runJob(job)
                }
                laterInBatch = 0
                batch.removeAll(keepingCapacity: true)
                spare = batch
            }
            let now = DispatchTime.now().uptimeNanoseconds
            var nextDeadline = UInt64.max
            var due: [Int] = []
            for (identifier, timer) in timers where timer.enabled && timer.deadline <= now { due.append(identifier) }
            for identifier in due {
                // A timer an earlier one removed or changed (libdbus's, a connection closed) is
                // looked up again, never fired from a stale copy.
                guard let timer = timers[identifier], timer.enabled, timer.deadline <= now else { continue }
                if let interval = timer.interval {
                    timers[identifier]?.deadline = now + max(interval, 1)
                } else {
                    timers[identifier]?.enabled = false
                }
                timer.fire()
                nextDeadline = 0
            }
            if nextDeadline != 0 {
                for timer in timers.values where timer.enabled { nextDeadline = min(nextDeadline, timer.deadline) }
            }
            if stopRequested { break }
            descriptors.removeAll(keepingCapacity: true)
            owners.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
            owners.append(0)
            for (identifier, watch) in watches where watch.enabled {
                descriptors.append(pollfd(fd: watch.descriptor, events: watch.events, revents: 0))
                owners.append(identifier)
            }
            let hasWork = inbox.withLock { inbox -> Bool in
                if !inbox.jobs.isEmpty { return true }
                inbox.sleeping = true
                return false
            }
            var timeout: Int32 = -1
            if hasWork || nextDeadline == 0 {
                timeout = 0
            } else if nextDeadline != .max {
                let now = DispatchTime.now().uptimeNanoseconds
                let milliseconds = nextDeadline > now ? (nextDeadline - now + 999_999) / 1_000_000 : 0
                timeout = Int32(min(milliseconds, UInt64(Int32.max)))
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            guard ready > 0 else { continue }
            for index in descriptors.indices where descriptors[index].revents != 0 {
                let owner = owners[index]
                if owner == 0 {
                    _ = read(wakeDescriptor, &drainBuffer, drainBuffer.count)
                    continue
                }
                // A handler before this one may have removed the watch (the connection closed).
                guard let watch = watches[owner], watch.enabled else { continue }
                watch.handle(descriptors[index].revents)
            }
        }
        // Ended: what is left, and whatever comes later, runs on the fallback queue in order.
        watches = [:]
        timers = [:]
        // Handed to the queue under the lock that marks the loop ended: a job submitted once
        // `ended` is seen goes to the queue after these, never before them.
        inbox.withLock { inbox in
            inbox.ended = true
            let left = inbox.jobs
            inbox.jobs = []
            fallback.async { [self] in for job in left { runJob(job) } }
        }
        threadID.store(0, ordering: .releasing)
    }
}

