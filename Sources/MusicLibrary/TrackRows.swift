import Glibc
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The tree's tracks, numbered as the model numbers them: their paths, kept as bytes one after
/// another, and their fields, read when a row is shown.
///
/// A tree built from the index keeps no track: a row's fields are read from the index by path
/// (a prepared statement on the path's unique index) and the last few hundred are kept, so a
/// library of 50,000 tracks costs its paths and a few hundred tracks rather than 50,000 `Track`
/// values with their URLs. A tree built from tracks given in memory (an app's own, tests)
/// keeps them.
final class TrackRows: Sendable {
    /// Where a row's fields come from.
    enum Source: Sendable {
        /// The tracks themselves, in the model's order.
        case memory([Track])
        /// A reader of the tracks with some paths, in order (the index, in one transaction); nil
        /// for those gone.
        case reader(@Sendable ([Key]) -> [Track?])
    }

    /// A track to read: its path, and its row in the index when known (found by rowid, the
    /// table's own key, rather than through the path's index; the path tells a row since
    /// given to another track).
    struct Key: Sendable {
        let id: Track.ID
        let rowid: Int64?
    }

    private let source: Source
    /// Every path's UTF-8 bytes, one after another, in the model's order.
    private let pathBytes: [UInt8]
    /// Where each path ends in ``pathBytes``.
    private let pathEnds: [Int32]
    /// Track numbers ordered by their paths' bytes: a path is found by binary search.
    private let byPath: [Int32]
    /// Each track's row in the index, 0 where unknown; empty when none is known.
    private let rowids: [Int64]
    /// Each track's ``TrackOutlining/fingerprint``: what tells a rebuilt tree's changed rows
    /// from those it shows as before.
    let fingerprints: [Int]
    /// Tracks read lately, by number.
    private let recent = Mutex(RecentValues<Int, Track>(capacity: tracksKept))
    /// How many tracks a generation keeps: more than a page of rows and the rows around it.
    static let tracksKept = 512

    /// The rows of `ids` (unique), with their fingerprints and their rows in the index (0 where
    /// unknown, or none), their fields from `source`.
    init(ids: [Track.ID], fingerprints: [Int], rowids: [Int64] = [], source: Source) {
        precondition(rowids.isEmpty || rowids.count == ids.count, "a rowid per track, or none")
        self.source = source
        self.fingerprints = fingerprints
        self.rowids = rowids
        var bytes: [UInt8] = []
        var ends: [Int32] = []
        ends.reserveCapacity(ids.count)
        for id in ids {
            bytes.append(contentsOf: id.utf8)
            ends.append(Int32(bytes.count))
        }
        pathBytes = bytes
        pathEnds = ends
        byPath = bytes.withUnsafeBufferPointer { bytes in
            ends.withUnsafeBufferPointer { ends in
                (0..<Int32(ends.count)).sorted { left, right in
                    Self.compare(Self.slice(bytes, ends, Int(left)), Self.slice(bytes, ends, Int(right))) < 0
                }
            }
        }
    }

    /// The number of tracks.
    var count: Int { pathEnds.count }

    /// The tracks, when they are kept in memory (``Source/memory(_:)``).
    var tracksInMemory: [Track]? {
        if case .memory(let tracks) = source { tracks } else { nil }
    }
    var isEmpty: Bool { pathEnds.isEmpty }

    /// Track `index`'s path relative to the library root: its identifier.
    func id(_ index: Int) -> Track.ID {
        let start = index == 0 ? 0 : Int(pathEnds[index - 1])
        return String(decoding: pathBytes[start..<Int(pathEnds[index])], as: UTF8.self)
    }

    /// The number of the track whose identifier is `id`, or nil.
    func index(ofID id: Track.ID) -> Int? {
        var id = id
        return id.withUTF8 { wanted in
            pathBytes.withUnsafeBufferPointer { bytes in
                pathEnds.withUnsafeBufferPointer { ends in
                    var low = 0
                    var high = byPath.count
                    while low < high {
                        let middle = (low + high) / 2
                        let order = Self.compare(Self.slice(bytes, ends, Int(byPath[middle])), wanted)
                        if order == 0 { return Int(byPath[middle]) }
                        if order < 0 { low = middle + 1 } else { high = middle }
                    }
                    return nil
                }
            }
        }
    }

    /// Track `index` with every field, or nil when the index no longer has it (a rescan
    /// removed it; the tree that lists it is about to be replaced).
    func track(_ index: Int) -> Track? {
        switch source {
        case .memory(let tracks):
            return tracks[index]
        case .reader:
            if let cached = cached(index) { return cached }
            prefetch([index])
            return cached(index)
        }
    }

    /// Reads the tracks of `indexes` not kept yet, in one go: the rows a listing is about to
    /// show, read in one transaction rather than one at a time.
    ///
    /// Nothing is read when the first is kept already: a listing asks for its rows one after
    /// another, and the first one's read brought the rest.
    func prefetch(_ indexes: some Collection<Int>) {
        guard case .reader(let read) = source, let first = indexes.first else { return }
        let missing = recent.withLock { recent -> [Int] in
            if recent.contains(first) { return [] }
            return indexes.filter { !recent.contains($0) }
        }
        guard !missing.isEmpty else { return }
        let tracks = read(missing.map { Key(id: id($0), rowid: rowids.isEmpty || rowids[$0] == 0 ? nil : rowids[$0]) })
        recent.withLock { recent in
            for (index, track) in zip(missing, tracks) {
                if let track { recent.insert(track, for: index) }
            }
        }
    }

    /// Track `index` if it was read lately.
    private func cached(_ index: Int) -> Track? {
        recent.withLock { $0.value(for: index) }
    }

    private static func slice(_ bytes: UnsafeBufferPointer<UInt8>, _ ends: UnsafeBufferPointer<Int32>, _ index: Int)
        -> UnsafeBufferPointer<UInt8>
    {
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return UnsafeBufferPointer(rebasing: bytes[start..<Int(ends[index])])
    }

    /// The order of two byte strings (memcmp, then length): how the index tells paths apart.
    private static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(left.count, right.count)
        if common > 0 {
            let order = memcmp(left.baseAddress!, right.baseAddress!, common)
            if order != 0 { return Int(order) }
        }
        return left.count - right.count
    }
}

/// Every folder's cover image as the index holds it, read once for a tree (its first page of
/// tracks) and kept with its reader: what a row of a track without a cover of its own shows.
/// The tree is built again when a cover changes (a track's outline counts its cover).
final class FolderCovers: Sendable {
    private let kept = Mutex<[Substring: String]?>(nil)

    init() {}

    /// The folders' covers, read with `read` the first time.
    func files(_ read: () throws(SQLiteError) -> [Substring: String]) throws(SQLiteError) -> [Substring: String] {
        if let files = kept.withLock({ $0 }) { return files }
        let files = try read()
        kept.withLock { $0 = files }
        return files
    }
}

/// What the tree is built from for each track: a ``Track``, or the few fields of an index row
/// (``TrackOutline``) when the tree reads its rows from the index.
protocol TrackOutlining {
    var id: Track.ID { get }
    var title: String { get }
    var artists: [String] { get }
    var album: String? { get }
    var albumArtists: [String] { get }
    var discNumber: Int? { get }
    var trackNumber: Int? { get }
    var releaseDate: String? { get }
    /// The length, and the genres: whether the track remembers where it was left (see ``ResumePolicy``).
    var duration: Duration? { get }
    var genres: [String] { get }
    /// The track's row in the index, when it comes from there (0 otherwise).
    var rowid: Int64 { get }
    /// Whether the track has a cover (embedded, or an image in its folder).
    var hasArtwork: Bool { get }
    /// Changes whenever anything its row shows changes (equal values otherwise, within one
    /// process): the tree compares rebuilt rows by it.
    var fingerprint: Int { get }
}

extension Track: TrackOutlining {
    var hasArtwork: Bool { artwork != nil }
    var rowid: Int64 { 0 }
    var fingerprint: Int { hashValue }
}

/// A track as the index outlines it for building the tree: the fields that place it, and a
/// fingerprint of the file as read (its size and time, its cover's source), which changes
/// when its tags or cover do.
struct TrackOutline: TrackOutlining, Sendable {
    var id: Track.ID
    var title: String
    var artists: [String]
    var album: String?
    var albumArtists: [String]
    var discNumber: Int?
    var trackNumber: Int?
    var releaseDate: String?
    var duration: Duration?
    var genres: [String]
    var hasArtwork: Bool
    var fingerprint: Int
    var rowid: Int64
}
