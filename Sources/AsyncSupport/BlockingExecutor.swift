import Dispatch
import Synchronization

/// A task executor for work that blocks its thread: a synchronous read of a disk, a C call that
/// waits (a GStreamer pipeline going to NULL), an `fsync`.
///
/// Swift's tasks share as many threads as the machine has cores (two on a small box). Work that
/// blocks there holds one of them, and a few such waits stop every other task of the program.
/// Run such work with `withTaskExecutorPreference(executor)` (or
/// `Task(executorPreference: executor)`) instead: its jobs run on serial dispatch queues of
/// this executor, whose threads the system adds as they block, and an `await` inside still
/// frees the thread.
///
/// Jobs go to the queues in turn, so at most `width` of them run at once; with a width of 1
/// they run one at a time, in the order enqueued (an engine's own thread).
public final class BlockingExecutor: TaskExecutor {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    /// - Parameters:
    ///   - label: the queues' label (each gets its number appended), as shown by debuggers.
    ///   - width: how many jobs may block at once, at least 1.
    public init(label: String, width: Int) {
        queues = (0..<max(1, width)).map { DispatchQueue(label: "\(label).\($0)") }
    }

    /// How many jobs may block at once.
    public var width: Int { queues.count }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let queue = queues[next.add(1, ordering: .relaxed).oldValue % queues.count]
        queue.async { job.runSynchronously(on: executor) }
    }
}
