import AsyncSupport
import Dispatch
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Counts blocking jobs in progress, as a slow disk read or a pipeline stopping would be.
final class BlockingJobs: Sendable {
    private let holders = Holders()
    private let started = Mutex<[Int]>([])

    /// Blocks its thread for `milliseconds`, as a synchronous wait does, and records it.
    func block(_ number: Int, milliseconds: UInt32) {
        holders.enter()
        started.withLock { $0.append(number) }
        usleep(milliseconds * 1000)
        holders.leave()
    }

    var mostAtOnce: Int { holders.most }
    var order: [Int] { started.withLock { $0 } }
}

@Suite struct BlockingExecutorTests {
    /// More jobs block side by side than the machine has cores: the threads Swift's tasks share,
    /// one per core, would run exactly as many at once and stop every other task meanwhile.
    @Test func moreBlockingJobsThanCoresWaitSideBySide() async {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let executor = BlockingExecutor(label: "test.blocking", width: cores + 2)
        let jobs = BlockingJobs()
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<(cores + 2) {
                group.addTask(executorPreference: executor) { jobs.block(number, milliseconds: 200) }
            }
        }
        #expect(jobs.mostAtOnce > cores)
    }

    /// A job goes to a queue with nothing to do, never behind one that blocks: a job blocked
    /// until a later one has run does not keep that later one waiting.
    @Test func aJobNeverWaitsBehindABlockedOneWhileAQueueIsFree() async {
        let executor = BlockingExecutor(label: "test.least-busy", width: 4)
        let laterRan = DispatchSemaphore(value: 0)
        let blocked = Task(executorPreference: executor) { () -> Bool in
            // Held until the later job has run; a timeout rather than a hang if it waits behind.
            laterRan.wait(timeout: .now() + .seconds(30)) == .success
        }
        // A task's first job is enqueued as the task is made: the blocked one holds a queue now.
        // Taking the queues in turn, the fifth job would wait behind it.
        for _ in 0..<3 { await Task(executorPreference: executor) {}.value }
        await Task(executorPreference: executor) { _ = laterRan.signal() }.value
        #expect(await blocked.value)
    }

    /// With a width of 1 the jobs run one at a time, in the order they were enqueued: a thread
    /// of one's own, as an engine's state changes need.
    @Test func aWidthOfOneRunsOneJobAtATimeInOrder() async {
        let executor = BlockingExecutor(label: "test.serial", width: 1)
        let jobs = BlockingJobs()
        var tasks: [Task<Void, Never>] = []
        for number in 0..<6 {
            // A task's first job is enqueued on the executor as the task is made.
            tasks.append(Task(executorPreference: executor) { jobs.block(number, milliseconds: 20) })
        }
        for task in tasks { await task.value }
        #expect(jobs.mostAtOnce == 1)
        #expect(jobs.order == Array(0..<6))
        #expect(executor.width == 1)
    }
}
