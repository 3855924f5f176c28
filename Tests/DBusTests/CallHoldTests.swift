import DBus
import DBusTestSupport
import ProcessTestSupport
import Testing

/// A name owned before its objects exist: the calls that come meanwhile wait for them.
@Suite(.timeLimit(.minutes(1))) struct CallHoldTests {
    /// A python3-dbus client that sends `Add(1, 2)` and `Get(Title)` to the test object without
    /// waiting, then prints `sent` once the bus has passed both on (it answered a later call of
    /// the same client), then each answer.
    static let client = """
        import dbus, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus, loop, left = dbus.SessionBus(), GLib.MainLoop(), [2]
        def answer(text):
            print(text, flush=True)
            left[0] -= 1
            if left[0] == 0:
                loop.quit()
        def failed(error):
            answer("error " + error.get_dbus_name())
        name, path = "org.mprisbridge.Test", "/org/mprisbridge/Test"
        bus.call_async(name, path, "org.mprisbridge.Test1", "Add", "xx", (1, 2),
                       lambda total: answer("Add " + str(total)), failed)
        bus.call_async(name, path, "org.freedesktop.DBus.Properties", "Get", "ss", ("org.mprisbridge.Test1", "Title"),
                       lambda title: answer("Title " + str(title)), failed)
        bus.get_name_owner("org.freedesktop.DBus")
        print("sent", flush=True)
        loop.run()
        """

    /// The client's two answers, sorted: a property is read at once, a method runs on a task.
    static func answers(of client: ChildProcess) async -> [String] {
        var count = 0
        return await lines(of: client) { _ in
            count += 1
            return count == 2
        }.sorted()
    }

    @Test func callsThatComeWhileHeldAreAnsweredOnceTheObjectsAreExported() async throws {
        try await PrivateBus.with { bus in
            let service = try await Connection.connect(to: .address(bus.address))
            defer { service.close() }
            let hold = service.holdIncomingCalls()
            #expect(try await service.requestName(TestService.busName) == .primaryOwner)
            let client = try bus.spawnPython(Self.client)
            defer { client.kill() }
            _ = try await client.waitForLine { $0 == "sent" }
            // The bus answers this after it has passed the client's calls to the service, and
            // the service reads them first: they are held, not answered `UnknownObject`.
            _ = try await service.nameOwner(of: TestService.busName)
            let test = TestService()
            try service.export(test.interface, at: TestService.path)
            hold.release()
            #expect(await Self.answers(of: client) == ["Add 3", "Title initial"])
            #expect(try await client.waitForExit(timeout: .seconds(10)) == 0)
        }
    }

    /// Holds nest: the calls wait for the last one, and a hold dropped unreleased ends too.
    @Test func callsWaitForTheLastHold() async throws {
        try await PrivateBus.with { bus in
            let service = try await Connection.connect(to: .address(bus.address))
            defer { service.close() }
            let first = service.holdIncomingCalls()
            var second: IncomingCallHold? = service.holdIncomingCalls()
            #expect(try await service.requestName(TestService.busName) == .primaryOwner)
            let client = try bus.spawnPython(Self.client)
            defer { client.kill() }
            _ = try await client.waitForLine { $0 == "sent" }
            _ = try await service.nameOwner(of: TestService.busName)
            first.release()
            // Still held: a round trip later, nothing was answered.
            _ = try await service.nameOwner(of: TestService.busName)
            let test = TestService()
            try service.export(test.interface, at: TestService.path)
            #expect(second != nil)
            second = nil
            #expect(await Self.answers(of: client) == ["Add 3", "Title initial"])
        }
    }

    /// A client that floods a service while its calls are held: the first
    /// `IncomingCallHold.maximumHeldCalls` wait and are answered, the rest are refused at once.
    @Test func callsBeyondTheLimitAreRefusedWithLimitsExceeded() async throws {
        let flood = """
            import dbus, dbus.mainloop.glib
            from gi.repository import GLib
            dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
            bus, loop, counts, total = dbus.SessionBus(), GLib.MainLoop(), {}, 1030
            def answer(key):
                counts[key] = counts.get(key, 0) + 1
                if sum(counts.values()) == total:
                    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())), flush=True)
                    loop.quit()
            for _ in range(total):
                bus.call_async("org.mprisbridge.Test", "/org/mprisbridge/Test", "org.mprisbridge.Test1", "Add", "xx",
                               (1, 2), lambda total: answer("sum" + str(total)),
                               lambda error: answer(error.get_dbus_name()), timeout=60)
            bus.get_name_owner("org.freedesktop.DBus")
            print("sent", flush=True)
            loop.run()
            """
        try await PrivateBus.with { bus in
            let service = try await Connection.connect(to: .address(bus.address))
            defer { service.close() }
            let hold = service.holdIncomingCalls()
            #expect(try await service.requestName(TestService.busName) == .primaryOwner)
            let client = try bus.spawnPython(flood)
            defer { client.kill() }
            _ = try await client.waitForLine(timeout: .seconds(30)) { $0 == "sent" }
            _ = try await service.nameOwner(of: TestService.busName)
            let test = TestService()
            try service.export(test.interface, at: TestService.path)
            hold.release()
            let counts = try await client.waitForLine(timeout: .seconds(30)) { $0.contains("=") }
            #expect(counts == "org.freedesktop.DBus.Error.LimitsExceeded=6 sum3=1024")
        }
    }
}
