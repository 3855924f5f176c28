/// What one folder of the library holds directly: its subfolders, tracks and playlists (MPD's
/// `lsinfo`). Read by ``MusicLibrary/folderListing(_:)``.
public struct FolderListing: Sendable, Hashable {
    /// A folder inside the listed one that holds indexed tracks or playlists (at any depth).
    public struct Subfolder: Sendable, Hashable {
        /// The folder's path relative to the library's root, without a trailing slash.
        public var path: String
        /// The latest modification time of a track or playlist below it, in nanoseconds since
        /// 1970-01-01 UTC (what MPD shows as the folder's `Last-Modified`).
        public var modified: Int64

        public init(path: String, modified: Int64) {
            self.path = path
            self.modified = modified
        }
    }

    /// A playlist file of the folder, as indexed (read its entries with ``MusicLibrary/playlists()``).
    public struct PlaylistFile: Sendable, Hashable {
        /// The file's path relative to the library's root, as ``Playlist/id`` has it.
        public var path: String
        /// The playlist's name: its title, else the file name without its extension.
        public var name: String
        /// The file's modification time when it was read, in nanoseconds since 1970-01-01 UTC.
        public var modified: Int64

        public init(path: String, name: String, modified: Int64) {
            self.path = path
            self.name = name
            self.modified = modified
        }
    }

    /// The subfolders, by path (byte order).
    public var subfolders: [Subfolder]
    /// The tracks directly in the folder, by path.
    public var tracks: [Track]
    /// The playlists directly in the folder, by path.
    public var playlists: [PlaylistFile]

    public init(subfolders: [Subfolder] = [], tracks: [Track] = [], playlists: [PlaylistFile] = []) {
        self.subfolders = subfolders
        self.tracks = tracks
        self.playlists = playlists
    }
}

/// The library's figures for MPD's `stats`. Read by ``MusicLibrary/statistics()``.
public struct LibraryStatistics: Sendable, Hashable {
    /// How many tracks are indexed.
    public var tracks: Int
    /// How many distinct artists the tracks credit (each of a track's artists counts).
    public var artists: Int
    /// How many distinct album titles the tracks carry (tracks with no album not counted).
    public var albums: Int
    /// The sum of the tracks' lengths (those of unknown length count nothing).
    public var totalDuration: Duration
    /// When the index was last brought up to date by a scan, in seconds since 1970-01-01 UTC;
    /// for an index scanned before this was recorded, the index file's modification time; nil for
    /// an index in memory that no scan wrote.
    public var lastScan: Int64?

    public init(tracks: Int, artists: Int, albums: Int, totalDuration: Duration, lastScan: Int64?) {
        self.tracks = tracks
        self.artists = artists
        self.albums = albums
        self.totalDuration = totalDuration
        self.lastScan = lastScan
    }
}
