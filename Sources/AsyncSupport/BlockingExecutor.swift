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
/// Each job goes to the queue with the fewest jobs waiting or running, so one that blocks holds
/// up only what is already behind it on its queue, never work that another queue could run; at
/// most `width` jobs run at once. With a width of 1 they run one at a time, in the order enqueued
/// (an engine's own thread).
public final class BlockingExecutor: TaskExecutor {
    private let queues: [DispatchQueue]
    /// Jobs enqueued and not yet finished, per queue.
    private let load: Mutex<[Int]>

    /// - Parameters:
    ///   - label: the queues' label (each gets its number appended), as shown by debuggers.
    ///   - width: how many jobs may block at once, at least 1.
    public init(label: String, width: Int) {
        queues = (0..<max(1, width)).map { DispatchQueue(label: "\(label).\($0)") }
        load = Mutex([Int](repeating: 0, count: queues.count))
    }

    /// How many jobs may block at once.
    public var width: Int { queues.count }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let index = load.withLock { load in
            let index = load.indices.min { load[$0] < load[$1] }!
            load[index] += 1
            return index
        }
        queues[index].async { [self] in
            job.runSynchronously(on: executor)
            load.withLock { $0[index] -= 1 }
        }
    }
}
