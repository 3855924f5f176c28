import DBus
import Logging
import MPRIS
import ServiceLifecycle

/// The player registered with BlueZ (`--bluetooth`) on the system bus, once the queue is ready,
/// so a car shows the track from its first look. Stopping, it unregisters from every adapter.
struct BluetoothService: Service, CustomStringConvertible {
    let mpris: MPRISService
    /// The daemon's own connection, used when it serves on the system bus.
    let connection: Connection
    let settings: ServeSettings
    let logger: Logger
    /// Waited for: the queue is ready.
    let ready: Milestone<Void>

    var description: String { "Bluetooth" }

    func run() async throws {
        let registration = try? await cancelWhenGracefulShutdown {
            try await ready.value()
            return await register()
        }
        try? await gracefulShutdown()
        guard let registration else { return }
        try await shutdownStep("unregistering from Bluetooth") { [connection] in
            await registration.stop()
            if registration.connection !== connection { registration.connection.close() }
        }
    }

    /// Registers the player with BlueZ on the system bus (``connection`` itself when serving
    /// there), or says in the log why not; nil without a system bus.
    private func register() async -> BluetoothRegistration? {
        let system: Connection
        do {
            system = settings.bus == .system ? connection : try await Connection.system()
        } catch {
            logger.warning("--bluetooth: no system bus (\(error)); the player is not offered over Bluetooth")
            return nil
        }
        let registration = BluetoothRegistration(service: mpris, connection: system) { [logger] event in
            switch event {
            case .registered(let adapter): logger.info("registered with Bluetooth adapter \(adapter)")
            case .unregistered(let adapter): logger.info("unregistered from Bluetooth adapter \(adapter)")
            case .lost(let adapter): logger.info("Bluetooth adapter \(adapter) is gone")
            case .failed(let adapter, let reason):
                logger.warning("Bluetooth adapter \(adapter) refused the player: \(reason)")
            case .unavailable(let reason): logger.warning("BlueZ (org.bluez) is unavailable: \(reason)")
            }
        }
        do {
            try registration.start()
        } catch {
            logger.warning("--bluetooth: \(error)")
            if system !== connection { system.close() }
            return nil
        }
        return registration
    }
}
