// The folder LibDBus/ is the only code that talks to libdbus. Everything above it works with
// `Message`, `DBusValue` and Swift closures; no `OpaquePointer` or `Unmanaged` leaves it.
//
// Threading model: a `RawConnection` is confined to its connection's thread, a
// `ConnectionExecutor` that sleeps in `poll` on libdbus's watches (`RawConnection+Watches.swift`)
// and is woken by the kernel's readiness events or by work enqueued for it, never periodically:
// an idle daemon costs no processor time, and the thread `poll` wakes is the one that reads.

import CDBus

/// Where to connect.
public enum BusAddress: Sendable, Equatable {
    /// The session bus named by `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// The system bus.
    case system
    /// A bus at an explicit address such as `unix:path=/run/dbus/system_bus_socket`.
    case address(String)
}

/// Whether libdbus's thread support is on: every connection and message needs it.
let threadsInitialized: Bool = dbus_threads_init_default() != 0

/// A libdbus connection confined to `loop`'s thread.
final class RawConnection: @unchecked Sendable {  // every member is used on `loop` only (checked by preconditionIsCurrent)
    let loop: ConnectionExecutor
    private let connection: OpaquePointer
    private var closed = false
    /// Receives every incoming message, decoded, on `loop`.
    private let onMessage: (Message) -> Void
    private var filterData: UnsafeMutableRawPointer?
    /// A drain is enqueued on the loop and has not run yet.
    private var drainScheduled = false
    /// Messages behind one written to the socket by this side (`RawConnection+Outbox.swift`).
    var outbox = Outbox()

    /// The unique name the bus gave this connection, such as `:1.42`.
    let uniqueName: String

    /// Connects and registers with the bus. Blocks for one round trip (the
    /// `Hello` call); call it on `loop`, then `start()`.
    init(address: BusAddress, loop: ConnectionExecutor, onMessage: @escaping (Message) -> Void) throws {
        loop.preconditionIsCurrent()
        precondition(threadsInitialized, "libdbus could not initialise its thread support")
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        var opened: OpaquePointer?
        switch address {
        case .session:
            opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .system:
            opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .address(let text):
            opened = dbus_connection_open_private(text, &error)
            if let candidate = opened, dbus_bus_register(candidate, &error) == 0 {
                dbus_connection_close(candidate)
                dbus_connection_unref(candidate)
                opened = nil
            }
        }
        guard let opened else {
            throw RawConnection.error(from: &error, fallback: "Could not connect to the bus at \(address)")
        }
        // A lost bus must be reported to the caller, never end the process.
        dbus_connection_set_exit_on_disconnect(opened, 0)
        // Peer calls go to the object server, which checks their arguments as it does every call's;
        // libdbus's own answer takes any arguments at all.
        dbus_connection_set_route_peer_messages(opened, 1)
        connection = opened
        uniqueName = dbus_bus_get_unique_name(opened).map { String(cString: $0) } ?? ""
        self.loop = loop
        self.onMessage = onMessage
    }

    /// This machine's D-Bus id (32 hex digits), what `Peer.GetMachineId` answers; nil when it
    /// cannot be read.
    static let localMachineID: String? = {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let id = dbus_try_get_local_machine_id(&error) else { return nil }
        defer { dbus_free(id) }
        return String(cString: id)
    }()

    private static func error(from error: inout CDBus.DBusError, fallback: String) -> DBusError {
        guard dbus_error_is_set(&error) != 0 else { return DBusError(.failed, fallback) }
        let name = error.name.map { ErrorName(rawValue: String(cString: $0)) ?? .failed } ?? .failed
        let message = error.message.map { String(cString: $0) } ?? fallback
        return DBusError(name, message)
    }

    /// Installs the message filter and the main-loop integration. On `loop`.
    func start() {
        loop.preconditionIsCurrent()
        let retained = Unmanaged.passRetained(self).toOpaque()
        filterData = retained
        dbus_connection_add_filter(connection, filterCallback, retained, releaseConnectionCallback)
        dbus_connection_set_watch_functions(
            connection, addWatchCallback, removeWatchCallback, toggleWatchCallback,
            Unmanaged.passRetained(self).toOpaque(), releaseConnectionCallback)
        dbus_connection_set_timeout_functions(
            connection, addTimeoutCallback, removeTimeoutCallback, toggleTimeoutCallback,
            Unmanaged.passRetained(self).toOpaque(), releaseConnectionCallback)
        dbus_connection_set_dispatch_status_function(
            connection, dispatchStatusCallback, Unmanaged.passRetained(self).toOpaque(), releaseConnectionCallback)
        dbus_connection_set_wakeup_main_function(
            connection, wakeUpCallback, Unmanaged.passRetained(self).toOpaque(), releaseConnectionCallback)
        drain()
    }

    /// Delivers every message libdbus has queued.
    func drain() {
        loop.preconditionIsCurrent()
        guard !closed else { return }
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    /// Queues `message` for sending and returns the serial it was given. On `loop`.
    @discardableResult
    func send(_ message: OutgoingMessage) throws -> UInt32 {
        loop.preconditionIsCurrent()
        guard !closed, dbus_connection_get_is_connected(connection) != 0 else { throw DBusError.disconnected() }
        switch message.form {
        case .libdbus(let pointer):
            if outbox.isEmpty { return try sendThroughLibdbus(pointer) }
            return queueBehindWritten(message, pointer)
        case .written:
            return try sendWritten(message.takeWrittenBytes())
        }
    }

    /// Hands `pointer` to libdbus, which gives it the next serial and writes it.
    func sendThroughLibdbus(_ pointer: OpaquePointer) throws -> UInt32 {
        var serial: dbus_uint32_t = 0
        guard dbus_connection_send(connection, pointer, &serial) != 0 else {
            throw DBusError(.failed, "libdbus ran out of memory queueing a message")
        }
        return serial
    }

    /// Closes libdbus's side after a write of this side's failed; the connection's own close
    /// (``close()``) still releases it.
    func closeAfterFailedWrite() {
        guard !closed else { return }
        dbus_connection_close(connection)
    }

    /// Whether libdbus still holds messages to write (a message partly written included).
    var libdbusHasMessagesToSend: Bool { dbus_connection_has_messages_to_send(connection) != 0 }

    /// The connection's socket, for messages this side writes; nil if libdbus has none. Asked
    /// at each write, never kept: once libdbus has dropped the connection it has none, and a
    /// number kept would name whatever file opened since took it.
    var socketDescriptor: Int32? {
        var descriptor: Int32 = -1
        guard dbus_connection_get_socket(connection, &descriptor) != 0, descriptor >= 0 else { return nil }
        return descriptor
    }

    /// Removes every callback, closes and releases the connection. On `loop`; idempotent.
    func close() {
        loop.preconditionIsCurrent()
        guard !closed else { return }
        closed = true
        // Callbacks first: libdbus holds retained references to `self` in them,
        // and a callback must never run against a connection being torn down.
        if let filterData { dbus_connection_remove_filter(connection, filterCallback, filterData) }
        filterData = nil
        dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_dispatch_status_function(connection, nil, nil, nil)
        dbus_connection_set_wakeup_main_function(connection, nil, nil, nil)
        dropOutbox()
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    // MARK: Incoming messages

    fileprivate func receive(_ raw: OpaquePointer) {
        onMessage(RawConnection.decode(raw))
    }

    /// libdbus has messages to dispatch, or wants its main loop woken: on the loop, since every
    /// libdbus call is made there; the drain runs once the current callback has returned.
    fileprivate func wakeUp() {
        guard loop.isCurrent else { return loop.async { [self] in drain() } }
        guard !drainScheduled else { return }
        drainScheduled = true
        loop.schedule { [self] in
            drainScheduled = false
            drain()
        }
    }
}

// MARK: C callbacks (no captures allowed; `data` carries the RawConnection)

private func connection(_ data: UnsafeMutableRawPointer?) -> RawConnection {
    Unmanaged<RawConnection>.fromOpaque(data!).takeUnretainedValue()
}

private func filterCallback(
    _: OpaquePointer?, _ message: OpaquePointer?, _ data: UnsafeMutableRawPointer?
) -> DBusHandlerResult {
    guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    connection(data).receive(message)
    return DBUS_HANDLER_RESULT_HANDLED
}

private func releaseConnectionCallback(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<RawConnection>.fromOpaque(data).release()
}

private func addWatchCallback(_ watch: OpaquePointer?, _ data: UnsafeMutableRawPointer?) -> dbus_bool_t {
    guard let watch else { return 0 }
    return connection(data).addWatch(watch) ? 1 : 0
}

private func removeWatchCallback(_ watch: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    if let watch { connection(data).removeWatch(watch) }
}

private func toggleWatchCallback(_ watch: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    if let watch { connection(data).toggleWatch(watch) }
}

private func addTimeoutCallback(_ timeout: OpaquePointer?, _ data: UnsafeMutableRawPointer?) -> dbus_bool_t {
    guard let timeout else { return 0 }
    return connection(data).addTimeout(timeout) ? 1 : 0
}

private func removeTimeoutCallback(_ timeout: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    if let timeout { connection(data).removeTimeout(timeout) }
}

private func toggleTimeoutCallback(_ timeout: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    if let timeout { connection(data).toggleTimeout(timeout) }
}

private func dispatchStatusCallback(_: OpaquePointer?, _ status: DBusDispatchStatus, _ data: UnsafeMutableRawPointer?) {
    // Called with libdbus's lock held: never re-enter libdbus here, only schedule.
    if status == DBUS_DISPATCH_DATA_REMAINS { connection(data).wakeUp() }
}

private func wakeUpCallback(_ data: UnsafeMutableRawPointer?) {
    connection(data).wakeUp()
}
