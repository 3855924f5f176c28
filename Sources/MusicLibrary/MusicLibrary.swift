import Glibc
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A music folder's index: its audio files with their tags, duration and cover art, and its
/// playlists, persisted in an SQLite file so that a restart over an unchanged folder reads no file.
///
/// ```swift
/// let library = try MusicLibrary(root: "/home/me/Music", indexPath: "/home/me/.cache/mpris-bridge/index.sqlite")
/// let summary = try await library.scan()
/// for track in try library.tracks() { print(track.title) }
/// ```
///
/// Threading: every method may be called from any thread or task. Queries run on a connection of
/// their own, so they answer (with the last committed state) while a scan writes. One scan runs
/// at a time.
public final class MusicLibrary: Sendable {
    /// The music folder: an absolute path, normalised (no trailing slash, no `.` or `..`).
    public let root: String
    /// The index file.
    public let indexPath: String
    /// Why the index file found at ``indexPath`` was replaced (it was damaged or not a database)
    /// or is only read (see ``isReadOnly``), or nil when it opened cleanly. A replaced index is
    /// empty until the next scan.
    public let indexRecovery: String?
    /// Whether the index could only be opened for reading, as on a full or read-only disk: its
    /// tracks are served, and scans fail until it can be written again.
    public let isReadOnly: Bool
    /// Makes what reads the audio files TagLib cannot (see ``AudioFileDiscoverer``); nil when
    /// the library has none.
    let makeDiscoverer: AudioFileDiscovererFactory?

    /// The connection scans write with.
    let writer: Mutex<LibraryIndex>
    /// The connection queries read with.
    private let reader: Mutex<LibraryIndex>
    let isScanning = Atomic<Bool>(false)
    /// The last counts ``statistics()`` read, and the ``contentRevision`` they are true of.
    private let cachedStatistics = Mutex<(revision: Int, statistics: LibraryStatistics)?>(nil)

    /// Opens (creating if needed, with its parent folders) the index at `indexPath` for the music
    /// folder `root`. Relative paths are taken from the working directory.
    ///
    /// An index file that is damaged or not a database is replaced by an empty one, and
    /// ``indexRecovery`` says so; an index made for another root, or by another version of the
    /// library, is emptied too. Neither is an error: the next ``scan(progress:)`` rebuilds it.
    /// The root need not exist yet.
    ///
    /// An index that exists but cannot be written (the disk is full or read-only) is opened
    /// for reading: see ``isReadOnly``. `indexPath` `:memory:` is an empty index in memory that
    /// takes no scan, for a library that has nowhere to keep one.
    ///
    /// `discoverer` makes what reads the audio files TagLib cannot, for a scan (one per
    /// reading thread, when it first needs one); without it those files are failures.
    ///
    /// Throws ``MusicLibraryError/cannotCreateFolder(_:reason:)`` or
    /// ``MusicLibraryError/index(_:)`` when the index cannot be opened at all (no permission).
    public init(root: String, indexPath: String, discoverer: AudioFileDiscovererFactory? = nil) throws {
        let root = LibraryPath.absolute(root)
        let inMemory = indexPath == ":memory:"
        let indexPath = inMemory ? indexPath : LibraryPath.absolute(indexPath)
        if !inMemory, let slash = indexPath.lastIndex(of: "/"), slash != indexPath.startIndex,
            access(String(indexPath[..<slash]), F_OK) != 0
        {
            try LibraryPath.makeFolders(String(indexPath[..<slash]))
        }
        do {
            let (writer, recovery) = try LibraryIndex.open(path: indexPath, root: root)
            // Each connection to `:memory:` is a database of its own: the reader's stays empty, so
            // an index in memory takes no scan.
            let reader =
                inMemory ? try LibraryIndex.open(path: indexPath, root: root).index : try LibraryIndex(path: indexPath, root: root)
            self.writer = Mutex(writer)
            self.reader = Mutex(reader)
            indexRecovery = recovery
            isReadOnly = inMemory
        } catch where error.isUnwritable && !inMemory && access(indexPath, R_OK) == 0 {
            // The index is a cache: on a full or read-only disk, serve what it holds.
            do {
                self.writer = Mutex(try LibraryIndex.openReadOnly(path: indexPath, root: root))
                self.reader = Mutex(try LibraryIndex.openReadOnly(path: indexPath, root: root))
            } catch {
                throw MusicLibraryError.index("\(indexPath) cannot be written (\(error.message)) nor read")
            }
            indexRecovery = "the index \(indexPath) cannot be written (\(error.message)): its tracks are served, and the library is not rescanned until it can be"
            isReadOnly = true
        } catch {
            throw MusicLibraryError.index(error.description)
        }
        self.root = root
        self.indexPath = indexPath
        self.makeDiscoverer = discoverer
    }

    // MARK: Queries

    /// Every track, ordered by album artist (the first artist when there is none), album, disc
    /// number, track number and title (text case-insensitively, absent values first), then path.
    ///
    /// Reads the index only; about 10,000 tracks a few milliseconds.
    public func tracks() throws -> [Track] {
        try read { try $0.tracks() }
    }

    /// The tracks with the identifiers `ids`, in the order asked; unknown identifiers are skipped.
    public func tracks(ids: [Track.ID]) throws -> [Track] {
        try tracks(identifiedBy: ids).compactMap { $0 }
    }

    /// The tracks with the identifiers `ids`, in order, nil for those not indexed: read in one
    /// transaction, as the tree reads a page of rows.
    public func tracks(identifiedBy ids: [Track.ID]) throws -> [Track?] {
        try read { try $0.tracks(paths: ids) }
    }

    /// The tracks `keys` name, in order, nil for those not indexed: read by rowid where known.
    func tracks(_ keys: [TrackRows.Key], covers: FolderCovers) throws -> [Track?] {
        try read { try $0.tracks(keys: keys, covers: covers) }
    }

    /// The track with the identifier `id` (its path relative to ``root``), or nil.
    public func track(id: Track.ID) throws -> Track? {
        try read { try $0.track(path: id) }
    }

    /// The `file:` URL of the track `id` (its path relative to ``root``), as its ``Track/url``
    /// is made; whether it is indexed is not checked.
    public func fileURL(ofTrack id: Track.ID) -> URL {
        LibraryPath.fileURL(root, id)
    }

    /// Calls `body` with every track's path and its value of `field` (text for dates and genres,
    /// a number for track numbers and lengths in nanoseconds), in no particular order.
    func forEachTrack(
        _ field: TrackSortField, _ body: (_ path: String, _ text: String?, _ number: Int64?) -> Void
    ) throws {
        try read { try $0.forEachTrack(field, body) }
    }

    /// Every track outlined for building the browsable tree, in the order of ``tracks()``.
    func trackOutlines() throws -> [TrackOutline] {
        try read { try $0.trackOutlines() }
    }

    /// Every track's identifier, in the order of ``tracks()``: what a queue of the whole library
    /// needs, without reading the tracks.
    public func trackIDsInOrder() throws -> [Track.ID] {
        try read { try $0.trackPathsInOrder() }
    }

    /// The identifiers of every indexed track: which entries of a saved queue still exist,
    /// told without reading their tracks.
    public func trackIDs() throws -> Set<Track.ID> {
        try read { try $0.trackPaths() }
    }

    /// The track of a `file:` URL inside the library, or nil (another scheme, outside the root,
    /// not indexed). `.` and `..` in the URL are resolved.
    public func track(at url: URL) throws -> Track? {
        guard url.isFileURL else { return nil }
        let path = LibraryPath.normalised(url.path(percentEncoded: false))
        guard let id = LibraryPath.relative(path, to: root) else { return nil }
        return try track(id: id)
    }

    /// Where the file of a `file:` URL really is, links, `.` and `..` resolved, and whether that
    /// lies inside the library (below the root's own resolved path); nil when there is no such
    /// file or it is not a `file:` URL. What decides whether a file is the library's to serve.
    public func resolvedFile(at url: URL) -> (path: String, isInLibrary: Bool)? {
        guard url.isFileURL, let real = LibraryPath.realPath(url.path(percentEncoded: false)) else { return nil }
        let realRoot = LibraryPath.realPath(root) ?? root
        return (real, LibraryPath.relative(real, to: realRoot) != nil)
    }

    /// Every playlist, by path. Entries naming a file that is not indexed now are
    /// ``PlaylistEntry/missing(_:)``.
    public func playlists() throws -> [Playlist] {
        try read { try $0.playlists() }
    }

    /// What could not be read at the last scan (persisted with the index), by path.
    public func failures() throws -> [ScanFailure] {
        try read { try $0.failures() }
    }

    /// The bytes of a cover: an embedded picture from the index, or an image file's contents.
    /// Nil when the picture is no longer in the index or the file no longer exists.
    public func artworkData(for artwork: TrackArtwork) throws -> Data? {
        switch artwork {
        case .embedded(let sha256):
            return try read { try $0.image(sha256: sha256) }
        case .file(let url):
            guard access(url.path(percentEncoded: false), F_OK) == 0 else { return nil }
            return try Data(contentsOf: url)
        }
    }

    /// The cover image file of the folder holding the track `id` (`cover`, `folder` or `front`,
    /// as ``TrackArtwork/file(_:)`` describes), whether or not the track embeds a picture; nil
    /// when the folder has none or the track is not indexed.
    public func folderArtworkURL(ofTrack id: Track.ID) throws -> URL? {
        try read { try $0.folderArtworkURL(ofTrack: id) }
    }

    /// A track's cover as now-playing information wants it: the embedded bytes as
    /// `.imageData`, an image file as its `.url`; nil when the track has none.
    public func mediaItemArtwork(for track: Track) throws -> MediaItemArtwork? {
        switch track.artwork {
        case .embedded?: try artworkData(for: track.artwork!).map { .imageData($0) }
        case .file(let url)?: .url(url)
        case nil: nil
        }
    }

    /// The number of tracks in the index.
    public var trackCount: Int {
        get throws { try read { try $0.trackCount() } }
    }

    /// A number that grows each time a scan (in this process or another) changes what the
    /// library shows: its tracks, playlists or folder art. Equal before and after a scan when
    /// the scan found nothing to change.
    public var contentRevision: Int {
        get throws { try read { try $0.contentRevision() } }
    }

    // MARK: Folders (MPD's database commands)

    /// How many tracks ``forEachTrack(inFolder:_:)`` reads at a time.
    static let trackChunk = 512

    /// Calls `body` with each track below `folder` (a path relative to ``root``; "", "/" or nil:
    /// every track), in path order (the UTF-8 bytes of ``Track/id``, which within one folder is
    /// file-name order), until `body` returns false.
    ///
    /// Reads 512 tracks at a time through the path index: memory stays small whatever the
    /// library's size, and `body` runs outside the index's lock, so it may call the library. A
    /// scan committing meanwhile may be seen from the next chunk on; no track is given twice.
    /// 50,000 tracks stream in about 110 ms in a release build (see `FolderQueryTests`).
    public func forEachTrack(inFolder folder: String? = nil, _ body: (Track) throws -> Bool) throws {
        let folder = Self.normalisedFolder(folder ?? "")
        let folderArt = try read { try $0.folderArtURLs(below: folder) }
        var after: String?
        while true {
            let chunk = try read { index in
                try index.tracks(below: folder, after: after, limit: Self.trackChunk, folderArt: folderArt)
            }
            for track in chunk where try !body(track) { return }
            guard chunk.count == Self.trackChunk, let last = chunk.last else { return }
            after = last.id
        }
    }

    /// What the folder `folder` (relative to ``root``; "" or "/" is the root) holds directly, for
    /// MPD's `lsinfo`: its subfolders with their latest modification, its tracks and its playlists.
    /// Nil when no indexed track or playlist lies below it (MPD's "No such directory"); the root
    /// always has a listing, empty when nothing is indexed.
    ///
    /// Costs a query per subfolder and per track of the folder, not a read of what lies deeper
    /// (the latest modification of a subfolder is read from its tracks' rows).
    public func folderListing(_ folder: String) throws -> FolderListing? {
        let folder = Self.normalisedFolder(folder)
        return try read { index in try index.database.readTransaction { try index.folderListing(folder) } }
    }

    /// The identifiers of the tracks below `folder` ("" or "/": every track), in MPD's database
    /// order, which `add FOLDER` follows: a folder's files by name, then each subfolder by name
    /// with its contents (names compared as UTF-8 bytes). Reads only paths.
    public func trackIDs(inFolder folder: String) throws -> [Track.ID] {
        let folder = Self.normalisedFolder(folder)
        return try read { try $0.trackPaths(below: folder) }
    }

    /// The library's figures for MPD's `stats`: tracks, distinct artists and albums, their total
    /// length and when it was last scanned.
    ///
    /// The counts are read in one pass over the tracks (tens of milliseconds at 50,000) and kept
    /// until ``contentRevision`` changes, so that a client asking often costs nothing more.
    public func statistics() throws -> LibraryStatistics {
        try read { index in
            let revision = try index.contentRevision()
            var statistics: LibraryStatistics
            if let cached = cachedStatistics.withLock({ $0 }), cached.revision == revision {
                statistics = cached.statistics
            } else {
                statistics = try index.contentStatistics()
                cachedStatistics.withLock { $0 = (revision, statistics) }
            }
            statistics.lastScan = try index.lastScan(indexPath: indexPath)
            return statistics
        }
    }

    /// `folder` without leading or trailing slashes ("/" is the root, "").
    static func normalisedFolder(_ folder: String) -> String {
        var trimmed = Substring(folder)
        while trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    // MARK: Resume points

    /// Every saved resume point (where a long track was left), by track identifier; a few
    /// hundred bytes each. Points outlive a rescan that deletes and re-reads a track's row:
    /// they are keyed by path. A scan forgets the point of a track no longer indexed a month
    /// after it was saved.
    public func resumePoints() throws -> [Track.ID: TrackResumePoint] {
        try read { try $0.resumePoints() }
    }

    /// Saves where the track `id` was left, replacing its earlier point: one row written, in a
    /// transaction of its own, on the calling thread (it blocks: call it from a
    /// `BlockingExecutor`). Whether the track is indexed is not checked.
    ///
    /// - Throws: ``MusicLibraryError/index(_:)`` when the index cannot be written (see ``isReadOnly``).
    public func saveResumePoint(_ point: TrackResumePoint, ofTrack id: Track.ID) throws {
        guard !isReadOnly else { throw MusicLibraryError.index("the index \(indexPath) cannot be written") }
        do {
            try writer.withLock { index throws(SQLiteError) in
                try index.saveResumePoint(point, path: id, now: LibraryIndex.secondsSince1970())
            }
        } catch {
            throw MusicLibraryError.index(error.description)
        }
    }

    private func read<Result: Sendable>(_ body: (LibraryIndex) throws -> Result) throws -> Result {
        do {
            return try reader.withLock { index in try body(index) }
        } catch let error as SQLiteError {
            throw MusicLibraryError.index(error.description)
        }
    }
}
