#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryIndex {
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

    /// A file TagLib or the discoverer has read, ready to store.
    struct ReadFile: Sendable {
        var file: FolderWalk.File
        var outcome: Result<AudioFileMetadata, AudioFileReadError>
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

    private func insertTrack(file: FolderWalk.File, media: AudioFileMetadata, imageHash: String?) throws(SQLiteError) {
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
    func insertSyntheticTracks(_ tracks: [(file: FolderWalk.File, media: AudioFileMetadata)]) throws {
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
            // What MPD's `stats` calls `db_update`.
            try database.run(
                """
                INSERT INTO settings (key, value) VALUES ('scanned_at', ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, .text(String(Self.secondsSince1970())))
        }
        return artChanged
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
}
