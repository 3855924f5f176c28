#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the index keeps of an audio file as read from it: its length, tags, type and cover.
///
/// Strings are as tagged, untrimmed; lists keep the file's order; absent tags are `nil` or
/// empty. TagLib fills it for most files, an ``AudioFileDiscoverer`` for the others.
public struct AudioFileMetadata: Sendable, Hashable {
    /// The file's length; `nil` when it cannot be told.
    public var duration: Duration?
    /// The title tag.
    public var title: String?
    /// The artist tags, in credit order.
    public var artists: [String]
    /// The album tag.
    public var album: String?
    /// The album artist tags, in credit order.
    public var albumArtists: [String]
    /// The genre tags.
    public var genres: [String]
    /// The composer tags.
    public var composers: [String]
    /// The track number, from 1.
    public var trackNumber: Int?
    /// The number of tracks on the disc.
    public var trackCount: Int?
    /// The disc number, from 1.
    public var discNumber: Int?
    /// The number of discs.
    public var discCount: Int?
    /// The release date in ISO 8601: `2019`, `2019-05` or `2019-05-17`.
    public var releaseDate: String?
    /// The encoded bytes of the embedded cover (JPEG, PNG, ...), a front cover preferred.
    public var image: Data?
    /// The media type of the container (or of the bare stream), such as `audio/ogg`,
    /// `audio/mpeg`, `audio/x-flac` or `audio/x-wav`.
    public var mimeType: String?

    /// Creates a value; every field defaults to absent.
    public init(
        duration: Duration? = nil, title: String? = nil, artists: [String] = [], album: String? = nil,
        albumArtists: [String] = [], genres: [String] = [], composers: [String] = [],
        trackNumber: Int? = nil, trackCount: Int? = nil, discNumber: Int? = nil, discCount: Int? = nil,
        releaseDate: String? = nil, image: Data? = nil, mimeType: String? = nil
    ) {
        self.duration = duration
        self.title = title
        self.artists = artists
        self.album = album
        self.albumArtists = albumArtists
        self.genres = genres
        self.composers = composers
        self.trackNumber = trackNumber
        self.trackCount = trackCount
        self.discNumber = discNumber
        self.discCount = discCount
        self.releaseDate = releaseDate
        self.image = image
        self.mimeType = mimeType
    }
}
