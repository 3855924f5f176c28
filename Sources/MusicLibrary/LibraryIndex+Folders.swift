import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The library read folder by folder, as MPD's database commands see it: ranges of the `path`
/// index (a folder `F` is the range `F/` ≤ path < `F0`, `0` being the byte after `/`), so that a
/// folder's cost grows with what is in it, not with the library.
extension LibraryIndex {
    /// The bounds of the paths below `folder` ("" is the root): the inclusive lower, and the
    /// exclusive upper (nil: no bound).
    static func pathRange(below folder: String) -> (lower: String, upper: String?) {
        folder.isEmpty ? ("", nil) : (folder + "/", folder + "0")
    }

    /// Up to `limit` tracks below `folder`, after the path `after` (nil: from the first), by path.
    func tracks(
        below folder: String, after: String?, limit: Int, folderArt: [Substring: URL]
    ) throws(SQLiteError) -> [Track] {
        let (lower, upper) = Self.pathRange(below: folder)
        // One lower bound, so that the index is entered there (`after` lies at or above `lower`).
        var sql = Self.trackColumns + (after == nil ? " WHERE path >= ?" : " WHERE path > ?")
        var arguments: [SQLiteValue] = [.text(after ?? lower)]
        if let upper {
            sql += " AND path < ?"
            arguments.append(.text(upper))
        }
        sql += " ORDER BY path LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        var tracks: [Track] = []
        try database.forEachRow(sql, arguments) { row throws(SQLiteError) in
            tracks.append(track(row, folderArt: folderArt))
        }
        return tracks
    }

    /// The cover files of `folder` and the folders below it, as URLs.
    func folderArtURLs(below folder: String) throws(SQLiteError) -> [Substring: URL] {
        let (lower, upper) = Self.pathRange(below: folder)
        guard let upper else { return try folderArtFiles().mapValues(fileURL) }
        var urls: [Substring: URL] = [:]
        let sql = "SELECT folder, file FROM folder_art WHERE folder = ? OR (folder >= ? AND folder < ?)"
        try database.forEachRow(sql, [.text(folder), .text(lower), .text(upper)]) {
            row throws(SQLiteError) in
            if let folder = row.text(0), let file = row.text(1) { urls[folder[...]] = fileURL(file) }
        }
        return urls
    }

    /// The paths of the tracks below `folder`, in MPD's database order: a folder's files by name,
    /// then its subfolders by name, each with its contents.
    func trackPaths(below folder: String) throws(SQLiteError) -> [String] {
        let (lower, upper) = Self.pathRange(below: folder)
        var keyed: [(key: [UInt8], path: String)] = []
        let sql = upper == nil ? "SELECT path FROM tracks" : "SELECT path FROM tracks WHERE path >= ? AND path < ?"
        try database.forEachRow(sql, upper.map { [.text(lower), .text($0)] } ?? []) { row throws(SQLiteError) in
            let path = row.text(0) ?? ""
            keyed.append((Self.databaseOrderKey(path), path))
        }
        keyed.sort { $0.key.lexicographicallyPrecedes($1.key) }
        return keyed.map(\.path)
    }

    /// Bytes that sort as MPD's database walk does: each folder of the path as 2, its name and 0,
    /// then the file as 1 and its name, so that files precede subfolders and a folder `A` precedes
    /// `A B` (whose paths, compared as bytes, would come first: a space sorts before `/`).
    static func databaseOrderKey(_ path: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(path.utf8.count + 8)
        var components = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)[...]
        let file = components.popLast()
        for component in components {
            key.append(2)
            key.append(contentsOf: component)
            key.append(0)
        }
        key.append(1)
        if let file { key.append(contentsOf: file) }
        return key
    }

    /// What `folder` holds directly; nil when no track or playlist lies below it ("" always has a
    /// listing). Subfolders are found by skipping from one to the next in the path index (a query
    /// per subfolder and per track of the folder); of the tracks below a subfolder only `modified`
    /// is read, for its latest modification.
    func folderListing(_ folder: String) throws(SQLiteError) -> FolderListing? {
        let (lower, upper) = Self.pathRange(below: folder)
        let prefixLength = lower.utf8.count
        var listing = FolderListing()
        var folderArt: [Substring: URL] = [:]
        try database.forEachRow("SELECT file FROM folder_art WHERE folder = ?", [.text(folder)]) {
            row throws(SQLiteError) in
            if let file = row.text(0) { folderArt[folder[...]] = fileURL(file) }
        }
        let bound = upper == nil ? "" : " AND path < ?"
        let from = Self.trackColumns + " WHERE path >= ?" + bound + " ORDER BY path LIMIT 1"
        let after = Self.trackColumns + " WHERE path > ?" + bound + " ORDER BY path LIMIT 1"
        var cursor = lower
        var inclusive = true
        var subfolders: [String: Int64] = [:]
        while true {
            var next: (path: String, subfolder: String?)?
            let arguments: [SQLiteValue] = [.text(cursor)] + (upper.map { [.text($0)] } ?? [])
            try database.forEachRow(inclusive ? from : after, arguments) { row throws(SQLiteError) in
                let path = row.text(0) ?? ""
                let rest = path.utf8.dropFirst(prefixLength)
                if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                    next = (path, String(path[..<slash]))
                } else {
                    next = (path, nil)
                    listing.tracks.append(track(row, folderArt: folderArt))
                }
            }
            guard let found = next else { break }
            if let subfolder = found.subfolder {
                subfolders[subfolder] = try latestModification(below: subfolder)
                (cursor, inclusive) = (subfolder + "0", true)
            } else {
                (cursor, inclusive) = (found.path, false)
            }
        }
        var sql = "SELECT path, name, modified FROM playlists WHERE path >= ?" + bound + " ORDER BY path"
        if upper == nil { sql = "SELECT path, name, modified FROM playlists ORDER BY path" }
        try database.forEachRow(sql, upper.map { [.text(lower), .text($0)] } ?? []) { row throws(SQLiteError) in
            let path = row.text(0) ?? ""
            let modified = row.integer(2) ?? 0
            let rest = path.utf8.dropFirst(prefixLength)
            if let slash = rest.firstIndex(of: UInt8(ascii: "/")) {
                let subfolder = String(path[..<slash])
                subfolders[subfolder] = max(subfolders[subfolder] ?? modified, modified)
            } else {
                listing.playlists.append(
                    FolderListing.PlaylistFile(path: path, name: row.text(1) ?? "", modified: modified))
            }
        }
        listing.subfolders = subfolders.map { FolderListing.Subfolder(path: $0.key, modified: $0.value) }
            .sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        if !folder.isEmpty, listing.subfolders.isEmpty, listing.tracks.isEmpty, listing.playlists.isEmpty { return nil }
        return listing
    }

    /// The latest modification time of the tracks below `folder`, in nanoseconds since 1970.
    private func latestModification(below folder: String) throws(SQLiteError) -> Int64 {
        let (lower, upper) = Self.pathRange(below: folder)
        let sql = "SELECT max(modified) FROM tracks WHERE path >= ? AND path < ?"
        return try database.integer(sql, .text(lower), .text(upper ?? "")) ?? 0
    }

    /// The figures of MPD's `stats` but the last scan's time: one pass over three columns.
    func contentStatistics() throws(SQLiteError) -> LibraryStatistics {
        var (tracks, nanoseconds): (Int, Int64) = (0, 0)
        var artists: Set<String> = []
        var albums: Set<String> = []
        try database.forEachRow("SELECT artists, album, duration FROM tracks") { row throws(SQLiteError) in
            tracks += 1
            nanoseconds &+= row.integer(2) ?? 0
            if let album = row.text(1), !album.isEmpty { albums.insert(album) }
            for artist in Self.split(row.text(0)) where !artist.isEmpty { artists.insert(artist) }
        }
        return LibraryStatistics(
            tracks: tracks, artists: artists.count, albums: albums.count, totalDuration: .nanoseconds(nanoseconds),
            lastScan: nil)
    }

    /// When a scan last finished (seconds since 1970): as recorded, else the index file's time.
    func lastScan(indexPath: String) throws(SQLiteError) -> Int64? {
        var lastScan: Int64?
        try database.forEachRow("SELECT value FROM settings WHERE key = 'scanned_at'") { row throws(SQLiteError) in
            lastScan = row.text(0).flatMap { Int64($0) }
        }
        if lastScan == nil, indexPath != ":memory:" {
            // An index scanned before the time was kept: its file's time (the log's, when newer).
            for path in [indexPath, indexPath + "-wal"] {
                var status = stat()
                if stat(path, &status) == 0 { lastScan = max(lastScan ?? 0, Int64(status.st_mtim.tv_sec)) }
            }
        }
        return lastScan
    }
}
