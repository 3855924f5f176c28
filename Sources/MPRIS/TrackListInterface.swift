import DBus
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `org.mpris.MediaPlayer2.TrackList`: the play queue of the now-playing
/// centre (``NowPlayingInfoCenter/playbackQueue``) and the three queue commands.
///
/// Exported only when ``MPRISConfiguration/hasTrackList`` is true (the root
/// interface's `HasTrackList` says so). What the specification requires, and
/// how this maps it:
///
/// - Track ids are unique within the list and never `…/TrackList/NoTrack`:
///   each entry's id is ``Metadata/trackID(forIdentifier:)`` of its
///   ``NowPlayingInfo/effectiveIdentifier``, the same id the Player's
///   `Metadata` gives the current item. An entry whose id repeats an earlier
///   one is not shown (the app broke the queue's uniqueness rule).
/// - `Tracks` (`ao`) is the ids in play order. Its changes are announced by
///   invalidation only (`EmitsChangedSignal` = `invalidates`); clients follow
///   the list with the signals below.
/// - `CanEditTracks` (`b`) is true while the add and remove commands are both
///   available. While false, `AddTrack` and `RemoveTrack` have no effect.
/// - The queue may be a window of a longer one (``QueuePlayer`` shows the
///   entries around the current one): the list is what the centre shows, and
///   ids outside it are not in the list.
/// - Signals come from comparing the list shown before with the queue now,
///   after every change of the queue. Edits get a signal each: an entry
///   inserted is `TrackAdded(Metadata, AfterTrack)` (AfterTrack `NoTrack`
///   for the start), one removed is `TrackRemoved(TrackId)`, one whose item
///   fields changed in place is `TrackMetadataChanged(TrackId, Metadata)`
///   (TrackId the old id if the identifier changed, the metadata carrying the
///   new one); a window moving on by a track is one removal and one addition.
///   Anything else (a reorder, a shuffle, more than
///   ``TrackListChange/maximumEdits`` edits) is `TrackListReplaced(Tracks,
///   CurrentTrack)`, CurrentTrack being the Player's current `mpris:trackid`.
///   A queue equal to the one shown (playback fields such as the elapsed time
///   are not shown) sends nothing.
///
/// Thread safety: the list shown is updated and its signals emitted under one
/// lock, so signals go out in the order of the changes, and each describes
/// the step from the list the previous one left.
final class TrackListInterface: Sendable {
    static let name: InterfaceName = "org.mpris.MediaPlayer2.TrackList"

    let interface = Interface(TrackListInterface.name)
    private let commands: RemoteCommandCenter
    private let nowPlaying: NowPlayingInfoCenter
    private let shown: ShownQueue

    /// The ids of the queue's entries, in play order; invalidated (never sent) on each change.
    let tracks: Property<[ObjectPath]>
    /// Whether remotes may add and remove entries: both queue-editing commands are available.
    let canEditTracks: Property<Bool>
    /// `TrackListReplaced(ao Tracks, o CurrentTrack)`: the whole list changed.
    let trackListReplaced: SignalEmitter<[ObjectPath], ObjectPath>
    /// `TrackAdded(a{sv} Metadata, o AfterTrack)`: one entry inserted after AfterTrack (`NoTrack`: at the start).
    let trackAdded: SignalEmitter<Metadata, ObjectPath>
    /// `TrackRemoved(o TrackId)`: one entry removed.
    let trackRemoved: SignalEmitter<ObjectPath>
    /// `TrackMetadataChanged(o TrackId, a{sv} Metadata)`: one entry changed in place.
    let trackMetadataChanged: SignalEmitter<ObjectPath, Metadata>

    /// - Parameter artURL: resolves an entry's artwork to the URL `mpris:artUrl` shows.
    init(
        commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter,
        artURL: @escaping @Sendable (MediaItemArtwork) -> URL?
    ) {
        self.commands = commands
        self.nowPlaying = nowPlaying
        let shown = ShownQueue(artURL: artURL)
        self.shown = shown
        let interface = self.interface

        // MARK: Methods

        /// The metadata of each id asked for that is in the list, in the order
        /// asked; unknown ids are skipped, as the specification says.
        interface.method("GetTracksMetadata", arguments: ["TrackIds"], results: ["Metadata"]) {
            (ids: [ObjectPath]) -> [Metadata] in
            ids.compactMap { id in shown.entry(for: id).map(shown.metadata(for:)) }
        }

        /// Adds a URI after AfterTrack (`NoTrack`: at the start) through the
        /// add command; SetAsCurrent also plays it. No effect while
        /// `CanEditTracks` is false. A URI that does not parse is
        /// `InvalidArgs`, one whose scheme the player cannot open
        /// `NotSupported` (as `OpenUri`). An AfterTrack that is not in the
        /// list is `InvalidArgs`: the add cannot go where the client asked,
        /// and a client waiting for `TrackAdded` should learn that it will not come.
        interface.method("AddTrack", arguments: ["Uri", "AfterTrack", "SetAsCurrent"]) {
            (uri: String, afterTrack: ObjectPath, setAsCurrent: Bool) async throws in
            guard Self.canEdit(commands) else { return }
            let url = try commands.openURLCommand.url(fromRemote: uri)
            var afterIdentifier: String?
            if afterTrack != Metadata.noTrack {
                guard let entry = shown.entry(for: afterTrack) else {
                    throw DBusError(.invalidArgs, "AfterTrack '\(DBusError.excerpt(afterTrack.rawValue))' is not in the track list.")
                }
                afterIdentifier = entry.identifier
            }
            try await commands.addItemToQueueCommand.performForRemote(
                AddItemToQueueCommandEvent(url: url, afterIdentifier: afterIdentifier, playsImmediately: setAsCurrent),
                action: "add \(DBusError.excerpt(uri)) to the track list")
        }

        /// Removes an entry through the remove command. No effect while
        /// `CanEditTracks` is false, or for an id not in the list (specification).
        interface.method("RemoveTrack", arguments: ["TrackId"]) { (id: ObjectPath) async throws in
            guard Self.canEdit(commands), let entry = shown.entry(for: id) else { return }
            try await commands.removeItemFromQueueCommand.performForRemote(
                RemoveItemFromQueueCommandEvent(identifier: entry.identifier), action: "remove the track")
        }

        /// Plays an entry through the play-item command; an id not in the list
        /// has no effect (specification).
        interface.method("GoTo", arguments: ["TrackId"]) { (id: ObjectPath) async throws in
            guard let entry = shown.entry(for: id) else { return }
            try await commands.playItemInQueueCommand.performForRemote(
                PlayItemInQueueCommandEvent(identifier: entry.identifier), action: "go to the track")
        }

        // MARK: Properties and signals

        tracks = interface.property("Tracks", [ObjectPath](), changes: .invalidates)
        canEditTracks = interface.property("CanEditTracks", false)
        trackListReplaced = interface.signal(
            "TrackListReplaced", arguments: ["Tracks", "CurrentTrack"], of: [ObjectPath].self, ObjectPath.self)
        trackAdded = interface.signal("TrackAdded", arguments: ["Metadata", "AfterTrack"], of: Metadata.self, ObjectPath.self)
        trackRemoved = interface.signal("TrackRemoved", arguments: ["TrackId"], of: ObjectPath.self)
        trackMetadataChanged = interface.signal(
            "TrackMetadataChanged", arguments: ["TrackId", "Metadata"], of: ObjectPath.self, Metadata.self)
    }

    private static func canEdit(_ commands: RemoteCommandCenter) -> Bool {
        commands.addItemToQueueCommand.isAvailable && commands.removeItemFromQueueCommand.isAvailable
    }

    /// Brings `CanEditTracks` up to date with the command centre.
    func refreshCommands() {
        canEditTracks.value = Self.canEdit(commands)
    }

    /// Brings the list shown up to date with the now-playing centre's queue
    /// and announces the step (see the type's documentation).
    ///
    /// Reads the queue afresh, under the lock, rather than trusting an
    /// update's value, so that updates observed out of order still end on
    /// the latest queue.
    func refreshQueue() {
        shown.update(to: { ShownQueue.entries(of: nowPlaying.playbackQueue) }) { changes, entries in
            tracks.value = entries.map(\.id)
            for change in changes {
                switch change {
                case .added(let entry, let after): trackAdded.emit(shown.metadata(for: entry), after)
                case .removed(let id): trackRemoved.emit(id)
                case .changed(let oldID, let entry): trackMetadataChanged.emit(oldID, shown.metadata(for: entry))
                case .replaced:
                    let current = nowPlaying.nowPlayingInfo.map { Metadata.trackID(forIdentifier: $0.effectiveIdentifier) }
                    trackListReplaced.emit(entries.map(\.id), current ?? Metadata.noTrack)
                }
            }
        }
    }
}

/// One entry of the list as shown: its track id and item fields.
struct TrackListEntry: Sendable, Equatable {
    let id: ObjectPath
    /// The queue entry with its playback fields reset (``NowPlayingInfo/itemFields``).
    let item: NowPlayingInfo

    init(_ info: NowPlayingInfo) {
        item = info.itemFields
        id = Metadata.trackID(forIdentifier: info.effectiveIdentifier)
    }

    /// The identifier the queue commands carry.
    var identifier: String { item.effectiveIdentifier }
}

/// How the list shown changed, as the TrackList signals tell it.
enum TrackListChange: Equatable {
    /// One entry inserted after the entry with that id (`NoTrack`: at the start).
    case added(TrackListEntry, after: ObjectPath)
    /// One entry removed.
    case removed(ObjectPath)
    /// One entry changed in place: the old id and the new entry.
    case changed(ObjectPath, TrackListEntry)
    /// Anything else.
    case replaced

    /// The most single-entry signals one change is told with; past it, the list is replaced.
    /// A queue window moving on by a track or two is a few removals and additions.
    static let maximumEdits = 8

    /// The signals that take a client from `old` to `new`, both free of duplicate ids: none
    /// when they are equal; for one entry changed in place, that change; for entries removed
    /// and inserted with every other entry kept in order (at most ``maximumEdits``), the
    /// removals, then the insertions front to back (each after an entry the client has by
    /// then), then the kept entries whose fields changed; otherwise (a reorder, a shuffle, a
    /// jump far along the queue) the list replaced.
    static func changes(from old: [TrackListEntry], to new: [TrackListEntry]) -> [TrackListChange] {
        guard old != new else { return [] }
        var prefix = 0
        while prefix < min(old.count, new.count), old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < min(old.count, new.count) - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] {
            suffix += 1
        }
        if old.count - prefix - suffix == 1, new.count - prefix - suffix == 1 {
            return [.changed(old[prefix].id, new[prefix])]
        }
        let difference = new.map(\.id).difference(from: old.map(\.id))
        guard difference.count <= maximumEdits else { return [.replaced] }
        var removedIDs = Set<ObjectPath>()
        var changes: [TrackListChange] = []
        for case .remove(_, let id, _) in difference.removals {
            removedIDs.insert(id)
            changes.append(.removed(id))
        }
        var insertedIDs = Set<ObjectPath>()
        for case .insert(let offset, let id, _) in difference.insertions {
            // An id both removed and inserted moved: the order changed.
            guard !removedIDs.contains(id) else { return [.replaced] }
            insertedIDs.insert(id)
            changes.append(.added(new[offset], after: offset == 0 ? Metadata.noTrack : new[offset - 1].id))
        }
        let oldByID = Dictionary(uniqueKeysWithValues: old.map { ($0.id, $0) })
        for entry in new where !insertedIDs.contains(entry.id) && oldByID[entry.id] != entry {
            changes.append(.changed(entry.id, entry))
        }
        return changes.count <= maximumEdits ? changes : [.replaced]
    }
}

/// The list a TrackList shows, and the metadata built for its entries.
private final class ShownQueue: Sendable {
    private let shown = Mutex(Shown())
    /// Metadata by track id, with the item it was built from; only for entries shown.
    private let metadataCache = Mutex<[ObjectPath: (item: NowPlayingInfo, metadata: Metadata)]>([:])
    private let artURL: @Sendable (MediaItemArtwork) -> URL?

    private struct Shown {
        var entries: [TrackListEntry] = []
        /// Each entry by id, so a lookup does not scan a long queue.
        var byID: [ObjectPath: TrackListEntry] = [:]
    }

    init(artURL: @escaping @Sendable (MediaItemArtwork) -> URL?) {
        self.artURL = artURL
    }

    /// The entries of a queue, skipping any whose track id repeats an earlier one.
    static func entries(of queue: [NowPlayingInfo]) -> [TrackListEntry] {
        var seen = Set<ObjectPath>()
        return queue.compactMap { info in
            let entry = TrackListEntry(info)
            return seen.insert(entry.id).inserted ? entry : nil
        }
    }

    /// The entry shown with that id.
    func entry(for id: ObjectPath) -> TrackListEntry? {
        shown.withLock { $0.byID[id] }
    }

    /// Shows what `newEntries` returns, and runs `announce` with the change when
    /// there is one. Both run under the lock, so announcements keep the order
    /// of the changes and each starts from the list the previous one left.
    func update(
        to newEntries: () -> [TrackListEntry], announce: ([TrackListChange], [TrackListEntry]) -> Void
    ) {
        shown.withLock { shown in
            let new = newEntries()
            let changes = TrackListChange.changes(from: shown.entries, to: new)
            guard !changes.isEmpty else { return }
            shown.entries = new
            shown.byID = Dictionary(uniqueKeysWithValues: new.map { ($0.id, $0) })
            let byID = shown.byID
            metadataCache.withLock { cache in cache = cache.filter { byID[$0.key] != nil } }
            announce(changes, new)
        }
    }

    /// The entry's metadata, built as the Player's is (artwork through the cache) and kept while it is shown
    /// (one built for an entry removed meanwhile stays until the next change of the list).
    func metadata(for entry: TrackListEntry) -> Metadata {
        if let cached = metadataCache.withLock({ $0[entry.id].flatMap { $0.item == entry.item ? $0.metadata : nil } }) {
            return cached
        }
        let metadata = Metadata(entry.item, artURL: entry.item.artwork.flatMap(artURL))
        metadataCache.withLock { $0[entry.id] = (entry.item, metadata) }
        return metadata
    }
}
