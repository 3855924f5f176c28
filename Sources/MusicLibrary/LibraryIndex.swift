import Glibc

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
    let database: SQLiteDatabase
    let root: String
    /// False for a read-only index of version 1, which has no `resume_points` table.
    var hasResumePoints = true

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

    // MARK: Encoding

    func fileURL(_ relativePath: String) -> URL {
        LibraryPath.fileURL(root, relativePath)
    }

    private static let separator: Character = "\u{1F}"

    static func joined(_ values: [String]) -> String { values.joined(separator: String(separator)) }

    static func split(_ text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        // Most lists have one value: skip the (slow) Character-wise split.
        guard text.utf8.contains(0x1F) else { return [text] }
        return text.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
