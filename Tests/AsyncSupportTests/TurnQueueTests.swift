import AsyncSupport
import Synchronization
import Testing

/// Lines of text appended from any task.
final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// How many hold a turn now, and the most at once.
final class Holders: Sendable {
    private let counts = Mutex((now: 0, most: 0))
    func enter() {
        counts.withLock { counts in
            counts.now += 1
            counts.most = max(counts.most, counts.now)
        }
    }
    func leave() { counts.withLock { $0.now -= 1 } }
    var most: Int { counts.withLock { $0.most } }
}

@Suite struct TurnQueueTests {
    /// With a width of 1, work runs one at a time in the order the places were taken, across
    /// its suspension points, even when each runs on a task of its own.
    @Test func oneAtATimeInTheOrderReserved() async {
        let queue = TurnQueue(width: 1)
        let log = Log()
        var tasks: [Task<Void, Never>] = []
        for number in 0..<20 {
            let turn = queue.reserve()
            tasks.append(
                Task {
                    await turn.wait()
                    log.append("start \(number)")
                    await Task.yield()
                    try? await Task.sleep(for: .milliseconds(1))
                    log.append("end \(number)")
                    turn.pass()
                })
        }
        for task in tasks { await task.value }
        #expect(log.all == (0..<20).flatMap { ["start \($0)", "end \($0)"] })
    }

    /// At most `width` hold a turn at once; the others wait in line.
    @Test func atMostWidthHoldersAtOnce() async {
        let queue = TurnQueue(width: 3)
        let holders = Holders()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    await queue.run {
                        holders.enter()
                        try? await Task.sleep(for: .milliseconds(20))
                        holders.leave()
                    }
                }
            }
        }
        // Never more than the width; more than one, or it would be a serial queue.
        #expect(holders.most <= 3 && holders.most > 1)
    }

    /// A holder that passes early lets the next start while it goes on; a place given up before
    /// it came up does not stop the line.
    @Test func passingEarlyAndGivingUpAPlaceKeepTheLineMoving() async {
        let queue = TurnQueue(width: 1)
        let first = queue.reserve()
        let abandoned = queue.reserve()
        let third = queue.reserve()
        await first.wait()
        abandoned.pass()
        first.pass()
        // Would wait forever if the abandoned place held the line.
        await third.wait()
        third.pass()
        first.pass()
        let fourth = queue.reserve()
        await fourth.wait()
        fourth.pass()
    }

    /// Work that holds a turn in one queue and is taken over by a later one passes that turn once
    /// it has its place there: the first queue's next holder starts while the work goes on, and
    /// the later queue keeps the order the first one gave.
    @Test(.timeLimit(.minutes(1))) func aLaterQueueTakesTheOrderOverAndPassesTheHeldTurn() async {
        let calls = TurnQueue(width: 1)
        let app = TurnQueue(width: 1)
        let log = Log()
        let (release, releaseNow) = AsyncStream.makeStream(of: Void.self)
        var tasks: [Task<Void, Never>] = []
        for number in 0..<3 {
            let call = calls.reserve()
            tasks.append(
                Task {
                    await call.wait()
                    await Turn.$held.withValue(call) {
                        let place = app.reserveTakingOver()
                        log.append("queued \(number)")
                        await place.wait()
                        // The first holds the app's order until the test lets it go: the calls after
                        // it are queued meanwhile, which they could not be if it still held their line.
                        if number == 0 {
                            var iterator = release.makeAsyncIterator()
                            _ = await iterator.next()
                        }
                        log.append("ran \(number)")
                        place.pass()
                    }
                    call.pass()
                })
        }
        while log.all.count < 3 { await Task.yield() }
        #expect(log.all == ["queued 0", "queued 1", "queued 2"])
        releaseNow.yield()
        for task in tasks { await task.value }
        #expect(log.all == ["queued 0", "queued 1", "queued 2", "ran 0", "ran 1", "ran 2"])
        // Outside a holder's work it takes a place like any other.
        let place = app.reserveTakingOver()
        await place.wait()
        place.pass()
    }
}
