/// A tag a song can carry, by the name MPD's protocol gives it (`tagtypes`, `list`, filters).
///
/// Every tag mpd 0.23 knows, so that a client enabling one (`tagtypes enable Performer`, as mpc
/// does) or filtering on one is answered as mpd answers it. The library's index holds the
/// artists, album artists, album, title, track and disc numbers, genres, date and composers
/// (``isIndexed``); a song has no value of the others, as a file not tagged with them has none
/// in mpd.
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
    case performer = "Performer"
    case conductor = "Conductor"
    case work = "Work"
    case grouping = "Grouping"
    case comment = "Comment"
    case disc = "Disc"
    case label = "Label"
    case musicBrainzArtistID = "MUSICBRAINZ_ARTISTID"
    case musicBrainzAlbumID = "MUSICBRAINZ_ALBUMID"
    case musicBrainzAlbumArtistID = "MUSICBRAINZ_ALBUMARTISTID"
    case musicBrainzTrackID = "MUSICBRAINZ_TRACKID"
    case musicBrainzReleaseTrackID = "MUSICBRAINZ_RELEASETRACKID"
    case musicBrainzWorkID = "MUSICBRAINZ_WORKID"

    /// Whether the library's index holds this tag (the others have no value in any song).
    public var isIndexed: Bool {
        switch self {
        case .artist, .albumArtist, .album, .title, .track, .disc, .genre, .date, .composer, .name: true
        default: false
        }
    }

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
    public static let all = MPDTagSet(MPDTag.allCases)

    public func contains(_ tag: MPDTag) -> Bool { bits & Self.bit(tag) != 0 }
    public mutating func insert(_ tag: MPDTag) { bits |= Self.bit(tag) }
    public mutating func remove(_ tag: MPDTag) { bits &= ~Self.bit(tag) }

    private static func bit(_ tag: MPDTag) -> UInt32 { bits[tag]! }

    /// Each tag's bit, by its place among the cases: looked up once per tag of every song a
    /// response writes, so made once rather than searched for each time.
    private static let bits: [MPDTag: UInt32] = Dictionary(
        uniqueKeysWithValues: MPDTag.allCases.enumerated().map { ($0.element, UInt32(1) << UInt32($0.offset)) })
}
