import Synchronization

/// The changes `idle` waits for: posted by what watches the player, the queue and the library,
/// and kept for each connected client until its next `idle` takes them, as mpd keeps them.
///
/// A client that is not idle when a change happens hears of it at its next `idle`, at once; a
/// client parked in `idle` wakes as the change is posted.
public final class MPDChanges: Sendable {
    private struct Subscriber {
        var pending: MPDSubsystems = []
        var mask: MPDSubsystems = []
        var waiting: CheckedContinuation<MPDSubsystems, Never>?
    }

    private let subscribers = Mutex<(next: Int, all: [Int: Subscriber])>((0, [:]))
    private let libraryChanges = Atomic(0)

    public init() {}

    /// Tells every client that `subsystems` changed.
    public func post(_ subsystems: MPDSubsystems) {
        guard !subsystems.isEmpty else { return }
        let woken = subscribers.withLock { state in
            var woken: [(CheckedContinuation<MPDSubsystems, Never>, MPDSubsystems)] = []
            // Changed in place through the values' indices: writing `state.all[id]` while
            // iterating the dictionary would copy it, at every post, with every client in it.
            for index in state.all.values.indices {
                state.all.values[index].pending.formUnion(subsystems)
                let subscriber = state.all.values[index]
                if let waiting = subscriber.waiting, !subscriber.pending.isDisjoint(with: subscriber.mask) {
                    let events = subscriber.pending.intersection(subscriber.mask)
                    state.all.values[index].pending.subtract(events)
                    state.all.values[index].waiting = nil
                    woken.append((waiting, events))
                }
            }
            return woken
        }
        for (continuation, events) in woken { continuation.resume(returning: events) }
    }

    /// A client's place: changes are kept for it from now until it ends.
    public func subscribe() -> Subscription {
        let id = subscribers.withLock { state in
            let id = state.next
            state.next += 1
            state.all[id] = Subscriber()
            return id
        }
        return Subscription(changes: self, id: id)
    }

    /// Tells idle clients that the library's content changed (a rescan that changed anything,
    /// whoever asked for it): its songs, and so its playlists.
    public func libraryChanged() {
        libraryChanges.add(1, ordering: .sequentiallyConsistent)
        post([.database, .storedPlaylist])
    }

    /// How many times ``libraryChanged()`` was called: what is kept of the library's songs is
    /// true while it stays the same.
    public var libraryGeneration: Int { libraryChanges.load(ordering: .sequentiallyConsistent) }

    /// The number of clients subscribed.
    public var subscriberCount: Int { subscribers.withLock { $0.all.count } }

    /// The number of clients waiting in `idle` now.
    public var waitingCount: Int { subscribers.withLock { $0.all.values.count { $0.waiting != nil } } }

    /// One client's changes.
    public final class Subscription: Sendable {
        private let changes: MPDChanges
        private let id: Int

        fileprivate init(changes: MPDChanges, id: Int) {
            self.changes = changes
            self.id = id
        }

        deinit {
            let waiting = changes.subscribers.withLock { $0.all.removeValue(forKey: id)?.waiting }
            waiting?.resume(returning: [])
        }

        /// Waits until a subsystem of `mask` changed (at once if one did since the last call),
        /// and returns those of `mask` that did, which are then no longer pending; the others
        /// stay pending. Returns an empty set when ``stopWaiting()`` is called meanwhile, or when
        /// the task is cancelled (`noidle`, a connection that ends) and nothing of `mask` is pending.
        public func next(in mask: MPDSubsystems) async -> MPDSubsystems {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let ready: MPDSubsystems? = changes.subscribers.withLock { state in
                        guard var subscriber = state.all[id] else { return [] }
                        let events = subscriber.pending.intersection(mask)
                        if !events.isEmpty {
                            subscriber.pending.subtract(events)
                            state.all[id] = subscriber
                            return events
                        }
                        // Checked under the lock: a cancellation whose handler ran before the
                        // continuation is stored is seen here, so no wait is left unwoken.
                        if Task.isCancelled { return [] }
                        subscriber.mask = mask
                        subscriber.waiting = continuation
                        state.all[id] = subscriber
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            } onCancel: {
                stopWaiting()
            }
        }

        /// Ends a wait of ``next(in:)`` with an empty set; nothing pending is lost.
        public func stopWaiting() {
            let waiting = changes.subscribers.withLock { state -> CheckedContinuation<MPDSubsystems, Never>? in
                defer { state.all[id]?.waiting = nil }
                return state.all[id]?.waiting
            }
            waiting?.resume(returning: [])
        }
    }
}
