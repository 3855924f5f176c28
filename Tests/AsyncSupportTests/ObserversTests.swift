import AsyncSupport
import Synchronization
import Testing

@Suite struct ObserversTests {
    /// Each observer hears each change while its observation is kept; cancelling twice is
    /// harmless.
    @Test func observersHearChangesUntilCancelled() {
        let heard = Mutex<[String]>([])
        let observers = Observers<Int>()
        let first = observers.add { change in heard.withLock { $0.append("first \(change)") } }
        let second = observers.add { change in heard.withLock { $0.append("second \(change)") } }
        observers.notify(1)
        first.cancel()
        first.cancel()
        observers.notify(2)
        #expect(heard.withLock { $0.sorted() } == ["first 1", "second 1", "second 2"])
        #expect(!observers.isEmpty)
        withExtendedLifetime(second) {}
    }

    /// Observers are called in the order they were added, also after others were cancelled
    /// and added again: the daemon relies on its D-Bus signal's observer, added first, running
    /// before any later one wakes a thread.
    @Test func observersAreCalledInTheOrderAdded() {
        let heard = Mutex<[Int]>([])
        let observers = Observers<Void>()
        var observations = (0..<40).map { number in observers.add { heard.withLock { $0.append(number) } } }
        observations[7].cancel()
        observations[30].cancel()
        observations.append(observers.add { heard.withLock { $0.append(40) } })
        observers.notify()
        #expect(heard.withLock { $0 } == (0...40).filter { $0 != 7 && $0 != 30 })
        withExtendedLifetime(observations) {}
    }

    /// An observation dropped by its owner ends: the observer is never called again, and the
    /// list does not keep it.
    @Test func anObservationDroppedEndsItsRegistration() {
        let heard = Mutex(0)
        let observers = Observers<Void>()
        var observation: Observation? = observers.add { heard.withLock { $0 += 1 } }
        observers.notify()
        #expect(observation != nil)
        observation = nil
        observers.notify()
        #expect(heard.withLock { $0 } == 1)
        #expect(observers.isEmpty)
    }

    /// Observers are called outside the list's lock: one may add or cancel observations of the
    /// same list while it is called.
    @Test func anObserverMayChangeTheListItIsCalledFrom() {
        let observers = Observers<Int>()
        let added = Mutex<[Observation]>([])
        let observation = observers.add { change in
            guard change == 1 else { return }
            added.withLock { $0.append(observers.add { _ in }) }
        }
        observers.notify(1)
        observers.notify(2)
        #expect(added.withLock { $0.count } == 1)
        observation.cancel()
        added.withLock { $0.removeAll() }
        #expect(observers.isEmpty)
    }

    /// A batch holds changes until its outermost level ends, then gives them once, in order.
    @Test func aBatchHoldsChangesUntilTheOutermostEnds() {
        var batch = ChangeBatch<String>()
        let now = batch.hold("now")
        let endedNone = batch.end()
        #expect(now == "now")
        #expect(!endedNone, "closing no batch does nothing")
        batch.begin()
        batch.begin()
        let heldA = batch.hold("a")
        let endedInner = batch.end()
        #expect(heldA == nil)
        #expect(!endedInner && batch.isOpen)
        let heldB = batch.hold("b")
        let endedOuter = batch.end()
        #expect(heldB == nil)
        #expect(endedOuter && !batch.isOpen)
        let taken = batch.takeHeld()
        let takenAgain = batch.takeHeld()
        #expect(taken == ["a", "b"])
        #expect(takenAgain.isEmpty)
    }
}
