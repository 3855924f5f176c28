#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything remotes show about what is playing: one immutable value,
/// published as a whole with ``NowPlayingInfoCenter/publish(_:at:)``.
///
/// Being a value, a published snapshot can never be edited behind the
/// centre's back, and a reader never sees half of an update. Build a new one
/// (or copy and change one) for every change.
///
/// Times are `Duration`s from the start of the item. Optional fields that are
/// `nil`, and empty arrays, are simply not shown.
public struct NowPlayingInfo: Sendable, Equatable {
    // MARK: The item

    /// A stable identifier of the item (a database key, a file path, a
    /// service's id): any characters. Remotes use it to tell items apart, so
    /// two different items must not share it. When `nil`, an identifier is
    /// derived from ``assetURL``, or from the title, artists and album.
    public var identifier: String?
    /// The item's name as people see it (`xesam:title`).
    public var title: String?
    /// The performing artists, in credit order.
    public var artists: [String]
    /// The album the item belongs to (`xesam:album`).
    public var albumTitle: String?
    /// The album's artists, in credit order.
    public var albumArtists: [String]
    /// Genres, most specific first (`xesam:genre`).
    public var genres: [String]
    /// The composers, in credit order (`xesam:composer`).
    public var composers: [String]
    /// The item's length; `nil` when unknown. Ignored for a live stream.
    public var playbackDuration: Duration?
    /// Cover art: image bytes, or a URL of an image.
    public var artwork: MediaItemArtwork?
    /// The item's number on its disc, from 1.
    public var trackNumber: Int?
    /// The number of items on the disc.
    public var trackCount: Int?
    /// The disc's number in the album, from 1.
    public var discNumber: Int?
    /// The number of discs in the album.
    public var discCount: Int?
    /// When the item was released (shown in ISO 8601, `xesam:contentCreated`).
    public var releaseDate: Date?
    /// Where the item's media is (a file or a stream).
    public var assetURL: URL?
    /// A live stream has no length and cannot be sought.
    public var isLiveStream: Bool

    // MARK: Playback

    /// Playing, paused, stopped or interrupted; whether the position advances.
    public var playbackState: PlaybackState
    /// The position when the value was published; the centre extrapolates from it.
    public var elapsedPlaybackTime: Duration
    /// The rate while playing: 1 is normal speed. Apple's convention of 0 while
    /// paused is accepted; ``playbackState`` says whether time advances.
    public var playbackRate: Double
    /// The rate the app plays at when not told otherwise.
    public var defaultPlaybackRate: Double
    /// The item's index in the play queue, from 0.
    public var playbackQueueIndex: Int?
    /// The number of items in the play queue.
    public var playbackQueueCount: Int?

    /// Creates a value; every field is optional, and the defaults describe a
    /// paused item at its start, at normal speed.
    public init(
        identifier: String? = nil, title: String? = nil, artists: [String] = [], albumTitle: String? = nil,
        albumArtists: [String] = [], genres: [String] = [], composers: [String] = [],
        playbackDuration: Duration? = nil, artwork: MediaItemArtwork? = nil,
        trackNumber: Int? = nil, trackCount: Int? = nil, discNumber: Int? = nil, discCount: Int? = nil,
        releaseDate: Date? = nil, assetURL: URL? = nil, isLiveStream: Bool = false,
        playbackState: PlaybackState = .paused, elapsedPlaybackTime: Duration = .zero,
        playbackRate: Double = 1, defaultPlaybackRate: Double = 1,
        playbackQueueIndex: Int? = nil, playbackQueueCount: Int? = nil
    ) {
        self.identifier = identifier
        self.title = title
        self.artists = artists
        self.albumTitle = albumTitle
        self.albumArtists = albumArtists
        self.genres = genres
        self.composers = composers
        self.playbackDuration = playbackDuration
        self.artwork = artwork
        self.trackNumber = trackNumber
        self.trackCount = trackCount
        self.discNumber = discNumber
        self.discCount = discCount
        self.releaseDate = releaseDate
        self.assetURL = assetURL
        self.isLiveStream = isLiveStream
        self.playbackState = playbackState
        self.elapsedPlaybackTime = elapsedPlaybackTime
        self.playbackRate = playbackRate
        self.defaultPlaybackRate = defaultPlaybackRate
        self.playbackQueueIndex = playbackQueueIndex
        self.playbackQueueCount = playbackQueueCount
    }

    /// The identifier remotes see: ``identifier``, else the asset URL, else
    /// one made of the title, artists and album. Stable for the same item.
    public var effectiveIdentifier: String {
        if let identifier { return identifier }
        if let assetURL { return assetURL.absoluteString }
        return ([title ?? ""] + artists + [albumTitle ?? ""]).joined(separator: "\u{1F}")
    }

    /// The rate to report to remotes that cannot show 0 (MPRIS): the playing
    /// rate, or the default rate while it is 0.
    public var nominalRate: Double {
        if playbackRate.isFinite, playbackRate > 0 { return playbackRate }
        return defaultPlaybackRate.isFinite && defaultPlaybackRate > 0 ? defaultPlaybackRate : 1
    }

    /// The rate at which the position advances right now: 0 unless playing.
    public var effectiveRate: Double {
        playbackState == .playing && playbackRate.isFinite && playbackRate > 0 ? playbackRate : 0
    }

    /// The position `elapsed` after this value was published, assuming
    /// nothing else happened: it advances at ``effectiveRate`` and stays within
    /// the item (0 ... duration when the duration is known).
    public func extrapolatedPosition(after elapsed: Duration) -> Duration {
        var position = elapsedPlaybackTime + elapsed * effectiveRate
        if let playbackDuration, !isLiveStream, position > playbackDuration { position = playbackDuration }
        return max(position, .zero)
    }
}

/// Whether the app is playing. MPRIS shows `interrupted` as paused.
public enum PlaybackState: Sendable, Hashable, CaseIterable {
    case playing
    case paused
    case stopped
    /// Paused by the system (another app took the audio output), not by the user.
    case interrupted
}

/// An item's cover art: image bytes the app has, or a URL where an image is.
public enum MediaItemArtwork: Sendable, Hashable {
    /// An encoded image (JPEG, PNG, GIF, WebP, BMP).
    case imageData(Data)
    /// A URL of an image (`file:` or `http(s):`).
    case url(URL)
    /// An image read only when a remote shows it, as Apple's `MPMediaItemArtwork` calls its
    /// request handler: a queue of 50,000 tracks holds 50,000 of these, not their images.
    /// The identifier names the image (equal identifiers, equal bytes); the SHA-256 of the
    /// bytes in lowercase hex lets a content-addressed cache answer without reading them.
    case requested(identifier: String, load: ArtworkLoader)
}

/// Reads an image's bytes when asked; `nil` when it cannot (the file is gone, say). Two loaders
/// are equal: artwork is told apart by its identifier.
public struct ArtworkLoader: Sendable, Hashable {
    private let body: @Sendable () -> Data?

    public init(_ body: @escaping @Sendable () -> Data?) { self.body = body }

    /// The image's encoded bytes.
    public func load() -> Data? { body() }

    public static func == (lhs: ArtworkLoader, rhs: ArtworkLoader) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
