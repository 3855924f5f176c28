// Marshalling: a `Message` written whole in wire format, or built into a libdbus message where
// the writer cannot write its body; checked on the way either way.

import CDBus
import Glibc

/// A message marshalled for libdbus, or written whole in wire format, ready to queue. Built on
/// the sender's thread, so a body that cannot go on the wire throws there, and marshalling
/// stays off the connection's queue.
final class OutgoingMessage: @unchecked Sendable {  // owned by one thread at a time; libdbus refcounts are thread-safe once threads are initialised
    enum Form {
        /// A libdbus message; the connection gives it its serial.
        case libdbus(OpaquePointer)
        /// A whole message in wire format (little-endian, valid by construction), its serial
        /// field 0 until the connection writes it to the socket itself.
        case written([UInt8])
    }

    /// Used only by the folder's code, which sends it.
    private(set) var form: Form

    /// `message` written whole in wire format when ``WireBody`` can write its body (sent on the
    /// socket as written), else built through libdbus's iterators, which throw for what cannot go
    /// on the wire.
    init(_ message: Message) throws {
        precondition(threadsInitialized, "libdbus could not initialise its thread support")
        if let written = Self.written(message) {
            form = Self.writtenForm(written)
        } else {
            form = .libdbus(try Self.build(message))
        }
    }

    /// A method return to the call `replySerial` from `destination`, its body `signature` and
    /// `body` already in wire format (little-endian), or nil if the message is invalid.
    ///
    /// A body `isWellFormed` (written by ``WireBody``, which refuses what libdbus would) is sent
    /// as written: libdbus reading it all again cost the daemon as much processor time as the
    /// bus's own check of the same reply. Any other body is handed to libdbus whole and checked
    /// there as a received message is, instead of value by value through its iterators.
    init?(replyTo replySerial: UInt32, destination: String?, signature: Signature, body: [UInt8], isWellFormed: Bool) {
        precondition(threadsInitialized, "libdbus could not initialise its thread support")
        guard replySerial != 0, let message = Self.methodReturn(replySerial, destination, signature, body) else {
            return nil
        }
        if isWellFormed {
            form = Self.writtenForm(message)
        } else {
            guard let pointer = Self.libdbusMessage(reading: message) else { return nil }
            form = .libdbus(pointer)
        }
    }

    deinit {
        if case .libdbus(let pointer) = form { dbus_message_unref(pointer) }
    }

    /// The written bytes, handed over to the connection that sends them (a message is sent
    /// once): it writes its serial into them in place, without copying a large reply.
    func takeWrittenBytes() -> [UInt8] {
        guard case .written(let bytes) = form else { return [] }
        form = .written([])
        return bytes
    }

    /// Where a message's serial is: after the byte order, type, flags, version and body length.
    static let serialOffset = 8
}

extension OutgoingMessage {
    // MARK: Building messages from wire bytes

    /// The bytes of a method return before `body`, its serial 0.
    private static func methodReturn(
        _ replySerial: UInt32, _ destination: String?, _ signature: Signature, _ body: [UInt8]
    ) -> [UInt8]? {
        writtenMessage(
            type: UInt8(DBUS_MESSAGE_TYPE_METHOD_RETURN), flags: 0, signature: signature, capacity: body.count + 96,
            fields: { fields in
                fields.appendHeaderField(5, .uint32(replySerial))
                    && (destination.map { fields.appendHeaderField(6, .string($0)) } ?? true)
            },
            body: { written in
                written.appendAligned(body)
                return true
            })
    }

    /// `message` in wire format, its serial 0, or nil when ``WireBody`` cannot write it as
    /// libdbus would accept it (a value it refuses, a signature over 255 characters, a
    /// message missing a field its kind needs, the local interface or path reserved to libdbus).
    private static func written(_ message: Message) -> [UInt8]? {
        let type: Int32
        switch message.kind {
        case .methodCall:
            guard message.path != nil, message.member != nil else { return nil }
            type = DBUS_MESSAGE_TYPE_METHOD_CALL
        case .signal:
            guard message.path != nil, message.interface != nil, message.member != nil else { return nil }
            type = DBUS_MESSAGE_TYPE_SIGNAL
        case .methodReturn:
            guard (message.replySerial ?? 0) != 0 else { return nil }
            type = DBUS_MESSAGE_TYPE_METHOD_RETURN
        case .error:
            guard (message.replySerial ?? 0) != 0 else { return nil }
            type = DBUS_MESSAGE_TYPE_ERROR
        }
        if message.path?.rawValue == "/org/freedesktop/DBus/Local" || message.interface?.rawValue == "org.freedesktop.DBus.Local" {
            return nil
        }
        var signature: Signature?
        if !message.body.isEmpty {
            let types = message.body.map(\.type)
            guard types.allSatisfy(WireBody.canWriteSignature(of:)) else { return nil }
            let complete = Signature(unchecked: types)
            guard complete.rawValue.utf8.count <= 255 else { return nil }
            signature = complete
        }
        // A method call that wants no reply says so; no other flag is ever set.
        let flags: UInt8 = message.kind == .methodCall && !message.expectsReply ? 1 : 0
        return writtenMessage(
            type: UInt8(type), flags: flags, signature: signature, capacity: 256,
            fields: { fields in
                (message.path.map { fields.appendHeaderField(1, .objectPath($0)) } ?? true)
                    && (message.interface.map { fields.appendHeaderField(2, .string($0.rawValue)) } ?? true)
                    && (message.member.map { fields.appendHeaderField(3, .string($0.rawValue)) } ?? true)
                    && (message.kind != .error || fields.appendHeaderField(4, .string((message.errorName ?? .failed).rawValue)))
                    && (message.replySerial.map { fields.appendHeaderField(5, .uint32($0)) } ?? true)
                    && (message.destination.map { fields.appendHeaderField(6, .string($0)) } ?? true)
            },
            body: { written in
                written.pad(to: 8)
                for value in message.body where !written.append(value) { return false }
                return true
            })
    }

    /// A whole message: the fixed header (little-endian, `type`, `flags`, version 1, the body's
    /// length, serial 0), the header fields `fields` writes with `signature`'s added, then the
    /// body `body` writes. Nil when either fails or the message passes the D-Bus limit.
    private static func writtenMessage(
        type: UInt8, flags: UInt8, signature: Signature?, capacity: Int,
        fields: (inout WireBody) -> Bool, body: (inout WireBody) -> Bool
    ) -> [UInt8]? {
        var message = WireBody(capacity: capacity)
        let headerWritten =
            message.append(.byte(UInt8(ascii: "l"))) && message.append(.byte(type)) && message.append(.byte(flags))
            && message.append(.byte(1)) && message.append(.uint32(0)) && message.append(.uint32(0))
            && message.appendArray(elementAlignment: 8) { written in
                fields(&written) && (signature.map { written.appendHeaderField(8, .signature($0)) } ?? true)
            }
        guard headerWritten else { return nil }
        message.pad(to: 8)
        let bodyStart = message.count
        guard body(&message), message.count <= 1 << 27 else { return nil }
        message.patchUInt32(UInt32(message.count - bodyStart), at: 4)
        return message.takeBytes()
    }

    /// A message ``WireBody`` wrote, to be sent as written. The tests run debug builds: every
    /// message they see written is checked as libdbus would check it.
    private static func writtenForm(_ bytes: [UInt8]) -> Form {
        assert(libdbusAccepts(bytes), "WireBody wrote a message libdbus refuses")
        return .written(bytes)
    }

    private static func libdbusAccepts(_ bytes: [UInt8]) -> Bool {
        guard let message = libdbusMessage(reading: bytes) else { return false }
        dbus_message_unref(message)
        return true
    }

    /// The libdbus message `bytes` (serial 0) are, checked as a received message is, or nil if
    /// libdbus refuses them.
    static func libdbusMessage(reading bytes: [UInt8]) -> OpaquePointer? {
        // A message read must have a serial; the copy libdbus makes of it has none, so the
        // connection gives it the next one.
        var bytes = bytes
        bytes[serialOffset] = 1
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let read = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), &error) }
        }
        guard let read else { return nil }
        defer { dbus_message_unref(read) }
        return dbus_message_copy(read)
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
}
