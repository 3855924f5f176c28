import AsyncSupport
import DBus
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A playlist as MPRIS describes it: the `(oss)` struct `Playlist` of
/// `org.mpris.MediaPlayer2.Playlists` (id, name, icon URI).
///
/// The id is derived from the playlist's path in the `PlayableContentManager`
/// (the keys from the root), so it stays the same when the playlist is
/// renamed, as the specification asks, and can be turned back into the path:
/// ``id(forContentPath:)`` and ``contentPath(forID:)``.
public struct MPRISPlaylist: DBusRepresentable, Sendable, Equatable {
    /// Unique among the playlists; a valid object path under ``idPrefix``.
    public var id: ObjectPath
    /// The playlist's title (`""` when it has none).
    public var name: String
    /// The URI of its icon: the artwork's URL, a `file://` URL of artwork bytes
    /// in the service's artwork cache, or `""` when there is none.
    public var icon: String

    public init(id: ObjectPath, name: String, icon: String) {
        self.id = id
        self.name = name
        self.icon = icon
    }

    public static var dbusType: DBusType { .structure([.objectPath, .string, .string]) }
    public var dbusValue: DBusValue { .structure([id.dbusValue, name.dbusValue, icon.dbusValue]) }
    public init(dbusValue: DBusValue) throws {
        let fields = try dbusValue.structureFields(count: 3)
        id = try ObjectPath(dbusValue: fields[0])
        name = try String(dbusValue: fields[1])
        icon = try String(dbusValue: fields[2])
    }

    /// Where playlist ids live: outside `/org/mpris`, beside the track ids.
    public static let idPrefix: ObjectPath = "/org/mprisbridge/Playlist"

    /// The id of the playlist at `path` (keys from the content root): one
    /// escaped path element per key (`ObjectPath.escapeElement(_:)`), so any
    /// key gives a valid id and different paths give different ids.
    public static func id(forContentPath path: [String]) -> ObjectPath {
        path.reduce(idPrefix) { $0.appending($1) }
    }

    /// The content path an id was made from, or `nil` for an object path that
    /// ``id(forContentPath:)`` does not produce (outside ``idPrefix``, the
    /// prefix itself, or an element that is not an escaped key).
    public static func contentPath(forID id: ObjectPath) -> [String]? {
        guard id != idPrefix, id.isDescendant(of: idPrefix) else { return nil }
        var path: [String] = []
        for element in id.elements.dropFirst(idPrefix.elements.count) {
            guard let key = ObjectPath.unescapeElement(element), ObjectPath.escapeElement(key) == element else {
                return nil
            }
            path.append(key)
        }
        return path
    }
}

/// MPRIS `Maybe_Playlist`, `(b(oss))`: a playlist, or none (`Valid` false and,
/// as the specification suggests, the id `/`).
struct MaybePlaylist: DBusRepresentable, Sendable, Equatable {
    var playlist: MPRISPlaylist?

    static var dbusType: DBusType { .structure([.boolean, MPRISPlaylist.dbusType]) }
    var dbusValue: DBusValue {
        .structure([
            (playlist != nil).dbusValue, (playlist ?? MPRISPlaylist(id: .root, name: "", icon: "")).dbusValue,
        ])
    }
    init(_ playlist: MPRISPlaylist?) { self.playlist = playlist }
    init(dbusValue: DBusValue) throws {
        let fields = try dbusValue.structureFields(count: 2)
        playlist = try Bool(dbusValue: fields[0]) ? MPRISPlaylist(dbusValue: fields[1]) : nil
    }
}

/// A way `GetPlaylists` can order the playlists: the specification's
/// `Playlist_Ordering` values this service can honour (it knows no play dates,
/// so never `Played`).
enum PlaylistOrdering: String, CaseIterable, Sendable {
    /// By name, ignoring case; equal names keep the `User` order.
    case alphabetical = "Alphabetical"
    /// Oldest ``ContentMedia/creationDate`` first; playlists without one follow, in `User` order.
    case created = "Created"
    /// Oldest ``ContentMedia/modificationDate`` first; playlists without one follow, in `User` order.
    case modified = "Modified"
    /// The content tree's order: the locations in the order configured, each
    /// one's playlists in the order the manager lists them.
    case user = "User"
}

/// `org.mpris.MediaPlayer2.Playlists`: the playable containers found in the
/// ``PlayableContentManager`` at the locations the app chose
/// (``MPRISConfiguration/playlistLocations``, such as its Albums and Playlists tabs).
///
/// What the specification requires, and how this maps it:
///
/// - A playlist is a `(oss)`: an id that stays the same when the playlist is
///   renamed (``MPRISPlaylist/id(forContentPath:)`` of its manager path), its
///   name (the item's title) and an icon URI (its artwork; `""` without).
/// - `PlaylistCount` (`u`): how many there are. `Orderings` (`as`): at least one
///   must be offered; here always `Alphabetical` and `User`, plus `Created` and
///   `Modified` while some playlist has such a date. Both are signalled with
///   their values when they change.
/// - `GetPlaylists(Index, MaxCount, Order, ReverseOrder)`: at most MaxCount
///   playlists from position Index of the ordering, reversed first when asked.
///   An ordering not in `Orderings` is `InvalidArgs` naming those that are.
///   Answered from the list kept here, never waiting on the data source.
/// - `ActivatePlaylist(PlaylistId)` starts the playlist through the manager's
///   delegate and replies once playback has started (the delegate returned) or
///   with the error it failed with. An id that is not a listed playlist is
///   `org.mprisbridge.Error.NoSuchContent` and starts nothing.
/// - `ActivePlaylist` (`(b(oss))`) is valid while one of the manager's
///   ``PlayableContentManager/nowPlayingIdentifiers`` is a listed playlist's
///   identifier (the one last activated, if several match); signalled with its value.
/// - `PlaylistChanged((oss))` for each listed playlist whose name or icon changed.
///
/// The list is read when the service is published and again after each
/// change of a location's listing (or of the remote's content limits), by one
/// task, one reload at a time; a burst of changes costs at most one more reload.
final class PlaylistsInterface: Sendable {
    static let name: InterfaceName = "org.mpris.MediaPlayer2.Playlists"

    let interface = Interface(PlaylistsInterface.name)
    private let content: PlayableContentManager
    private let locations: [IndexPath]
    private let artURL: @Sendable (MediaItemArtwork) -> URL?
    private let state = Mutex(State())

    /// `u`: the number of playlists listed.
    let playlistCount: Property<UInt32>
    /// `as`: the orderings `GetPlaylists` accepts now.
    let orderings: Property<[String]>
    /// `(b(oss))`: the playlist playing now, if a listed one is.
    let activePlaylist: Property<MaybePlaylist>
    /// `PlaylistChanged((oss) Playlist)`: a listed playlist's name or icon changed.
    let playlistChanged: SignalEmitter<MPRISPlaylist>

    /// One playlist as listed, with what orderings and `ActivePlaylist` need.
    struct Listed: Sendable, Equatable {
        var playlist: MPRISPlaylist
        /// Its path in the manager.
        var path: [String]
        var identifier: String
        var artwork: MediaItemArtwork?
        var creationDate: Date?
        var modificationDate: Date?
    }

    private struct State {
        /// In `User` order.
        var listed: [Listed] = []
        var indexByID: [ObjectPath: Int] = [:]
        /// The manager path of each location, `nil` for one not found; `nil`
        /// altogether before the first listing, when every change matters.
        var locationPaths: [[String]?]?
        /// The playlist activated last: `ActivePlaylist` prefers it when several match.
        var activated: ObjectPath?
        var observation: Observation?
        var reloadRequests: AsyncStream<Void>.Continuation?
        /// Counts ``start()``s, so a reload still running from an earlier publication shows nothing.
        var generation = 0
    }

    /// - Parameters:
    ///   - locations: index paths of the containers whose playable child containers are the playlists.
    ///   - artURL: resolves a playlist's artwork to its icon URL (the service's artwork cache for bytes).
    init(
        content: PlayableContentManager, locations: [IndexPath],
        artURL: @escaping @Sendable (MediaItemArtwork) -> URL?
    ) {
        self.content = content
        self.locations = locations
        self.artURL = artURL
        let interface = self.interface

        playlistCount = interface.property("PlaylistCount", UInt32(0))
        orderings = interface.property("Orderings", Self.orderings(for: []).map(\.rawValue))
        activePlaylist = interface.property("ActivePlaylist", MaybePlaylist(nil))
        playlistChanged = interface.signal("PlaylistChanged", arguments: ["Playlist"], of: MPRISPlaylist.self)

        // Methods capture self weakly: the interface, which self owns, keeps them.

        // ActivatePlaylist(PlaylistId): starts playing the playlist; the specification requires
        // it of every player serving the interface. An id that names no playlist is an error
        // (NoSuchContent); the reply comes once the first track plays (or its start failed).
        interface.method("ActivatePlaylist", arguments: ["PlaylistId"]) { [weak self] (id: ObjectPath) async throws in
            guard let self else { throw DBusError(.failed, "The player is shutting down.") }
            try await self.activate(id)
        }
        // GetPlaylists(Index, MaxCount, Order, ReverseOrder): a page of the playlists, in one of
        // the Orderings (another order is InvalidArgs), reversed on request; MaxCount 0 is none.
        interface.method(
            "GetPlaylists", arguments: ["Index", "MaxCount", "Order", "ReverseOrder"], results: ["Playlists"]
        ) { [weak self] (index: UInt32, maxCount: UInt32, order: String, reverse: Bool) throws -> [MPRISPlaylist] in
            try self?.playlists(from: Int(index), maximum: Int(maxCount), order: order, reversed: reverse) ?? []
        }
    }

    // MARK: Following the manager

    /// Starts observing the manager and lists the playlists; returns once the
    /// first listing is shown (a location still loading after the manager's
    /// ``PlayableContentManager/loadingDeadline`` is listed as far as it is, and again when it has loaded).
    func start() async {
        let (requests, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // Observing first, so no change falls between the first listing and the observation.
        let observation = content.observe { [weak self] change in self?.contentChanged(change) }
        let generation = state.withLock { state in
            state.observation = observation
            state.reloadRequests = continuation
            state.locationPaths = nil
            state.generation += 1
            return state.generation
        }
        await reload(generation)
        Task { [weak self] in
            for await _ in requests { await self?.reload(generation) }
        }
    }

    /// Stops observing the manager; the list shown stays as it is.
    func stop() {
        let (observation, requests) = state.withLock { state in
            defer {
                state.observation = nil
                state.reloadRequests = nil
            }
            return (state.observation, state.reloadRequests)
        }
        observation?.cancel()
        requests?.finish()
    }

    /// Called on the thread that changed the manager: decides quickly, and leaves the listing to the task.
    private func contentChanged(_ change: ContentChange) {
        switch change {
        case .nowPlayingChanged: refreshActivePlaylist()
        case .contextChanged: requestReload()
        case .containersUpdated(let paths):
            // A location's rows changed, or something above it (it may have moved or gone).
            let matters = state.withLock { state in
                guard let locationPaths = state.locationPaths else { return true }
                return locationPaths.contains { location in
                    guard let location else { return true }
                    return paths.contains { location.starts(with: $0) }
                }
            }
            if matters { requestReload() }
        }
    }

    private func requestReload() {
        _ = state.withLock { $0.reloadRequests }?.yield()
    }

    /// Lists the playlists from the manager and shows the result, unless the
    /// service was published again meanwhile (`generation` is no longer current).
    private func reload(_ generation: Int) async {
        var found: [ContentEntry] = []
        var locationPaths: [[String]?] = []
        for location in locations {
            guard let entry = content.entry(atIndexPath: location), entry.item.isContainer else {
                locationPaths.append(nil)
                continue
            }
            locationPaths.append(entry.path)
            guard let listing = try? await content.listChildren(of: entry.path, kind: .containers, prefetch: false) else { continue }
            found += listing.entries.filter { $0.item.isContainer && $0.item.isPlayable && !$0.isLoadingPlaceholder }
        }
        let previous = state.withLock { state in state.indexByID.mapValues { state.listed[$0] } }
        var listed: [Listed] = []
        var ids: Set<ObjectPath> = []
        for entry in found {
            let id = MPRISPlaylist.id(forContentPath: entry.path)
            // The same container reached from two locations is listed once.
            guard ids.insert(id).inserted else { continue }
            let artwork = entry.item.artwork
            let icon: String
            if let before = previous[id], before.artwork == artwork, artwork == nil || !before.playlist.icon.isEmpty {
                // Resolving bytes hashes and writes them: only when the artwork changed (or failed before).
                icon = before.playlist.icon
            } else {
                icon = artwork.flatMap(artURL)?.absoluteString ?? ""
            }
            listed.append(
                Listed(
                    playlist: MPRISPlaylist(id: id, name: entry.item.title ?? "", icon: icon), path: entry.path,
                    identifier: entry.item.identifier, artwork: artwork, creationDate: entry.item.media?.creationDate,
                    modificationDate: entry.item.media?.modificationDate))
        }
        show(listed, locationPaths: locationPaths, generation: generation)
    }

    /// Shows a new listing and announces the difference, under the lock so
    /// that announcements keep the order of the listings.
    private func show(_ listed: [Listed], locationPaths: [[String]?], generation: Int) {
        state.withLock { state in
            guard state.generation == generation else { return }
            // Playlists listed before and now whose name or icon differ (the id is the same by definition).
            let changed = listed.compactMap { new -> MPRISPlaylist? in
                guard let index = state.indexByID[new.playlist.id], state.listed[index].playlist != new.playlist else {
                    return nil
                }
                return new.playlist
            }
            state.listed = listed
            state.indexByID = Dictionary(uniqueKeysWithValues: listed.enumerated().map { ($1.playlist.id, $0) })
            state.locationPaths = locationPaths
            let active = Self.active(in: state, nowPlaying: content.nowPlayingIdentifiers)
            interface.batch {
                playlistCount.value = UInt32(clamping: listed.count)
                orderings.value = Self.orderings(for: listed).map(\.rawValue)
                activePlaylist.value = active
            }
            for playlist in changed { playlistChanged.emit(playlist) }
        }
    }

    /// Brings `ActivePlaylist` up to date with the manager's now-playing identifiers.
    private func refreshActivePlaylist() {
        // Read and set under the lock, so the last of concurrent refreshes shows the latest identifiers.
        state.withLock { state in
            activePlaylist.value = Self.active(in: state, nowPlaying: content.nowPlayingIdentifiers)
        }
    }

    private static func active(in state: State, nowPlaying: [String]) -> MaybePlaylist {
        guard !nowPlaying.isEmpty else { return MaybePlaylist(nil) }
        let playing = Set(nowPlaying)
        if let activated = state.activated, let index = state.indexByID[activated],
            playing.contains(state.listed[index].identifier)
        {
            return MaybePlaylist(state.listed[index].playlist)
        }
        return MaybePlaylist(state.listed.first { playing.contains($0.identifier) }?.playlist)
    }

    // MARK: Serving

    /// Plays the playlist `id`; returns once its playback has started.
    private func activate(_ id: ObjectPath) async throws {
        let found = state.withLock { state -> Listed? in
            guard let index = state.indexByID[id] else { return nil }
            state.activated = id
            return state.listed[index]
        }
        guard let found else {
            throw DBusError(CommandError.noSuchContent, "No playlist has the id '\(DBusError.excerpt(id.rawValue))'; GetPlaylists lists them.")
        }
        do {
            // A player that takes it over in its own order lets the next call (a pause, say) through meanwhile.
            try await content.initiatePlayback(at: found.path)
        } catch {
            throw CommandError.error(for: error, failing: "The player could not play the playlist '\(found.playlist.name)'")
        }
    }

    /// A page of `GetPlaylists`.
    private func playlists(from index: Int, maximum: Int, order: String, reversed: Bool) throws -> [MPRISPlaylist] {
        let listed = state.withLock { $0.listed }
        let offered = Self.orderings(for: listed)
        guard let ordering = PlaylistOrdering(rawValue: order), offered.contains(ordering) else {
            let names = offered.map(\.rawValue).joined(separator: ", ")
            throw DBusError(.invalidArgs, "Unknown playlist ordering '\(DBusError.excerpt(order))'; this player offers \(names).")
        }
        var ordered = Self.ordered(listed, by: ordering)
        if reversed { ordered.reverse() }
        let start = min(index, ordered.count)
        let end = start + min(maximum, ordered.count - start)
        return ordered[start..<end].map(\.playlist)
    }

    /// The orderings offered for `listed`: the date orderings only while some playlist has such a date.
    static func orderings(for listed: [Listed]) -> [PlaylistOrdering] {
        PlaylistOrdering.allCases.filter { ordering in
            switch ordering {
            case .alphabetical, .user: true
            case .created: listed.contains { $0.creationDate != nil }
            case .modified: listed.contains { $0.modificationDate != nil }
            }
        }
    }

    /// `listed` (in `User` order) in `ordering`; ties keep the `User` order.
    static func ordered(_ listed: [Listed], by ordering: PlaylistOrdering) -> [Listed] {
        /// Sorted by `key`, ties by position; those without a key last, in `User` order.
        func sorted<Key: Comparable>(by key: (Listed) -> Key?) -> [Listed] {
            let keyed = listed.enumerated().compactMap { position, playlist in
                key(playlist).map { (position: position, key: $0, playlist: playlist) }
            }
            let sorted = keyed.sorted { $0.key != $1.key ? $0.key < $1.key : $0.position < $1.position }
            return sorted.map(\.playlist) + listed.filter { key($0) == nil }
        }
        switch ordering {
        case .user: return listed
        case .alphabetical: return sorted { $0.playlist.name.lowercased() }
        case .created: return sorted(by: \.creationDate)
        case .modified: return sorted(by: \.modificationDate)
        }
    }
}
