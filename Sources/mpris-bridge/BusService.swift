import DBus
import Logging
import ServiceLifecycle

/// The daemon's connection to its message bus: listed first, so closed last, once every other
/// service has released what it holds there.
///
/// Losing the bus (a crashed or restarted dbus-daemon) ends this service with ``BusLost``; the
/// group then stops the others as gracefully as on SIGTERM (the state is saved), and the exit
/// status says the daemon failed, so a service manager restarts it.
struct BusService: Service, CustomStringConvertible {
    let connection: Connection
    let logger: Logger

    var description: String { "bus" }

    struct BusLost: Error, CustomStringConvertible {
        var description: String { "lost the connection to the message bus" }
    }

    func run() async throws {
        defer { connection.close() }
        let lost = await cancelWhenGracefulShutdown { [connection] in
            for await event in connection.events() where event == .disconnected { return true }
            return false
        }
        guard lost else {
            try? await gracefulShutdown()
            return
        }
        logger.error("\(BusLost()): saving the state and exiting")
        throw BusLost()
    }
}
