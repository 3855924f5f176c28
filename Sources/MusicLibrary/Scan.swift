/// How far a scan has come; reported while files are read.
public struct ScanProgress: Sendable, Hashable {
    /// Audio files and playlists dealt with so far, unchanged ones included.
    public var examined: Int
    /// Audio files and playlists found in the folder.
    public var total: Int
    /// The file just dealt with, relative to the root ("" before the first).
    public var currentPath: String

    /// Creates a progress report.
    public init(examined: Int, total: Int, currentPath: String) {
        self.examined = examined
        self.total = total
        self.currentPath = currentPath
    }
}

/// A file or folder the library could not read, and why.
public struct ScanFailure: Sendable, Hashable {
    /// The path relative to the library root.
    public var path: String
    /// A sentence for people, with the reader's or the system's own message.
    public var reason: String

    /// Creates a failure record.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// What a scan changed.
public struct ScanSummary: Sendable, Hashable {
    /// Tracks new to the index.
    public var added: Int
    /// Tracks re-read because their size or modification time changed.
    public var updated: Int
    /// Tracks gone from the index: their file vanished, or no longer reads.
    public var removed: Int
    /// Audio files and playlists left as indexed because their size and modification time did
    /// not change (files that failed before and did not change included): none of them was read.
    public var unchanged: Int
    /// Files read by GStreamer's discoverer during this scan.
    public var read: Int
    /// Everything that cannot be read now, by path, carried-over failures of unchanged files
    /// included: the same list as ``MusicLibrary/failures()``.
    public var failures: [ScanFailure]
    /// Playlists in the library after the scan.
    public var playlists: Int
    /// Wall-clock time the scan took.
    public var duration: Duration

    /// Creates a summary; every count defaults to zero.
    public init(
        added: Int = 0, updated: Int = 0, removed: Int = 0, unchanged: Int = 0, read: Int = 0,
        failures: [ScanFailure] = [], playlists: Int = 0, duration: Duration = .zero
    ) {
        self.added = added
        self.updated = updated
        self.removed = removed
        self.unchanged = unchanged
        self.read = read
        self.failures = failures
        self.playlists = playlists
        self.duration = duration
    }
}
