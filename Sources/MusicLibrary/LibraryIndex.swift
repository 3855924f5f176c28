import GStreamerPlayback
import Glibc
import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The persisted index: the library's tables in SQLite, and the typed reads and writes on them.
///
/// A connection's owner keeps it behind a lock. The index is a cache of what the files say, so
/// anything wrong with it (damage, an older schema, another root) is answered by starting afresh.
final class LibraryIndex {
    private let database: SQLiteDatabase
    private let root: String
    /// False for a read-only index of version 1, which has no `resume_points` table.
    private var hasResumePoints = true

    /// Bumped whenever the tables change shape: an index of another version is rebuilt, but
    /// for the versions ``migrate(from:)`` brings up to date.
    ///
    /// 1: the tables of what the files say. 2: `resume_points`, where long tracks were left.
    private static let schemaVersion: Int64 = 2

    /// How long a resume point outlives its track: a file moved out and back (a disk not
    /// mounted during a scan, a folder renamed and renamed back) keeps its place for a month,
    /// and the points of deleted files do not stay for ever.
    static let resumePointGrace: Duration = .seconds(30 * 24 * 3600)

    /// Opens the index at `path` for the library at `root`, creating or rebuilding it as needed.
    /// `recovery` says why an existing file was replaced (damaged, or not a database); nil when
    /// it opened cleanly.
    static func open(path: String, root: String) throws(SQLiteError) -> (index: LibraryIndex, recovery: String?) {
        do {
            let index = try LibraryIndex(path: path, root: root)
            try index.prepareSchema()
            return (index, nil)
        } catch where error.isCorruption {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            let index = try LibraryIndex(path: path, root: root)
            try index.prepareSchema()
            return (index, "the index file \(path) was damaged (\(error.message)) and has been rebuilt")
        }
    }

    /// Opens an existing index that cannot be written (a full or read-only disk) to read what it
    /// holds; throws when it is not an index of this version for `root`, since it cannot be rebuilt.
    static func openReadOnly(path: String, root: String) throws(SQLiteError) -> LibraryIndex {
        let index = try LibraryIndex(path: path, root: root, immutable: true)
        let version = try index.database.integer("PRAGMA user_version") ?? 0
        // An index of version 1 is served too: it has no resume points, and saving one fails.
        guard version == schemaVersion || version == 1, try index.indexedRootFolder() == root else {
            throw SQLiteError(code: 8 /* SQLITE_READONLY */, message: "it indexes another folder or version, and cannot be rebuilt")
        }
        index.hasResumePoints = version >= 2
        return index
    }

    /// Opens a further connection to an index that ``open(path:root:)`` prepared.
    init(path: String, root: String, immutable: Bool = false) throws(SQLiteError) {
        database = try SQLiteDatabase(path: path, immutable: immutable)
        self.root = root
        // A small page cache keeps the daemon lean, and reads are copied through it rather than
        // memory-mapped: a mapped page the process touched counts in its resident memory, and
        // reading a 50,000-track index whole at start (through two connections) made 32 MB of
        // it, as much as the rest of the daemon's data.
        guard !immutable else {
            try database.execute("PRAGMA cache_size = -1024")
            return
        }
        // WAL lets the reader connection query while a scan writes; NORMAL is durable enough
        // for a cache and spares an fsync per commit.
        try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -1024")
    }

    private func prepareSchema() throws(SQLiteError) {
        // Reads every page: finds damage now rather than in the middle of a scan.
        var problem: String?
        try database.forEachRow("PRAGMA quick_check(1)") { row throws(SQLiteError) in
            if let text = row.text(0), text != "ok" { problem = text }
        }
        if let problem { throw SQLiteError(code: 11 /* SQLITE_CORRUPT */, message: problem) }

        let version = try database.integer("PRAGMA user_version") ?? 0
        let indexedRoot = try? indexedRootFolder()
        if version == Self.schemaVersion && indexedRoot == root { return }
        // An earlier version's index of this folder keeps its tracks: no full rescan.
        if indexedRoot == root, try migrate(from: version) { return }
        try database.execute(
            """
            DROP TABLE IF EXISTS tracks; DROP TABLE IF EXISTS images; DROP TABLE IF EXISTS failures;
            DROP TABLE IF EXISTS playlists; DROP TABLE IF EXISTS playlist_entries;
            DROP TABLE IF EXISTS folder_art; DROP TABLE IF EXISTS settings; DROP TABLE IF EXISTS resume_points;
            CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            -- Lists (artists, genres, ...) are joined with U+001F, the unit separator.
            CREATE TABLE tracks (
                path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
                modified INTEGER NOT NULL, title TEXT NOT NULL, artists TEXT NOT NULL, album TEXT,
                album_artists TEXT NOT NULL, genres TEXT NOT NULL, composers TEXT NOT NULL,
                track_number INTEGER, track_count INTEGER, disc_number INTEGER, disc_count INTEGER,
                release_date TEXT, duration INTEGER, mime_type TEXT, embedded_art TEXT,
                sort_artist TEXT NOT NULL);
            CREATE INDEX tracks_in_order ON tracks (sort_artist COLLATE NOCASE, album COLLATE NOCASE,
                disc_number, track_number, title COLLATE NOCASE, path);
            CREATE TABLE images (sha256 TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
            -- kind: 'audio', 'playlist' (keyed by size and time like tracks) or 'walk'.
            CREATE TABLE failures (path TEXT PRIMARY KEY, kind TEXT NOT NULL, size INTEGER,
                modified INTEGER, reason TEXT NOT NULL);
            CREATE TABLE playlists (path TEXT PRIMARY KEY, name TEXT NOT NULL, size INTEGER NOT NULL,
                modified INTEGER NOT NULL);
            -- kind: 0 a library path (target relative to the root), 1 a stream (target a URL),
            -- 2 elsewhere. written: the entry as the file has it.
            CREATE TABLE playlist_entries (playlist TEXT NOT NULL, position INTEGER NOT NULL,
                kind INTEGER NOT NULL, target TEXT NOT NULL, title TEXT, written TEXT NOT NULL,
                PRIMARY KEY (playlist, position));
            CREATE TABLE folder_art (folder TEXT PRIMARY KEY, file TEXT NOT NULL);
            \(Self.resumePointsTable)
            PRAGMA user_version = \(Self.schemaVersion);
            """)
        try database.run("INSERT INTO settings (key, value) VALUES ('root', ?)", .text(root))
    }

    /// Where long tracks were left, by path relative to the root (not by row: a rescan deletes
    /// and inserts a changed file's row, and the point stays). `position_ms` in milliseconds,
    /// 0 when finished; `updated` in seconds since 1970. User state kept in a cache: a damaged
    /// index is rebuilt without them, which costs places in books, not music.
    private static let resumePointsTable = """
        CREATE TABLE resume_points (path TEXT PRIMARY KEY, position_ms INTEGER NOT NULL,
            finished INTEGER NOT NULL, updated INTEGER NOT NULL) WITHOUT ROWID;
        """

    /// Brings an index of an earlier `version` of this folder up to date, keeping what it holds;
    /// false when that version cannot be (it is then rebuilt).
    private func migrate(from version: Int64) throws(SQLiteError) -> Bool {
        guard version == 1 else { return false }
        try database.execute(
            """
            BEGIN IMMEDIATE;
            \(Self.resumePointsTable)
            PRAGMA user_version = \(Self.schemaVersion);
            COMMIT;
            """)
        return true
    }

    private func indexedRootFolder() throws(SQLiteError) -> String? {
        var value: String?
        try database.forEachRow("SELECT value FROM settings WHERE key = 'root'") { row throws(SQLiteError) in
            value = row.text(0)
        }
        return value
    }

    // MARK: Scanning

    /// The size and modification time of every file the index knows (tracks, playlists and files
    /// that failed), by relative path: a file whose pair is unchanged is not read again.
    func fileStates() throws(SQLiteError) -> [String: FileState] {
        var states: [String: FileState] = [:]
        let sql = """
            SELECT path, size, modified, 0 FROM tracks
            UNION ALL SELECT path, size, modified, 1 FROM playlists
            UNION ALL SELECT path, size, modified, 2 FROM failures WHERE kind != 'walk'
            """
        try database.forEachRow(sql) { row throws(SQLiteError) in
            guard let path = row.text(0) else { return }
            let kind: FileState.Kind = switch row.integer(3) {
            case 0: .track
            case 1: .playlist
            default: .failure
            }
            states[path] = FileState(size: Int(row.integer(1) ?? -1), modified: row.integer(2) ?? -1, kind: kind)
        }
        return states
    }

    struct FileState: Equatable {
        enum Kind { case track, playlist, failure }
        var size: Int
        var modified: Int64
        var kind: Kind
    }

    /// Forgets files, whatever they were indexed as.
    func remove(paths: [String]) throws {
        guard !paths.isEmpty else { return }
        try database.transaction {
            for path in paths { try forget(path) }
        }
    }

    private func forget(_ path: String) throws(SQLiteError) {
        try database.run("DELETE FROM tracks WHERE path = ?", .text(path))
        try database.run("DELETE FROM failures WHERE path = ?", .text(path))
        try database.run("DELETE FROM playlists WHERE path = ?", .text(path))
        try database.run("DELETE FROM playlist_entries WHERE playlist = ?", .text(path))
    }

    /// A file the discoverer has read, ready to store.
    struct ReadFile: Sendable {
        var file: FolderWalk.File
        var outcome: Result<DiscoveredMedia, DiscovererError>
        /// The SHA-256 of the embedded image, computed off the database's thread.
        var imageHash: String?
    }

    /// Stores one batch of read files in one transaction: tracks for the ones that read, failures
    /// for the others.
    func store(_ batch: [ReadFile]) throws {
        guard !batch.isEmpty else { return }
        try database.transaction {
            for read in batch {
                let file = read.file
                try forget(file.path)
                switch read.outcome {
                case .success(let media):
                    if let hash = read.imageHash, let image = media.image {
                        try database.run(
                            "INSERT OR IGNORE INTO images (sha256, data) VALUES (?, ?)", .text(hash), .blob(image))
                    }
                    try insertTrack(file: file, media: media, imageHash: read.imageHash)
                case .failure(let error):
                    try database.run(
                        "INSERT INTO failures (path, kind, size, modified, reason) VALUES (?, 'audio', ?, ?, ?)",
                        .text(file.path), SQLiteValue(file.size), .integer(file.modified), .text(error.reason))
                }
            }
        }
    }

    private func insertTrack(file: FolderWalk.File, media: DiscoveredMedia, imageHash: String?) throws(SQLiteError) {
        let title = media.title.flatMap { $0.isEmpty ? nil : $0 } ?? LibraryPath.stem(of: file.path)
        let sortArtist = media.albumArtists.first ?? media.artists.first ?? ""
        try database.run(
            """
            INSERT INTO tracks (path, size, modified, title, artists, album, album_artists, genres,
                composers, track_number, track_count, disc_number, disc_count, release_date, duration,
                mime_type, embedded_art, sort_artist)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(file.path), SQLiteValue(file.size),
            .integer(file.modified), .text(title), .text(Self.joined(media.artists)), SQLiteValue(media.album),
            .text(Self.joined(media.albumArtists)), .text(Self.joined(media.genres)),
            .text(Self.joined(media.composers)), SQLiteValue(media.trackNumber), SQLiteValue(media.trackCount),
            SQLiteValue(media.discNumber), SQLiteValue(media.discCount), SQLiteValue(media.releaseDate),
            SQLiteValue(media.duration.map(Self.nanoseconds)), SQLiteValue(media.mimeType),
            SQLiteValue(imageHash), .text(sortArtist))
    }

    /// Stores a track row as is, without reading any file: for tests and benchmarks that need a
    /// large index fast.
    func insertSyntheticTracks(_ tracks: [(file: FolderWalk.File, media: DiscoveredMedia)]) throws {
        try database.transaction {
            for (file, media) in tracks {
                try forget(file.path)
                try insertTrack(file: file, media: media, imageHash: nil)
            }
        }
    }

    /// Stores a playlist that was read (replacing any earlier version), or its failure.
    func store(playlist file: FolderWalk.File, outcome: PlaylistOutcome) throws {
        try database.transaction {
            try forget(file.path)
            switch outcome {
            case .read(let contents):
                try database.run(
                    "INSERT INTO playlists (path, name, size, modified) VALUES (?, ?, ?, ?)",
                    .text(file.path), .text(contents.name), SQLiteValue(file.size), .integer(file.modified))
                for (position, entry) in contents.entries.enumerated() {
                    let (kind, target): (Int64, String) =
                        switch entry.target {
                        case .inLibrary(let path): (0, path)
                        case .stream(let url): (1, url.absoluteString)
                        case .elsewhere: (2, "")
                        }
                    try database.run(
                        """
                        INSERT INTO playlist_entries (playlist, position, kind, target, title, written)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                        .text(file.path), SQLiteValue(position), .integer(kind), .text(target),
                        SQLiteValue(entry.line.title), .text(entry.line.location))
                }
            case .failed(let reason):
                try database.run(
                    "INSERT INTO failures (path, kind, size, modified, reason) VALUES (?, 'playlist', ?, ?, ?)",
                    .text(file.path), SQLiteValue(file.size), .integer(file.modified), .text(reason))
            }
        }
    }

    enum PlaylistOutcome {
        case read(PlaylistContents)
        case failed(reason: String)
    }

    /// A parsed playlist: its name and its entries resolved against the root.
    struct PlaylistContents: Sendable {
        var name: String
        var entries: [(line: PlaylistFile.Line, target: PlaylistFile.Target)]
    }

    /// Replaces what a walk found about folders: their cover images and the folders that could
    /// not be listed. Deletes pictures no track uses any more.
    /// Returns whether the folder art changed.
    @discardableResult
    func finishScan(folderArt: [String: String], walkFailures: [ScanFailure]) throws -> Bool {
        var known: [String: String] = [:]
        try database.forEachRow("SELECT folder, file FROM folder_art") { row throws(SQLiteError) in
            if let folder = row.text(0), let file = row.text(1) { known[folder] = file }
        }
        let artChanged = known != folderArt
        try database.transaction {
            if artChanged {
                try database.run("DELETE FROM folder_art")
                for (folder, file) in folderArt {
                    try database.run("INSERT INTO folder_art (folder, file) VALUES (?, ?)", .text(folder), .text(file))
                }
            }
            try database.run("DELETE FROM failures WHERE kind = 'walk'")
            for failure in walkFailures {
                try database.run(
                    "INSERT OR REPLACE INTO failures (path, kind, reason) VALUES (?, 'walk', ?)",
                    .text(failure.path), .text(failure.reason))
            }
            try database.run(
                """
                DELETE FROM images WHERE sha256 NOT IN
                    (SELECT embedded_art FROM tracks WHERE embedded_art IS NOT NULL)
                """)
            try pruneResumePoints(now: Self.secondsSince1970())
        }
        return artChanged
    }

    /// Forgets the resume points of tracks no longer indexed, once ``resumePointGrace`` has
    /// passed since they were saved.
    func pruneResumePoints(now: Int64) throws(SQLiteError) {
        try database.run(
            "DELETE FROM resume_points WHERE updated < ? AND path NOT IN (SELECT path FROM tracks)",
            .integer(now - Self.resumePointGrace.components.seconds))
    }

    // MARK: Resume points

    /// Every saved resume point, by track path.
    func resumePoints() throws(SQLiteError) -> [String: ResumePoint] {
        guard hasResumePoints else { return [:] }
        var points: [String: ResumePoint] = [:]
        try database.forEachRow("SELECT path, position_ms, finished FROM resume_points") { row throws(SQLiteError) in
            guard let path = row.text(0) else { return }
            points[path] = ResumePoint(position: .milliseconds(row.integer(1) ?? 0), isFinished: row.integer(2) == 1)
        }
        return points
    }

    /// Saves `point` for the track at `path`, replacing its earlier one: one row, one statement.
    func saveResumePoint(_ point: ResumePoint, path: String, now: Int64) throws(SQLiteError) {
        try database.run(
            """
            INSERT INTO resume_points (path, position_ms, finished, updated) VALUES (?, ?, ?, ?)
                ON CONFLICT (path) DO UPDATE SET position_ms = excluded.position_ms, finished = excluded.finished,
                    updated = excluded.updated
            """,
            .text(path), .integer(Int64(point.position / .milliseconds(1))), .integer(point.isFinished ? 1 : 0),
            .integer(now))
    }

    static func secondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    /// A number that grows each time a scan changes what the library shows (tracks, playlists,
    /// folder art); 0 for an index that never changed.
    func contentRevision() throws(SQLiteError) -> Int {
        var value = 0
        try database.forEachRow("SELECT value FROM settings WHERE key = 'content_revision'") { row throws(SQLiteError) in
            value = row.text(0).flatMap { Int($0) } ?? 0
        }
        return value
    }

    func bumpContentRevision() throws(SQLiteError) {
        try database.run(
            """
            INSERT INTO settings (key, value) VALUES ('content_revision', '1')
                ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
            """)
    }

    // MARK: Queries

    private static let trackColumns = """
        SELECT path, size, modified, title, artists, album, album_artists, genres, composers, track_number,
            track_count, disc_number, disc_count, release_date, duration, mime_type, embedded_art
        FROM tracks
        """

    /// Every track, ordered by album artist (else first artist), album, disc number, track number,
    /// title (case-insensitively), then path.
    func tracks() throws(SQLiteError) -> [Track] {
        let folderArt = try folderArtURLs()
        var tracks: [Track] = []
        tracks.reserveCapacity(try trackCount())
        let sql = Self.trackColumns + Self.libraryOrder
        try database.forEachRow(sql) { row throws(SQLiteError) in tracks.append(track(row, folderArt: folderArt)) }
        return tracks
    }

    private static let libraryOrder = """
         ORDER BY sort_artist COLLATE NOCASE, album COLLATE NOCASE, disc_number, track_number,
            title COLLATE NOCASE, path
        """

    /// Every track outlined for building the tree, in the order of ``tracks()``: fewer columns
    /// than ``tracks()``, and no URL made per track.
    func trackOutlines() throws(SQLiteError) -> [TrackOutline] {
        let folderArt = try folderArtFiles()
        var outlines: [TrackOutline] = []
        outlines.reserveCapacity(try trackCount())
        let sql = """
            SELECT path, title, artists, album, album_artists, disc_number, track_number, release_date, size,
                modified, embedded_art, duration, genres
            FROM tracks
            """ + Self.libraryOrder
        try database.forEachRow(sql) { row throws(SQLiteError) in
            let path = row.text(0) ?? ""
            let embedded = row.text(10)
            let cover = embedded == nil ? folderArt[Self.folder(of: path)] : nil
            var hasher = Hasher()
            hasher.combine(path)
            hasher.combine(row.integer(8))
            hasher.combine(row.integer(9))
            hasher.combine(embedded)
            hasher.combine(cover)
            outlines.append(
                TrackOutline(
                    id: path, title: row.text(1) ?? "", artists: Self.split(row.text(2)), album: row.text(3),
                    albumArtists: Self.split(row.text(4)), discNumber: row.integer(5).map(Int.init),
                    trackNumber: row.integer(6).map(Int.init), releaseDate: row.text(7),
                    duration: row.integer(11).map { .nanoseconds($0) }, genres: Self.split(row.text(12)),
                    hasArtwork: embedded != nil || cover != nil, fingerprint: hasher.finalize()))
        }
        return outlines
    }

    /// Every track's path, in the order of ``tracks()``.
    func trackPathsInOrder() throws(SQLiteError) -> [String] {
        var paths: [String] = []
        paths.reserveCapacity(try trackCount())
        try database.forEachRow("SELECT path FROM tracks" + Self.libraryOrder) { row throws(SQLiteError) in
            paths.append(row.text(0) ?? "")
        }
        return paths
    }

    /// Every track's path with its value of `field`, in no particular order: what sorting the
    /// tree by a field it does not keep reads, once per tree and field. One query; nothing kept.
    func forEachTrack(
        _ field: TrackSortField, _ body: (_ path: String, _ text: String?, _ number: Int64?) -> Void
    ) throws(SQLiteError) {
        try database.forEachRow("SELECT path, \(field.column) FROM tracks") { row throws(SQLiteError) in
            switch field {
            case .date, .genre: body(row.text(0) ?? "", row.text(1), nil)
            case .trackNumber, .duration: body(row.text(0) ?? "", nil, row.integer(1))
            }
        }
    }

    func track(path: String) throws(SQLiteError) -> Track? {
        var found: Track?
        try database.forEachRow(Self.trackColumns + " WHERE path = ?", [.text(path)]) { row throws(SQLiteError) in
            found = track(row, folderArt: nil)
        }
        guard var track = found, track.artwork == nil else { return found }
        try database.forEachRow(
            "SELECT file FROM folder_art WHERE folder = ?", [.text(LibraryPath.folder(of: path))]
        ) { row throws(SQLiteError) in
            track.artwork = row.text(0).map { .file(fileURL($0)) }
        }
        return track
    }

    /// The tracks at `paths`, in order; nil where none is indexed. One read transaction.
    func tracks(paths: [String]) throws -> [Track?] {
        try database.readTransaction { try paths.map { path throws(SQLiteError) in try track(path: path) } }
    }

    func trackPaths() throws(SQLiteError) -> Set<String> {
        var paths: Set<String> = []
        paths.reserveCapacity(try trackCount())
        try database.forEachRow("SELECT path FROM tracks") { row throws(SQLiteError) in
            if let path = row.text(0) { paths.insert(path) }
        }
        return paths
    }

    func trackCount() throws(SQLiteError) -> Int {
        Int(try database.integer("SELECT count(*) FROM tracks") ?? 0)
    }

    /// Folder → the URL of its cover image: made once per folder rather than once per track.
    private func folderArtURLs() throws(SQLiteError) -> [Substring: URL] {
        try folderArtFiles().mapValues(fileURL)
    }

    /// Folder → its cover image, relative to the root.
    private func folderArtFiles() throws(SQLiteError) -> [Substring: String] {
        var files: [Substring: String] = [:]
        try database.forEachRow("SELECT folder, file FROM folder_art") { row throws(SQLiteError) in
            if let folder = row.text(0), let file = row.text(1) { files[folder[...]] = file }
        }
        return files
    }

    /// A track from a row of ``trackColumns``; folder art is looked up in `folderArt` when given.
    private func track(_ row: SQLiteRow, folderArt: [Substring: URL]?) -> Track {
        let path = row.text(0) ?? ""
        let artwork: TrackArtwork? =
            if let hash = row.text(16) {
                .embedded(sha256: hash)
            } else if let folderArt, let url = folderArt[Self.folder(of: path)] {
                .file(url)
            } else {
                nil
            }
        return Track(
            id: path, url: fileURL(path), title: row.text(3) ?? "", artists: Self.split(row.text(4)),
            album: row.text(5), albumArtists: Self.split(row.text(6)), genres: Self.split(row.text(7)),
            composers: Self.split(row.text(8)), trackNumber: row.integer(9).map(Int.init),
            trackCount: row.integer(10).map(Int.init), discNumber: row.integer(11).map(Int.init),
            discCount: row.integer(12).map(Int.init), releaseDate: row.text(13),
            duration: row.integer(14).map { .nanoseconds($0) }, mimeType: row.text(15), artwork: artwork,
            fileSize: Int(row.integer(1) ?? 0), modified: row.integer(2) ?? 0)
    }

    /// The folder part of a relative path, without copying it.
    private static func folder(of path: String) -> Substring {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return path[..<slash]
    }

    /// Every playlist, by path, with entries resolved against the tracks indexed now.
    func playlists() throws(SQLiteError) -> [Playlist] {
        var playlists: [Playlist] = []
        try database.forEachRow("SELECT path, name FROM playlists ORDER BY path") { row throws(SQLiteError) in
            let path = row.text(0) ?? ""
            playlists.append(Playlist(id: path, name: row.text(1) ?? "", url: fileURL(path), entries: []))
        }
        guard !playlists.isEmpty else { return [] }
        var positions: [String: Int] = [:]
        for (index, playlist) in playlists.enumerated() { positions[playlist.id] = index }
        let sql = """
            SELECT e.playlist, e.kind, e.target, e.title, e.written, t.path IS NOT NULL
            FROM playlist_entries e LEFT JOIN tracks t ON e.kind = 0 AND t.path = e.target
            ORDER BY e.playlist, e.position
            """
        try database.forEachRow(sql) { row throws(SQLiteError) in
            guard let playlist = row.text(0), let index = positions[playlist] else { return }
            let written = row.text(4) ?? ""
            let entry: PlaylistEntry =
                switch row.integer(1) {
                case 0 where row.integer(5) == 1: .track(row.text(2) ?? "")
                case 1:
                    row.text(2).flatMap { URL(string: $0) }.map { .stream($0, title: row.text(3)) } ?? .missing(written)
                default: .missing(written)
                }
            playlists[index].entries.append(entry)
        }
        return playlists
    }

    func playlistCount() throws(SQLiteError) -> Int {
        Int(try database.integer("SELECT count(*) FROM playlists") ?? 0)
    }

    /// Everything that could not be read, by path.
    func failures() throws(SQLiteError) -> [ScanFailure] {
        var failures: [ScanFailure] = []
        try database.forEachRow("SELECT path, reason FROM failures ORDER BY path") { row throws(SQLiteError) in
            failures.append(ScanFailure(path: row.text(0) ?? "", reason: row.text(1) ?? ""))
        }
        return failures
    }

    /// The bytes of an embedded picture, by its SHA-256.
    func image(sha256: String) throws(SQLiteError) -> Data? {
        var data: Data?
        try database.forEachRow("SELECT data FROM images WHERE sha256 = ?", [.text(sha256)]) {
            row throws(SQLiteError) in data = row.blob(0)
        }
        return data
    }

    // MARK: Encoding

    private func fileURL(_ relativePath: String) -> URL {
        LibraryPath.fileURL(root, relativePath)
    }

    private static let separator: Character = "\u{1F}"

    private static func joined(_ values: [String]) -> String { values.joined(separator: String(separator)) }

    static func split(_ text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        // Most lists have one value: skip the (slow) Character-wise split.
        guard text.utf8.contains(0x1F) else { return [text] }
        return text.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
