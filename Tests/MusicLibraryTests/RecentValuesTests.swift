import MusicLibrary
import Testing

/// The two-generation store the tree's rows and the queue's descriptions are kept in.
@Suite struct RecentValuesTests {
    @Test func keepsAtMostTwoGenerationsAndMovesWhatIsReadToTheNewer() {
        var recent = RecentValues<Int, String>(capacity: 2)
        recent.insert("a", for: 1)
        recent.insert("b", for: 2)
        recent.insert("c", for: 3)  // 1 and 2 become the older generation
        #expect(recent.contains(1) && recent.contains(2) && recent.contains(3))
        #expect(recent.value(for: 1) == "a")  // moved to the newer one, which is now full
        recent.insert("d", for: 4)  // the older one (2) is dropped; 3 and 1 become the older one
        #expect(!recent.contains(2))
        #expect(recent.value(for: 3) == "c" && recent.value(for: 4) == "d")
        #expect([1, 2, 3, 4, 5].filter(recent.contains).count <= 2 * recent.capacity)
        recent.removeAll()
        #expect(recent.value(for: 4) == nil)
    }
}
