/// A typed handle on one interface of one remote object.
///
/// ```swift
/// let bus = Proxy(connection, destination: "org.freedesktop.DBus",
///                 path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus")
/// let id: String = try await bus.call("GetId")
/// let names: [String] = try await bus.call("ListNames")
/// ```
/// Arguments and results are Swift values of ``DBusRepresentable`` types; a
/// reply of another signature throws `InvalidArgs` naming both signatures.
public struct Proxy: Sendable {
    public let connection: Connection
    public let destination: BusName
    public let path: ObjectPath
    public let interface: InterfaceName
    /// How long each call waits for its reply.
    public var timeout: Duration

    public init(
        _ connection: Connection, destination: BusName, path: ObjectPath, interface: InterfaceName,
        timeout: Duration = .seconds(25)
    ) {
        self.connection = connection
        self.destination = destination
        self.path = path
        self.interface = interface
        self.timeout = timeout
    }

    /// Calls `method` with typed arguments and reads a typed reply: one value,
    /// a tuple of values, or `Void`.
    public func call<each A: DBusRepresentable, each R: DBusRepresentable>(
        _ method: MemberName, _ arguments: repeat each A
    ) async throws -> (repeat each R) {
        let reply = try await connection.call(
            .methodCall(
                destination: destination, path: path, interface: interface, member: method,
                body: dbusValues(repeat each arguments)),
            timeout: timeout)
        return try reply.decode(as: repeat (each R).self)
    }

    /// Reads a property through `org.freedesktop.DBus.Properties.Get`.
    public func property<T: DBusRepresentable>(_ name: MemberName, as type: T.Type = T.self) async throws -> T {
        let reply = try await connection.call(
            propertiesCall("Get", [.string(interface.rawValue), .string(name.rawValue)]), timeout: timeout)
        return try reply.decode(as: Variant.self).get(T.self)
    }

    /// Reads every property through `GetAll`.
    public func allProperties() async throws -> [String: Variant] {
        let reply = try await connection.call(propertiesCall("GetAll", [.string(interface.rawValue)]), timeout: timeout)
        // Read here rather than through the generic `decode(as:)`, whose dictionary conversion
        // goes through witness tables and costs as much as reading the reply from libdbus.
        guard reply.body.count == 1, case .dictionary(key: .string, value: .variant, let entries) = reply.body[0] else {
            return try reply.decode(as: [String: Variant].self)  // throws its mismatch error
        }
        var properties = [String: Variant](minimumCapacity: entries.count)
        for entry in entries {
            // The dictionary's declared types hold for every entry, as the reader made them.
            guard case .string(let name) = entry.key, case .variant(let value) = entry.value else { continue }
            properties[name] = value
        }
        return properties
    }

    /// Writes a property through `Set`.
    public func setProperty<T: DBusRepresentable>(_ name: MemberName, to value: T) async throws {
        _ = try await connection.call(
            propertiesCall("Set", [.string(interface.rawValue), .string(name.rawValue), .variant(Variant(value))]),
            timeout: timeout)
    }

    /// The signals of this interface from this object, or one of them if `member` is given.
    public func signals(_ member: MemberName? = nil) async throws -> AsyncThrowingStream<Message, any Error> {
        try await connection.signals(
            matching: MatchRule(sender: destination, path: path, interface: interface, member: member))
    }

    private func propertiesCall(_ member: MemberName, _ body: [DBusValue]) -> Message {
        .methodCall(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Properties", member: member,
            body: body)
    }
}
