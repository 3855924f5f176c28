import MediaRemote
import Playback
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A repeatable random source, so shuffled orders are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 11 | state << 53
    }
}

func queueItems(_ names: String...) -> [QueueItem] {
    names.map { QueueItem(identifier: $0, url: URL(fileURLWithPath: "/music/\($0).ogg"), info: NowPlayingInfo(title: $0)) }
}

func queue(_ names: String..., current: Int = 0) -> PlayQueue {
    var queue = PlayQueue()
    queue.replace(with: names.map { queueItems($0)[0] }, currentIndex: current)
    return queue
}

@Suite struct PlayQueueTests {
    @Test func nextStopsAtTheEndWithoutRepeat() {
        var queue = queue("a", "b")
        let result1 = queue.moveToNext()
        #expect(result1)
        #expect(queue.current?.identifier == "b")
        let result2 = queue.moveToNext()
        #expect(!result2)
        #expect(queue.current?.identifier == "b")
        #expect(queue.itemAfterCurrentEnds == nil)
        let result3 = queue.advanceAfterEnd()
        #expect(!result3)
    }

    @Test func repeatAllWrapsBothWays() {
        var queue = queue("a", "b", "c", current: 2)
        queue.repeatMode = .all
        #expect(queue.itemAfterCurrentEnds?.identifier == "a")
        let result4 = queue.advanceAfterEnd()
        #expect(result4)
        #expect(queue.current?.identifier == "a")
        let result5 = queue.moveToPrevious()
        #expect(result5)
        #expect(queue.current?.identifier == "c")
    }

    @Test func repeatOneReplaysOnEndButNextMovesOn() {
        var queue = queue("a", "b")
        queue.repeatMode = .one
        #expect(queue.itemAfterCurrentEnds?.identifier == "a")
        let result6 = queue.advanceAfterEnd()
        #expect(result6)
        #expect(queue.current?.identifier == "a")
        let result7 = queue.moveToNext()
        #expect(result7)
        #expect(queue.current?.identifier == "b")
    }

    @Test func previousAtTheFirstItemStaysWithoutRepeatAll() {
        var queue = queue("a", "b")
        let result8 = queue.moveToPrevious()
        #expect(!result8)
        #expect(queue.current?.identifier == "a")
    }

    @Test func shuffleKeepsTheCurrentItemAndUnshuffleRestoresTheOrder() {
        let names = (1...20).map { "t\($0)" }
        var queue = PlayQueue()
        queue.replace(with: names.map { queueItems($0)[0] }, currentIndex: 7)
        var generator = SeededGenerator(state: 42)
        queue.setShuffle(.items, using: &generator)
        #expect(queue.current?.identifier == "t8")
        #expect(queue.currentIndex == 0)
        let shuffled = queue.items.map(\.identifier)
        #expect(shuffled != names)
        #expect(Set(shuffled) == Set(names))
        // Setting the same mode again (a car on connect) keeps the order: a target state, not a toggle.
        queue.setShuffle(.items, using: &generator)
        #expect(queue.items.map(\.identifier) == shuffled)
        let result9 = queue.moveToNext()
        #expect(result9)
        let playing = queue.current?.identifier
        queue.setShuffle(.off, using: &generator)
        #expect(queue.items.map(\.identifier) == names)
        #expect(queue.current?.identifier == playing)
    }

    @Test func insertingAddsAfterAnItemOrFirstAndKeepsTheCurrentItem() {
        var queue = queue("a", "b", current: 1)
        let x = queue.insert(queueItems("x")[0], after: "a")
        #expect(x?.identifier == "x")
        #expect(queue.items.map(\.identifier) == ["a", "x", "b"])
        #expect(queue.current?.identifier == "b")
        queue.insert(queueItems("y")[0], after: nil)
        #expect(queue.items.map(\.identifier) == ["y", "a", "x", "b"])
        #expect(queue.current?.identifier == "b")
        let result10 = queue.insert(queueItems("z")[0], after: "nope")
        #expect(result10 == nil)
        #expect(queue.count == 4)
    }

    @Test func aDuplicateGetsADistinctIdentifier() {
        var queue = queue("a")
        let second = queue.append(queueItems("a")[0])
        let third = queue.append(queueItems("a")[0])
        #expect(second.identifier == "a#2")
        #expect(third.identifier == "a#3")
        #expect(second.info.identifier == "a#2")
        queue.remove(identifier: "a#2")
        #expect(queue.append(queueItems("a")[0]).identifier == "a#2")
    }

    @Test func removingTheCurrentItemMakesTheNextOneCurrent() {
        var queue = queue("a", "b", "c", current: 1)
        let result11 = queue.remove(identifier: "b")
        #expect(result11)
        #expect(queue.current?.identifier == "c")
        let result12 = queue.remove(identifier: "c")
        #expect(result12)
        #expect(queue.current?.identifier == "a")
        let result13 = queue.remove(identifier: "zzz")
        #expect(!result13)
        let result14 = queue.remove(identifier: "a")
        #expect(result14)
        #expect(queue.current == nil)
        #expect(queue.isEmpty)
    }

    @Test func removingBeforeTheCurrentItemKeepsIt() {
        var queue = queue("a", "b", "c", current: 2)
        queue.remove(identifier: "a")
        #expect(queue.current?.identifier == "c")
        #expect(queue.currentIndex == 1)
    }

    @Test func aSavedShuffledQueueIsRestoredExactly() {
        var queue = queue("a", "b", "c", "d", current: 2)
        var generator = SeededGenerator(state: 7)
        queue.setShuffle(.items, using: &generator)
        queue.repeatMode = .all
        var restored = PlayQueue()
        let accepted = restored.restore(
            addedOrder: queue.addedOrder, playOrder: queue.playOrder, currentIndex: queue.currentIndex,
            repeatMode: .all, shuffleMode: .items)
        #expect(accepted)
        #expect(restored == queue)
        let acceptedBadOrder = restored.restore(
            addedOrder: queue.addedOrder, playOrder: [0, 0, 1, 2], currentIndex: 0, repeatMode: .off,
            shuffleMode: .off)
        #expect(!acceptedBadOrder)
        #expect(restored == queue)
    }
}
