import Digest
import MediaRemote
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Synchronization

/// Writes artwork images once into content-addressed files under a cache
/// directory and hands out their file URLs; keeps the directory bounded.
///
/// MPRIS publishes cover art as `mpris:artUrl`, a `file://` URL that clients
/// open themselves, so image bytes handed over by an app must live in a file.
///
/// Invariants:
/// - An entry is named `<sha256>.<ext>`: 64 lowercase hex digits of the
///   SHA-256 of its bytes, and `jpg`, `png`, `gif`, `webp` or `bmp` from the
///   image's magic bytes. Equal images share one file; a name never changes
///   meaning, so an existing file is never rewritten.
/// - Files appear complete or not at all: they are written to a temporary
///   file in the same directory (named with a leading `.`, so never taken
///   for an entry), synced, then renamed into place. Entry files have mode
///   `0600`; a directory the cache creates (and its missing parents) `0700`.
/// - After each call the entries this instance knows of number at most
///   ``maximumFiles`` and total at most ``maximumBytes`` (file sizes, not
///   disk blocks); the least recently used go first, never the file the
///   call returned. Files that are not entries are left alone, except
///   temporary files over an hour old, left by a writer that crashed.
///
/// Thread safety: every member may be used from any thread or task. Several
/// instances, even in several processes, may share a directory: the worst
/// they do is write the same file twice, each atomically.
final class ArtworkCache: Sendable {
    /// The absolute path of the cache directory, without a trailing slash.
    let directory: String
    /// The most bytes the entries may hold together, counting file sizes.
    let maximumBytes: Int
    /// The most entry files the directory may hold.
    let maximumFiles: Int

    private let state: Mutex<State>

    /// Creates a cache in `directory`, which is created on first write if missing.
    ///
    /// Nothing touches the file system here: the directory is created and
    /// scanned on the first call to ``fileURL(for:)``.
    ///
    /// - Parameters:
    ///   - directory: where the files go; a relative path is taken from the
    ///     current directory now, since a `file://` URL must be absolute.
    ///   - maximumBytes: bound on the entries' total size in bytes, at least 1;
    ///     a single larger image is refused with ``ArtworkCacheError/tooLarge``.
    ///   - maximumFiles: bound on the number of entries, at least 1.
    init(directory: String, maximumBytes: Int = 64 << 20, maximumFiles: Int = 256) {
        precondition(maximumBytes > 0 && maximumFiles > 0, "ArtworkCache bounds must be positive")
        var path = directory
        if !path.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            path = String(cString: cwd) + "/" + path
            free(cwd)
        }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.directory = path
        self.maximumBytes = maximumBytes
        self.maximumFiles = maximumFiles
        self.state = Mutex(State())
    }

    /// The cache directory the XDG Base Directory specification asks for.
    ///
    /// `$XDG_CACHE_HOME/mpris-bridge/artwork` if `XDG_CACHE_HOME` is set to an
    /// absolute path (the specification says to ignore relative ones), else
    /// `$HOME/.cache/mpris-bridge/artwork`, taking the home directory from the
    /// password database when `HOME` is unset or relative.
    static func defaultDirectory(environment: [String: String]) -> String {
        func trimmed(_ path: String) -> String {
            var path = path
            while path.hasSuffix("/") { path.removeLast() }
            return path
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return trimmed(cache) + "/mpris-bridge/artwork"
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? passwordDatabaseHome() ?? "/"
        return trimmed(home) + "/.cache/mpris-bridge/artwork"
    }

    /// Where remotes find `artwork`: its own URL, or a `file://` URL of the
    /// bytes stored here. Bytes the cache refuses (not an image, too large,
    /// disk full) give no URL.
    func url(for artwork: MediaItemArtwork) -> URL? {
        switch artwork {
        case .url(let url): return url
        case .imageData(let data): return try? fileURL(for: data)
        case .requested(let identifier, let loader):
            // Named by its hash and stored already: no read, no hash.
            if let url = storedURL(sha256: identifier) { return url }
            return loader.load().flatMap { try? fileURL(for: $0) }
        }
    }

    /// The URL of an entry this instance knows whose name starts with `sha256` (64 lowercase
    /// hex digits), its use recorded; `nil` otherwise.
    private func storedURL(sha256: String) -> URL? {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        return state.withLock { state -> URL? in
            guard (try? prepareDirectory(&state)) != nil else { return nil }
            for ext in ["jpg", "png", "gif", "webp", "bmp"] {
                let name = sha256 + "." + ext
                guard let entry = state.index[name] else { continue }
                let path = directory + "/" + name
                // Someone may have cleared the cache since.
                guard Self.isRegularFile(path) else {
                    state.totalBytes -= entry.size
                    state.index[name] = nil
                    return nil
                }
                _ = utimensat(AT_FDCWD, path, nil, 0)
                state.recordUse(of: name, size: entry.size)
                return URL(fileURLWithPath: path, isDirectory: false)
            }
            return nil
        }
    }

    /// The file URL of `image` in the cache, writing it first if it is not there.
    ///
    /// Handing in the same bytes as the previous call returns the same URL
    /// without hashing them again, since apps republish their artwork on
    /// every play and pause. If the file exists already, its modification
    /// time is refreshed so that it counts as recently used, also by other
    /// processes sharing the directory. Writing a new file may evict the
    /// least recently used entries, never this one.
    ///
    /// - Throws: ``ArtworkCacheError/unrecognizedImage`` for bytes that are
    ///   not JPEG, PNG, GIF, WebP or BMP (empty data included),
    ///   ``ArtworkCacheError/tooLarge`` for an image of more than
    ///   ``maximumBytes`` bytes (neither writes anything), and
    ///   ``ArtworkCacheError/cannotWrite(path:message:)`` when the directory
    ///   or the file cannot be created.
    func fileURL(for image: Data) throws(ArtworkCacheError) -> URL {
        let memo = state.withLock { $0.memo }
        let name: String
        let hashed: Bool
        if let memo, memo.image == image {
            // Someone may have cleared the cache since; one lstat is cheap.
            if Self.isRegularFile(memo.path) { return memo.url }
            name = memo.name
            hashed = false
        } else {
            guard let ext = Self.fileExtension(for: image) else { throw .unrecognizedImage }
            guard image.count <= maximumBytes else { throw .tooLarge }
            // Hashing is the slow part; done outside the lock.
            name = SHA256.hex(SHA256.hash(image)) + "." + ext
            hashed = true
        }
        let path = directory + "/" + name
        let url = URL(fileURLWithPath: path, isDirectory: false)
        try state.withLock { (state: inout State) throws(ArtworkCacheError) -> Void in
            if hashed { state.hashCount += 1 }
            try store(image, named: name, at: path, in: &state)
            state.memo = Memo(image: image, name: name, path: path, url: url)
        }
        return url
    }

    /// How many images this instance has hashed: the previous call's image
    /// handed in again is not hashed. For tests and diagnostics.
    var hashedImageCount: Int { state.withLock { $0.hashCount } }

    // MARK: - State

    private struct State {
        /// The previous call's image and where it went.
        var memo: Memo?
        /// The entries in the directory by file name; valid once `scanned`.
        var index: [String: Entry] = [:]
        /// The sum of the sizes in `index`, in bytes.
        var totalBytes = 0
        var scanned = false
        /// Last-use stamps: increasing, so the order of use within this
        /// process does not depend on the file system's timestamp granularity.
        var clock: UInt64 = 0
        var hashCount = 0

        /// Notes that entry `name`, of `size` bytes, was used just now.
        mutating func recordUse(of name: String, size: Int) {
            clock += 1
            if let old = index[name] { totalBytes -= old.size }
            index[name] = Entry(size: size, lastUse: clock)
            totalBytes += size
        }
    }

    private struct Entry {
        /// The file size in bytes.
        var size: Int
        /// A `State.clock` stamp; the smallest is the least recently used.
        var lastUse: UInt64
    }

    private struct Memo: Sendable {
        var image: Data
        var name: String
        var path: String
        var url: URL
    }

    // MARK: - Storing

    /// Makes sure entry `name` at `path` holds `image`, then enforces the bounds.
    private func store(_ image: Data, named name: String, at path: String, in state: inout State)
        throws(ArtworkCacheError)
    {
        try prepareDirectory(&state)
        var info = stat()
        if lstat(path, &info) == 0, Self.isRegular(info), Int(info.st_size) == image.count {
            // Same name, same size: the same image (the name is its hash).
            // Failure to touch only makes it look older; not worth an error.
            _ = utimensat(AT_FDCWD, path, nil, 0)
        } else {
            try writeAtomically(image, to: path, name: name)
        }
        state.recordUse(of: name, size: image.count)
        evict(&state, sparing: name)
    }

    /// Creates the directory if missing and learns its entries the first time,
    /// or again if the directory vanished (someone cleared the cache).
    private func prepareDirectory(_ state: inout State) throws(ArtworkCacheError) {
        var info = stat()
        if state.scanned, stat(directory, &info) == 0, Self.isDirectory(info) { return }
        try Self.makeDirectories(directory)
        state.index = [:]
        state.totalBytes = 0
        try scan(&state)
        state.scanned = true
    }

    /// `mkdir -p` with mode 0700: cover art says what the user listens to.
    private static func makeDirectories(_ path: String) throws(ArtworkCacheError) {
        var info = stat()
        if stat(path, &info) == 0, isDirectory(info) { return }
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw .cannotWrite(path: prefix, message: errorMessage(errno))
            }
        }
        // EEXIST also covers a regular file standing where the directory should be.
        guard stat(path, &info) == 0 else { throw .cannotWrite(path: path, message: errorMessage(errno)) }
        guard isDirectory(info) else { throw .cannotWrite(path: path, message: errorMessage(ENOTDIR)) }
    }

    /// Reads the directory's entries into the index, oldest modification
    /// time first, and removes temporary files abandoned by crashed writers.
    private func scan(_ state: inout State) throws(ArtworkCacheError) {
        guard let stream = opendir(directory) else {
            throw .cannotWrite(path: directory, message: Self.errorMessage(errno))
        }
        defer { closedir(stream) }
        let fd = dirfd(stream)
        let staleBefore = time(nil) - 3600
        var found: [(seconds: Int, nanoseconds: Int, name: String, size: Int)] = []
        while let item = readdir(stream) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, Self.isRegular(info) else { continue }
            if Self.isEntryName(name) {
                found.append((info.st_mtim.tv_sec, info.st_mtim.tv_nsec, name, Int(info.st_size)))
            } else if name.hasPrefix("."), name.hasSuffix(".tmp"), info.st_mtim.tv_sec < staleBefore {
                _ = unlinkat(fd, name, 0)
            }
        }
        found.sort { ($0.seconds, $0.nanoseconds, $0.name) < ($1.seconds, $1.nanoseconds, $1.name) }
        for file in found { state.recordUse(of: file.name, size: file.size) }
    }

    /// Writes `image` to a temporary file beside `path`, syncs it and renames
    /// it into place, so readers never see a partial file. On failure the
    /// temporary file is removed.
    private func writeAtomically(_ image: Data, to path: String, name: String) throws(ArtworkCacheError) {
        var temporary = ""
        var fd: Int32 = -1
        // A random suffix: other threads or processes may be writing the same name.
        for _ in 0..<8 {
            temporary = directory + "/." + name + "." + String(UInt64.random(in: .min ... .max), radix: 36) + ".tmp"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw .cannotWrite(path: temporary, message: Self.errorMessage(errno)) }

        func failure(_ code: Int32, closing: Bool) -> ArtworkCacheError {
            if closing { close(fd) }
            unlink(temporary)
            return .cannotWrite(path: path, message: Self.errorMessage(code))
        }
        // Explicit, whatever the umask.
        _ = fchmod(fd, 0o600)
        let writeError = image.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int32 in
            guard let base = bytes.baseAddress else { return 0 }
            var offset = 0
            while offset < bytes.count {
                let count = write(fd, base + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                if count == 0 { return EIO }
                offset += count
            }
            return 0
        }
        if writeError != 0 { throw failure(writeError, closing: true) }
        // Without the sync, a crash soon after the rename can leave an empty file under the final name.
        if fsync(fd) != 0 { throw failure(errno, closing: true) }
        if close(fd) != 0 { throw failure(errno, closing: false) }
        if rename(temporary, path) != 0 { throw failure(errno, closing: false) }
    }

    /// Deletes the least recently used entries, except `kept`, until the
    /// index is within both bounds.
    private func evict(_ state: inout State, sparing kept: String) {
        func overBounds() -> Bool { state.index.count > maximumFiles || state.totalBytes > maximumBytes }
        guard overBounds() else { return }
        let oldestFirst = state.index.filter { $0.key != kept }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (name, entry) in oldestFirst {
            guard overBounds() else { return }
            // A file that cannot be deleted still takes space, so it stays counted.
            if unlink(directory + "/" + name) != 0 && errno != ENOENT { continue }
            state.index[name] = nil
            state.totalBytes -= entry.size
        }
    }

    // MARK: - Helpers

    /// The file extension for `image` from its magic bytes, or `nil` if it is
    /// not a JPEG, PNG, GIF, WebP or BMP image.
    static func fileExtension(for image: Data) -> String? {
        // Index-free comparisons: a Data slice need not start at index 0.
        if image.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpg" }
        if image.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if image.starts(with: Array("GIF87a".utf8)) || image.starts(with: Array("GIF89a".utf8)) { return "gif" }
        if image.starts(with: Array("RIFF".utf8)), image.dropFirst(8).starts(with: Array("WEBP".utf8)) {
            return "webp"
        }
        if image.starts(with: Array("BM".utf8)) { return "bmp" }
        return nil
    }

    /// Whether `name` is an entry's: 64 lowercase hex digits, a dot, a known extension.
    static func isEntryName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard utf8.count > 65, utf8[64] == UInt8(ascii: ".") else { return false }
        let isHex = utf8[..<64].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return isHex && ["jpg", "png", "gif", "webp", "bmp"].contains(String(decoding: utf8[65...], as: UTF8.self))
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && isRegular(info)
    }

    private static func isRegular(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }
    private static func isDirectory(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }

    private static func errorMessage(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// The current user's home directory from the password database, if any.
    private static func passwordDatabaseHome() -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 16384) { buffer in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            guard let base = buffer.baseAddress, getpwuid_r(getuid(), &entry, base, buffer.count, &result) == 0,
                result != nil, let home = entry.pw_dir, home.pointee != 0
            else { return nil }
            return String(cString: home)
        }
    }
}

/// Why ``ArtworkCache/fileURL(for:)`` could not hand out a URL.
enum ArtworkCacheError: Error, Equatable, CustomStringConvertible {
    /// The bytes are not a JPEG, PNG, GIF, WebP or BMP image (by their magic
    /// bytes), or are empty. Nothing was written.
    case unrecognizedImage
    /// The image has more bytes than the cache's ``ArtworkCache/maximumBytes``.
    /// Nothing was written.
    case tooLarge
    /// The file system refused: `path` could not be created or written, and
    /// `message` is the system's description of the `errno`.
    case cannotWrite(path: String, message: String)

    var description: String {
        switch self {
        case .unrecognizedImage: "not a JPEG, PNG, GIF, WebP or BMP image"
        case .tooLarge: "image larger than the artwork cache's size bound"
        case .cannotWrite(let path, let message): "cannot write \(path): \(message)"
        }
    }
}
