/// A tag a song can carry, by the name MPD's protocol gives it (`tagtypes`, `list`, filters).
///
/// These are the tags the library's index holds; a filter or `list` naming another of MPD's
/// tags (`Performer`, `Label`…) is refused with "Unknown tag type", so a client sees at once
/// what is not indexed rather than an empty answer.
public enum MPDTag: String, Sendable, CaseIterable, Hashable {
    case artist = "Artist"
    case artistSort = "ArtistSort"
    case album = "Album"
    case albumSort = "AlbumSort"
    case albumArtist = "AlbumArtist"
    case albumArtistSort = "AlbumArtistSort"
    case title = "Title"
    case track = "Track"
    case name = "Name"
    case genre = "Genre"
    case date = "Date"
    case originalDate = "OriginalDate"
    case composer = "Composer"
    case disc = "Disc"

    /// The tag a name names, case-insensitively (mpd reads `artist` and `ARTIST` alike).
    public init?(name: String) {
        let lowered = name.lowercased()
        guard let tag = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else { return nil }
        self = tag
    }
}

/// A set of tags: which ones a client is sent (`tagtypes`).
public struct MPDTagSet: Sendable, Equatable {
    private var bits: UInt32

    public init(_ tags: some Sequence<MPDTag>) {
        bits = 0
        for tag in tags { insert(tag) }
    }

    /// Every tag.
    public static var all: MPDTagSet { MPDTagSet(MPDTag.allCases) }

    public func contains(_ tag: MPDTag) -> Bool { bits & Self.bit(tag) != 0 }
    public mutating func insert(_ tag: MPDTag) { bits |= Self.bit(tag) }
    public mutating func remove(_ tag: MPDTag) { bits &= ~Self.bit(tag) }

    private static func bit(_ tag: MPDTag) -> UInt32 {
        1 << UInt32(MPDTag.allCases.firstIndex(of: tag)!)
    }
}
