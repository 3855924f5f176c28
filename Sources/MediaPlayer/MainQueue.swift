import Dispatch
import Foundation

/// Where an iOS app's MediaPlayer code expects to run: its command handlers, data source and
/// delegate are called on the main queue, as UIKit-era code assumes.
enum MainQueue {
    /// Runs `body` on the main thread and returns its result: at once when called there
    /// (a data source may be asked from the app's own calls, such as `endUpdates()`), else
    /// waiting for the main queue. The caller must not hold anything the main thread waits for.
    static func sync<T>(_ body: () throws -> T) rethrows -> T {
        if Thread.isMainThread { return try body() }
        return try DispatchQueue.main.sync(execute: body)
    }

    /// Runs `body` on the main queue and returns its result, suspending (not blocking) meanwhile.
    static func run<T: Sendable>(_ body: @escaping @MainActor @Sendable () -> T) async -> T {
        await MainActor.run(body: body)
    }
}

/// A value of the app's (not `Sendable`: Apple's classes are not) carried to the main queue,
/// where alone it is used.
struct MainQueueBound<Value>: @unchecked Sendable {  // read only on the main queue (MainQueue.sync/run)
    let value: Value
    init(_ value: Value) { self.value = value }
}
