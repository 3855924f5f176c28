import AsyncSupport
import Synchronization
import Testing

@Suite struct ObserverListTests {
    /// Each observer added hears each change until it is removed; removing twice is harmless.
    @Test func observersHearChangesUntilRemoved() {
        let heard = Mutex<[String]>([])
        var list = ObserverList<Int>()
        let first = list.add { change in heard.withLock { $0.append("first \(change)") } }
        _ = list.add { change in heard.withLock { $0.append("second \(change)") } }
        for observer in list.all { observer(1) }
        list.remove(first)
        list.remove(first)
        for observer in list.all { observer(2) }
        #expect(heard.withLock { $0.sorted() } == ["first 1", "second 1", "second 2"])
        #expect(!list.isEmpty)
    }
}
