import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Path arithmetic on plain strings: the library keys files by their path relative to the root.
enum LibraryPath {
    /// `path` made absolute (against the working directory) and normalised lexically: no `.`,
    /// no `..`, no doubled or trailing slashes. Links are not resolved.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return normalised(path) }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let directory = getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "/"
        return normalised(directory + "/" + path)
    }

    /// An absolute `path` normalised lexically (see ``absolute(_:)``).
    static func normalised(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        // Appended, not `joined(separator:)`, whose generic witness lookup is a scan of all the
        // binary's protocol conformances the first time: this runs before the daemon's bus name.
        var normalised = ""
        for part in parts {
            normalised.append("/")
            normalised.append(contentsOf: part)
        }
        return normalised.isEmpty ? "/" : normalised
    }

    /// The absolute path of `relative` (a path relative to `root`; "" is the root itself).
    static func joined(_ root: String, _ relative: String) -> String {
        if relative.isEmpty { return root }
        return root == "/" ? "/" + relative : root + "/" + relative
    }

    /// The `file:` URL of `relative` below `root`: how every track's and cover's URL is made,
    /// so that URLs of the same file compare equal.
    static func fileURL(_ root: String, _ relative: String) -> URL {
        URL(filePath: joined(root, relative), directoryHint: .notDirectory)
    }

    /// `path` relative to `root` (both normalised); nil when it is not strictly inside the root.
    static func relative(_ path: String, to root: String) -> String? {
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        return String(path.dropFirst(prefix.count))
    }

    /// The canonical path of an existing file (links resolved); nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The folder part of a relative path ("" for a file at the root).
    static func folder(of relativePath: String) -> String {
        guard let slash = relativePath.lastIndex(of: "/") else { return "" }
        return String(relativePath[..<slash])
    }

    /// The last component without its extension: the title of an untagged file.
    static func stem(of path: String) -> String {
        let name = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path[...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return String(name) }
        return String(name[..<dot])
    }

    /// Creates `path` and any missing parent folders, mode 0700: the index tells what the user
    /// listens to, so only the user reads it. Throws the system's reason.
    static func makeFolders(_ path: String) throws(MusicLibraryError) {
        var current = ""
        for part in normalised(path).split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw MusicLibraryError.cannotCreateFolder(current, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// A system call's failure, with the system's words for it.
    struct SystemError: Error {
        var reason: String
        init(errno code: Int32) { reason = String(cString: strerror(code)) }
    }

    /// The whole contents of the file at `path`.
    static func contents(of path: String) -> Result<[UInt8], SystemError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(SystemError(errno: errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return .success(bytes) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(SystemError(errno: errno))
            }
            bytes += chunk[..<count]
        }
    }
}
