@testable import DBusTestSupport
import Glibc
import ProcessTestSupport
import Testing

private let getIdArguments = [
    "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId",
]

private struct ExpectedFailure: Error {}

@Suite("PrivateBus", .timeLimit(.minutes(1)))
struct PrivateBusTests {
    @Test func answersGetIdThroughDbusSend() async throws {
        try await PrivateBus.with { bus in
            let output = try await bus.run("dbus-send", getIdArguments).check()
            #expect(output.stdout.contains(#/string "[0-9a-f]{32}"/#))
            #expect(bus.address.hasPrefix("unix:"))
            #expect(bus.environment["DBUS_SESSION_BUS_ADDRESS"] == bus.address)
            #expect(bus.environment["DBUS_SYSTEM_BUS_ADDRESS"] == bus.address)
        }
    }

    @Test func stopKillsDaemonAndWatchdog() async throws {
        let bus = try await PrivateBus.start()
        #expect(!processIsGone(bus.daemonPID))
        #expect(!processIsGone(bus.watchdogPID))
        #expect(bus.daemonPID != bus.watchdogPID)
        await bus.stop()
        #expect(processIsGone(bus.daemonPID))
        #expect(processIsGone(bus.watchdogPID))
        await bus.stop()  // idempotent

        let output = try await bus.run("dbus-send", getIdArguments)
        #expect(output.status != 0)
    }

    @Test func withStopsTheBusWhenBodyThrows() async throws {
        var pids: [Int32] = []
        await #expect(throws: ExpectedFailure.self) {
            try await PrivateBus.with { bus in
                pids = [bus.daemonPID, bus.watchdogPID]
                try await bus.run("dbus-send", getIdArguments).check()
                throw ExpectedFailure()
            }
        }
        #expect(pids.count == 2)
        for pid in pids { #expect(processIsGone(pid)) }
    }

    @Test func eachBusIsSeparate() async throws {
        let first = try await PrivateBus.start()
        let second = try await PrivateBus.start()
        let firstID = try await first.run("dbus-send", getIdArguments).check().stdout
        let secondID = try await second.run("dbus-send", getIdArguments).check().stdout
        await first.stop()
        await second.stop()
        #expect(first.address != second.address)
        #expect(firstID != secondID)
    }

    @Test func systemPythonImportsDbusAndListsNames() async throws {
        try await PrivateBus.with { bus in
            let output = try await bus.python("""
                import sys, dbus
                bus = dbus.SessionBus()
                print(sys.argv[1])
                for name in bus.list_names():
                    print(name)
                """, ["marker"]).check()
            let lines = output.stdout.split(separator: "\n")
            #expect(lines.first == "marker")
            #expect(lines.contains("org.freedesktop.DBus"))
        }
    }

    @Test func spawnedPythonServiceOwnsANameUntilItExits() async throws {
        try await PrivateBus.with { bus in
            let service = try bus.spawnPython("""
                import sys, dbus
                bus = dbus.SessionBus()
                bus.request_name("com.example.TestSupport")
                print("ready")
                sys.stdin.read()
                """)
            _ = try await service.waitForLine { $0 == "ready" }
            let owned = try await bus.run("gdbus", [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                "--method", "org.freedesktop.DBus.NameHasOwner", "com.example.TestSupport",
            ]).check()
            #expect(owned.stdout == "(true,)\n")

            service.closeStdin()
            #expect(try await service.waitForExit(timeout: .seconds(10)) == 0)
            let released = try await bus.run("dbus-send", [
                "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:com.example.TestSupport",
            ]).check()
            #expect(released.stdout.contains("boolean false"))
        }
    }

    @Test func spawnedMonitorSeesSignals() async throws {
        try await PrivateBus.with { bus in
            let monitor = try bus.spawn("dbus-monitor", ["--session", "type='signal',interface='com.example.Test'"])
            // A monitor loses its unique name once the daemon has made it a monitor.
            _ = try await monitor.waitForLine { $0.contains("member=NameLost") }
            try await bus.run("dbus-send", ["--type=signal", "/com/example", "com.example.Test.Ping", "string:hello"]).check()
            let line = try await monitor.waitForLine { $0.contains("member=Ping") }
            #expect(line.contains("interface=com.example.Test"))
            let argument = try await monitor.waitForLine { $0.contains("string") }
            #expect(argument.contains("\"hello\""))
            monitor.kill()
            #expect(await monitor.waitForExit() == 128 + SIGKILL)
        }
    }

    @Test func daemonDiesWhenTheTestProcessDies() async throws {
        // Stand-in for the test process: a "feeder" holds the watchdog's stdin, and is killed.
        let harness = """
            exec 3>&1
            sh -c 'echo "feeder $$" >&3; exec sleep 30' | sh -c "$0" watchdog apart "$1" --session --nofork --nopidfile --print-address=1
            """
        let parent = try ChildProcess.spawn("/bin/sh", ["-c", harness, WatchedDaemon.watchdogScript, "/usr/bin/dbus-daemon"])
        var feeder: Int32?
        var daemon: Int32?
        var address: String?
        _ = try await parent.waitForLine { line in
            if line.hasPrefix("feeder ") { feeder = Int32(line.dropFirst(7)) }
            else if line.hasPrefix("pid ") { daemon = Int32(line.dropFirst(4)) }
            else { address = line }
            return feeder != nil && daemon != nil && address != nil
        }
        let daemonPID = try #require(daemon)
        let environment = ["PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": try #require(address)]
        try await ChildProcess.run("dbus-send", ["--session"] + getIdArguments, environment: environment).check()

        #expect(kill(try #require(feeder), SIGKILL) == 0)
        // The watchdog kills and reaps the daemon, then exits, which ends the harness.
        #expect(try await parent.waitForExit(timeout: .seconds(10)) == 0)
        #expect(processIsGone(daemonPID))
    }

    @Test func missingDaemonIsAClearError() async throws {
        let error = await #expect(throws: PrivateBusError.self) {
            try await PrivateBus.start(daemon: "no-such-dbus-daemon")
        }
        #expect(String(describing: try #require(error)).contains("no-such-dbus-daemon not found"))
    }

    @Test func daemonThatPrintsNoAddressFailsWithinTheTimeout() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: PrivateBusError.self) {
            try await PrivateBus.start(daemon: "/bin/true", startupTimeout: .seconds(1))
        }
        // By the timeout, not never: a loaded machine may take seconds more to report it.
        #expect(clock.now - start < .seconds(15))
        guard case .noAddress(let daemon, _, let stdout, _) = try #require(error) else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(daemon == "/bin/true")
        #expect(stdout.hasPrefix("pid "))  // the watchdog started and reported its child
    }
}
