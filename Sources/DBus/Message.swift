/// A D-Bus message, decoded: its header fields and its body as values.
public struct Message: Sendable {
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    /// The serial the sender gave it; 0 before it is sent.
    public var serial: UInt32
    /// For a reply or an error: the serial of the call it answers.
    public var replySerial: UInt32?
    public var path: ObjectPath?
    public var interface: InterfaceName?
    public var member: MemberName?
    public var errorName: ErrorName?
    /// The sender's unique name, as the bus stamped it.
    public var sender: String?
    public var destination: String?
    /// Whether the sender of a method call waits for a reply.
    public var expectsReply: Bool
    /// The body's values, in order.
    public var body: [DBusValue]
    /// Set when the body could not be read (for example, it carries unix fds, or more than
    /// ``maximumValueCount`` values).
    var bodyError: DBusError? = nil

    /// Set on a received message that took much memory to read, so that the memory goes back
    /// to the system once the last copy of the message is gone.
    var heapReturn: HeapReturn? = nil

    /// The most values a received method call or signal may hold, counting every element,
    /// dictionary key and value, and container. A body past it is refused with
    /// `LimitsExceeded` before it is read: read, a value costs several times its wire size, and
    /// the bus lets any client send tens of megabytes. The largest argument a published
    /// interface needs, a list of track ids, stays far below it.
    public static let maximumValueCount = 131_072

    /// The most bytes of strings and object paths a received method call or signal may hold,
    /// all its strings together. Past it the message is refused with `LimitsExceeded`.
    public static let maximumStringBytes = 8 << 20

    /// The body's type signature.
    public var signature: Signature { Signature(unchecked: body.map(\.type)) }

    /// Builds a method call.
    public static func methodCall(
        destination: BusName?, path: ObjectPath, interface: InterfaceName?, member: MemberName,
        body: [DBusValue] = []
    ) -> Message {
        Message(
            kind: .methodCall, serial: 0, replySerial: nil, path: path, interface: interface, member: member,
            errorName: nil, sender: nil, destination: destination?.rawValue, expectsReply: true, body: body)
    }

    /// Builds a signal; `destination` nil broadcasts it.
    public static func signal(
        path: ObjectPath, interface: InterfaceName, member: MemberName, body: [DBusValue] = [],
        destination: BusName? = nil
    ) -> Message {
        Message(
            kind: .signal, serial: 0, replySerial: nil, path: path, interface: interface, member: member,
            errorName: nil, sender: nil, destination: destination?.rawValue, expectsReply: false, body: body)
    }

    /// Made once: a name from a literal is checked each time it is made.
    private static let propertiesChangedMember: MemberName = "PropertiesChanged"

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` from `path`: the new
    /// values of `changed` properties of `interface`, and the names of the `invalidated` ones.
    public static func propertiesChanged(
        path: ObjectPath, interface: InterfaceName, changed: [(name: String, value: DBusValue)],
        invalidated: [String] = []
    ) -> Message {
        .signal(
            path: path, interface: ObjectServer.properties, member: Self.propertiesChangedMember,
            body: [
                .string(interface.rawValue),
                .dictionary(
                    key: .string, value: .variant, changed.map { .init(.string($0.name), .variant(Variant($0.value))) }),
                .array(.string, invalidated.map(DBusValue.string)),
            ])
    }

    /// The body read as typed values; throws `InvalidArgs` if the types differ.
    public func decode<each T: DBusRepresentable>(as types: repeat (each T).Type) throws -> (repeat each T) {
        let expected = dbusTypes(repeat each types)
        guard body.hasTypes(expected) else {
            throw DBusError.invalidArgs(
                "Expected a body of signature '\(Signature(unchecked: expected))', got '\(signature)'")
        }
        let reader = ArgumentReader(body)
        return (repeat try reader.next((each T).self))
    }

    /// If this is an error reply, the error it carries.
    var carriedError: DBusError? {
        guard kind == .error else { return nil }
        let text: String = if case .string(let text)? = body.first { text } else { "" }
        return DBusError(errorName ?? .failed, text)
    }
}

extension [DBusValue] {
    /// Whether these values are, one by one, of `types`.
    func hasTypes(_ types: [DBusType]) -> Bool {
        guard count == types.count else { return false }
        for (value, type) in zip(self, types) where !value.hasType(type) { return false }
        return true
    }
}
