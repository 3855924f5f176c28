#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The fields a track's row shows, for every track of one tree, in columns: read from the
/// index in one pass, so that a page of rows reads no SQLite and makes no ``Track``.
///
/// Numbered as the tree's ``TrackRows``. Texts a row shows as they are (its title) are kept as
/// bytes one after another; texts many tracks share (artists, albums, genres, dates, MIME
/// types) as numbers into one table of strings, and covers into one table of
/// ``TrackArtwork``s. Each text is kept as the row shows it (the artists' line, the album
/// without an empty title), so a row is made from them with no work but copying. At 50,000
/// tracks about 4 MB.
///
/// A snapshot of the index when it was read: the tree is rebuilt after every scan that changed
/// anything (see ``LibraryContent/update(from:)``), and its rows read again. A track of the tree
/// that the index did not hold then is not ``has(_:)``: its row is read from the index as before.
final class TrackColumns: Sendable {
    /// The number standing for “none” in the columns of numbers into ``strings`` and ``covers``.
    static let none: Int32 = -1
    /// Standing for an absent track number, length.
    static let noNumber = Int.min
    static let noDuration = Int64.min

    /// The library's root, which a track's `file:` URL is made from.
    let root: String
    /// Writes a track's `file:` URL's text below ``root``.
    let urls: LibraryPath.FileURLWriter
    /// Each title's UTF-8 bytes, one after another.
    private let titleBytes: [UInt8]
    /// Where each title ends in ``titleBytes``.
    private let titleEnds: [Int32]
    /// Whether the index held the track when the columns were read.
    private let present: [Bool]
    /// The artists' line (``LibraryContentModel/line(_:)``), into ``strings``.
    private let artist: [Int32]
    /// The album, nil when empty (``LibraryContentModel/albumText(_:)``), into ``strings``.
    private let album: [Int32]
    /// The genres' line, into ``strings``.
    private let genre: [Int32]
    /// The release date, nil when empty, into ``strings``.
    private let date: [Int32]
    /// The MIME type, into ``strings``.
    private let mimeType: [Int32]
    /// The cover (embedded, else the folder's), into ``covers``.
    private let cover: [Int32]
    private let trackNumber: [Int]
    /// In nanoseconds.
    private let duration: [Int64]
    private let size: [Int64]
    /// In nanoseconds since 1970.
    private let modified: [Int64]
    private let strings: [String]
    private let covers: [TrackArtwork]

    /// The fields of one track's row, as ``TrackColumns`` keeps them.
    struct Row {
        var title: String
        var artist: String?
        var album: String?
        var genre: String?
        var date: String?
        var mimeType: String?
        var artwork: TrackArtwork?
        var trackNumber: Int?
        var duration: Duration?
        var size: Int64
        var modified: Int64
    }

    /// Whether track `index`'s fields were read (the index held it).
    func has(_ index: Int) -> Bool { index < present.count && present[index] }

    /// Whether every track's fields were read.
    let hasEveryTrack: Bool

    /// Track `index`'s fields; only when ``has(_:)``.
    func row(_ index: Int) -> Row {
        let start = index == 0 ? 0 : Int(titleEnds[index - 1])
        let title = titleBytes.withUnsafeBufferPointer { bytes in
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<Int(titleEnds[index])]), as: UTF8.self)
        }
        return Row(
            title: title, artist: text(artist[index]), album: text(album[index]), genre: text(genre[index]),
            date: text(date[index]), mimeType: text(mimeType[index]),
            artwork: cover[index] == Self.none ? nil : covers[Int(cover[index])],
            trackNumber: trackNumber[index] == Self.noNumber ? nil : trackNumber[index],
            duration: duration[index] == Self.noDuration ? nil : .nanoseconds(duration[index]), size: size[index],
            modified: modified[index])
    }

    /// Track `index`'s cover; only when ``has(_:)``.
    func artwork(_ index: Int) -> TrackArtwork? {
        cover[index] == Self.none ? nil : covers[Int(cover[index])]
    }

    private func text(_ number: Int32) -> String? {
        number == Self.none ? nil : strings[Int(number)]
    }

    /// Reads the columns of `rows`' tracks from `index` in one pass over its tracks (every
    /// folder's cover with them).
    init(reading index: LibraryIndex, for rows: TrackRows) throws(SQLiteError) {
        root = index.root
        urls = LibraryPath.FileURLWriter(root: index.root)
        let count = rows.count
        var titleBytes: [UInt8] = []
        var titleEnds = [Int32](repeating: 0, count: count)
        var titleOf = [(start: Int32, end: Int32)](repeating: (0, 0), count: count)
        var present = [Bool](repeating: false, count: count)
        var artist = [Int32](repeating: Self.none, count: count)
        var album = artist
        var genre = artist
        var date = artist
        var mimeType = artist
        var cover = artist
        var trackNumber = [Int](repeating: Self.noNumber, count: count)
        var duration = [Int64](repeating: Self.noDuration, count: count)
        var size = [Int64](repeating: 0, count: count)
        var modified = [Int64](repeating: 0, count: count)
        var strings: [String] = []
        var stringNumbers: [String: Int32] = [:]
        // A list column's text as the index holds it → its line's number: most tracks share it.
        var lineNumbers: [String: Int32] = [:]
        var covers: [TrackArtwork] = []
        var coverNumbers: [String: Int32] = [:]
        var folderCoverNumbers: [Substring: Int32] = [:]
        func intern(_ text: String?) -> Int32 {
            guard let text else { return Self.none }
            if let number = stringNumbers[text] { return number }
            let number = Int32(strings.count)
            strings.append(text)
            stringNumbers[text] = number
            return number
        }
        func line(_ joined: String?) -> Int32 {
            let key = joined ?? ""
            if let number = lineNumbers[key] { return number }
            let number = intern(LibraryContentModel.line(LibraryIndex.split(joined)))
            lineNumbers[key] = number
            return number
        }
        let folderCovers = try index.folderArtFiles()
        let sql = """
            SELECT path, size, modified, title, artists, album, genres, track_number, release_date, duration,
                mime_type, embedded_art
            FROM tracks
            """
        try index.database.forEachRow(sql) { row throws(SQLiteError) in
            guard let path = row.text(0), let track = rows.index(ofID: path) else { return }
            present[track] = true
            let title = row.text(3) ?? ""
            let start = Int32(titleBytes.count)
            titleBytes.append(contentsOf: title.utf8)
            titleOf[track] = (start, Int32(titleBytes.count))
            size[track] = row.integer(1) ?? 0
            modified[track] = row.integer(2) ?? 0
            artist[track] = line(row.text(4))
            album[track] = intern(LibraryContentModel.albumText(row.text(5)))
            genre[track] = line(row.text(6))
            if let number = row.integer(7) { trackNumber[track] = Int(number) }
            date[track] = intern(LibraryContentModel.albumText(row.text(8)))
            if let nanoseconds = row.integer(9) { duration[track] = nanoseconds }
            mimeType[track] = intern(row.text(10))
            if let hash = row.text(11) {
                if let number = coverNumbers[hash] {
                    cover[track] = number
                } else {
                    let number = Int32(covers.count)
                    covers.append(.embedded(sha256: hash))
                    coverNumbers[hash] = number
                    cover[track] = number
                }
            } else {
                let folder = LibraryIndex.folder(of: path)
                if let number = folderCoverNumbers[folder] {
                    cover[track] = number
                } else if let file = folderCovers[folder] {
                    let number = Int32(covers.count)
                    covers.append(.file(index.fileURL(file)))
                    folderCoverNumbers[folder] = number
                    cover[track] = number
                } else {
                    folderCoverNumbers[folder] = Self.none
                }
            }
        }
        // The titles in the tree's order, so that each is found from its neighbour's end.
        var ordered: [UInt8] = []
        ordered.reserveCapacity(titleBytes.count)
        for track in 0..<count {
            let (start, end) = titleOf[track]
            ordered.append(contentsOf: titleBytes[Int(start)..<Int(end)])
            titleEnds[track] = Int32(ordered.count)
        }
        self.titleBytes = ordered
        self.titleEnds = titleEnds
        self.present = present
        hasEveryTrack = !present.contains(false)
        self.artist = artist
        self.album = album
        self.genre = genre
        self.date = date
        self.mimeType = mimeType
        self.cover = cover
        self.trackNumber = trackNumber
        self.duration = duration
        self.size = size
        self.modified = modified
        self.strings = strings
        self.covers = covers
    }
}
