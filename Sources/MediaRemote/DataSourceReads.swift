import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the manager's async work runs while it calls the data source.
///
/// A data source answers synchronously (``PlayableContentDataSource/contentItem(at:)`` and
/// the rest), and may wait on a disk to do so. Swift's tasks share as many threads as the
/// machine has cores (two on a small box): a listing blocked there on a slow read holds one
/// of them, and a few such listings stop every other task of the program, the player's
/// included. This executor runs that work on serial dispatch queues of its own instead,
/// whose threads the system adds as they block.
final class DataSourceReads: TaskExecutor {
    /// Shared by every manager. Its width is how many reads may wait on the disk at once
    /// before the next listing queues behind one of them: more than the shared threads.
    static let shared = DataSourceReads(width: max(8, 2 * ProcessInfo.processInfo.activeProcessorCount))

    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    init(width: Int) {
        queues = (0..<max(1, width)).map { DispatchQueue(label: "mediaremote.data-source-reads.\($0)") }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let queue = queues[next.add(1, ordering: .relaxed).oldValue % queues.count]
        queue.async { job.runSynchronously(on: executor) }
    }
}
