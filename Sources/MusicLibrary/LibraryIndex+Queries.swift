#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryIndex {
    // MARK: Queries

    static let trackColumns = """
        SELECT path, size, modified, title, artists, album, album_artists, genres, composers, track_number,
            track_count, disc_number, disc_count, release_date, duration, mime_type, embedded_art
        FROM tracks
        """

    /// One track by path: the SQL made once, not joined and hashed again for each track a page
    /// reads (the prepared statements are found by their text).
    static let trackByPath = trackColumns + " WHERE path = ?"
    /// One track by rowid: the table's own key, without descending the path's index first.
    static let trackByRowid = trackColumns + " WHERE rowid = ?"

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
                modified, embedded_art, duration, genres, rowid
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
                    hasArtwork: embedded != nil || cover != nil, fingerprint: hasher.finalize(),
                    rowid: row.integer(13) ?? 0))
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
        var folderArt: [Substring: URL?] = [:]
        return try track(path: path, folderArt: &folderArt)
    }

    /// The track at `path`, its folder's cover as its artwork when it has none of its own;
    /// `folderArt` keeps each folder's cover for the next track of the same folder.
    private func track(
        path: String, folderArt: inout [Substring: URL?], covers: [Substring: String]? = nil
    ) throws(SQLiteError) -> Track? {
        var found: Track?
        try database.forEachRow(Self.trackByPath, [.text(path)]) { row throws(SQLiteError) in
            found = track(row, folderArt: nil)
        }
        return try withFolderArt(found, path: path, folderArt: &folderArt, covers: covers)
    }

    /// The track at `path` read by `rowid`: by path when that row is no longer this track's
    /// (the track was indexed again since the tree was built).
    private func track(
        path: String, rowid: Int64, folderArt: inout [Substring: URL?], covers: [Substring: String]?
    ) throws(SQLiteError) -> Track? {
        var found: Track?
        try database.forEachRow(Self.trackByRowid, [.integer(rowid)]) { row throws(SQLiteError) in
            if row.text(0) == path { found = track(row, folderArt: nil) }
        }
        guard let found else { return try track(path: path, folderArt: &folderArt, covers: covers) }
        return try withFolderArt(found, path: path, folderArt: &folderArt, covers: covers)
    }

    /// `found` with its folder's cover as its artwork when it has none of its own: from `covers`
    /// (every folder's, read once) when given, else looked up.
    private func withFolderArt(
        _ found: Track?, path: String, folderArt: inout [Substring: URL?], covers: [Substring: String]? = nil
    ) throws(SQLiteError) -> Track? {
        guard var track = found, track.artwork == nil else { return found }
        let folder = Self.folder(of: path)
        let url: URL?
        if let known = folderArt[folder] {
            url = known
        } else if let covers {
            url = covers[folder].map(fileURL)
            folderArt[folder] = .some(url)
        } else {
            url = try coverURL(ofFolder: String(folder))
            folderArt[folder] = .some(url)
        }
        track.artwork = url.map { .file($0) }
        return track
    }

    /// The cover file `folder_art` holds for `folder`; nil when none.
    private func coverURL(ofFolder folder: String) throws(SQLiteError) -> URL? {
        var url: URL?
        try database.forEachRow("SELECT file FROM folder_art WHERE folder = ?", [.text(folder)]) { row throws(SQLiteError) in
            url = row.text(0).map(fileURL)
        }
        return url
    }

    /// The cover file of the folder of the indexed track `path`; nil when none, or not indexed.
    func folderArtworkURL(ofTrack path: String) throws(SQLiteError) -> URL? {
        guard try database.integer("SELECT count(*) FROM tracks WHERE path = ?", .text(path)) == 1 else { return nil }
        return try coverURL(ofFolder: LibraryPath.folder(of: path))
    }

    /// The tracks at `paths`, in order; nil where none is indexed. One read transaction.
    ///
    /// A page of rows is mostly one album, one folder: each folder's cover is looked up once
    /// per call, not once per track (half the statements a page of tracks ran).
    func tracks(paths: [String]) throws -> [Track?] {
        try database.readTransaction {
            var folderArt: [Substring: URL?] = [:]
            return try paths.map { path throws(SQLiteError) -> Track? in try track(path: path, folderArt: &folderArt) }
        }
    }

    /// The tracks `keys` name, in order, each by rowid where known; nil where none is indexed.
    /// One read transaction. Folders' covers come from `covers`, which reads them all the first
    /// time and keeps them for the tree it belongs to: a page of the Tracks tab spans as many
    /// folders as tracks, and a lookup for each was a sixth of its reads.
    func tracks(keys: [TrackRows.Key], covers: FolderCovers) throws -> [Track?] {
        try database.readTransaction {
            let known = try covers.files { () throws(SQLiteError) in try folderArtFiles() }
            var folderArt: [Substring: URL?] = [:]
            return try keys.map { key throws(SQLiteError) -> Track? in
                if let rowid = key.rowid { try track(path: key.id, rowid: rowid, folderArt: &folderArt, covers: known) }
                else { try track(path: key.id, folderArt: &folderArt, covers: known) }
            }
        }
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
    func folderArtFiles() throws(SQLiteError) -> [Substring: String] {
        var files: [Substring: String] = [:]
        try database.forEachRow("SELECT folder, file FROM folder_art") { row throws(SQLiteError) in
            if let folder = row.text(0), let file = row.text(1) { files[folder[...]] = file }
        }
        return files
    }

    /// A track from a row of ``trackColumns``; folder art is looked up in `folderArt` when given.
    func track(_ row: SQLiteRow, folderArt: [Substring: URL]?) -> Track {
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
    static func folder(of path: String) -> Substring {
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
}
