import DBus
import GStreamerPlayback
import MediaRemote
import MusicLibrary
import Playback
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns library tracks, playlist streams and URLs that remotes open into queue entries, and
/// is the catalog the library's entries are described from.
///
/// A library track's entry is its path and nothing more: its URL is made from the path, and
/// its now-playing information read from the index when the player shows it, keeping the last
/// few hundred (the current entry and the window remotes see), so a queued library of 50,000
/// tracks holds 50,000 paths rather than 50,000 descriptions.
final class QueueItems: QueueItemCatalog {
    let library: MusicLibrary
    /// Descriptions read lately (nil for a track the index no longer has).
    private let recent = Mutex(RecentValues<String, NowPlayingInfo?>(capacity: descriptionsKept))
    /// How many descriptions a generation holds: more than the window remotes are shown.
    static let descriptionsKept = 256

    init(library: MusicLibrary) {
        self.library = library
    }

    /// The entry for a library track; its identifier is the track's path in the library.
    func item(for track: Track) -> QueueItem {
        item(forTrack: track.id)
    }

    /// The entry for the library track `id`.
    func item(forTrack id: Track.ID) -> QueueItem {
        QueueItem(identifier: id, catalog: self)
    }

    /// Forgets the descriptions read so far (a rescan changed tracks): the next are read anew.
    func forgetDescriptions() {
        recent.withLock { $0.removeAll() }
    }

    func url(ofItem key: String) -> URL {
        library.fileURL(ofTrack: key)
    }

    func info(ofItem id: String) -> NowPlayingInfo? {
        if let cached = recent.withLock({ $0.value(for: id) }) { return cached }
        let info = (try? library.track(id: id)).flatMap { $0 }.map { $0.nowPlayingInfo(artwork: artwork(for: $0)) }
        recent.withLock { $0.insert(info, for: id) }
        return info
    }

    /// The entry for a stream: live, with no length, titled `title` or after its address.
    func streamItem(_ url: URL, title: String? = nil) -> QueueItem {
        let name = title ?? url.host().map { $0 + url.path() } ?? url.absoluteString
        return QueueItem(
            identifier: url.absoluteString, url: url, info: NowPlayingInfo(title: name, assetURL: url, isLiveStream: true))
    }

    /// The entries a saved queue names, in its order: library tracks by identifier
    /// (then by file), streams by URL. Entries that no longer exist are left out.
    ///
    /// Reads the index's track paths once, not the tracks: a library entry is its path.
    func items(for entries: [PlayerSnapshot.Entry]) -> [QueueItem] {
        let indexed = (try? library.trackIDs()) ?? []
        return entries.compactMap { entry in
            // A second copy of a track was saved as `<id>#2`.
            for key in [entry.identifier, entry.identifier.savedTrackID] where indexed.contains(key) {
                return QueueItem(identifier: entry.identifier, catalog: self, key: key)
            }
            guard let url = entry.url else { return nil }
            if url.isFileURL {
                guard let track = try? library.track(at: url) else { return nil }
                return item(for: track)
            }
            let stream = streamItem(url)
            return QueueItem(identifier: entry.identifier, url: stream.url, info: stream.info)
        }
    }

    /// What a remote's "open" or "add track" plays: a library track, another
    /// regular file whose first bytes are audio of a type in `playableTypes`
    /// (with `libraryFilesOnly`, only inside the library), or an http(s)
    /// stream. Throws an ``OpenError`` saying why for anything else.
    func resolve(_ url: URL, playableTypes: Set<String>, libraryFilesOnly: Bool) throws -> QueueItem {
        switch url.scheme?.lowercased() {
        case "file":
            if let track = try library.track(at: url) { return item(for: track) }
            let path = url.path(percentEncoded: false)
            // Links resolved, so neither a link nor `..` leads out of the library unseen.
            guard let file = library.resolvedFile(at: url) else { throw OpenError.missing(path) }
            if libraryFilesOnly && !file.isInLibrary { throw OpenError.outsideLibrary(path) }
            if file.isInLibrary, let track = try library.track(at: URL(fileURLWithPath: file.path)) {
                return item(for: track)
            }
            let type = try Self.audioType(ofFileAt: file.path, shownAs: path)
            guard playableTypes.contains(type) else { throw OpenError.notAudio(path, type: type) }
            let name = url.deletingPathExtension().lastPathComponent
            return QueueItem(identifier: url.absoluteString, url: url, info: NowPlayingInfo(title: name, assetURL: url))
        case "http", "https":
            return streamItem(url)
        default:
            throw OpenError.unsupportedScheme(url.absoluteString)
        }
    }

    /// The audio MIME type of the regular file at `path` from its first bytes.
    ///
    /// Opened without blocking and checked on the descriptor, so a device, a
    /// FIFO or a folder (even one swapped in after a check) is refused
    /// without a read that could wait forever or never end.
    private static func audioType(ofFileAt path: String, shownAs shown: String) throws(OpenError) -> String {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw .unreadable(shown, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(shown) }
        var bytes = [UInt8](repeating: 0, count: MediaTypeFinder.sampleSize)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw .unreadable(shown, reason: String(cString: strerror(errno))) }
        let found = MediaTypeFinder.mediaType(of: Array(bytes.prefix(count)))
        guard let found, let audio = MediaTypeFinder.audioMIMEType(forFoundType: found) else {
            throw .notAudio(shown, type: found)
        }
        return audio
    }

    /// Why a URL a remote sent is not played; the description is the reason it is told.
    enum OpenError: Error, CustomStringConvertible {
        case missing(String)
        case unreadable(String, reason: String)
        case notRegularFile(String)
        case notAudio(String, type: String?)
        case outsideLibrary(String)
        case unsupportedScheme(String)

        var description: String {
            switch self {
            case .missing(let path): "there is no file at \(DBusError.excerpt(path))"
            case .unreadable(let path, let reason): "\(DBusError.excerpt(path)) cannot be read (\(reason))"
            case .notRegularFile(let path): "\(DBusError.excerpt(path)) is not a regular file"
            case .notAudio(let path, let type?): "\(DBusError.excerpt(path)) is not audio it plays (\(type))"
            case .notAudio(let path, nil): "\(DBusError.excerpt(path)) is not audio it plays"
            case .outsideLibrary(let path): "\(DBusError.excerpt(path)) is not in the library"
            case .unsupportedScheme(let url): "\(DBusError.excerpt(url)) is not a file, http or https URL"
            }
        }
    }

    /// A track's cover as remotes get it: a folder image's URL, or an embedded cover read from
    /// the index only when a remote shows it, into the one artwork store MPRIS and the tree
    /// share (bounded, content-addressed).
    func artwork(for track: Track) -> MediaItemArtwork? {
        track.artwork.flatMap(artwork(of:))
    }

    /// The artwork of a track's cover, by where it comes from (what the tree's rows show).
    func artwork(of cover: TrackArtwork) -> MediaItemArtwork? {
        switch cover {
        case .file(let url): return .url(url)
        case .embedded(let sha256):
            let library = self.library
            return .requested(identifier: sha256, load: ArtworkLoader { try? library.artworkData(for: .embedded(sha256: sha256)) })
        }
    }
}

extension String {
    /// A saved entry's track id: a duplicate entry's `#2` suffix removed.
    var savedTrackID: String {
        guard let hash = lastIndex(of: "#"), self[index(after: hash)...].allSatisfy(\.isNumber),
            index(after: hash) != endIndex
        else { return self }
        return String(self[..<hash])
    }
}
