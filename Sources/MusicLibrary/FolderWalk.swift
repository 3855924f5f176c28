import Glibc

/// One pass over a music folder: its audio files and playlists with their sizes and modification
/// times, the cover image of each folder, and what could not be read.
///
/// Hidden entries (names starting with a dot) are skipped. Symbolic links are followed while they
/// lead to a place inside the library (the root's canonical path); a link that leads outside is
/// not followed, and listed as a failure when it would have been indexed or walked. A folder
/// reached twice (a link loop) is walked once.
struct FolderWalk {
    /// A file the library indexes.
    struct File: Sendable, Hashable {
        /// The path relative to the root.
        var path: String
        var size: Int
        /// Nanoseconds since 1970-01-01 UTC.
        var modified: Int64
        var kind: Kind
    }

    enum Kind: Sendable, Hashable {
        case audio
        case playlist
    }

    /// Audio files and playlists, sorted by path.
    private(set) var files: [File] = []
    /// Folder (relative path, "" for the root) → its cover image (relative path).
    private(set) var folderArt: [String: String] = [:]
    /// Folders that could not be listed, and indexable files whose status cannot be read (a
    /// dangling link).
    private(set) var failures: [ScanFailure] = []

    /// File name extensions (lowercase) of audio files: GStreamer reads them all with the usual
    /// plugin sets.
    static let audioExtensions: Set<String> = [
        "mp3", "mp2", "ogg", "oga", "opus", "spx", "flac", "wav", "w64", "aif", "aiff", "aifc", "m4a", "m4b",
        "aac", "mka", "wma", "wv", "ape", "mpc", "tta", "ac3", "caf", "dsf",
    ]
    static let playlistExtensions: Set<String> = ["m3u", "m3u8", "pls"]
    /// Cover image names in order of preference, and their extensions.
    static let coverNames = ["cover", "folder", "front"]
    static let coverExtensions = ["jpg", "jpeg", "png", "webp"]

    /// Walks `root` (an absolute path). Throws ``MusicLibraryError/rootNotFound(_:)`` when the root
    /// is not a folder that can be listed.
    init(root: String) throws(MusicLibraryError) {
        var rootStatus = stat()
        guard stat(root, &rootStatus) == 0, rootStatus.st_mode & S_IFMT == S_IFDIR, let handle = opendir(root) else {
            throw MusicLibraryError.rootNotFound(root, reason: String(cString: strerror(errno)))
        }
        closedir(handle)
        let realRoot = LibraryPath.realPath(root) ?? root

        var visited: Set<FolderIdentity> = [FolderIdentity(rootStatus)]
        var pending = [""]
        while let folder = pending.popLast() {
            let absolute = LibraryPath.joined(root, folder)
            guard let directory = opendir(absolute) else {
                let reason = String(cString: strerror(errno))
                failures.append(ScanFailure(path: folder, reason: "cannot list folder: \(reason)"))
                continue
            }
            var bestCover: (rank: Int, path: String)?
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                guard !name.hasPrefix(".") else { continue }
                let relative = folder.isEmpty ? name : folder + "/" + name
                let fileExtension = Self.lowercasedExtension(of: name)
                let kind = Self.kind(forExtension: fileExtension)

                let entryPath = absolute + "/" + name
                var status = stat()
                guard lstat(entryPath, &status) == 0 else { continue }
                if status.st_mode & S_IFMT == S_IFLNK {
                    // What is indexed is served (tree, MPRIS, Rygel), so a link may only lead to
                    // another place inside the library, never to a file elsewhere.
                    if let target = LibraryPath.realPath(entryPath), !Self.isInside(target, realRoot) {
                        if kind != nil || Self.coverRank(name: name, extension: fileExtension) != nil
                            || Self.isFolder(entryPath)
                        {
                            failures.append(ScanFailure(path: relative, reason: "links outside the library"))
                        }
                        continue
                    }
                    guard stat(entryPath, &status) == 0 else {
                        if kind != nil {
                            let reason = String(cString: strerror(errno))
                            failures.append(ScanFailure(path: relative, reason: "cannot read: \(reason)"))
                        }
                        continue
                    }
                }
                switch status.st_mode & S_IFMT {
                case S_IFDIR:
                    if visited.insert(FolderIdentity(status)).inserted { pending.append(relative) }
                case S_IFREG:
                    if let kind {
                        let modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
                        files.append(File(path: relative, size: Int(status.st_size), modified: modified, kind: kind))
                    } else if let rank = Self.coverRank(name: name, extension: fileExtension),
                        rank < bestCover?.rank ?? Int.max
                    {
                        bestCover = (rank, relative)
                    }
                default:
                    continue
                }
            }
            closedir(directory)
            if let bestCover { folderArt[folder] = bestCover.path }
        }
        files.sort { $0.path < $1.path }
        failures.sort { $0.path < $1.path }
    }

    /// Whether the canonical path `path` is `root` (canonical) or lies below it.
    static func isInside(_ path: String, _ root: String) -> Bool {
        path == root || LibraryPath.relative(path, to: root) != nil
    }

    private static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// The extension after the last dot, lowercased; "" when there is none.
    static func lowercasedExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// Lower is better; nil for a file that is not a cover image.
    /// What a file with this (lowercase) extension is indexed as, or nil.
    static func kind(forExtension fileExtension: String) -> Kind? {
        audioExtensions.contains(fileExtension) ? .audio : playlistExtensions.contains(fileExtension) ? .playlist : nil
    }

    /// Whether a scan reads a file named `name`: audio, a playlist, or a folder's cover image.
    static func isRead(name: String) -> Bool {
        let fileExtension = lowercasedExtension(of: name)
        return kind(forExtension: fileExtension) != nil || coverRank(name: name, extension: fileExtension) != nil
    }

    private static func coverRank(name: String, extension fileExtension: String) -> Int? {
        guard let extensionRank = coverExtensions.firstIndex(of: fileExtension) else { return nil }
        let stem = name.dropLast(fileExtension.count + 1).lowercased()
        guard let nameRank = coverNames.firstIndex(of: stem) else { return nil }
        return nameRank * coverExtensions.count + extensionRank
    }

    private struct FolderIdentity: Hashable {
        var device: UInt64
        var inode: UInt64
        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }
}
