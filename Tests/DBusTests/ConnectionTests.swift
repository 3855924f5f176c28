import DBus
import DBusTestSupport
import ProcessTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The connection's life: names, signals from other peers, timeouts, cancellation, and losing the bus.
@Suite(.timeLimit(.minutes(1))) struct ConnectionTests {
    @Test func losingTheBusIsReportedToEveryWaiterAndNeverEndsTheProcess() async throws {
        try await PrivateBus.with { bus in try await Self.loseTheBus(bus) }
    }

    static func loseTheBus(_ bus: PrivateBus) async throws {
        let service = try await Connection.connect(to: .address(bus.address))
        let client = try await Connection.connect(to: .address(bus.address))
        let test = TestService()
        try service.export(test.interface, at: TestService.path)
        _ = try await service.requestName(TestService.busName)
        let events = client.events()
        let signals = try await client.signals(matching: MatchRule(interface: "org.example.Never"))
        let proxy = Proxy(client, destination: TestService.busName, path: TestService.path, interface: TestService.name)
        async let slowCall: UInt32 = proxy.call("Sleep", UInt32(60_000))

        // Wait until the slow call is running, then take the bus away.
        while test.record.sleepOrder.withLock({ $0.isEmpty }) { await Task.yield() }
        #expect(kill(bus.daemonPID, SIGKILL) == 0)

        do {
            _ = try await slowCall
            Issue.record("the pending call did not fail")
        } catch let error as DBusError {
            #expect(error.name == .disconnected)
        }
        var sawDisconnected = false
        for await event in events where event == .disconnected { sawDisconnected = true }
        #expect(sawDisconnected)
        do {
            for try await _ in signals {}
            Issue.record("the signal stream ended without an error")
        } catch let error as DBusError {
            #expect(error.name == .disconnected)
        }
        await client.waitUntilDisconnected()
        await service.waitUntilDisconnected()
        #expect(!client.isConnected)
        await #expect(throws: DBusError.self) { try await proxy.call("Add", Int64(1), Int64(2)) as Int64 }
    }

    @Test func aSecondInstanceFallsBackToAnInstanceName() async throws {
        try await PrivateBus.with { bus in
            let first = try await Connection.connect(to: .address(bus.address))
            let second = try await Connection.connect(to: .address(bus.address))
            defer {
                first.close()
                second.close()
            }
            let name: BusName = "org.mpris.MediaPlayer2.mprisbridge"
            #expect(try await first.requestName(name, orInstanceFallbackFor: 4242) == name)
            #expect(try await second.requestName(name, orInstanceFallbackFor: 4343) == "org.mpris.MediaPlayer2.mprisbridge.instance4343")
            let list = try await bus.run("dbus-send", ["--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"])
            #expect(list.stdout.contains("\"org.mpris.MediaPlayer2.mprisbridge.instance4343\""))
        }
    }

    /// Two sandboxed players can share a process id: the second one's instance name then
    /// takes its connection's unique name too, and it never waits in the queue for one.
    @Test func anInstanceNameTakenByAnotherProcessFallsBackToTheConnectionsName() async throws {
        try await PrivateBus.with { bus in
            let first = try await Connection.connect(to: .address(bus.address))
            let second = try await Connection.connect(to: .address(bus.address))
            let third = try await Connection.connect(to: .address(bus.address))
            defer {
                first.close()
                second.close()
                third.close()
            }
            let name: BusName = "org.mpris.MediaPlayer2.mprisbridge"
            #expect(try await first.requestName(name, orInstanceFallbackFor: 2) == name)
            #expect(try await second.requestName(name, orInstanceFallbackFor: 2) == "org.mpris.MediaPlayer2.mprisbridge.instance2")
            let suffix = String(third.uniqueName.rawValue.dropFirst().map { $0 == "." ? "_" : $0 })
            let fallback = try await third.requestName(name, orInstanceFallbackFor: 2)
            #expect(fallback.rawValue == "org.mpris.MediaPlayer2.mprisbridge.instance2_\(suffix)")
            // Not queued behind the owners of the names it could not have.
            for taken in [name.rawValue, "org.mpris.MediaPlayer2.mprisbridge.instance2"] {
                let queue = try await bus.run(
                    "dbus-send",
                    ["--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListQueuedOwners", "string:\(taken)"])
                #expect(queue.succeeded && !queue.stdout.contains("\"\(third.uniqueName)\""), "\(queue)")
            }
        }
    }

    @Test func aNameCanBeHandedOverAndBothSidesAreTold() async throws {
        try await PrivateBus.with { bus in
            let owner = try await Connection.connect(to: .address(bus.address))
            let successor = try await Connection.connect(to: .address(bus.address))
            defer {
                owner.close()
                successor.close()
            }
            let name: BusName = "org.mprisbridge.Handover"
            var ownerEvents = owner.events().makeAsyncIterator()
            var successorEvents = successor.events().makeAsyncIterator()
            #expect(try await owner.requestName(name, flags: [.allowReplacement, .doNotQueue]) == .primaryOwner)
            #expect(await ownerEvents.next() == .nameAcquired(name))
            #expect(try await successor.requestName(name, flags: [.replaceExisting, .doNotQueue]) == .primaryOwner)
            #expect(await ownerEvents.next() == .nameLost(name))
            #expect(await successorEvents.next() == .nameAcquired(name))
            #expect(try await owner.nameOwner(of: name) == successor.uniqueName)
            #expect(try await successor.releaseName(name) == .released)
            #expect(try await owner.nameOwner(of: name) == nil)
        }
    }

    @Test func signalsFromAnotherPeerArriveFilteredByTheMatchRule() async throws {
        try await PrivateBus.with { bus in
            let client = try await Connection.connect(to: .address(bus.address))
            defer { client.close() }
            let stream = try await client.signals(
                matching: MatchRule(path: "/org/example/Emitter", interface: "org.example.Emitter", member: "Said", arguments: [0: "it's me"]))
            var iterator = stream.makeAsyncIterator()
            for argument in ["someone else", "it's me"] {
                let sent = try await bus.run(
                    "dbus-send", ["--type=signal", "/org/example/Emitter", "org.example.Emitter.Said", "string:\(argument)", "int32:5"])
                #expect(sent.status == 0, "\(sent.stderr)")
            }
            let message = try await iterator.next()
            #expect(message?.body == [.string("it's me"), .int32(5)])
            #expect(message?.member == "Said")
            #expect(message?.sender?.hasPrefix(":") == true)
        }
    }

    @Test func aCallWithoutAReplyTimesOutWithNoReply() async throws {
        try await withTestService { fixture in
            var proxy = fixture.proxy
            proxy.timeout = .milliseconds(200)
            let clock = ContinuousClock()
            let start = clock.now
            do {
                _ = try await proxy.call("Sleep", UInt32(5_000)) as UInt32
                Issue.record("no timeout")
            } catch let error as DBusError {
                #expect(error.name == .noReply)
            }
            #expect(clock.now - start < .seconds(3))
        }
    }

    @Test func cancellingTheCallingTaskEndsTheCall() async throws {
        try await withTestService { fixture in
            let proxy = fixture.proxy
            let call = Task { try await proxy.call("Sleep", UInt32(5_000)) as UInt32 }
            while fixture.test.record.sleepOrder.withLock({ $0.isEmpty }) { await Task.yield() }
            call.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
        }
    }

    @Test func closingIsCleanAndIdempotent() async throws {
        try await PrivateBus.with { bus in
            for _ in 0..<20 {
                let connection = try await Connection.connect(to: .address(bus.address))
                let proxy = Proxy(connection, destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus")
                let id: String = try await proxy.call("GetId")
                #expect(id.count == 32)
                connection.close()
                connection.close()
                await connection.waitUntilDisconnected()
                #expect(!connection.isConnected)
            }
            await #expect(throws: DBusError.self) { try await Connection.connect(to: .address("unix:path=/nonexistent/bus")) }
        }
    }
}
