import AsyncSupport
import DBus
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Publishes a `PlayableContentManager`'s tree on D-Bus as a MediaServer2
/// media server, so head units, Rygel (and through it UPnP renderers) and
/// other MediaServer2 consumers browse it.
///
/// ```swift
/// let tree = try MediaTreeService(name: "musicbox", displayName: "Music Box", content: content)
/// try await tree.publish(on: connection)   // org.gnome.UPnP.MediaServer2.musicbox
/// ```
///
/// Every node is an object under `/org/gnome/UPnP/MediaServer2/<name>`, at
/// the root path plus one element per key on its way from the root, each
/// escaped with `ObjectPath.escapeElement(_:)`, so any identifier yields a
/// valid, stable path. Objects are virtual: one subtree handler serves them
/// all, and nothing is built for a node until it is called.
///
/// Each node serves `org.gnome.UPnP.MediaObject2`; containers
/// `org.gnome.UPnP.MediaContainer2`, items `org.gnome.UPnP.MediaItem2`;
/// and every node the project's `org.mprisbridge.MediaNode1` (playable and
/// container flags, subtitle, progress, explicit and streaming flags, the
/// now-playing mark, `Play`, a text `Search`). The root also serves
/// `org.mprisbridge.MediaRoot1`: the content limits a head unit sets while
/// driving, which every listing honours. The contract is in `dbus/`.
///
/// Informative rows and the “loading” row are neither playable nor
/// containers; MediaServer2 has no such type, so they show as empty
/// containers (`Type` `container`, no children) with `Informative` or
/// `Loading` set in `MediaNode1`.
public final class MediaTreeService: Sendable {
    /// The bus name asked for: `org.gnome.UPnP.MediaServer2.<name>`.
    public let requestedName: BusName
    /// The entry point: `/org/gnome/UPnP/MediaServer2/<name>`.
    public let rootPath: ObjectPath
    /// The manager whose tree is served.
    public let content: PlayableContentManager
    let nodes: MediaTreeNodes
    /// The interfaces every node serves, declared once.
    let shared: MediaTreeNodes.SharedInterfaces
    private let state = Mutex(Published())

    private struct Published {
        var connection: Connection?
        var busName: BusName?
        var observation: Observation?
    }

    /// Prepares the service. `name` must be a valid bus-name element (letters,
    /// digits, `_`, not starting with a digit); `displayName` is the root's
    /// `DisplayName`, what a UPnP client lists as the server.
    /// - Throws: `InvalidArgs` when `name` cannot end a bus name or a path.
    public init(
        name: String, displayName: String, content: PlayableContentManager, artworkCacheDirectory: String? = nil
    ) throws {
        requestedName = try BusName(validating: "org.gnome.UPnP.MediaServer2.\(name)")
        rootPath = try ObjectPath(validating: "/org/gnome/UPnP/MediaServer2/\(name)")
        self.content = content
        let artwork = ArtworkCache(
            directory: artworkCacheDirectory ?? ArtworkCache.defaultDirectory(environment: MPRISService.environment(["XDG_CACHE_HOME", "HOME"])))
        nodes = MediaTreeNodes(rootPath: rootPath, displayName: displayName, content: content, artwork: artwork)
        shared = MediaTreeNodes.SharedInterfaces(nodes)
    }

    /// The bus name owned after ``publish(on:)``.
    public var busName: BusName? { state.withLock { $0.busName } }

    /// Serves the tree on `connection` and takes the bus name. Returns the name owned.
    @discardableResult
    public func publish(on connection: Connection) async throws -> BusName {
        let nodes = self.nodes
        let shared = self.shared
        try connection.exportSubtree(
            at: rootPath, ordering: .concurrent,
            children: { path in nodes.childElements(of: path) },
            object: { path in nodes.interfaces(at: path, shared: shared) })
        let observation = content.observe { [weak self] change in self?.announce(change) }
        state.withLock {
            $0.connection = connection
            $0.observation = observation
        }
        do {
            let reply = try await connection.requestName(requestedName, flags: [.doNotQueue])
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                throw DBusError(.objectPathInUse, "The bus name '\(requestedName)' is owned by another process")
            }
            state.withLock { $0.busName = requestedName }
            return requestedName
        } catch {
            await unpublish()
            throw error
        }
    }

    /// Releases the name and removes the tree.
    public func unpublish() async {
        let published = state.withLock { state in
            defer { state = Published() }
            return state
        }
        published.observation?.cancel()
        guard let connection = published.connection else { return }
        if let name = published.busName { _ = try? await connection.releaseName(name) }
        connection.unexportSubtree(at: rootPath)
    }

    private func announce(_ change: ContentChange) {
        guard let connection = state.withLock({ $0.connection }) else { return }
        switch change {
        case .containersUpdated(let paths):
            for path in paths {
                try? connection.emitSignal(
                    path: nodes.objectPath(for: path), interface: MediaTreeNodes.container, member: "Updated")
            }
        case .nowPlayingChanged(let paths):
            for path in paths where !path.isEmpty {
                try? connection.emitPropertiesChanged(
                    at: nodes.objectPath(for: path), interface: shared.node, changed: ["NowPlaying"])
            }
        case .contextChanged(let context):
            try? connection.send(
                .propertiesChanged(
                    path: rootPath, interface: MediaTreeNodes.root,
                    changed: MediaTreeNodes.contextProperties(context)))
        }
    }
}

