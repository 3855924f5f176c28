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

    /// ``fileURL(_:_:)``'s `absoluteString`, written without making the `URL` (a tenth of a
    /// page of track rows' time): `file://` and the path, each byte kept or percent-encoded as
    /// `URL` does. A path whose text `URL` may change otherwise (empty, `.` or `..` segments, a
    /// trailing slash, control characters) is made through `URL`.
    static func fileURLString(_ root: String, _ relative: String) -> String {
        var path = joined(root, relative)
        // The tables once: each use of a global reached it through its lazy initialiser's check.
        let keptInURLPath = Self.keptInURLPath
        let hexDigits = Self.hexDigits
        let written: String? = path.withUTF8 { bytes -> String? in
            guard bytes.first == UInt8(ascii: "/"), bytes.last != UInt8(ascii: "/") else { return nil }
            var encoded = 0
            var segmentStart = 0
            for (offset, byte) in bytes.enumerated() {
                if byte < 0x20 || byte == 0x7F { return nil }
                if byte == UInt8(ascii: "/") {
                    // An empty, `.` or `..` segment before this slash.
                    let segment = offset - segmentStart
                    if offset > 0 && (segment == 0 || (segment <= 2 && bytes[segmentStart..<offset].allSatisfy { $0 == UInt8(ascii: ".") })) {
                        return nil
                    }
                    segmentStart = offset + 1
                }
                if !keptInURLPath[Int(byte)] { encoded += 1 }
            }
            let last = bytes.count - segmentStart
            if last <= 2 && bytes[segmentStart...].allSatisfy({ $0 == UInt8(ascii: ".") }) { return nil }
            let scheme: StaticString = "file://"
            return String(unsafeUninitializedCapacity: scheme.utf8CodeUnitCount + bytes.count + 2 * encoded) { out in
                var at = 0
                for byte in UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount) {
                    out[at] = byte
                    at += 1
                }
                for byte in bytes {
                    if keptInURLPath[Int(byte)] {
                        out[at] = byte
                        at += 1
                    } else {
                        out[at] = UInt8(ascii: "%")
                        out[at + 1] = hexDigits[Int(byte >> 4)]
                        out[at + 2] = hexDigits[Int(byte & 0xF)]
                        at += 3
                    }
                }
                return at
            }
        }
        return written ?? fileURL(root, relative).absoluteString
    }

    /// The bytes `URL(filePath:)` writes as they are in a path: letters, digits and
    /// `!$&'()*+,-./:;=@_~`; every other byte is percent-encoded.
    private static let keptInURLPath: [Bool] = (0..<256).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!$&'()*+,-./:;=@_~".utf8.contains(UInt8(byte))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

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
