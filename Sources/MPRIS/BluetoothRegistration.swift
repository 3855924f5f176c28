import DBus
import Synchronization

/// Registers an ``MPRISService``'s player with BlueZ on every Bluetooth adapter, so that a car
/// or headphones connected over Bluetooth (AVRCP) show the player's name and what it plays, and
/// send it their commands, without `mpris-proxy`.
///
/// ```swift
/// let bluetooth = BluetoothRegistration(service: service, connection: try await Connection.system())
/// try bluetooth.start()
/// …
/// await bluetooth.stop()
/// ```
///
/// What BlueZ (`bluetoothd`) does with it: `org.bluez.Media1.RegisterPlayer(path, properties)`
/// on an adapter takes the Player's properties once (`Identity` is the name a car shows;
/// `Metadata` must type `xesam:title` and `xesam:album` as strings, `xesam:artist` and
/// `xesam:genre` as string arrays, `mpris:length` as int64 and `xesam:trackNumber` as int32, or
/// the registration fails; without `CanControl` true it sends no command). From then on it
/// follows the `PropertiesChanged` and `Seeked` signals of the object at `path`, calls its
/// `Play`, `Pause`, `Next`, `Previous` and `Stop` and writes `Shuffle` and `LoopStatus` through
/// `org.freedesktop.DBus.Properties.Set`, without waiting for replies. So the Player interface
/// is exported on `connection` at ``objectPath`` too, and its signals go out there as well.
///
/// Adapters are followed through `org.bluez`'s ObjectManager: the player is registered on each
/// adapter with `org.bluez.Media1` at start, on each one added later, and again on every
/// adapter when `bluetoothd` restarts. Every call to `org.bluez` waits at most
/// ``callTimeout``, one at a time, on a task of its own: a stuck or hostile `bluetoothd`
/// delays only the next registration, never a command or the service. At most
/// ``maximumAdapters`` adapters are registered with.
public final class BluetoothRegistration: Sendable {
    /// Where the Player is exported on the Bluetooth connection; BlueZ calls it there. Apart
    /// from `/org/mpris/MediaPlayer2`, so that the same connection can also serve MPRIS.
    public static let objectPath: ObjectPath = "/org/mprisbridge/BluetoothPlayer"
    /// The most adapters the player is registered with at once.
    public static let maximumAdapters = 16

    /// What happened to a registration, for the app's log.
    public enum Event: Sendable, Equatable {
        /// Registered with the adapter at this path.
        case registered(adapter: ObjectPath)
        /// BlueZ refused or did not answer; the message says why.
        case failed(adapter: ObjectPath, reason: String)
        /// The adapter went away, or `bluetoothd` did.
        case lost(adapter: ObjectPath)
        /// Unregistered from the adapter at shutdown.
        case unregistered(adapter: ObjectPath)
        /// `org.bluez` could not be asked for its adapters, or watched.
        case unavailable(reason: String)
    }

    /// The connection to the system bus, where `bluetoothd` is.
    public let connection: Connection
    /// How long each call to `org.bluez` may take.
    public let callTimeout: Duration

    private let player: PlayerInterface
    private let identity: String
    private let onEvent: @Sendable (Event) -> Void
    private let state = Mutex(State())

    private struct State {
        var registered: Set<ObjectPath> = []
        var follower: Task<Void, Never>?
        var started = false
    }

    private static let bluez: BusName = "org.bluez"
    private static let media: InterfaceName = "org.bluez.Media1"
    private static let objectManager: InterfaceName = "org.freedesktop.DBus.ObjectManager"

    /// Prepares the registration of `service`'s player on `connection` (the system bus).
    ///
    /// - Parameters:
    ///   - service: the player to register; its Player interface is exported on `connection` too.
    ///   - connection: a connection to the system bus, where `bluetoothd` is.
    ///   - callTimeout: how long each call to `org.bluez` may take before it counts as failed.
    ///   - onEvent: told of each registration, failure and loss, on no particular task.
    public init(
        service: MPRISService, connection: Connection, callTimeout: Duration = .seconds(5),
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        self.player = service.playerInterface
        self.identity = service.identity
        self.connection = connection
        self.callTimeout = callTimeout
        self.onEvent = onEvent
    }

    /// The adapters the player is registered with now.
    public var registeredAdapters: Set<ObjectPath> { state.withLock { $0.registered } }

    /// Exports the Player at ``objectPath`` and starts following the adapters; returns at once.
    /// Throws if the object cannot be exported (already started, or the path is taken).
    public func start() throws {
        try state.withLock { state in
            guard !state.started else { throw DBusError(.failed, "The Bluetooth registration is already started.") }
            try connection.export(player.interface, at: Self.objectPath)
            state.started = true
            state.follower = Task { [self] in await follow() }
        }
    }

    /// Stops following, unregisters from every adapter (each call bounded by ``callTimeout``,
    /// all at once) and removes the object. Idempotent.
    public func stop() async {
        let follower = state.withLock { state in
            defer { state.follower = nil }
            return state.follower
        }
        // The follower first: a registration it was making is then either done or given up.
        follower?.cancel()
        await follower?.value
        let registered = state.withLock { state in
            defer { state.registered = [] }
            return state.registered
        }
        await withTaskGroup(of: Void.self) { group in
            for adapter in registered {
                group.addTask { [self] in
                    do {
                        _ = try await connection.call(
                            .methodCall(
                                destination: Self.bluez, path: adapter, interface: Self.media,
                                member: "UnregisterPlayer",
                                body: [.objectPath(Self.objectPath)]),
                            timeout: callTimeout)
                        onEvent(.unregistered(adapter: adapter))
                    } catch {
                        onEvent(.failed(adapter: adapter, reason: "\(error)"))
                    }
                }
            }
        }
        let started = state.withLock { state in
            defer { state.started = false }
            return state.started
        }
        if started { connection.unexport(at: Self.objectPath) }
    }

    // MARK: Following the adapters

    /// What the follower hears, in order.
    private enum Input: Sendable {
        case owner(String)
        case added(sender: String, path: ObjectPath, interfaces: [String])
        case removed(sender: String, path: ObjectPath, interfaces: [String])
    }

    private func follow() async {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        await withTaskGroup(of: Void.self) { group in
            do {
                // Subscribed before asking who owns org.bluez, so no change falls in between. The
                // ObjectManager's signals are matched by path, not sender: bluetoothd may start later
                // or restart; only the current owner's are taken.
                let owners = try await connection.signals(
                    matching: MatchRule(
                        sender: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "NameOwnerChanged", arguments: [0: Self.bluez.rawValue]))
                let added = try await connection.signals(
                    matching: MatchRule(path: "/", interface: Self.objectManager, member: "InterfacesAdded"))
                let removed = try await connection.signals(
                    matching: MatchRule(path: "/", interface: Self.objectManager, member: "InterfacesRemoved"))
                // A stream ends with an error when the bus is lost: the follower then has nothing to follow.
                group.addTask {
                    do {
                        for try await message in owners {
                            if let (_, _, new) = try? message.decode(as: String.self, String.self, String.self) {
                                continuation.yield(.owner(new))
                            }
                        }
                    } catch {}
                }
                group.addTask {
                    do {
                        for try await message in added {
                            if let sender = message.sender,
                                let (path, interfaces) = try? message.decode(
                                    as: ObjectPath.self, [String: [String: Variant]].self)
                            {
                                continuation.yield(
                                    .added(sender: sender, path: path, interfaces: Array(interfaces.keys)))
                            }
                        }
                    } catch {}
                }
                group.addTask {
                    do {
                        for try await message in removed {
                            if let sender = message.sender,
                                let (path, interfaces) = try? message.decode(as: ObjectPath.self, [String].self)
                            {
                                continuation.yield(.removed(sender: sender, path: path, interfaces: interfaces))
                            }
                        }
                    } catch {}
                }
                let owner = try await connection.nameOwner(of: Self.bluez)
                continuation.yield(.owner(owner?.rawValue ?? ""))
            } catch {
                if !Task.isCancelled { onEvent(.unavailable(reason: "\(error)")) }
                group.cancelAll()
                return
            }
            var owner = ""
            for await input in inputs {
                if Task.isCancelled { break }
                switch input {
                case .owner(let new):
                    guard new != owner else { continue }
                    owner = new
                    // A new bluetoothd knows no player; a gone one has taken them with it.
                    for adapter in state.withLock({ $0.registered }) { onEvent(.lost(adapter: adapter)) }
                    state.withLock { $0.registered = [] }
                    if !owner.isEmpty { await registerWithAdapters(of: owner) }
                case .added(let sender, let path, let interfaces):
                    if sender == owner, interfaces.contains(Self.media.rawValue) { await register(with: path) }
                case .removed(let sender, let path, let interfaces):
                    if sender == owner, interfaces.contains(Self.media.rawValue),
                        state.withLock({ $0.registered.remove(path) }) != nil
                    {
                        onEvent(.lost(adapter: path))
                    }
                }
            }
            group.cancelAll()
        }
        continuation.finish()
    }

    /// Asks `owner` (org.bluez) for its objects and registers with each adapter that has `Media1`.
    private func registerWithAdapters(of owner: String) async {
        let objects: [ObjectPath: [String: [String: Variant]]]
        do {
            let reply = try await connection.call(
                .methodCall(
                    destination: try BusName(validating: owner), path: "/", interface: Self.objectManager,
                    member: "GetManagedObjects"),
                timeout: callTimeout)
            objects = try reply.decode(as: [ObjectPath: [String: [String: Variant]]].self)
        } catch {
            if !Task.isCancelled { onEvent(.unavailable(reason: "\(error)")) }
            return
        }
        let adapters = objects.filter { $0.value[Self.media.rawValue] != nil }.keys.sorted { $0.rawValue < $1.rawValue }
        for adapter in adapters {
            if Task.isCancelled { return }
            await register(with: adapter)
        }
    }

    private func register(with adapter: ObjectPath) async {
        guard state.withLock({ !$0.registered.contains(adapter) && $0.registered.count < Self.maximumAdapters })
        else { return }
        do {
            _ = try await connection.call(
                .methodCall(
                    destination: Self.bluez, path: adapter, interface: Self.media, member: "RegisterPlayer",
                    body: [.objectPath(Self.objectPath), registrationProperties]),
                timeout: callTimeout)
        } catch let error as DBusError where error.name.rawValue == "org.bluez.Error.AlreadyExists" {
            // Registered before (by a call that timed out here but went through there).
        } catch {
            if !Task.isCancelled { onEvent(.failed(adapter: adapter, reason: "\(error)")) }
            return
        }
        state.withLock { _ = $0.registered.insert(adapter) }
        onEvent(.registered(adapter: adapter))
    }

    /// The Player's properties as BlueZ reads them at registration, and `Identity`, the name a
    /// car shows (not a Player property, so mpris-proxy cannot pass it on).
    private var registrationProperties: DBusValue {
        let entries: [(String, DBusValue)] = [
            ("Identity", .string(identity)),
            ("PlaybackStatus", .string(player.playbackStatus.value)),
            ("LoopStatus", .string(player.loopStatus.value)),
            ("Shuffle", .boolean(player.shuffle.value)),
            ("Position", .int64(player.positionMicroseconds)),
            ("Rate", .double(player.rate.value)),
            ("Volume", .double(player.volume.value)),
            ("Metadata", player.metadata.value.dbusValue),
            ("CanPlay", .boolean(player.canPlay.value)),
            ("CanPause", .boolean(player.canPause.value)),
            ("CanGoNext", .boolean(player.canGoNext.value)),
            ("CanGoPrevious", .boolean(player.canGoPrevious.value)),
            ("CanSeek", .boolean(player.canSeek.value)),
            ("CanControl", .boolean(player.canControl.value)),
        ]
        return .dictionary(
            key: .string, value: .variant, entries.map { .init(.string($0.0), .variant(Variant($0.1))) })
    }
}
