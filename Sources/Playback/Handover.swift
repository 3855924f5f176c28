import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The gapless hand-over: what the engine is given when an item is about to end, planned by
/// ``PlayerCore`` and kept for the engine's streaming thread in a ``HandoverBook``.

/// An entry to hand the engine when the item at `after` is about to end.
package struct HandoverSuccessor: Sendable, Equatable {
    /// The URL of the item it follows.
    package var after: URL
    package var item: QueueItem

    package init(after: URL, item: QueueItem) {
        self.after = after
        self.item = item
    }
}

extension PlayerCore {
    /// What follows `current` (the loaded item, the queue's current one), and what follows that:
    /// the engine may ask for both before it announces the first.
    func handoverSuccessors(after current: QueueItem? = nil) -> [HandoverSuccessor] {
        var successors: [HandoverSuccessor] = []
        // An item to resume is loaded and sought when the one before it ends: a hand-over
        // would start it at its beginning.
        // Single without repeat pauses at the next item: nothing is handed over.
        guard !queue.pausesAfterCurrent else { return [] }
        if let current = current ?? loaded, let next = queue.itemAfterCurrentEnds, resumePosition(of: next) == .zero {
            successors.append(HandoverSuccessor(after: current.url, item: next))
            var ahead = queue  // a copy: only its current index (and a oneshot single) changes
            if ahead.advanceAfterEnd() {
                if ahead.singleMode == .oneshot { ahead.singleMode = .off }
                if !ahead.pausesAfterCurrent, let afterNext = ahead.itemAfterCurrentEnds,
                    resumePosition(of: afterNext) == .zero
                {
                    successors.append(HandoverSuccessor(after: next.url, item: afterNext))
                }
            }
        }
        return successors
    }
}

/// The hand-over's bookkeeping, read on the engine's streaming thread (hence a class around a
/// lock): the successors planned, and the entries handed over whose stream has not started.
final class HandoverBook: Sendable {
    struct State {
        var successors: [HandoverSuccessor] = []
        /// Entries handed over whose stream has not started yet, oldest first.
        var handedOver: [QueueItem] = []

        /// The entry to play after the item at `url`, recorded as handed over.
        mutating func handOver(after url: URL) -> QueueItem? {
            guard let next = successors.first(where: { $0.after == url })?.item else { return nil }
            // Asked again for the same item (after a seek near its end): one hand-over, not two.
            if handedOver.last?.identifier != next.identifier { handedOver.append(next) }
            return next
        }

        /// The handed-over entry whose stream just started, dropping any handed over before it.
        mutating func started(_ url: URL) -> QueueItem? {
            guard let index = handedOver.firstIndex(where: { $0.url == url }) else { return nil }
            let item = handedOver[index]
            handedOver.removeFirst(index + 1)
            return item
        }
    }

    private let state = Mutex(State())

    /// The successor of the item at `url`, for the engine (on its streaming thread).
    func handOver(after url: URL) -> URL? { state.withLock { $0.handOver(after: url)?.url } }

    /// See ``State/started(_:)``.
    func started(_ url: URL) -> QueueItem? { state.withLock { $0.started(url) } }

    /// The entry handed over whose URL is `url`, if any.
    func handedOver(_ url: URL?) -> QueueItem? { state.withLock { state in state.handedOver.first { $0.url == url } } }

    /// New successors; `resetting` also forgets what was handed over (a load, a stop).
    func plan(_ successors: [HandoverSuccessor], resetting: Bool) {
        state.withLock { state in
            if resetting { state.handedOver = [] }
            state.successors = successors
        }
    }
}
