import Dispatch
import Foundation

/// Where an iOS app's MediaPlayer code expects to run: its command handlers, data source and
/// delegate are called on the main queue, as UIKit-era code assumes.
enum MainQueue {
    /// Runs `body` on the main queue and returns its result: at once when called on the main
    /// thread or from a block of the main queue (a data source may be asked from the app's own
    /// calls, such as `endUpdates()`; a command handler may set `nowPlayingInfo`), else waiting
    /// for the main queue. The caller must not hold anything the main queue waits for.
    static func sync<T>(_ body: () throws -> T) rethrows -> T {
        if isCurrent { return try body() }
        return try DispatchQueue.main.sync(execute: body)
    }

    /// Whether the caller runs on the main thread or in a block of the main queue. Both are
    /// needed: once the main thread calls `dispatchMain()` (as an app with no run loop of its
    /// own does, and the test runner), libdispatch drains the main queue on other threads, where
    /// `DispatchQueue.main.sync` would wait for itself.
    static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: marker.key) == true || Thread.isMainThread
    }

    /// The key the main queue carries, set on first use.
    private static let marker: Marker = {
        let marker = Marker()
        DispatchQueue.main.setSpecific(key: marker.key, value: true)
        return marker
    }()

    private final class Marker: @unchecked Sendable {  // the key is immutable; libdispatch may read it from any thread
        let key = DispatchSpecificKey<Bool>()
    }

    /// Runs `body` on the main queue and returns its result: at once when the caller runs there
    /// already (a command handled on ``executor``), else suspending (not blocking) meanwhile.
    static func run<T: Sendable>(_ body: @escaping @MainActor @Sendable () -> T) async -> T {
        if isCurrent { return runHere(body) }
        return await MainActor.run(body: body)
    }

    /// `body` run on the caller's thread, which is on the main queue.
    private static func runHere<T: Sendable>(_ body: @MainActor () -> T) -> T { MainActor.assumeIsolated(body) }

    /// Runs tasks' jobs on the main queue: the executor remotes' commands are handled on, so
    /// they reach the app's handlers on the main queue with no other thread in between.
    static let executor = Executor()

    final class Executor: TaskExecutor {
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            DispatchQueue.main.async { job.runSynchronously(on: executor) }
        }
    }
}

/// A value of the app's (not `Sendable`: Apple's classes are not) carried to the main queue,
/// where alone it is used.
struct MainQueueBound<Value>: @unchecked Sendable {  // read only on the main queue (MainQueue.sync/run)
    let value: Value
    init(_ value: Value) { self.value = value }
}
