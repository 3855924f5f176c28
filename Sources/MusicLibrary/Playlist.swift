#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A playlist file of the library (`.m3u`, `.m3u8` or `.pls`) and its entries.
public struct Playlist: Sendable, Hashable, Identifiable {
    /// The playlist file's path relative to the library root.
    public var id: String
    /// The name from an M3U `#PLAYLIST:` line, else the file name without its extension.
    public var name: String
    /// The playlist file's `file:` URL.
    public var url: URL
    /// The entries in the file's order.
    public var entries: [PlaylistEntry]

    /// Creates a playlist; the library makes these, tests and previews may too.
    public init(id: String, name: String, url: URL, entries: [PlaylistEntry]) {
        self.id = id
        self.name = name
        self.url = url
        self.entries = entries
    }
}

/// One line of a playlist, resolved against the library.
public enum PlaylistEntry: Sendable, Hashable {
    /// A track of the library (a relative or absolute path, or a `file:` URL, that names one).
    case track(Track.ID)
    /// A network stream (`http:`, `https:` or another non-file URL), with the title the playlist
    /// gives it (`#EXTINF`, `TitleN`).
    case stream(URL, title: String?)
    /// A file that is not in the library: missing, not audio, unreadable or outside the root. The
    /// text is the entry as written in the playlist.
    case missing(String)
}

/// Reading playlist files: M3U (extended or not; `.m3u8` is UTF-8, `.m3u` UTF-8 or else
/// Latin-1) and PLS.
enum PlaylistFile {
    /// An entry as the file writes it.
    struct Line: Equatable {
        var location: String
        var title: String?
    }

    /// The entries and the name (M3U `#PLAYLIST:`) of a playlist file's `bytes`; `fileExtension`
    /// (lowercase) says the format.
    static func parse(_ bytes: [UInt8], fileExtension: String) -> (lines: [Line], name: String?) {
        let text = decode(bytes)
        return fileExtension == "pls" ? (parsePLS(text), nil) : parseM3U(text)
    }

    private static func decode(_ bytes: [UInt8]) -> String {
        var bytes = bytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        // Old .m3u files are Latin-1, whose bytes are the first 256 code points.
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    private static func lines(of text: String) -> [Substring] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingWhitespace() }
            .filter { !$0.isEmpty }
    }

    private static func parseM3U(_ text: String) -> (lines: [Line], name: String?) {
        var entries: [Line] = []
        var name: String?
        var pendingTitle: String?
        for line in lines(of: text) {
            if line.hasPrefix("#") {
                if line.hasPrefix("#EXTINF:") {
                    pendingTitle = extendedInfoTitle(line.dropFirst("#EXTINF:".count))
                } else if line.hasPrefix("#PLAYLIST:") {
                    let value = line.dropFirst("#PLAYLIST:".count).trimmingWhitespace()
                    if !value.isEmpty { name = String(value) }
                }
                continue
            }
            entries.append(Line(location: String(line), title: pendingTitle))
            pendingTitle = nil
        }
        return (entries, name)
    }

    /// The title after the first comma outside quotes of `#EXTINF:<seconds> <attributes>,<title>`.
    private static func extendedInfoTitle(_ info: Substring) -> String? {
        var quoted = false
        for index in info.indices {
            switch info[index] {
            case "\"": quoted.toggle()
            case "," where !quoted:
                let title = info[info.index(after: index)...].trimmingWhitespace()
                return title.isEmpty ? nil : String(title)
            default: continue
            }
        }
        return nil
    }

    private static func parsePLS(_ text: String) -> [Line] {
        var locations: [Int: String] = [:]
        var titles: [Int: String] = [:]
        for line in lines(of: text) {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace().lowercased()
            let value = String(line[line.index(after: equals)...].trimmingWhitespace())
            if key.hasPrefix("file"), let number = Int(key.dropFirst(4)) {
                locations[number] = value
            } else if key.hasPrefix("title"), let number = Int(key.dropFirst(5)), !value.isEmpty {
                titles[number] = value
            }
        }
        return locations.keys.sorted().compactMap { number in
            guard let location = locations[number], !location.isEmpty else { return nil }
            return Line(location: location, title: titles[number])
        }
    }

    /// Where an entry points.
    enum Target: Equatable {
        /// A file under the root, by its path relative to the root (it may not exist).
        case inLibrary(String)
        case stream(URL)
        /// Outside the root, or not understood.
        case elsewhere
    }

    /// Resolves `location` as written in a playlist whose folder is `folder` (absolute), against
    /// the library `root` (absolute, normalised).
    static func resolve(_ location: String, folder: String, root: String) -> Target {
        let path: String
        if let scheme = urlScheme(of: location) {
            guard let url = URL(string: location) else { return .elsewhere }
            guard scheme == "file" else { return .stream(url) }
            path = url.path(percentEncoded: false)
        } else if location.hasPrefix("/") {
            path = location
        } else {
            path = folder + "/" + location
        }
        let normalised = LibraryPath.normalised(path)
        if let relative = LibraryPath.relative(normalised, to: root) { return .inLibrary(relative) }
        // The playlist may name the real path of a root reached through a symbolic link.
        if let real = LibraryPath.realPath(normalised), let realRoot = LibraryPath.realPath(root),
            let relative = LibraryPath.relative(real, to: realRoot)
        {
            return .inLibrary(relative)
        }
        return .elsewhere
    }

    /// The lowercased scheme of a `scheme://...` location; nil for paths.
    private static func urlScheme(of location: String) -> String? {
        guard let colon = location.firstIndex(of: ":"), location[colon...].hasPrefix("://") else { return nil }
        let scheme = location[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return scheme.lowercased()
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result = result.dropFirst() }
        while let last = result.last, last.isWhitespace { result = result.dropLast() }
        return result
    }
}
