/// Which signals to receive: a D-Bus match rule for `type='signal'`.
///
/// Every field left `nil` matches anything. The bus filters with the rule's
/// text; the connection checks each message against the rule again, so a
/// stream never sees a signal that another, broader subscription let in.
public struct MatchRule: Sendable, Hashable {
    /// The sender, unique or well-known.
    public var sender: BusName?
    public var path: ObjectPath?
    /// Matches this path and every path below it.
    public var pathNamespace: ObjectPath?
    public var interface: InterfaceName?
    public var member: MemberName?
    /// String arguments that must be equal, by index (0 to 63), such as `[0: "org.mpris.MediaPlayer2.Player"]`.
    public var arguments: [Int: String]

    public init(
        sender: BusName? = nil, path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
        interface: InterfaceName? = nil, member: MemberName? = nil, arguments: [Int: String] = [:]
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// The rule in the bus's text syntax, as sent to `AddMatch`.
    public var text: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace { parts.append("path_namespace='\(pathNamespace)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) {
            // In a match rule a quote cannot be escaped inside quotes: close, add \', reopen.
            parts.append("arg\(index)='\(value.replacingAll("'", with: "'\\''"))'")
        }
        return parts.joined(separator: ",")
    }

    func validate() throws {
        for index in arguments.keys where !(0...63).contains(index) {
            throw DBusError.invalidArgs("Match rule argument index \(index) is outside 0…63")
        }
        if text.utf8.count > 1024 { throw DBusError.invalidArgs("The match rule is longer than 1024 bytes") }
    }

    func matches(_ message: Message, senderOwner: String?) -> Bool {
        guard message.kind == .signal else { return false }
        if let sender, message.sender != sender.rawValue {
            // A well-known sender is stamped on the wire as its owner's unique name.
            guard let senderOwner, message.sender == senderOwner else { return false }
        }
        if let path, message.path != path { return false }
        if let pathNamespace, !(message.path?.isDescendant(of: pathNamespace) ?? false) { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        for (index, expected) in arguments {
            guard index < message.body.count, case .string(let actual) = message.body[index], actual == expected
            else { return false }
        }
        return true
    }
}

struct SignalSubscription: Sendable {
    let rule: MatchRule
    let senderOwner: String?
    let continuation: AsyncThrowingStream<Message, any Error>.Continuation
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}

extension Connection {
    /// Subscribes to the signals a rule matches.
    ///
    /// Returns once the bus has accepted the rule, so every matching signal
    /// emitted after this returns is delivered, in order. The stream finishes
    /// with `Disconnected` if the bus goes away; dropping or cancelling the
    /// stream removes the rule from the bus.
    public func signals(matching rule: MatchRule) async throws -> AsyncThrowingStream<Message, any Error> {
        try rule.validate()
        var owner: String?
        if let sender = rule.sender {
            owner = sender.isUnique ? sender.rawValue : try? await nameOwner(of: sender)?.rawValue
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Message.self)
        // Registered before AddMatch so no signal that the bus routes once it has the rule can slip past.
        let token = try await core.addSubscription(
            SignalSubscription(rule: rule, senderOwner: owner, continuation: continuation))
        let core = self.core
        do {
            _ = try await call(busMethod("AddMatch", body: [.string(rule.text)]))
        } catch {
            core.removeSubscription(token)
            throw error
        }
        continuation.onTermination = { _ in
            core.removeSubscription(token)
            var removal = Message.methodCall(
                destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "RemoveMatch", body: [.string(rule.text)])
            removal.expectsReply = false
            try? core.send(removal)
        }
        return stream
    }

    // MARK: Bus names

    /// Asks the bus for a well-known name.
    public func requestName(_ name: BusName, flags: NameRequestFlags = []) async throws -> NameRequestReply {
        guard !name.isUnique else { throw DBusError.invalidArgs("'\(name)' is a unique name; only well-known names can be requested") }
        let reply = try await call(busMethod("RequestName", body: [.string(name.rawValue), .uint32(flags.rawValue)]))
        let (code) = try reply.decode(as: UInt32.self)
        guard let result = NameRequestReply(rawValue: code) else {
            throw DBusError(.failed, "The bus answered RequestName with unknown code \(code)")
        }
        return result
    }

    /// Requests `name`, or `name.instance<pid>` if another connection owns it: the MPRIS
    /// convention that lets two instances of a player run side by side.
    ///
    /// A process id is unique only within its PID namespace: in sandboxes (every Flatpak app
    /// can be pid 2) two players can hold the same one. When `name.instance<pid>` is owned
    /// too, the suffix also takes this connection's unique name (`:1.42` gives
    /// `name.instance<pid>_1_42`), which the bus never gives twice. No request waits in the
    /// bus's queue: a queued request would make this connection owner later, unasked.
    ///
    /// - Returns: the name now owned.
    /// - Throws: if none of the names could be had.
    public func requestName(_ name: BusName, orInstanceFallbackFor processID: Int32) async throws -> BusName {
        let instance = "\(name.rawValue).instance\(processID)"
        let connectionSuffix = String(uniqueName.rawValue.dropFirst().map { $0 == "." ? "_" : $0 })
        let candidates = [name, try BusName(validating: instance), try BusName(validating: "\(instance)_\(connectionSuffix)")]
        for candidate in candidates {
            let reply = try await requestName(candidate, flags: [.doNotQueue])
            if reply == .primaryOwner || reply == .alreadyOwner { return candidate }
        }
        throw DBusError(.failed, "'\(name)' and its instance names \(candidates.dropFirst().map { "'\($0)'" }.joined(separator: ", ")) are owned by other connections")
    }

    /// Gives up a well-known name.
    @discardableResult
    public func releaseName(_ name: BusName) async throws -> NameReleaseReply {
        let reply = try await call(busMethod("ReleaseName", body: [.string(name.rawValue)]))
        let (code) = try reply.decode(as: UInt32.self)
        return NameReleaseReply(rawValue: code) ?? .notOwner
    }

    /// The unique name owning `name`, or `nil` if it has no owner.
    public func nameOwner(of name: BusName) async throws -> BusName? {
        do {
            let reply = try await call(busMethod("GetNameOwner", body: [.string(name.rawValue)]))
            return BusName(trusted: try reply.decode(as: String.self))
        } catch let error as DBusError where error.name.rawValue == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    func busMethod(_ member: MemberName, body: [DBusValue]) -> Message {
        .methodCall(
            destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
            body: body)
    }
}

/// Flags of `RequestName`.
public struct NameRequestFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Let another connection that asks with ``replaceExisting`` take the name.
    public static let allowReplacement = NameRequestFlags(rawValue: 1)
    /// Take the name from its owner if the owner allowed replacement.
    public static let replaceExisting = NameRequestFlags(rawValue: 2)
    /// Fail instead of waiting in the queue for the name.
    public static let doNotQueue = NameRequestFlags(rawValue: 4)
}

/// The bus's answer to `RequestName`.
public enum NameRequestReply: UInt32, Sendable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}

/// The bus's answer to `ReleaseName`.
public enum NameReleaseReply: UInt32, Sendable {
    case released = 1
    case nonExistent = 2
    case notOwner = 3
}
