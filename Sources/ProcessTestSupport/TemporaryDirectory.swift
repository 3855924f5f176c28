import Glibc

/// A fresh directory under `/tmp` (mode 0700) for one test's files; ``remove()`` deletes it with
/// everything in it.
///
/// ```swift
/// let folder = try TemporaryDirectory(prefix: "artwork")
/// defer { folder.remove() }
/// ```
public struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// Creates `/tmp/PREFIX-XXXXXX` with `mkdtemp`.
    public init(prefix: String) throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw TemporaryDirectoryError(path: "/tmp/\(prefix)-XXXXXX", code: errno)
        }
        path = String(cString: created)
    }

    /// Deletes the directory and everything below it (symbolic links are removed, not followed).
    public func remove() {
        removeTree(path)
    }
}

/// Deletes `path` and everything below it; symbolic links are removed, not followed. A path
/// that does not exist is no error.
public func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    guard info.st_mode & S_IFMT == S_IFDIR else {
        unlink(path)
        return
    }
    for name in directoryEntries(path) ?? [] { removeTree(path + "/" + name) }
    rmdir(path)
}

/// The names in the directory at `path`, "." and ".." left out, in the order the system lists
/// them; nil when it cannot be read. Opening the listing takes one descriptor while it runs.
public func directoryEntries(_ path: String) -> [String]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Where SwiftPM put the package's executables: the folder of the running test bundle, so a test
/// can start an example or a daemon the way a user would.
public let buildProductsFolder: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let executable = String(decoding: buffer[..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(executable[..<(executable.lastIndex(of: "/") ?? executable.startIndex)])
}()

/// The root of the mpris-bridge checkout these sources are in, so tests find the repository's
/// scripts and contract files (`Scripts/check-contract.py`, `dbus/`, `Tests/*/Python`).
public let repositoryRoot: String = {
    var path = #filePath  // …/Sources/ProcessTestSupport/TemporaryDirectory.swift
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path
}()

/// `mkdtemp` failed: the template and `errno`.
struct TemporaryDirectoryError: Error, CustomStringConvertible {
    let path: String
    let code: Int32
    var description: String { "mkdtemp \(path): \(String(cString: strerror(code)))" }
}
