// The only file that talks to libdbus. Everything above it works with
// `Message`, `DBusValue` and Swift closures; no `OpaquePointer` or `Unmanaged`
// leaves this file.
//
// Threading model: a `RawConnection` is confined to one serial DispatchQueue.
// libdbus's watches and timeouts are mapped onto Dispatch sources targeting
// that queue, so the connection is driven by the kernel's readiness events
// with no polling thread and no periodic wake-up: an idle daemon costs no processor time.

import CDBus
import CMalloc
import Dispatch
import Glibc

#if canImport(Glibc)
    import Glibc
#endif

/// Where to connect.
public enum BusAddress: Sendable, Equatable {
    /// The session bus named by `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// The system bus.
    case system
    /// A bus at an explicit address such as `unix:path=/run/dbus/system_bus_socket`.
    case address(String)
}

private let threadsInitialized: Bool = dbus_threads_init_default() != 0

/// A message marshalled for libdbus, ready to queue. Built on the sender's thread, so a body
/// that cannot go on the wire throws there, and marshalling stays off the connection's queue.
final class OutgoingMessage: @unchecked Sendable {  // owned by one thread at a time; libdbus refcounts are thread-safe once threads are initialised
    fileprivate let pointer: OpaquePointer

    init(_ message: Message) throws {
        precondition(threadsInitialized, "libdbus could not initialise its thread support")
        pointer = try RawConnection.build(message)
    }

    deinit { dbus_message_unref(pointer) }
}

/// A libdbus connection confined to `queue`.
final class RawConnection: @unchecked Sendable {  // every member is used on `queue` only (checked by dispatchPrecondition)
    let queue: DispatchQueue
    private let connection: OpaquePointer
    private var closed = false
    /// Receives every incoming message, decoded, on `queue`.
    private let onMessage: (Message) -> Void
    private var filterData: UnsafeMutableRawPointer?

    /// The unique name the bus gave this connection, such as `:1.42`.
    let uniqueName: String

    /// Connects and registers with the bus. Blocks for one round trip (the
    /// `Hello` call); call it on `queue`, then `start()`.
    init(address: BusAddress, queue: DispatchQueue, onMessage: @escaping (Message) -> Void) throws {
        dispatchPrecondition(condition: .onQueue(queue))
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
        self.queue = queue
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

    /// Installs the message filter and the main-loop integration. On `queue`.
    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
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
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed else { return }
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    /// Queues `message` for sending and returns the serial it was given. On `queue`.
    @discardableResult
    func send(_ message: OutgoingMessage) throws -> UInt32 {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !closed, dbus_connection_get_is_connected(connection) != 0 else { throw DBusError.disconnected() }
        var serial: dbus_uint32_t = 0
        guard dbus_connection_send(connection, message.pointer, &serial) != 0 else {
            throw DBusError(.failed, "libdbus ran out of memory queueing a message")
        }
        return serial
    }

    /// Removes every callback, closes and releases the connection. On `queue`; idempotent.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
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
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    // MARK: Incoming messages

    fileprivate func receive(_ raw: OpaquePointer) {
        onMessage(RawConnection.decode(raw))
    }

    fileprivate func wakeUp() {
        queue.async { [self] in drain() }
    }

    // MARK: Watches: file descriptors as Dispatch sources

    fileprivate final class WatchSources {
        var sources: [any DispatchSourceProtocol] = []
        var running = false
    }

    fileprivate func addWatch(_ watch: OpaquePointer) -> Bool {
        let fd = dbus_watch_get_unix_fd(watch)
        guard fd >= 0 else { return false }
        let flags = dbus_watch_get_flags(watch)
        let box = WatchSources()
        // Each source watches a duplicate of the socket, closed by its cancel handler: a source's
        // descriptor must stay open until then, and libdbus closes its own as soon as the
        // connection closes, while a cancelled source leaves Dispatch's event loop only later. A
        // number reused meanwhile (a file, another connection) confused that loop.
        func duplicate() -> Int32? {
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            return copy >= 0 ? copy : nil
        }
        if flags & DBUS_WATCH_READABLE.rawValue != 0 {
            guard let copy = duplicate() else { return false }
            let source = DispatchSource.makeReadSource(fileDescriptor: copy, queue: queue)
            source.setEventHandler { [unowned self] in
                _ = dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
                drain()
            }
            source.setCancelHandler { Glibc.close(copy) }
            box.sources.append(source)
        }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 {
            guard let copy = duplicate() else {
                cancel(box)
                return false
            }
            let source = DispatchSource.makeWriteSource(fileDescriptor: copy, queue: queue)
            source.setEventHandler { [unowned self] in
                _ = dbus_watch_handle(watch, DBUS_WATCH_WRITABLE.rawValue)
                drain()
            }
            source.setCancelHandler { Glibc.close(copy) }
            box.sources.append(source)
        }
        dbus_watch_set_data(watch, Unmanaged.passRetained(box).toOpaque(), releaseWatchSources)
        setRunning(box, dbus_watch_get_enabled(watch) != 0)
        return true
    }

    fileprivate func toggleWatch(_ watch: OpaquePointer) {
        guard let data = dbus_watch_get_data(watch) else { return }
        setRunning(Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue(), dbus_watch_get_enabled(watch) != 0)
    }

    fileprivate func removeWatch(_ watch: OpaquePointer) {
        guard let data = dbus_watch_get_data(watch) else { return }
        cancel(Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue())
    }

    private func cancel(_ box: WatchSources) {
        for source in box.sources { source.cancel() }
        // A suspended source must be resumed once to be released; it is cancelled, so it never fires.
        if !box.running { for source in box.sources { source.resume() } }
        box.running = true
        box.sources = []
    }

    private func setRunning(_ box: WatchSources, _ running: Bool) {
        guard box.running != running else { return }
        box.running = running
        for source in box.sources {
            if running { source.resume() } else { source.suspend() }
        }
    }

    // MARK: Timeouts as Dispatch timers (one-shot intervals libdbus asks for; none while idle)

    fileprivate func addTimeout(_ timeout: OpaquePointer) -> Bool {
        let box = WatchSources()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in
            _ = dbus_timeout_handle(timeout)
            drain()
        }
        box.sources = [timer]
        dbus_timeout_set_data(timeout, Unmanaged.passRetained(box).toOpaque(), releaseWatchSources)
        toggleTimeout(timeout)
        return true
    }

    fileprivate func toggleTimeout(_ timeout: OpaquePointer) {
        guard let data = dbus_timeout_get_data(timeout) else { return }
        let box = Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue()
        let enabled = dbus_timeout_get_enabled(timeout) != 0
        if enabled, let timer = box.sources.first as? any DispatchSourceTimer {
            let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(1))
        }
        setRunning(box, enabled)
    }

    fileprivate func removeTimeout(_ timeout: OpaquePointer) {
        guard let data = dbus_timeout_get_data(timeout) else { return }
        cancel(Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue())
    }

    // MARK: Building messages

    fileprivate static func build(_ message: Message) throws -> OpaquePointer {
        let raw: OpaquePointer?
        switch message.kind {
        case .methodCall:
            guard let path = message.path, let member = message.member else {
                throw DBusError.invalidArgs("A method call needs a path and a member")
            }
            raw = dbus_message_new_method_call(
                message.destination, path.rawValue, message.interface?.rawValue, member.rawValue)
            if let raw, !message.expectsReply { dbus_message_set_no_reply(raw, 1) }
        case .signal:
            guard let path = message.path, let interface = message.interface, let member = message.member else {
                throw DBusError.invalidArgs("A signal needs a path, an interface and a member")
            }
            raw = dbus_message_new_signal(path.rawValue, interface.rawValue, member.rawValue)
        case .methodReturn:
            raw = dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN)
        case .error:
            raw = dbus_message_new(DBUS_MESSAGE_TYPE_ERROR)
            if let raw { dbus_message_set_error_name(raw, (message.errorName ?? .failed).rawValue) }
        }
        guard let raw else { throw DBusError(.failed, "libdbus ran out of memory building a message") }
        if let replySerial = message.replySerial { dbus_message_set_reply_serial(raw, replySerial) }
        if let destination = message.destination, message.kind != .methodCall {
            dbus_message_set_destination(raw, destination)
        }
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iterator)
        do {
            for value in message.body { try append(value, to: &iterator, depth: 0) }
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }

    /// Appends one value, checking on the way what libdbus would otherwise
    /// refuse with a warning (or abort on): element types, NUL in strings,
    /// empty structs, unix fds and the nesting limit. One pass, no separate validation.
    private static func append(_ value: DBusValue, to iterator: inout DBusMessageIter, depth: Int) throws {
        guard depth <= 64 else {
            throw DBusError(.limitsExceeded, "The value nests more than 64 containers, the D-Bus limit")
        }
        switch value {
        case .byte(let v): try appendBasic(v, "y", &iterator)
        case .boolean(let v): try appendBasic(dbus_bool_t(v ? 1 : 0), "b", &iterator)
        case .int16(let v): try appendBasic(v, "n", &iterator)
        case .uint16(let v): try appendBasic(v, "q", &iterator)
        case .int32(let v): try appendBasic(v, "i", &iterator)
        case .uint32(let v): try appendBasic(v, "u", &iterator)
        case .int64(let v): try appendBasic(v, "x", &iterator)
        case .uint64(let v): try appendBasic(v, "t", &iterator)
        case .double(let v): try appendBasic(v, "d", &iterator)
        case .string(let v): try appendString(v, "s", &iterator)
        case .objectPath(let v): try appendString(v.rawValue, "o", &iterator)
        case .signature(let v): try appendString(v.rawValue, "g", &iterator)
        case .array(let element, let items):
            if element.containsUnixFD { throw DBusError.unixFDNotSupported }
            for item in items where !item.hasType(element) {
                throw DBusError.invalidArgs("An array of '\(element)' holds a value of type '\(item.type)'")
            }
            if element == .byte {
                let bytes: [UInt8] = items.map { item -> UInt8 in
                    if case .byte(let byte) = item { return byte }
                    return 0
                }
                try withContainer("a", DBusType.byte, &iterator) { inner in
                    let appended = bytes.withUnsafeBufferPointer { buffer in
                        var base = buffer.baseAddress
                        return dbus_message_iter_append_fixed_array(
                            &inner, Int32(UInt8(ascii: "y")), &base, Int32(buffer.count))
                    }
                    if appended == 0 { throw outOfMemory }
                }
                return
            }
            try withContainer("a", element, &iterator) { inner in
                for item in items { try append(item, to: &inner, depth: depth + 1) }
            }
        case .dictionary(let key, let valueType, let entries):
            guard key.isBasic else { throw DBusError.invalidArgs("A dictionary key must be a basic type, not '\(key)'") }
            if key.containsUnixFD || valueType.containsUnixFD { throw DBusError.unixFDNotSupported }
            let entryType: DBusType = .dictionary(key: key, value: valueType)
            try withContainer("a", entryType, elementOfArray: true, &iterator) { inner in
                for entry in entries {
                    guard entry.key.hasType(key), entry.value.hasType(valueType) else {
                        throw DBusError.invalidArgs(
                            "A dictionary of '{\(key)\(valueType)}' holds an entry of type '{\(entry.key.type)\(entry.value.type)}'")
                    }
                    try withContainer("e", nil, &inner) { pair in
                        try append(entry.key, to: &pair, depth: depth + 2)
                        try append(entry.value, to: &pair, depth: depth + 2)
                    }
                }
            }
        case .structure(let fields):
            if fields.isEmpty { throw DBusError.invalidArgs("A D-Bus struct needs at least one field") }
            try withContainer("r", nil, &iterator) { inner in
                for field in fields { try append(field, to: &inner, depth: depth + 1) }
            }
        case .variant(let variant):
            let inner = variant.value.type
            if inner.containsUnixFD { throw DBusError.unixFDNotSupported }
            try withContainer("v", inner, &iterator) { contents in
                try append(variant.value, to: &contents, depth: depth + 1)
            }
        }
    }

    private static let outOfMemory = DBusError(.failed, "libdbus ran out of memory building a message")

    private static func appendBasic<T>(_ value: T, _ code: Unicode.Scalar, _ iterator: inout DBusMessageIter) throws {
        let appended = withUnsafePointer(to: value) { dbus_message_iter_append_basic(&iterator, Int32(code.value), $0) }
        if appended == 0 { throw outOfMemory }
    }

    private static func appendString(_ value: String, _ code: Unicode.Scalar, _ iterator: inout DBusMessageIter) throws {
        let appended = value.withCString { text -> dbus_bool_t? in
            // A NUL inside would cut the string short on the wire: refuse it instead.
            guard strlen(text) == value.utf8.count else { return nil }
            return withUnsafePointer(to: text) { dbus_message_iter_append_basic(&iterator, Int32(code.value), $0) }
        }
        guard let appended else { throw DBusError.stringContainsNUL }
        if appended == 0 { throw outOfMemory }
    }

    /// Opens a container whose contents have `contents`'s signature (for a dictionary's array
    /// with `elementOfArray`, the entry's `{kv}`), runs `body` in it and closes it.
    private static func withContainer(
        _ code: Unicode.Scalar, _ contents: DBusType, elementOfArray: Bool = false, _ iterator: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws -> Void
    ) throws {
        // The signatures of a page of rows are a handful of short strings, asked for thousands
        // of times: taken from constants rather than built and converted for C each time.
        if let constant = commonSignature(contents, elementOfArray: elementOfArray) {
            // A literal's StaticString is NUL-terminated and lives as long as the program.
            let text = UnsafeRawPointer(constant.utf8Start).assumingMemoryBound(to: CChar.self)
            return try withContainer(code, text, &iterator, body)
        }
        var signature = contents.description
        if elementOfArray { signature = String(signature.dropFirst()) }
        return try signature.withCString { try withContainer(code, $0, &iterator, body) }
    }

    private static func commonSignature(_ type: DBusType, elementOfArray: Bool) -> StaticString? {
        switch (type, elementOfArray) {
        case (.string, false): "s"
        case (.objectPath, false): "o"
        case (.boolean, false): "b"
        case (.int32, false): "i"
        case (.uint32, false): "u"
        case (.int64, false): "x"
        case (.uint64, false): "t"
        case (.double, false): "d"
        case (.byte, false): "y"
        case (.variant, false): "v"
        case (.array(.string), false): "as"
        case (.array(.objectPath), false): "ao"
        case (.dictionary(.string, .variant), false): "a{sv}"
        case (.dictionary(.string, .variant), true): "{sv}"
        default: nil
        }
    }

    private static func withContainer(
        _ code: Unicode.Scalar, _ signature: UnsafePointer<CChar>?, _ iterator: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws -> Void
    ) throws {
        var inner = DBusMessageIter()
        guard dbus_message_iter_open_container(&iterator, Int32(code.value), signature, &inner) != 0 else {
            throw outOfMemory
        }
        do {
            try body(&inner)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &inner)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &inner) != 0 else { throw outOfMemory }
    }

    // MARK: Reading messages

    private static func decode(_ raw: OpaquePointer) -> Message {
        let kind: Message.Kind
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        let replySerial = dbus_message_get_reply_serial(raw)
        var message = Message(
            kind: kind,
            serial: dbus_message_get_serial(raw),
            replySerial: replySerial == 0 ? nil : replySerial,
            path: dbus_message_get_path(raw).map { ObjectPath(trusted: String(cString: $0)) },
            interface: dbus_message_get_interface(raw).map { InterfaceName(trusted: String(cString: $0)) },
            member: dbus_message_get_member(raw).map { MemberName(trusted: String(cString: $0)) },
            errorName: dbus_message_get_error_name(raw).map { ErrorName(trusted: String(cString: $0)) },
            sender: dbus_message_get_sender(raw).map { String(cString: $0) },
            destination: dbus_message_get_destination(raw).map { String(cString: $0) },
            expectsReply: kind == .methodCall && dbus_message_get_no_reply(raw) == 0,
            body: [])
        // A reply answers a call this process made, so only calls and signals, which anyone
        // may send, are held to the budget.
        let untrusted = kind == .methodCall || kind == .signal
        let start = untrusted ? ReadBudget.forUntrustedMessage : .unlimited
        var budget = start
        do {
            let signature = try Signature(validating: String(cString: dbus_message_get_signature(raw)))
            try signature.checkNotFD()
            var iterator = DBusMessageIter()
            if dbus_message_iter_init(raw, &iterator) != 0 {
                var body: [DBusValue] = []
                body.reserveCapacity(signature.types.count)
                for type in signature.types {
                    body.append(try read(type, &iterator, budget: &budget))
                    _ = dbus_message_iter_next(&iterator)
                }
                message.body = body
            }
        } catch {
            message.bodyError = DBusError.from(error)
        }
        // Also for a body refused halfway: what was read before the refusal is freed by now.
        if untrusted && budget.spent(since: start) { message.heapReturn = HeapReturn() }
        return message
    }

    /// Reads the value at `iterator`, whose type libdbus has already validated as `type`.
    ///
    /// `budget` is what the rest of the message may hold: each value read takes one value, and
    /// an array or dictionary takes all its elements before any is read, so an oversized body
    /// is refused before memory is spent on it (a `DBusValue` costs several times its wire size).
    /// Strings take their bytes as they are read.
    private static func read(_ type: DBusType, _ iterator: inout DBusMessageIter, budget: inout ReadBudget) throws -> DBusValue {
        try budget.take(values: 1)
        switch type {
        case .byte: return .byte(readBasic(&iterator, UInt8(0)))
        case .boolean: return .boolean(readBasic(&iterator, dbus_bool_t(0)) != 0)
        case .int16: return .int16(readBasic(&iterator, Int16(0)))
        case .uint16: return .uint16(readBasic(&iterator, UInt16(0)))
        case .int32: return .int32(readBasic(&iterator, Int32(0)))
        case .uint32: return .uint32(readBasic(&iterator, UInt32(0)))
        case .int64: return .int64(readBasic(&iterator, Int64(0)))
        case .uint64: return .uint64(readBasic(&iterator, UInt64(0)))
        case .double: return .double(readBasic(&iterator, Double(0)))
        case .string: return .string(try readString(&iterator, budget: &budget))
        case .objectPath: return .objectPath(ObjectPath(trusted: try readString(&iterator, budget: &budget)))
        case .signature: return .signature(Signature(unchecked: (try? Signature(validating: readString(&iterator)))?.types ?? []))
        case .unixFD: return .uint32(0)  // unreachable: messages with 'h' are refused before reading
        case .array(let element):
            let count = try reserve(elementsOf: &iterator, budget: &budget)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if element == .byte {
                var base: UnsafeRawPointer?
                var count: Int32 = 0
                withUnsafeMutablePointer(to: &base) { dbus_message_iter_get_fixed_array(&inner, $0, &count) }
                let bytes = UnsafeBufferPointer(start: base?.assumingMemoryBound(to: UInt8.self), count: Int(count))
                return .array(.byte, bytes.map(DBusValue.byte))
            }
            var items: [DBusValue] = []
            items.reserveCapacity(count)
            while dbus_message_iter_get_arg_type(&inner) != 0 {
                // The element itself was paid for by `reserve`; its own contents are not.
                budget.values += 1
                items.append(try read(element, &inner, budget: &budget))
                _ = dbus_message_iter_next(&inner)
            }
            return .array(element, items)
        case .dictionary(let keyType, let valueType):
            let count = try reserve(elementsOf: &iterator, budget: &budget)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var entries: [DBusValue.DictionaryEntry] = []
            entries.reserveCapacity(count)
            while dbus_message_iter_get_arg_type(&inner) != 0 {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&inner, &pair)
                budget.values += 1
                let key = try read(keyType, &pair, budget: &budget)
                _ = dbus_message_iter_next(&pair)
                entries.append(.init(key, try read(valueType, &pair, budget: &budget)))
                _ = dbus_message_iter_next(&inner)
            }
            return .dictionary(key: keyType, value: valueType, entries)
        case .structure(let fields):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var values: [DBusValue] = []
            values.reserveCapacity(fields.count)
            for field in fields {
                values.append(try read(field, &inner, budget: &budget))
                _ = dbus_message_iter_next(&inner)
            }
            return .structure(values)
        case .variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if let basic = basicType(dbus_message_iter_get_arg_type(&inner)) {
                return .variant(Variant(try read(basic, &inner, budget: &budget)))
            }
            // Containers: their full type is needed, so ask libdbus for the signature.
            let text = dbus_message_iter_get_signature(&inner)
            defer { dbus_free(text) }
            let innerType = text.flatMap { (try? Signature(validating: String(cString: $0)))?.types.first } ?? .byte
            return .variant(Variant(try read(innerType, &inner, budget: &budget)))
        }
    }

    /// Takes the element count of the array at `iterator` from `budget`, and returns it.
    private static func reserve(elementsOf iterator: inout DBusMessageIter, budget: inout ReadBudget) throws -> Int {
        // O(1) for fixed-size elements; for others libdbus walks the array without copying it.
        let count = Int(dbus_message_iter_get_element_count(&iterator))
        try budget.take(values: count)
        return count
    }

    /// The basic type of a type code, or nil for containers.
    private static func basicType(_ code: Int32) -> DBusType? {
        switch UInt8(truncatingIfNeeded: code) {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "v"): .variant
        default: nil
        }
    }

    private static func readBasic<T>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iterator, $0) }
        return value
    }

    private static func readString(_ iterator: inout DBusMessageIter, budget: inout ReadBudget) throws -> String {
        var text: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &text) { dbus_message_iter_get_basic(&iterator, $0) }
        guard let text else { return "" }
        try budget.take(stringBytes: strlen(text))
        return String(cString: text)
    }

    private static func readString(_ iterator: inout DBusMessageIter) -> String {
        var unlimited = ReadBudget.unlimited
        return (try? readString(&iterator, budget: &unlimited)) ?? ""
    }
}

/// What a received message may still hold while it is read.
struct ReadBudget {
    var values: Int
    var stringBytes: Int

    /// A method call's or signal's: anyone on the bus may send one.
    static let forUntrustedMessage = ReadBudget(values: Message.maximumValueCount, stringBytes: Message.maximumStringBytes)
    /// A reply's: it answers a call this process chose to make.
    static let unlimited = ReadBudget(values: .max, stringBytes: .max)

    mutating func take(values count: Int) throws {
        values -= count
        if values < 0 {
            throw DBusError(
                .limitsExceeded, "The message holds more than \(Message.maximumValueCount) values, the most this service reads")
        }
    }

    mutating func take(stringBytes count: Int) throws {
        stringBytes -= count
        if stringBytes < 0 {
            throw DBusError(
                .limitsExceeded,
                "The message holds more than \(Message.maximumStringBytes >> 20) MiB of strings, the most this service reads")
        }
    }

    /// Whether reading took so much from `start` that the heap is worth trimming afterwards.
    func spent(since start: ReadBudget) -> Bool {
        start.values - values >= 16_384 || start.stringBytes - stringBytes >= 1 << 20
    }
}

/// Returns the heap's free pages to the system when it is freed. glibc gives back only the
/// top of its heap on its own; the many small strings of a large message leave free pages
/// in the middle, which would stay in the process's memory for good.
final class HeapReturn: Sendable {
    deinit { _ = malloc_trim(0) }
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

private func releaseWatchSources(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<RawConnection.WatchSources>.fromOpaque(data).release()
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
