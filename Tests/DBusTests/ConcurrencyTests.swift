import AsyncSupport
import DBus
import DBusTestSupport
import Dispatch
import Glibc
import ProcessTestSupport
import Synchronization
import Testing

/// Many callers at once, and the order of calls to one object.
@Suite(.timeLimit(.minutes(1))) struct ConcurrencyTests {
    @Test func manyConcurrentCallsFromSeveralTasksAndConnectionsAllGetTheirOwnReply() async throws {
        try await withTestService { fixture in
            var clients = [fixture.client]
            for _ in 0..<3 { clients.append(try await Connection.connect(to: .address(fixture.bus.address))) }
            defer { for client in clients.dropFirst() { client.close() } }
            let callsPerTask = 250
            let tasksPerClient = 4
            let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
                for (clientIndex, client) in clients.enumerated() {
                    let proxy = Proxy(client, destination: TestService.busName, path: TestService.path, interface: TestService.name)
                    for task in 0..<tasksPerClient {
                        group.addTask {
                            var wrong = 0
                            for call in 0..<callsPerTask {
                                let a = Int64(clientIndex * 1_000_000 + task * 1_000 + call)
                                let sum: Int64 = try await proxy.call("Add", a, Int64(7))
                                if sum != a + 7 { wrong += 1 }
                            }
                            return wrong
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(wrong == 0)
            #expect(fixture.test.record.runs.load(ordering: .relaxed) == clients.count * tasksPerClient * callsPerTask)
        }
    }

    @Test func callsToOneObjectRunOneAtATimeInTheOrderTheyArrived() async throws {
        try await withTestService { fixture in
            // Three calls sent back to back without waiting; the slowest first.
            let script = """
                import dbus, dbus.mainloop.glib
                from gi.repository import GLib
                dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
                loop = GLib.MainLoop()
                test = dbus.Interface(dbus.SessionBus().get_object("org.mprisbridge.Test", "/org/mprisbridge/Test"), "org.mprisbridge.Test1")
                replies = []
                def done(value):
                    replies.append(int(value))
                    if len(replies) == 3:
                        print(replies, flush=True)
                        loop.quit()
                for milliseconds in (300, 1, 100):
                    test.Sleep(dbus.UInt32(milliseconds), reply_handler=done, error_handler=lambda e: (print(e), loop.quit()))
                loop.run()
                """
            let output = try await fixture.bus.python(script)
            #expect(output.stdout == "[300, 1, 100]\n", "\(output.stderr)")
            #expect(fixture.test.record.sleepOrder.withLock { $0 } == [300, 1, 100])
        }
    }
    /// A flood of calls to a concurrent object runs at most `maximumConcurrentCalls` handlers at
    /// once; the others wait their turn, and every call gets its reply.
    @Test func aConcurrentObjectRunsABoundedNumberOfCallsAtOnce() async throws {
        try await withTestService { fixture in
            let interface = Interface("org.mprisbridge.Slow1")
            let running = Mutex((now: 0, most: 0))
            interface.method("Wait", arguments: [], results: ["done"]) { () async -> Bool in
                running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                try? await Task.sleep(for: .milliseconds(200))
                running.withLock { $0.now -= 1 }
                return true
            }
            try fixture.service.export(interface, at: "/org/mprisbridge/Slow", ordering: .concurrent)
            let script = """
                import dbus, dbus.mainloop.glib
                from gi.repository import GLib
                dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
                loop = GLib.MainLoop()
                slow = dbus.Interface(dbus.SessionBus().get_object("org.mprisbridge.Test", "/org/mprisbridge/Slow"), "org.mprisbridge.Slow1")
                replies = []
                def done(value):
                    replies.append(bool(value))
                    if len(replies) == 200:
                        print(len(replies), all(replies), flush=True)
                        loop.quit()
                for _ in range(200):
                    slow.Wait(reply_handler=done, error_handler=lambda e: (print(e), loop.quit()))
                loop.run()
                """
            let output = try await fixture.bus.python(script)
            #expect(output.stdout == "200 True\n", "\(output.stderr)")
            let most = running.withLock { $0.most }
            #expect(most == CallOrdering.maximumConcurrentCalls, "\(most) ran at once")
        }
    }
    /// On a serial object a handler whose work an app's own order takes over lets the next call
    /// start, and reply, while it goes on; calls still start in the order they arrived.
    @Test func aSerialHandlerCanLetTheNextCallStartBeforeItReplies() async throws {
        try await withTestService { fixture in
            let interface = Interface("org.mprisbridge.Turns1")
            let appOrder = TurnQueue(width: 1)
            let started = Mutex<[UInt32]>([])
            let othersDone = AsyncStream.makeStream(of: Void.self)
            interface.method("Hold", arguments: ["milliseconds", "allows"], results: ["milliseconds"]) {
                (milliseconds: UInt32, allows: Bool) async -> UInt32 in
                started.withLock { $0.append(milliseconds) }
                if allows {
                    // The app takes the call over in an order of its own: the object's next call may start.
                    let place = appOrder.reserveTakingOver()
                    defer { place.pass() }
                    // Holds until the others replied (or 10 s: without the turn passed they cannot).
                    let timeout = Task {
                        try? await Task.sleep(for: .seconds(10))
                        othersDone.continuation.finish()
                    }
                    var iterator = othersDone.stream.makeAsyncIterator()
                    _ = await iterator.next()
                    timeout.cancel()
                } else {
                    try? await Task.sleep(for: .milliseconds(Int(milliseconds)))
                    if milliseconds == 1 { othersDone.continuation.yield() }
                }
                return milliseconds
            }
            try fixture.service.export(interface, at: "/org/mprisbridge/Turns", ordering: .serial)
            let script = """
                import dbus, dbus.mainloop.glib
                from gi.repository import GLib
                dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
                loop = GLib.MainLoop()
                turns = dbus.Interface(dbus.SessionBus().get_object("org.mprisbridge.Test", "/org/mprisbridge/Turns"), "org.mprisbridge.Turns1")
                replies = []
                def done(value):
                    replies.append(int(value))
                    if len(replies) == 4:
                        print(replies, flush=True)
                        loop.quit()
                for milliseconds, allows in ((1500, True), (300, False), (2, False), (1, False)):
                    turns.Hold(dbus.UInt32(milliseconds), allows, reply_handler=done, error_handler=lambda e: (print(e), loop.quit()))
                loop.run()
                """
            let output = try await fixture.bus.python(script)
            // The long call let the next through (it replied first); the others kept their order.
            let replies = output.stdout.dropFirst().dropLast(2).split(separator: ", ").compactMap { Int($0) }
            #expect(replies.count == 4, "\(output)")
            #expect(replies.first == 300, "\(output)")
            #expect(replies.filter { $0 != 1500 } == [300, 2, 1], "\(output)")
            #expect(started.withLock { $0 } == [1500, 300, 2, 1])
        }
    }
    /// An object exported with an executor runs its handlers there: here a queue of the test's,
    /// which each handler checks it is on, with no task of Swift's global executor in between.
    @Test func anObjectExportedWithAnExecutorRunsItsHandlersOnIt() async throws {
        try await withTestService { fixture in
            let executor = QueueExecutor()
            let interface = Interface("org.mprisbridge.OnQueue1")
            interface.method("Where", arguments: [], results: ["onQueue"]) { () async -> Bool in
                executor.isCurrent
            }
            _ = interface.property("Value", Int32(1), access: .readWrite) { (value: Int32) async throws -> Int32 in
                guard executor.isCurrent else { throw DBusError(.failed, "not on the executor's queue") }
                return value
            }
            try fixture.service.export(interface, at: "/org/mprisbridge/OnQueue", executor: executor)
            let proxy = Proxy(
                fixture.client, destination: TestService.busName, path: "/org/mprisbridge/OnQueue",
                interface: "org.mprisbridge.OnQueue1")
            for _ in 0..<20 {
                let onQueue: Bool = try await proxy.call("Where")
                #expect(onQueue)
            }
            try await proxy.setProperty("Value", to: Int32(5))
            #expect(try await proxy.property("Value", as: Int32.self) == 5)
            #expect(executor.jobs.load(ordering: .relaxed) >= 21)
        }
    }
}

extension ConcurrencyTests {
    /// An object served by the connection's own thread, whose handlers start there as their
    /// call is read: each runs on that thread before and after it waits, a serial object's
    /// calls still start and end in the order they arrived, and one waiting lets the
    /// connection read and answer others (a Ping) meanwhile.
    @Test func anObjectServedByTheConnectionsThreadStartsItsCallsThereInOrder() async throws {
        try await withTestService { fixture in
            let thread = await withTaskExecutorPreference(fixture.service.executor) { pthread_self() }
            let interface = Interface("org.mprisbridge.OnThread1")
            let events = Mutex<[String]>([])
            interface.method("Step", arguments: ["index"], results: ["onThread"]) { (index: UInt32) async -> Bool in
                let before = pthread_equal(pthread_self(), thread) != 0
                events.withLock { $0.append("start \(index)") }
                try? await Task.sleep(for: .milliseconds(index % 3 == 0 ? 20 : 1))
                let after = pthread_equal(pthread_self(), thread) != 0
                events.withLock { $0.append("end \(index)") }
                return before && after
            }
            try fixture.service.export(
                interface, at: "/org/mprisbridge/OnThread", ordering: .serial, executor: fixture.service.executor)
            let script = """
                import dbus, dbus.mainloop.glib
                from gi.repository import GLib
                dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
                loop = GLib.MainLoop()
                proxy = dbus.SessionBus().get_object("org.mprisbridge.Test", "/org/mprisbridge/OnThread")
                steps = dbus.Interface(proxy, "org.mprisbridge.OnThread1")
                answers = []
                def done(value):
                    answers.append(str(value))
                    if len(answers) == 13:
                        print(" ".join(answers), flush=True)
                        loop.quit()
                def failed(error):
                    print(error, flush=True)
                    loop.quit()
                for index in range(12):
                    steps.Step(dbus.UInt32(index), reply_handler=done, error_handler=failed)
                proxy.Ping(dbus_interface="org.freedesktop.DBus.Peer", reply_handler=lambda: done("ping"), error_handler=failed)
                loop.run()
                """
            let output = try await fixture.bus.python(script)
            let answers = output.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
            // Every call answered, each handler on the thread throughout, and the Ping answered
            // while the steps that wait 20 ms were still to come.
            #expect(answers.count == 13, "\(output)")
            #expect(answers.filter { $0 != "ping" } == Array(repeating: "1", count: 12), "\(output)")
            #expect(answers.firstIndex(of: "ping").map { $0 < 12 } == true, "\(output)")
            let expected = (0..<12).flatMap { ["start \($0)", "end \($0)"] }
            #expect(events.withLock { $0 } == expected)
        }
    }
}

/// Runs jobs on a serial queue that carries a key, so code can tell it runs there.
final class QueueExecutor: TaskExecutor {
    let queue = DispatchQueue(label: "test.queue-executor")
    private let key = DispatchSpecificKey<Bool>()
    let jobs = Atomic<Int>(0)

    init() { queue.setSpecific(key: key, value: true) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
