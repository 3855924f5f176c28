import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One audio file of the library, with what its tags say.
///
/// Tags are as GStreamer's discoverer read them; absent tags are `nil` or empty.
public struct Track: Sendable, Hashable, Identifiable {
    /// The file's path relative to the library root, for example `Artist/Album/01 x.flac`.
    /// Stable as long as the file is not moved or renamed.
    public var id: String
    /// The file's `file:` URL.
    public var url: URL
    /// The `title` tag, else the file name without its extension.
    public var title: String
    /// The performing artists, in credit order.
    public var artists: [String]
    /// The album's title.
    public var album: String?
    /// The album's artists, in credit order.
    public var albumArtists: [String]
    /// The genres, as tagged.
    public var genres: [String]
    /// The composers, in credit order.
    public var composers: [String]
    /// The track's number on its disc, from 1.
    public var trackNumber: Int?
    /// The number of tracks on the disc.
    public var trackCount: Int?
    /// The disc's number in the album, from 1.
    public var discNumber: Int?
    /// The number of discs in the album.
    public var discCount: Int?
    /// The release date as tagged, in ISO 8601: `2019`, `2019-05` or `2019-05-17`.
    public var releaseDate: String?
    /// The track's length; `nil` when GStreamer could not tell.
    public var duration: Duration?
    /// The media type of the file's container, for example `audio/ogg` or `audio/mpeg`.
    public var mimeType: String?
    /// Where the track's cover comes from: a picture embedded in the file, else an image file in
    /// its folder; `nil` when there is neither.
    public var artwork: TrackArtwork?
    /// The file's size in bytes when it was read.
    public var fileSize: Int
    /// The file's modification time when it was read, in nanoseconds since 1970-01-01 UTC.
    public var modified: Int64

    /// Creates a track; the library makes these, tests and previews may too.
    public init(
        id: String, url: URL, title: String, artists: [String] = [], album: String? = nil,
        albumArtists: [String] = [], genres: [String] = [], composers: [String] = [],
        trackNumber: Int? = nil, trackCount: Int? = nil, discNumber: Int? = nil, discCount: Int? = nil,
        releaseDate: String? = nil, duration: Duration? = nil, mimeType: String? = nil,
        artwork: TrackArtwork? = nil, fileSize: Int = 0, modified: Int64 = 0
    ) {
        self.id = id
        self.url = url
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
        self.duration = duration
        self.mimeType = mimeType
        self.artwork = artwork
        self.fileSize = fileSize
        self.modified = modified
    }
}

/// Where a track's cover comes from.
public enum TrackArtwork: Sendable, Hashable {
    /// A picture embedded in the file; its bytes are kept in the index once per distinct picture,
    /// under the lowercase hexadecimal SHA-256 of the bytes. Read them with
    /// ``MusicLibrary/artworkData(for:)``.
    case embedded(sha256: String)
    /// An image file beside the track: `cover`, `folder` or `front` (in that order of
    /// preference, any case) with the extension `jpg`, `jpeg`, `png` or `webp`.
    case file(URL)
}

extension Track {
    /// The item fields of now-playing information for this track: identifier (``id``), title,
    /// artists, album, album artists, genres, composers, duration, track and disc numbers and
    /// counts, release date and asset URL (``url``).
    ///
    /// - Parameter artwork: the cover to show. Pass `.imageData` with the embedded bytes
    ///   (``MusicLibrary/artworkData(for:)``) for ``TrackArtwork/embedded(sha256:)``, and
    ///   `.url` for ``TrackArtwork/file(_:)``; ``MusicLibrary/mediaItemArtwork(for:)`` does both.
    /// The playback fields keep their defaults (paused at the start, normal speed).
    public func nowPlayingInfo(artwork: MediaItemArtwork?) -> NowPlayingInfo {
        NowPlayingInfo(
            identifier: id, title: title, artists: artists, albumTitle: album, albumArtists: albumArtists,
            genres: genres, composers: composers, playbackDuration: duration, artwork: artwork,
            trackNumber: trackNumber, trackCount: trackCount, discNumber: discNumber, discCount: discCount,
            releaseDate: releaseDate.flatMap(Self.date(iso8601:)), assetURL: url)
    }

    /// The start (midnight UTC) of an ISO 8601 calendar date `YYYY`, `YYYY-MM` or `YYYY-MM-DD`;
    /// anything after the date (a time) is ignored; nil when the text does not start with one.
    static func date(iso8601 text: String) -> Date? {
        let fields = text.prefix(10).split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count), fields[0].count == 4, let year = Int(fields[0]) else { return nil }
        var month = 1
        var day = 1
        if fields.count > 1 {
            guard fields[1].count == 2, let value = Int(fields[1]), (1...12).contains(value) else { return nil }
            month = value
        }
        if fields.count > 2 {
            guard fields[2].count == 2, let value = Int(fields[2]), (1...31).contains(value) else { return nil }
            day = value
        }
        // Days from the civil date (Howard Hinnant's algorithm): no calendar object needed.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days) * 86_400)
    }
}
