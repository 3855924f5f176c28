import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The library's browsable tree, served to remotes through a ``PlayableContentManager``.
///
/// The root has five tabs, always at the same index paths:
///
/// | index | tab | identifier | children |
/// | --- | --- | --- | --- |
/// | 0 | Artists | `artists` | artist → album → track |
/// | 1 | Albums | `albums` | album → track |
/// | 2 | Tracks | `tracks` | every track, by title |
/// | 3 | Playlists | `playlists` | playlist → its tracks and streams |
/// | 4 | Folders | `folders` | the tracks' folders: subfolders first, then tracks |
///
/// While the library has no tracks yet (indexing, or the folder cannot be read, or it holds
/// no music), the root has a sixth child, an informative row (neither playable nor a
/// container) saying why. It comes after the tabs in index-path order, so that the tabs keep
/// their index paths (``playlistLocations``), and the manager lists it first, as it lists every
/// informative row.
///
/// Identifiers are stable across rebuilds and unique among siblings: `artist:<name>`,
/// `album:<album artist>\u{1F}<album>`, `track:<track id>`, `playlist:<playlist id>`,
/// `folder:<relative folder>`, `stream:<url>`, and `status` for the informative row. A
/// playlist entry repeated in the same playlist gets `\u{1F}#<n>` after its identifier from the
/// second occurrence on.
///
/// Tracks are filed under their first album artist, else their first artist, else “Unknown
/// Artist”; a track without an album is on “Unknown Album”. Lists sort case-insensitively:
/// an artist's albums by release date (undated last), then title; an album's tracks by disc,
/// track number, then title.
///
/// Thread-safe. The tree is an immutable snapshot, precomputed when it is built; every read
/// takes it from under a lock and answers from memory in O(depth). ``update(tracks:playlists:)``
/// builds a new snapshot and swaps it in whole, so a reader never sees half of one.
public final class LibraryContent: PlayableContentDataSource {
    /// Whether the library can show its music yet; decides the root's informative row.
    public enum Status: Sendable, Hashable {
        /// Indexed; the tracks shown are the library's.
        case ready
        /// The first index is being built.
        case indexing
        /// The music cannot be shown, for the reason given (shown to the user as is).
        case unavailable(String)
    }

    /// The containers whose children MPRIS `Playlists` lists in the ``Layout/full`` layout:
    /// the Albums and Playlists tabs.
    public static let playlistLocations: [IndexPath] = Layout.full.playlistLocations

    /// The most rows the Recent tab keeps.
    public static let recentLimit = 20

    /// The tabs the root shows.
    public let layout: Layout
    /// ``layout``'s tabs, kept: every read of the tree needs them.
    let tabs: [Tab]

    /// The custom actions every playable row offers (see ``ContentItem/actions``).
    public let rowActions: [String]

    /// The identifier of the informative row.
    public static let statusIdentifier = "status"

    /// The library's name in the informative row (“No music found in ~/Music”).
    public let libraryName: String

    struct State {
        var model: LibraryContentModel
        var status: Status
        /// The containers changed by updates since the manager last asked.
        var changedContainers: Set<String> = []
        /// The Recent tab's rows' identifiers, the latest first.
        var recent: [String] = []
        /// Those of them the model has, as its rows: found again when either changes, since
        /// every read of the tree needs them.
        var recentRows: [Location] = []
    }

    /// The current snapshot and status; held only to copy them out.
    let state: Mutex<State>
    let artworkOf: @Sendable (Track) -> MediaItemArtwork?
    /// Which tracks remember where they were left: their rows show ``ContentItem/playbackProgress``.
    public let resumePolicy: ResumePolicy
    let progressOf: @Sendable (Track) -> Double?

    /// Builds the tree of `tracks` and `playlists`, kept in memory, with status
    /// ``Status/ready``: set ``Status/indexing`` before the first scan of an empty index.
    ///
    /// In release builds a 10,000-track library takes about 30 ms to build.
    ///
    /// - Parameters:
    ///   - libraryName: how the informative row names the library (a folder, usually).
    ///   - artwork: a track's cover, or nil. It is called each time an item is read (for an
    ///     album or artist, with the track whose cover stands for it), from any thread, so it
    ///     must be quick and must not read files: an embedded cover is
    ///     ``MediaItemArtwork/requested(identifier:load:)``, read when a remote shows it.
    ///   - resumePolicy: which tracks remember where they were left. Their rows show
    ///     `playbackProgress`, and the containers that list one show their children's progress
    ///     (``childItemsDisplayPlaybackProgress(at:)``); every other row's progress is nil.
    ///   - playbackProgress: how much of such a track was played, 0 to 1, or nil when it never
    ///     was; called as its row is read, from any thread, so it must answer from memory.
    public init(
        tracks: [Track], playlists: [Playlist], libraryName: String,
        artwork: @escaping @Sendable (Track) -> MediaItemArtwork?, resumePolicy: ResumePolicy = .none,
        playbackProgress: @escaping @Sendable (Track) -> Double? = { _ in nil }, layout: Layout = .full,
        rowActions: [String] = []
    ) {
        self.layout = layout
        self.tabs = layout.tabs
        self.rowActions = rowActions
        self.libraryName = libraryName
        self.artworkOf = artwork
        self.resumePolicy = resumePolicy
        self.progressOf = playbackProgress
        state = Mutex(
            State(
                model: LibraryContentModel(tracks: tracks, playlists: playlists, reader: nil, resumePolicy: resumePolicy),
                status: .ready))
    }

    /// Builds the tree of what `library`'s index holds now, with status ``Status/ready``.
    ///
    /// The tree keeps the tracks' paths and places, not the tracks: it reads a track's fields
    /// from the index when its row is shown, keeping the last few hundred, so a tree of
    /// 50,000 tracks costs a few megabytes. ``update(from:)`` rebuilds it after a scan.
    ///
    /// - Parameters: see ``init(tracks:playlists:libraryName:artwork:resumePolicy:playbackProgress:)``.
    /// - Throws: ``MusicLibraryError/index(_:)`` when the index cannot be read.
    public init(
        library: MusicLibrary, libraryName: String, artwork: @escaping @Sendable (Track) -> MediaItemArtwork?,
        resumePolicy: ResumePolicy = .none, playbackProgress: @escaping @Sendable (Track) -> Double? = { _ in nil },
        layout: Layout = .full, rowActions: [String] = []
    ) throws {
        self.layout = layout
        self.tabs = layout.tabs
        self.rowActions = rowActions
        self.libraryName = libraryName
        self.artworkOf = artwork
        self.resumePolicy = resumePolicy
        self.progressOf = playbackProgress
        let model = LibraryContentModel(
            tracks: try library.trackOutlines(), playlists: try library.playlists(), reader: Self.reader(of: library),
            resumePolicy: resumePolicy, fieldReader: Self.fieldReader(of: library))
        state = Mutex(State(model: model, status: .ready))
    }

    /// Reads tracks by identifier from `library`, in one transaction; nil for those gone, or
    /// for all when the index cannot be read.
    private static func reader(of library: MusicLibrary) -> @Sendable ([TrackRows.Key]) -> [Track?] {
        let covers = FolderCovers()
        return { keys in
            do { return try library.tracks(keys, covers: covers) } catch { return keys.map { _ in nil } }
        }
    }

    /// Builds the tree with covers given as URLs (see ``init(tracks:playlists:libraryName:artwork:)``).
    public convenience init(
        tracks: [Track], playlists: [Playlist], libraryName: String,
        artworkURL: @escaping @Sendable (Track) -> URL? = { _ in nil }
    ) {
        self.init(tracks: tracks, playlists: playlists, libraryName: libraryName) { artworkURL($0).map { .url($0) } }
    }

    /// Replaces the tree with one built from `tracks` and `playlists`, kept in memory.
    ///
    /// The new tree is built before it replaces the old one: readers see the old tree or the
    /// new one, never a mix. Call it between the manager's
    /// ``PlayableContentManager/beginUpdates()`` and ``PlayableContentManager/endUpdates()`` so
    /// that remotes hear of the change. Tracks repeating an earlier track's id are left out.
    ///
    /// The containers whose rows differ between the two trees are told to the manager when the
    /// batch ends (``changedContainerIdentifiers()``), so it reads again only those.
    public func update(tracks: [Track], playlists: [Playlist]) {
        replaceModel(
            with: LibraryContentModel(tracks: tracks, playlists: playlists, reader: nil, resumePolicy: resumePolicy))
    }

    /// Replaces the tree with one built from what `library`'s index holds now (a scan's
    /// result), reading rows from it as ``init(library:libraryName:artwork:)`` does; otherwise
    /// as ``update(tracks:playlists:)``.
    ///
    /// - Throws: ``MusicLibraryError/index(_:)`` when the index cannot be read; the tree is unchanged.
    public func update(from library: MusicLibrary) throws {
        apply(try prepareUpdate(from: library))
    }

    /// A tree read from a library's index and not shown yet: ``prepareUpdate(from:)`` makes it,
    /// ``apply(_:)`` shows it.
    public struct Update: Sendable {
        fileprivate let model: LibraryContentModel
    }

    /// Reads the tree `library`'s index holds now, without showing it: the part of
    /// ``update(from:)`` that takes time (at 50,000 tracks, about a second), to do before the
    /// manager's batch of updates, during which remotes' calls for rows not read yet wait.
    ///
    /// - Throws: ``MusicLibraryError/index(_:)`` when the index cannot be read.
    public func prepareUpdate(from library: MusicLibrary) throws -> Update {
        Update(
            model: LibraryContentModel(
                tracks: try library.trackOutlines(), playlists: try library.playlists(), reader: Self.reader(of: library),
                resumePolicy: resumePolicy, fieldReader: Self.fieldReader(of: library)))
    }

    /// Shows a tree read by ``prepareUpdate(from:)``, as ``update(tracks:playlists:)`` does:
    /// call it between the manager's ``PlayableContentManager/beginUpdates()`` and
    /// ``PlayableContentManager/endUpdates()``.
    public func apply(_ update: Update) {
        replaceModel(with: update.model)
    }

    /// Tells the manager, at the end of its batch of updates, that the progress of the tracks
    /// `ids` changed: the containers listing them (album, folder, the Tracks tab, playlists) are
    /// read again, and remotes hear `Updated` for them. Call it between the manager's
    /// ``PlayableContentManager/beginUpdates()`` and ``PlayableContentManager/endUpdates()``;
    /// tracks the tree does not have, or that do not remember their position, are ignored.
    /// O(ids), and O(playlist entries) when the library has playlists.
    public func playbackProgressChanged(ofTracks ids: some Sequence<Track.ID>) {
        let model = snapshot.0
        let tracks = Set(ids.compactMap { model.rows.index(ofID: $0) }.filter { model.resumable.contains($0) })
        guard !tracks.isEmpty else { return }
        var containers: Set<String> = [Tab.tracks.identifier]
        for track in tracks {
            let place = model.places[track]
            containers.insert(model.albums[place.albumIndex].identifier)
            containers.insert(place.folder == 0 ? Tab.folders.identifier : model.folders[place.folder].identifier)
        }
        for playlist in model.resumable.playlists
        where model.playlists[playlist].entries.contains(where: {
            if case .track(let track) = $0.kind { tracks.contains(track) } else { false }
        }) {
            containers.insert(model.playlists[playlist].identifier)
        }
        state.withLock { $0.changedContainers.formUnion(containers) }
    }

    /// Whether the children of the container at `indexPath` show their progress: an album, a
    /// folder, a playlist or the Tracks tab that lists a track of ``resumePolicy``.
    public func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool {
        let (model, _, root) = snapshot
        switch Location(indexPath, in: model, root: root) {
        case .album(let album)?: return model.resumable.albums.contains(album)
        case .folder(let folder)?: return model.resumable.folders.contains(folder)
        case .tab(.folders)?: return model.resumable.folders.contains(0)
        case .playlist(let playlist)?: return model.resumable.playlists.contains(playlist)
        case .tab(.tracks)?: return model.resumable.inTracksTab
        default: return false
        }
    }

    private func replaceModel(with model: LibraryContentModel) {
        let (old, status, oldRoot) = snapshot
        let before = old.containerSignatures(showingInformative: oldRoot.informative, status: status)
        let after = model.containerSignatures(showingInformative: Self.showsInformative(model, status), status: status)
        var changed = Set(before.keys.filter { after[$0] != before[$0] })
        changed.formUnion(after.keys.filter { before[$0] == nil })
        // The Recent tab lists containers of the tree: any that changed, or went, changes it.
        let recent = state.withLock { $0.recent }
        if recent.contains(where: { changed.contains($0) || after[$0] == nil }) { changed.insert(Tab.recent.identifier) }
        state.withLock { state in
            state.model = model
            state.recentRows = Self.recentRows(state.recent, in: model)
            state.changedContainers.formUnion(changed)
            // The root's informative row depends on the status, which may have changed meanwhile.
            if state.status != status { state.changedContainers.insert("") }
        }
    }

    /// The containers changed by ``update(tracks:playlists:)`` and ``setStatus(_:)`` since the
    /// last call; see ``PlayableContentDataSource/changedContainerIdentifiers()``.
    public func changedContainerIdentifiers() -> Set<String>? {
        state.withLock { state in
            defer { state.changedContainers = [] }
            return state.changedContainers
        }
    }

    /// Whether the library can show its music yet. While it has no tracks and is not
    /// ``Status/ready``, the root shows an informative row saying so (“Indexing your music…”,
    /// or the reason it is unavailable); ready with neither tracks nor playlists, a row saying
    /// that no music was found in ``libraryName``.
    public var status: Status { state.withLock { $0.status } }

    /// Changes ``status``; like ``update(tracks:playlists:)``, call it inside a batch of the
    /// manager's updates so remotes see the informative row change.
    public func setStatus(_ status: Status) {
        state.withLock { state in
            if state.status != status { state.changedContainers.insert("") }
            state.status = status
        }
    }

    var snapshot: (LibraryContentModel, Status, RootRows) {
        state.withLock { state in (state.model, state.status, rootRows(state)) }
    }

    /// What the root and the Recent tab list in `state`.
    func rootRows(_ state: State) -> RootRows {
        RootRows(tabs: tabs, informative: Self.showsInformative(state.model, state.status), recent: state.recentRows)
    }

    /// Whether the tree has no tracks (it may still have playlists of streams).
    public var isEmpty: Bool { state.withLock { $0.model.rows.isEmpty } }

    // MARK: Identifiers

    /// The identifier of a track's item: `track:<id>`.
    public static func identifier(ofTrack id: Track.ID) -> String { LibraryContentModel.trackIdentifier(id) }

    /// The identifier of a playlist's item: `playlist:<id>`.
    public static func identifier(ofPlaylist id: Playlist.ID) -> String { LibraryContentModel.playlistIdentifier(id) }

    /// The identifier of a stream's item: `stream:<url>`.
    public static func identifier(ofStream url: URL) -> String { LibraryContentModel.streamIdentifier(url) }
}
