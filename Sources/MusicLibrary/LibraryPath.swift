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
        let written: String? = path.withUTF8 { bytes -> String? in
            guard bytes.first == UInt8(ascii: "/") else { return nil }
            // The segments after the leading slash.
            let segments = UnsafeBufferPointer(rebasing: bytes.dropFirst())
            guard let encoded = encodedCount(ofSegments: segments) else { return nil }
            return String(unsafeUninitializedCapacity: fileScheme.count + bytes.count + 2 * encoded) { out in
                writeEncoded(bytes, into: out, at: write(fileScheme, into: out, at: 0))
            }
        }
        return written ?? fileURL(root, relative).absoluteString
    }

    /// ``fileURLString(_:_:)`` for every path below one root, the root's part checked and
    /// encoded once: a listing makes a URL for each of its rows, all below the library's root.
    struct FileURLWriter: Sendable {
        let root: String
        /// `file://` and the root's path as `URL` writes it, with no trailing slash; nil when
        /// the root's text is not one the fast path writes (every URL is then made through
        /// ``fileURLString(_:_:)``).
        private let prefix: [UInt8]?

        init(root: String) {
            self.root = root
            var text = root
            prefix = text.withUTF8 { bytes -> [UInt8]? in
                guard bytes.first == UInt8(ascii: "/") else { return nil }
                // The root `/`: the relative path's own slash follows `file://`.
                guard bytes.count > 1 else { return LibraryPath.fileScheme }
                let segments = UnsafeBufferPointer(rebasing: bytes.dropFirst())
                guard let encoded = LibraryPath.encodedCount(ofSegments: segments) else { return nil }
                let count = LibraryPath.fileScheme.count + bytes.count + 2 * encoded
                return [UInt8](unsafeUninitializedCapacity: count) { out, initialised in
                    initialised = LibraryPath.writeEncoded(
                        bytes, into: out, at: LibraryPath.write(LibraryPath.fileScheme, into: out, at: 0))
                }
            }
        }

        /// The `file:` URL's text of `relative` below the root: ``fileURLString(_:_:)``'s.
        func string(_ relative: String) -> String {
            var text = relative
            let written: String? = prefix.flatMap { prefix in
                text.withUTF8 { bytes -> String? in
                    guard !bytes.isEmpty, let encoded = LibraryPath.encodedCount(ofSegments: bytes) else { return nil }
                    return String(unsafeUninitializedCapacity: prefix.count + 1 + bytes.count + 2 * encoded) { out in
                        var at = LibraryPath.write(prefix, into: out, at: 0)
                        out[at] = UInt8(ascii: "/")
                        at += 1
                        return LibraryPath.writeEncoded(bytes, into: out, at: at)
                    }
                }
            }
            return written ?? LibraryPath.fileURLString(root, relative)
        }
    }

    private static let fileScheme: [UInt8] = Array("file://".utf8)

    /// How many bytes of `segments` (a path's segments, each after a slash) `URL` percent-encodes;
    /// nil when it may change their text otherwise: a control character, or an empty, `.` or
    /// `..` segment (so no doubled or trailing slash).
    private static func encodedCount(ofSegments segments: UnsafeBufferPointer<UInt8>) -> Int? {
        // The table once: each use of a global goes through its lazy initialiser's check.
        let kept = keptInURLPath
        func isDotsOrEmpty(_ segment: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            segment.count <= 2 && segment.allSatisfy { $0 == UInt8(ascii: ".") }
        }
        var encoded = 0
        var segmentStart = segments.startIndex
        for offset in segments.indices {
            let byte = segments[offset]
            if byte < 0x20 || byte == 0x7F { return nil }
            if byte == UInt8(ascii: "/") {
                if isDotsOrEmpty(segments[segmentStart..<offset]) { return nil }
                segmentStart = offset + 1
            }
            if !kept[Int(byte)] { encoded += 1 }
        }
        return isDotsOrEmpty(segments[segmentStart...]) ? nil : encoded
    }

    /// Writes `bytes` into `out` from `at` as they are; returns where they end.
    private static func write(_ bytes: [UInt8], into out: UnsafeMutableBufferPointer<UInt8>, at: Int) -> Int {
        var at = at
        for byte in bytes {
            out[at] = byte
            at += 1
        }
        return at
    }

    /// Writes `bytes` into `out` from `at`, each kept or percent-encoded as `URL` does; returns
    /// where they end.
    private static func writeEncoded(_ bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>, at: Int)
        -> Int
    {
        let kept = keptInURLPath
        let hex = hexDigits
        var at = at
        for byte in bytes {
            if kept[Int(byte)] {
                out[at] = byte
                at += 1
            } else {
                out[at] = UInt8(ascii: "%")
                out[at + 1] = hex[Int(byte >> 4)]
                out[at + 2] = hex[Int(byte & 0xF)]
                at += 3
            }
        }
        return at
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
