import DBus
import DBusTestSupport
import ProcessTestSupport

/// The folder of the Python peers next to this file.
let pythonFolder: String = {
    let file = #filePath
    return String(file[..<file.lastIndex(of: "/")!]) + "/Python"
}()

/// The path of one Python peer script.
func pythonScript(_ name: String) -> String { "\(pythonFolder)/\(name)" }

/// A private bus with the test service exported and named, and a second connection as a client.
struct ServiceFixture: Sendable {
    let bus: PrivateBus
    let service: Connection
    let test: TestService
    let client: Connection

    var proxy: Proxy {
        Proxy(client, destination: TestService.busName, path: TestService.path, interface: TestService.name)
    }

    /// Runs a command-line client against the private bus.
    func run(_ executable: String, _ arguments: [String]) async throws -> ProcessOutput {
        try await bus.run(executable, arguments)
    }

    /// Starts a python3-dbus client printing every signal of the test object
    /// (`Python/watch_signals.py`) and returns once it is subscribed.
    func watchSignals() async throws -> ChildProcess {
        let watcher = try bus.spawn(
            "/usr/bin/python3", [pythonScript("watch_signals.py"), TestService.busName.rawValue, TestService.path.rawValue])
        guard await lines(of: watcher, until: { $0 == "READY" }).last == "READY" else {
            watcher.kill()
            throw DBusError(.failed, "the signal watcher did not start: \(watcher.capturedStderr)")
        }
        return watcher
    }

    /// `gdbus call` on the test object; returns the output.
    func gdbusCall(_ method: String, _ arguments: String...) async throws -> ProcessOutput {
        try await bus.run(
            "gdbus",
            ["call", "--session", "--dest", TestService.busName.rawValue, "--object-path", TestService.path.rawValue,
             "--method", method] + arguments)
    }
}

/// Starts a private bus with two connections to it, a service's and a client's, and runs `body`;
/// closes both and stops the bus afterwards.
func withServiceAndClient<T: Sendable>(
    _ body: (_ bus: PrivateBus, _ service: Connection, _ client: Connection) async throws -> T
) async throws -> T {
    try await PrivateBus.with { bus in
        let service = try await Connection.connect(to: .address(bus.address))
        let client = try await Connection.connect(to: .address(bus.address))
        defer {
            service.close()
            client.close()
        }
        return try await body(bus, service, client)
    }
}

/// Starts a private bus, serves ``TestService`` on it and runs `body`; stops everything afterwards.
func withTestService<T: Sendable>(_ body: (ServiceFixture) async throws -> T) async throws -> T {
    try await withServiceAndClient { bus, service, client in
        let test = TestService()
        try service.export(test.interface, at: TestService.path)
        let reply = try await service.requestName(TestService.busName)
        guard reply == .primaryOwner else { throw DBusError(.failed, "could not own the test name: \(reply)") }
        return try await body(ServiceFixture(bus: bus, service: service, test: test, client: client))
    }
}

/// Reads lines from a child's output until one satisfies `condition`; returns them all.
func lines(
    of child: ChildProcess, until condition: (String) -> Bool
) async -> [String] {
    var collected: [String] = []
    for await line in child.stdoutLines {
        collected.append(line)
        if condition(line) { break }
    }
    return collected
}
