import DBusTestSupport
import Foundation
import ProcessTestSupport
import Synchronization
import Testing

/// One line of Python/bluez_stand_in.py's output: a JSON object with an `event` field.
struct BlueZEvent: @unchecked Sendable {  // unchecked: a JSON object read once, never mutated after parsing
    let fields: [String: Any]
    let line: String

    init?(_ line: String) {
        guard let data = line.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["event"] is String
        else { return nil }
        fields = object
        self.line = line
    }

    var event: String { fields["event"] as? String ?? "" }
    subscript(key: String) -> Any? { fields[key] }
    func string(_ key: String) -> String? { fields[key] as? String }
    /// A field that is itself an object, such as `properties` or `values`.
    func object(_ key: String) -> [String: Any] { fields[key] as? [String: Any] ?? [:] }
}

/// A stand-in for BlueZ's `bluetoothd` (Python/bluez_stand_in.py) owning `org.bluez` on a
/// private system bus of its own: what a car reaches a player through. It records each
/// registration and property change as an event, and sends the car's commands it is given.
struct BlueZStandIn: Sendable {
    /// The private system bus `org.bluez` is on.
    let systemBus: PrivateBus
    let process: ChildProcess
    /// The events not yet consumed by a wait.
    private let events: EventBuffer
    /// Whether ``stop()`` stops the bus too (it was started for this stand-in).
    private let ownsBus: Bool

    /// Starts the stand-in with `arguments` (`--adapters hci0,hci1`, `--hang-register`) on
    /// `systemBus`, or on a private system bus of its own, and returns once `org.bluez` is owned.
    static func start(on bus: PrivateBus? = nil, arguments: [String] = []) async throws -> BlueZStandIn {
        let systemBus = if let bus { bus } else { try await PrivateBus.start() }
        do {
            var environment = systemBus.environment
            environment["PYTHONHOME"] = nil
            let process = try ChildProcess.spawn(
                PrivateBus.systemPython, ["-u", pythonScript("bluez_stand_in.py")] + arguments,
                environment: environment)
            let standIn = BlueZStandIn(
                systemBus: systemBus, process: process, events: EventBuffer(process), ownsBus: bus == nil)
            _ = try await standIn.next(timeout: .seconds(10)) { $0.event == "ready" }
            return standIn
        } catch {
            if bus == nil { await systemBus.stop() }
            throw error
        }
    }

    /// `environment` with `DBUS_SYSTEM_BUS_ADDRESS` pointing at this stand-in's system bus: for a
    /// program that serves on a session bus and registers with BlueZ on the system bus.
    func environment(withSessionOf session: PrivateBus) -> [String: String] {
        var environment = session.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address
        return environment
    }

    /// Sends the car's command (a line of the stand-in's stdin: `Play`, `Shuffle on`, …).
    func send(_ command: String) { process.write(command + "\n") }

    /// Waits for the first unconsumed event that satisfies `predicate`, and consumes it; the
    /// events before it stay for later waits.
    func next(timeout: Duration = .seconds(20), where predicate: @escaping @Sendable (BlueZEvent) -> Bool)
        async throws -> BlueZEvent
    {
        try await events.next(timeout: timeout, where: predicate)
    }

    /// Forgets the events read but not consumed, so that a wait after this sees only newer ones
    /// (those still unread are kept).
    func forgetUnconsumedEvents() { events.forgetUnconsumed() }

    /// Every event so far, for a failure's message.
    var transcript: String { process.capturedStdout + process.capturedStderr }

    /// Ends the stand-in (end of stdin, then SIGKILL if it lingers), and its bus if it started it.
    func stop() async {
        process.closeStdin()
        _ = try? await process.waitForExit(timeout: .seconds(5))
        if ownsBus { await systemBus.stop() }
    }
}

/// The stand-in's events as they arrive, kept until a wait consumes them, so that a wait for one
/// event does not lose another that came first (a command's reply and the change it caused
/// arrive in either order).
final class EventBuffer: Sendable {
    private let process: ChildProcess
    private let state = LockedEvents()

    init(_ process: ChildProcess) { self.process = process }

    func forgetUnconsumed() { state.removeAll() }

    func next(timeout: Duration, where predicate: @escaping @Sendable (BlueZEvent) -> Bool) async throws
        -> BlueZEvent
    {
        if let event = state.take(where: predicate) { return event }
        do {
            var found: BlueZEvent?
            _ = try await process.waitForLine(timeout: timeout) { line in
                guard let event = BlueZEvent(line) else { return false }
                if predicate(event) {
                    found = event
                    return true
                }
                self.state.keep(event)
                return false
            }
            return found!
        } catch {
            Issue.record("the BlueZ stand-in's events so far:\n\(process.capturedStdout)\n\(process.capturedStderr)")
            throw error
        }
    }
}

/// The unconsumed events, under a lock.
private final class LockedEvents: Sendable {
    private let events = Mutex<[BlueZEvent]>([])

    func keep(_ event: BlueZEvent) { events.withLock { $0.append(event) } }

    func removeAll() { events.withLock { $0.removeAll() } }

    func take(where predicate: (BlueZEvent) -> Bool) -> BlueZEvent? {
        events.withLock { events in
            guard let index = events.firstIndex(where: predicate) else { return nil }
            return events.remove(at: index)
        }
    }
}
