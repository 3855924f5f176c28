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

    /// The root's tabs, in their order.
    public enum Tab: Int, Sendable, CaseIterable {
        case artists, albums, tracks, playlists, folders, recent

        /// The tab's identifier: `artists`, `albums`, `tracks`, `playlists`, `folders` or `recent`.
        public var identifier: String {
            switch self {
            case .artists: "artists"
            case .albums: "albums"
            case .tracks: "tracks"
            case .playlists: "playlists"
            case .folders: "folders"
            case .recent: "recent"
            }
        }

        /// The tab's title.
        public var title: String {
            switch self {
            case .artists: "Artists"
            case .albums: "Albums"
            case .tracks: "Tracks"
            case .playlists: "Playlists"
            case .folders: "Folders"
            case .recent: "Recent"
            }
        }

        /// Where the tab is in the ``Layout/full`` layout: `[rawValue]`.
        public var indexPath: IndexPath { IndexPath(index: rawValue) }
    }

    /// Which tabs the root shows, in which order.
    public enum Layout: String, Sendable, CaseIterable {
        /// Every tab: Artists, Albums, Tracks, Playlists, Folders, Recent (each at its
        /// ``Tab/indexPath``).
        case full
        /// The four tabs a car shows (Android Automotive lists at most four): Recent, Artists,
        /// Albums, Playlists. A track is reached through its album.
        case car

        /// The root's tabs, in their order.
        public var tabs: [Tab] {
            switch self {
            case .full: [.artists, .albums, .tracks, .playlists, .folders, .recent]
            case .car: [.recent, .artists, .albums, .playlists]
            }
        }

        /// Where `tab` is in this layout; nil when the layout does not show it.
        public func indexPath(of tab: Tab) -> IndexPath? { tabs.firstIndex(of: tab).map { IndexPath(index: $0) } }

        /// The containers whose children MPRIS `Playlists` lists: the Albums and Playlists tabs.
        public var playlistLocations: [IndexPath] { [.albums, .playlists].compactMap(indexPath(of:)) }
    }

    /// The containers whose children MPRIS `Playlists` lists in the ``Layout/full`` layout:
    /// the Albums and Playlists tabs.
    public static let playlistLocations: [IndexPath] = Layout.full.playlistLocations

    /// The most rows the Recent tab keeps.
    public static let recentLimit = 20

    /// The tabs the root shows.
    public let layout: Layout
    /// ``layout``'s tabs, kept: every read of the tree needs them.
    private let tabs: [Tab]

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
    private let artworkOf: @Sendable (Track) -> MediaItemArtwork?
    /// Which tracks remember where they were left: their rows show ``ContentItem/playbackProgress``.
    public let resumePolicy: ResumePolicy
    private let progressOf: @Sendable (Track) -> Double?

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
    private static func reader(of library: MusicLibrary) -> @Sendable ([Track.ID]) -> [Track?] {
        { ids in
            do { return try library.tracks(identifiedBy: ids) } catch { return ids.map { _ in nil } }
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
        replaceModel(
            with: LibraryContentModel(
                tracks: try library.trackOutlines(), playlists: try library.playlists(), reader: Self.reader(of: library),
                resumePolicy: resumePolicy, fieldReader: Self.fieldReader(of: library)))
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

    private var snapshot: (LibraryContentModel, Status, RootRows) {
        state.withLock { state in (state.model, state.status, rootRows(state)) }
    }

    /// What the root and the Recent tab list in `state`.
    func rootRows(_ state: State) -> RootRows {
        RootRows(tabs: tabs, informative: Self.showsInformative(state.model, state.status), recent: state.recentRows)
    }

    /// The Recent tab's identifiers found in `model`, as rows of it.
    static func recentRows(_ recent: [String], in model: LibraryContentModel) -> [Location] {
        recent.compactMap { recentRow($0, in: model) }
    }

    /// The row `identifier` names when it is a container the Recent tab can list (an album, a
    /// playlist, an artist, a folder below the library's), else nil.
    static func recentRow(_ identifier: String, in model: LibraryContentModel) -> Location? {
        if let album = model.albumByIdentifier[identifier] { return .album(album) }
        if let playlist = model.playlistByIdentifier[identifier] { return .playlist(playlist) }
        if let artist = model.artistByIdentifier[identifier] { return .artist(artist) }
        if let folder = model.folderByIdentifier[identifier], folder != 0 { return .folder(folder) }
        return nil
    }

    // MARK: Recently played

    /// The Recent tab's rows' identifiers, the latest first.
    public var recentlyPlayed: [String] { state.withLock { $0.recent } }

    /// Shows `identifiers` (the latest first) in the Recent tab, as saved from an earlier run;
    /// identifiers the tree does not have are kept, and shown once a rescan brings them.
    public func setRecentlyPlayed(_ identifiers: [String]) {
        state.withLock { state in
            let kept = Array(identifiers.prefix(Self.recentLimit))
            if kept != state.recent { state.changedContainers.insert(Tab.recent.identifier) }
            state.recent = kept
            state.recentRows = Self.recentRows(kept, in: state.model)
        }
    }

    /// Puts what played first in the Recent tab: the container it was started from, else the
    /// album of the track. `nowPlaying` is what the tree marks as playing (the playing row and
    /// the containers it was started from, outermost first); rows of neither kind are ignored.
    /// Call it between the manager's ``PlayableContentManager/beginUpdates()`` and
    /// ``PlayableContentManager/endUpdates()``. Returns the Recent tab's identifiers when they
    /// changed (to be saved), else nil.
    @discardableResult
    public func notePlayed(_ nowPlaying: [String]) -> [String]? {
        state.withLock { state -> [String]? in
            let model = state.model
            var played = nowPlaying.first { Self.recentRow($0, in: model) != nil }
            if played == nil, let row = nowPlaying.last, row.hasPrefix("track:"),
                let track = model.rows.index(ofID: String(row.dropFirst("track:".count)))
            {
                played = model.albums[model.places[track].albumIndex].identifier
            }
            guard let played, state.recent.first != played else { return nil }
            state.recent.removeAll { $0 == played }
            state.recent.insert(played, at: 0)
            if state.recent.count > Self.recentLimit { state.recent.removeLast(state.recent.count - Self.recentLimit) }
            state.recentRows = Self.recentRows(state.recent, in: model)
            state.changedContainers.insert(Tab.recent.identifier)
            return state.recent
        }
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

    // MARK: PlayableContentDataSource

    /// The number of children of the container at `indexPath`; 0 for a leaf or a path that
    /// leads nowhere. O(depth).
    public func numberOfChildItems(at indexPath: IndexPath) -> Int {
        let (model, _, root) = snapshot
        return Location(indexPath, in: model, root: root)?.childCount(in: model, root: root) ?? 0
    }

    /// The item at `indexPath`, or nil for a path that leads nowhere. O(depth).
    public func contentItem(at indexPath: IndexPath) -> ContentItem? {
        let (model, status, root) = snapshot
        guard let location = Location(indexPath, in: model, root: root) else { return nil }
        prefetchCovers(around: location, at: indexPath, in: model, root: root)
        var item = item(at: location, in: model, status: status)
        if case .folder = location, indexPath.count == 2,
            case .recent? = indexPath.first.flatMap({ root.tabs.indices.contains($0) ? root.tabs[$0] : nil })
        {
            // A folder the Recent tab lists is not under its parent's headings.
        } else {
            item?.groupTitle = Self.groupTitle(of: location, in: model)
        }
        return item.map(withActions)
    }

    /// An album's or artist's row shows the cover of a track standing for it: when a listing
    /// of albums or artists reaches a row whose track is not kept, the tracks of the rows after
    /// it in that listing are read with it, in one transaction.
    private func prefetchCovers(
        around location: Location, at indexPath: IndexPath, in model: LibraryContentModel, root: RootRows
    ) {
        guard let position = indexPath.last else { return }
        switch location {
        case .artist, .album: break
        default: return
        }
        // The row's position counts in its container's own order: the Artists and Albums tabs
        // and an artist list in the model's; the Recent tab does not.
        let parent = Location(indexPath.dropLast(), in: model, root: root)
        switch (location, parent) {
        case (.artist, .tab(.artists)?):
            let artists = model.artists[position..<min(model.artists.count, position + Self.rowsReadTogether)]
            model.rows.prefetch(artists.map(\.representative))
        case (.album, .artist(let artist)?):
            let albums = model.artists[artist].albums[position...].prefix(Self.rowsReadTogether)
            model.rows.prefetch(albums.map { model.albums[$0].representative })
        case (.album, .tab(.albums)?):
            let albums = position..<min(model.albums.count, position + Self.rowsReadTogether)
            model.rows.prefetch(albums.map { model.albums[$0].representative })
        default:
            return
        }
    }

    /// The item with `identifier`, for every identifier of the tree (see ``LibraryContent``);
    /// nil for any other. A track's item is the same wherever it is listed; a stream's is its
    /// first occurrence's.
    public func contentItem(forIdentifier identifier: String) async throws -> ContentItem? {
        item(forIdentifier: identifier).map(withActions)
    }

    /// `item` with ``rowActions`` when it is playable.
    private func withActions(_ item: ContentItem) -> ContentItem {
        guard item.isPlayable, !rowActions.isEmpty else { return item }
        var item = item
        item.actions = rowActions
        return item
    }

    private func item(forIdentifier identifier: String) -> ContentItem? {
        let (model, status, _) = snapshot
        if let tab = tabs.first(where: { $0.identifier == identifier }) {
            return item(at: .tab(tab), in: model, status: status)
        }
        if identifier == Self.statusIdentifier {
            return Self.showsInformative(model, status) ? item(at: .informative, in: model, status: status) : nil
        }
        guard let colon = identifier.firstIndex(of: ":") else { return nil }
        let value = String(identifier[identifier.index(after: colon)...])
        switch identifier[..<colon] {
        case "track":
            if let track = model.rows.index(ofID: value) { return trackItem(model, track, identifier: identifier) }
            guard let (id, _) = Self.splitOccurrence(value), let track = model.rows.index(ofID: id) else { return nil }
            return trackItem(model, track, identifier: identifier)
        case "stream":
            let first =
                model.streamByIdentifier[identifier]
                ?? Self.splitOccurrence(identifier).flatMap { model.streamByIdentifier[$0.0] }
            guard let (playlist, entry) = first else { return nil }
            var item = self.item(at: .playlistEntry(playlist, entry), in: model, status: status)
            item?.identifier = identifier
            return item
        case "artist":
            return model.artistByIdentifier[identifier].flatMap { item(at: .artist($0), in: model, status: status) }
        case "album":
            return model.albumByIdentifier[identifier].flatMap { item(at: .album($0), in: model, status: status) }
        case "playlist":
            return model.playlistByIdentifier[identifier].flatMap { item(at: .playlist($0), in: model, status: status) }
        case "folder":
            return model.folderByIdentifier[identifier].flatMap { item(at: .folder($0), in: model, status: status) }
        default: return nil
        }
    }

    /// A repeated playlist entry's identifier without its occurrence suffix, and the occurrence.
    private static func splitOccurrence(_ text: String) -> (String, Int)? {
        guard let range = text.ranges(of: LibraryContentModel.occurrenceSeparator).last,
            let occurrence = Int(text[range.upperBound...])
        else { return nil }
        return (String(text[..<range.lowerBound]), occurrence)
    }

    /// What every child of the container at `indexPath` is, when they are alike: items in the
    /// Tracks tab, an album, a playlist, a folder without subfolders; containers in the
    /// Artists and Albums tabs, an artist, a folder (or the Folders tab) of folders. A manager serves such a
    /// container, when it is large, page by page.
    public func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? {
        let (model, _, root) = snapshot
        let location = Location(indexPath, in: model, root: root)
        switch location {
        case .tab(.tracks)?, .album?, .playlist?: return .items
        case .tab(.artists)?, .tab(.albums)?, .artist?: return .containers
        case .tab(.folders)?, .folder?:
            let folder: Int = if case .folder(let index)? = location { index } else { 0 }
            let node = model.folders[folder]
            return node.subfolders.isEmpty ? .items : node.tracks.isEmpty ? .containers : nil
        default: return nil
        }
    }

    /// Where the row `identifier` is in the container at `indexPath`, found from the tree's
    /// indexes (a track's place in each container, an album's or artist's by identifier) in
    /// O(log n) or O(1), or by looking at a playlist's entries or an artist's albums; nil when
    /// it is not there.
    public func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        let (model, _, root) = snapshot
        guard let location = Location(indexPath, in: model, root: root) else { return nil }
        switch location {
        case .playlist(let playlist):
            return model.playlists[playlist].entries.firstIndex { $0.identifier == identifier }
        case .tab(.artists):
            return model.artistByIdentifier[identifier]
        case .tab(.albums):
            return model.albumByIdentifier[identifier]
        case .artist(let artist):
            guard let album = model.albumByIdentifier[identifier] else { return nil }
            return model.artists[artist].albums.firstIndex(of: album)
        case .folder(let folder) where !identifier.hasPrefix("track:"):
            guard let child = model.folderByIdentifier[identifier] else { return nil }
            return model.folders[child].parent == folder ? model.folders[child].positionInParent : nil
        case .tab(.folders) where !identifier.hasPrefix("track:"):
            guard let child = model.folderByIdentifier[identifier] else { return nil }
            return model.folders[child].parent == 0 ? model.folders[child].positionInParent : nil
        default:
            break
        }
        let prefix = "track:"
        guard identifier.hasPrefix(prefix),
            let track = model.rows.index(ofID: String(identifier.dropFirst(prefix.count)))
        else { return nil }
        let place = model.places[track]
        switch location {
        case .tab(.tracks): return place.positionInTracksTab
        case .album(let album): return place.albumIndex == album ? place.positionInAlbum : nil
        case .folder(let folder):
            return place.folder == folder ? model.folders[folder].subfolders.count + place.positionInFolder : nil
        case .tab(.folders):
            return place.folder == 0 ? model.folders[0].subfolders.count + place.positionInFolder : nil
        default: return nil
        }
    }

    /// True: every container is read from memory and the index as soon as it is reached.
    public var loadsChildItemsAtOnce: Bool { true }

    /// True: see ``searchContent(matching:in:)``.
    public var supportsSearch: Bool { true }

    /// The rows below the container at `indexPath` that match `query`.
    ///
    /// About 1 ms for a text search of a 10,000-track library in release builds.
    ///
    /// At the root: the matching artists (in the Artists tab), then albums (in the Albums tab),
    /// then tracks (in the Tracks tab). Inside a container: the matching descendants, at their
    /// paths there, parents before their children. Conditions on the title, artist, album and
    /// kind are answered from text folded when the tree was built; any other field from the
    /// item, with ``ContentQuery/matches(_:)``.
    ///
    /// - Throws: ``ContentError/noSuchContent(_:)`` when nothing is at `indexPath`.
    public func searchContent(matching query: ContentQuery, in indexPath: IndexPath) async throws -> [IndexPath] {
        let (model, status, root) = snapshot
        guard let location = Location(indexPath, in: model, root: root) else {
            throw ContentError.noSuchContent("index path \(Array(indexPath))")
        }
        let search = LibrarySearch(query: query, model: model) { [self] location in
            item(at: location, in: model, status: status) ?? ContentItem(identifier: "")
        }
        if location == .root { return search.atRoot(layout: layout) }
        return search.below(location, at: indexPath, root: root)
    }

    // MARK: Rows

    /// Whether the root shows the informative row: no tracks, and not ready (or ready with
    /// nothing at all to show).
    static func showsInformative(_ model: LibraryContentModel, _ status: Status) -> Bool {
        guard model.rows.isEmpty else { return false }
        return status != .ready || model.playlists.isEmpty
    }

    func item(at location: Location, in model: LibraryContentModel, status: Status) -> ContentItem? {
        switch location {
        case .root:
            return nil
        case .informative:
            switch status {
            case .indexing:
                return .informative(
                    identifier: Self.statusIdentifier, title: "Indexing your music…", subtitle: libraryName,
                    problem: ContentProblem(.notReady))
            case .unavailable(let reason):
                return .informative(
                    identifier: Self.statusIdentifier, title: reason, subtitle: libraryName,
                    problem: ContentProblem(.contentUnavailable, resolution: Self.rescan))
            case .ready:
                return .informative(
                    identifier: Self.statusIdentifier, title: "No music found in \(libraryName)",
                    problem: ContentProblem(.noContent, resolution: Self.rescan))
            }
        case .tab(let tab):
            let (browsable, playable): (ContentStyle?, ContentStyle?) =
                switch tab {
                case .artists, .playlists: (.list, nil)
                case .albums, .recent: (.grid, nil)
                case .tracks: (nil, .list)
                case .folders: (.list, .list)
                }
            return ContentItem(
                identifier: tab.identifier, title: tab.title, isContainer: true, isPlayable: false,
                browsableChildrenStyle: browsable, playableChildrenStyle: playable)
        case .artist(let index):
            let artist = model.artists[index]
            return ContentItem(
                identifier: artist.identifier, title: artist.name,
                subtitle: Self.count(artist.albums.count, "album", "albums"),
                artwork: artwork(model, artist.representative), isContainer: true, isPlayable: true,
                media: ContentMedia(artist: artist.name), browsableChildrenStyle: .grid)
        case .album(let index):
            let album = model.albums[index]
            let artist = model.artists[album.artist].name
            return ContentItem(
                identifier: album.identifier, title: album.title, subtitle: artist,
                artwork: artwork(model, album.representative), isContainer: true, isPlayable: true,
                media: ContentMedia(artist: artist, album: album.title, date: album.date), playableChildrenStyle: .list)
        case .albumTrack(let album, let position):
            prefetch(model, model.albums[album].tracks, from: position)
            return trackItem(model, model.albums[album].tracks[position])
        case .tracksTabTrack(let position):
            prefetch(model, model.tracksByTitle, from: position)
            return trackItem(model, model.tracksByTitle[position])
        case .folderTrack(let folder, let position):
            prefetch(model, model.folders[folder].tracks, from: position)
            return trackItem(model, model.folders[folder].tracks[position])
        case .playlist(let index):
            let playlist = model.playlists[index]
            let allTracks = playlist.entries.allSatisfy { if case .track = $0.kind { true } else { false } }
            return ContentItem(
                identifier: playlist.identifier, title: playlist.name,
                subtitle: allTracks
                    ? Self.count(playlist.entries.count, "track", "tracks")
                    : Self.count(playlist.entries.count, "item", "items"),
                isContainer: true, isPlayable: true, media: ContentMedia(modificationDate: playlist.modified),
                playableChildrenStyle: .list)
        case .playlistEntry(let playlist, let position):
            let entries = model.playlists[playlist].entries
            let entry = entries[position]
            switch entry.kind {
            case .track(let track):
                // The entries after it in the playlist, read with it.
                let following = entries[position..<min(entries.count, position + Self.rowsReadTogether)]
                model.rows.prefetch(
                    [track] + following.compactMap { if case .track(let index) = $0.kind { index } else { nil } })
                return trackItem(model, track, identifier: entry.identifier)
            case .stream(let url, let title, _):
                return ContentItem(
                    identifier: entry.identifier, title: title ?? url.absoluteString, isStreamingContent: true,
                    isPlayable: true, media: ContentMedia(url: url))
            }
        case .folder(let index):
            let folder = model.folders[index]
            guard index != 0 else { return item(at: .tab(.folders), in: model, status: status) }
            return ContentItem(
                identifier: folder.identifier, title: folder.name, isContainer: true, isPlayable: true,
                browsableChildrenStyle: .list, playableChildrenStyle: .list)
        }
    }

    /// Track `index`'s item; nil when the index no longer has the track (a rescan removed it,
    /// and the tree listing it is about to be replaced).
    private func trackItem(_ model: LibraryContentModel, _ index: Int, identifier: String? = nil) -> ContentItem? {
        guard let track = model.rows.track(index) else { return nil }
        let progress = model.resumable.contains(index) ? progressOf(track) : nil
        let artist = LibraryContentModel.line(track.artists)
        let album = LibraryContentModel.albumText(track.album)
        let subtitle: String? =
            switch (artist, album) {
            case (let artist?, let album?): artist + " — " + album
            case (let artist?, nil): artist
            case (nil, let album?): album
            case (nil, nil): nil
            }
        return ContentItem(
            identifier: identifier ?? LibraryContentModel.trackIdentifier(track.id), title: track.title,
            subtitle: subtitle, artwork: artworkOf(track), playbackProgress: progress, isPlayable: true,
            media: ContentMedia(
                url: track.url, mimeType: track.mimeType, duration: track.duration,
                size: track.fileSize > 0 ? Int64(track.fileSize) : nil, artist: artist, album: album,
                genre: LibraryContentModel.line(track.genres), trackNumber: track.trackNumber,
                date: LibraryContentModel.albumText(track.releaseDate),
                modificationDate: track.modified > 0 ? Date(timeIntervalSince1970: Double(track.modified) / 1e9) : nil))
    }

    /// What an informative row offers when scanning again may help: `Rescan` is the media
    /// tree's method that asks the delegate to read the content again.
    static let rescan = ContentProblem.Resolution(action: "Rescan", label: "Scan again")

    /// A folder's subfolders and tracks are listed under two headings, when it has both.
    static func groupTitle(of location: Location, in model: LibraryContentModel) -> String? {
        switch location {
        case .folder(let folder):
            guard let parent = model.folders[folder].parent else { return nil }
            return model.folders[parent].tracks.isEmpty ? nil : "Folders"
        case .folderTrack(let folder, _):
            return model.folders[folder].subfolders.isEmpty ? nil : "Tracks"
        default:
            return nil
        }
    }

    /// How many rows after the one asked for are read with it: a listing's page.
    static let rowsReadTogether = 100

    /// Reads the tracks of `container` from `position` on (a page) in one go, if the first is
    /// not kept yet: a listing asks for them one after another.
    private func prefetch(_ model: LibraryContentModel, _ container: [Int], from position: Int) {
        model.rows.prefetch(container[position..<min(container.count, position + Self.rowsReadTogether)])
    }

    /// The cover of track `index`.
    private func artwork(_ model: LibraryContentModel, _ index: Int) -> MediaItemArtwork? {
        model.rows.track(index).flatMap(artworkOf)
    }

    private static func count(_ count: Int, _ singular: String, _ plural: String) -> String {
        "\(count) \(count == 1 ? singular : plural)"
    }
}

/// What the root lists: the layout's tabs, then the informative row when shown; and the
/// Recent tab's rows, found in the current model.
struct RootRows {
    let tabs: [LibraryContent.Tab]
    let informative: Bool
    let recent: [Location]
}

/// A row of the tree, as the model numbers it.
enum Location: Equatable {
    case root
    /// The root's informative row, after the tabs.
    case informative
    case tab(LibraryContent.Tab)
    case artist(Int)
    /// An album, in the Artists or the Albums tab.
    case album(Int)
    case albumTrack(album: Int, position: Int)
    case tracksTabTrack(Int)
    case playlist(Int)
    case playlistEntry(Int, Int)
    /// A folder; folder 0 is the root folder, listed as the Folders tab.
    case folder(Int)
    case folderTrack(folder: Int, position: Int)

    /// The row at `indexPath`, or nil when there is none.
    init?(_ indexPath: IndexPath, in model: LibraryContentModel, root: RootRows) {
        var location = Location.root
        for index in indexPath {
            guard let child = location.child(index, in: model, root: root) else { return nil }
            location = child
        }
        self = location
    }

    func child(_ index: Int, in model: LibraryContentModel, root: RootRows) -> Location? {
        guard index >= 0, index < childCount(in: model, root: root) else { return nil }
        switch self {
        case .root:
            return index < root.tabs.count ? .tab(root.tabs[index]) : .informative
        case .tab(let tab):
            switch tab {
            case .artists: return .artist(index)
            case .albums: return .album(index)
            case .tracks: return .tracksTabTrack(index)
            case .playlists: return .playlist(index)
            case .folders: return Location.folder(0).child(index, in: model, root: root)
            case .recent: return root.recent[index]
            }
        case .artist(let artist): return .album(model.artists[artist].albums[index])
        case .album(let album): return .albumTrack(album: album, position: index)
        case .playlist(let playlist): return .playlistEntry(playlist, index)
        case .folder(let folder):
            let subfolders = model.folders[folder].subfolders
            return index < subfolders.count
                ? .folder(subfolders[index]) : .folderTrack(folder: folder, position: index - subfolders.count)
        case .informative, .albumTrack, .tracksTabTrack, .playlistEntry, .folderTrack: return nil
        }
    }

    func childCount(in model: LibraryContentModel, root: RootRows) -> Int {
        switch self {
        case .root: return root.tabs.count + (root.informative ? 1 : 0)
        case .tab(let tab):
            switch tab {
            case .artists: return model.artists.count
            case .albums: return model.albums.count
            case .tracks: return model.tracksByTitle.count
            case .playlists: return model.playlists.count
            case .folders: return Location.folder(0).childCount(in: model, root: root)
            case .recent: return root.recent.count
            }
        case .artist(let artist): return model.artists[artist].albums.count
        case .album(let album): return model.albums[album].tracks.count
        case .playlist(let playlist): return model.playlists[playlist].entries.count
        case .folder(let folder): return model.folders[folder].subfolders.count + model.folders[folder].tracks.count
        case .informative, .albumTrack, .tracksTabTrack, .playlistEntry, .folderTrack: return 0
        }
    }
}
