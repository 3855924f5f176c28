// The keys of `MPNowPlayingInfoCenter.nowPlayingInfo`, with Apple's names and Apple's string
// values (the `MPMediaItemProperty…` values are the short names iOS uses, `"title"`; the
// `MPNowPlayingInfoProperty…` values are the constants' own names), so a dictionary an app
// builds with literal strings, or logs and reads back, means the same as on iOS.

// MARK: Properties of the item (MPMediaItem)

/// The item's title, a `String`; shown as MPRIS `xesam:title`.
public let MPMediaItemPropertyTitle: String = "title"
/// The performing artist, a `String`; shown as MPRIS `xesam:artist` (an array of one).
public let MPMediaItemPropertyArtist: String = "artist"
/// The album's title, a `String`; shown as MPRIS `xesam:album`.
public let MPMediaItemPropertyAlbumTitle: String = "albumTitle"
/// The album's artist, a `String`; shown as MPRIS `xesam:albumArtist` (an array of one).
public let MPMediaItemPropertyAlbumArtist: String = "albumArtist"
/// The composer, a `String`; shown as MPRIS `xesam:composer` (an array of one).
public let MPMediaItemPropertyComposer: String = "composer"
/// The genre, a `String`; shown as MPRIS `xesam:genre` (an array of one).
public let MPMediaItemPropertyGenre: String = "genre"
/// The number of tracks on the album, a number.
public let MPMediaItemPropertyAlbumTrackCount: String = "albumTrackCount"
/// The item's track number on its disc, a number from 1; shown as MPRIS `xesam:trackNumber`.
public let MPMediaItemPropertyAlbumTrackNumber: String = "albumTrackNumber"
/// The number of discs of the album, a number.
public let MPMediaItemPropertyDiscCount: String = "discCount"
/// The item's disc number in its album, a number from 1; shown as MPRIS `xesam:discNumber`.
public let MPMediaItemPropertyDiscNumber: String = "discNumber"
/// The cover art, an ``MPMediaItemArtwork``; shown as MPRIS `mpris:artUrl`, a file the image
/// is written to when the item is shown.
public let MPMediaItemPropertyArtwork: String = "artwork"
/// The item's persistent identifier, a number (`UInt64` on iOS); names the item for remotes
/// (MPRIS `mpris:trackid`) unless ``MPNowPlayingInfoPropertyExternalContentIdentifier`` is set.
public let MPMediaItemPropertyPersistentID: String = "persistentID"
/// The item's length in seconds, a number (`TimeInterval`); shown as MPRIS `mpris:length` (µs).
public let MPMediaItemPropertyPlaybackDuration: String = "playbackDuration"
/// When the item was released, a `Date`; shown as MPRIS `xesam:contentCreated`.
public let MPMediaItemPropertyReleaseDate: String = "releaseDate"
/// Where the item's media is, a `URL`; shown as MPRIS `xesam:url` unless
/// ``MPNowPlayingInfoPropertyAssetURL`` is set.
public let MPMediaItemPropertyAssetURL: String = "assetURL"
/// The item's media type, an ``MPMediaType`` raw value: kept, not shown.
public let MPMediaItemPropertyMediaType: String = "mediaType"
/// The podcast an episode belongs to, a `String`: kept, not shown.
public let MPMediaItemPropertyPodcastTitle: String = "podcastTitle"
/// Whether the item is marked explicit, a `Bool`: kept, not shown.
public let MPMediaItemPropertyIsExplicit: String = "isExplicit"
/// The user's rating of the item, 0 to 5 stars, a number: kept, not shown.
public let MPMediaItemPropertyRating: String = "rating"
/// The item's lyrics, a `String`: kept, not shown.
public let MPMediaItemPropertyLyrics: String = "lyrics"
/// The item's comments, a `String`: kept, not shown.
public let MPMediaItemPropertyComments: String = "comments"
/// The album's persistent identifier, a number: kept, not shown.
public let MPMediaItemPropertyAlbumPersistentID: String = "albumPID"
/// The artist's persistent identifier, a number: kept, not shown.
public let MPMediaItemPropertyArtistPersistentID: String = "artistPID"
/// The album artist's persistent identifier, a number: kept, not shown.
public let MPMediaItemPropertyAlbumArtistPersistentID: String = "albumArtistPID"
/// The genre's persistent identifier, a number: kept, not shown.
public let MPMediaItemPropertyGenrePersistentID: String = "genrePID"
/// The composer's persistent identifier, a number: kept, not shown.
public let MPMediaItemPropertyComposerPersistentID: String = "composerPID"
/// The podcast's persistent identifier, a number: kept, not shown.
public let MPMediaItemPropertyPodcastPersistentID: String = "podcastPID"
/// Whether the item belongs to a compilation, a `Bool`: kept, not shown.
public let MPMediaItemPropertyIsCompilation: String = "isCompilation"
/// The item's tempo in beats per minute, a number: kept, not shown.
public let MPMediaItemPropertyBeatsPerMinute: String = "beatsPerMinute"
/// Whether the item is in the cloud only, a `Bool`: kept, not shown.
public let MPMediaItemPropertyIsCloudItem: String = "isCloudItem"
/// How many times the user played the item, a number: kept, not shown.
public let MPMediaItemPropertyPlayCount: String = "playCount"
/// How many times the user skipped the item, a number: kept, not shown.
public let MPMediaItemPropertySkipCount: String = "skipCount"
/// When the user last played the item, a `Date`: kept, not shown.
public let MPMediaItemPropertyLastPlayedDate: String = "lastPlayedDate"
/// The user's grouping of the item, a `String`: kept, not shown.
public let MPMediaItemPropertyUserGrouping: String = "userGrouping"
/// Where the user left the item, in seconds: kept, not shown (this project's resume points
/// are the daemon's).
public let MPMediaItemPropertyBookmarkTime: String = "bookmarkTime"

/// Kinds of media, the value of ``MPMediaItemPropertyMediaType`` (as its `rawValue`), with
/// Apple's bits.
public struct MPMediaType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let music = MPMediaType(rawValue: 1 << 0)
    public static let podcast = MPMediaType(rawValue: 1 << 1)
    public static let audioBook = MPMediaType(rawValue: 1 << 2)
    public static let audioITunesU = MPMediaType(rawValue: 1 << 3)
    /// Every audio kind.
    public static let anyAudio = MPMediaType(rawValue: 0x00FF)
    public static let movie = MPMediaType(rawValue: 1 << 8)
    public static let tvShow = MPMediaType(rawValue: 1 << 9)
    public static let videoPodcast = MPMediaType(rawValue: 1 << 10)
    public static let musicVideo = MPMediaType(rawValue: 1 << 11)
    public static let videoITunesU = MPMediaType(rawValue: 1 << 12)
    public static let homeVideo = MPMediaType(rawValue: 1 << 13)
    /// Every video kind.
    public static let anyVideo = MPMediaType(rawValue: 0xFF00)
    /// Every kind.
    public static let any = MPMediaType(rawValue: .max)
}

// MARK: Properties of the playback (MPNowPlayingInfoCenter)

/// The position in seconds when the dictionary was set, a number (`TimeInterval`); remotes
/// extrapolate it at ``MPNowPlayingInfoPropertyPlaybackRate`` (MPRIS `Position`).
public let MPNowPlayingInfoPropertyElapsedPlaybackTime: String = "MPNowPlayingInfoPropertyElapsedPlaybackTime"
/// The rate being played, a number: 1 is normal speed, 0 paused; 1 when absent. Shown as
/// MPRIS `Rate` while playing, and it says whether the item plays unless
/// ``MPNowPlayingInfoCenter/playbackState`` is set.
public let MPNowPlayingInfoPropertyPlaybackRate: String = "MPNowPlayingInfoPropertyPlaybackRate"
/// The rate the app plays at when not told otherwise, a number; shown as MPRIS `Rate` while
/// paused.
public let MPNowPlayingInfoPropertyDefaultPlaybackRate: String = "MPNowPlayingInfoPropertyDefaultPlaybackRate"
/// The item's index in the app's play queue, a number from 0.
public let MPNowPlayingInfoPropertyPlaybackQueueIndex: String = "MPNowPlayingInfoPropertyPlaybackQueueIndex"
/// The number of items in the app's play queue, a number.
public let MPNowPlayingInfoPropertyPlaybackQueueCount: String = "MPNowPlayingInfoPropertyPlaybackQueueCount"
/// The chapter being played, a number from 0: kept, not shown.
public let MPNowPlayingInfoPropertyChapterNumber: String = "MPNowPlayingInfoPropertyChapterNumber"
/// The number of chapters of the item, a number: kept, not shown.
public let MPNowPlayingInfoPropertyChapterCount: String = "MPNowPlayingInfoPropertyChapterCount"
/// Whether the item is a live stream, a `Bool`: a live stream shows no length, cannot be
/// sought (MPRIS `CanSeek` false) and never announces a jump.
public let MPNowPlayingInfoPropertyIsLiveStream: String = "MPNowPlayingInfoPropertyIsLiveStream"
/// How much of the item has been played, a number from 0 to 1: kept, not shown.
public let MPNowPlayingInfoPropertyPlaybackProgress: String = "MPNowPlayingInfoPropertyPlaybackProgress"
/// Audio or video, a number (``MPNowPlayingInfoMediaType``'s raw value): kept, not shown.
public let MPNowPlayingInfoPropertyMediaType: String = "MPNowPlayingInfoPropertyMediaType"
/// Where the item's media is, a `URL`; shown as MPRIS `xesam:url`.
public let MPNowPlayingInfoPropertyAssetURL: String = "MPNowPlayingInfoPropertyAssetURL"
/// The date and time in the item being played (a live broadcast's wall clock), a `Date`:
/// kept, not shown.
public let MPNowPlayingInfoPropertyCurrentPlaybackDate: String = "MPNowPlayingInfoPropertyCurrentPlaybackDate"
/// The app's own identifier of the item, a `String` (the identifier of its
/// ``MPContentItem``); names the item for remotes (MPRIS `mpris:trackid`).
public let MPNowPlayingInfoPropertyExternalContentIdentifier: String =
    "MPNowPlayingInfoPropertyExternalContentIdentifier"
/// The app's identifier of the user profile playing, a `String`: kept, not shown.
public let MPNowPlayingInfoPropertyExternalUserProfileIdentifier: String =
    "MPNowPlayingInfoPropertyExternalUserProfileIdentifier"
/// The identifier of the service providing the item, a `String`: kept, not shown.
public let MPNowPlayingInfoPropertyServiceIdentifier: String = "MPNowPlayingInfoPropertyServiceIdentifier"
/// The audible and legible language options the item offers (language option groups on
/// iOS): kept, not shown.
public let MPNowPlayingInfoPropertyAvailableLanguageOptions: String =
    "MPNowPlayingInfoPropertyAvailableLanguageOptions"
/// The language options in effect (language options on iOS): kept, not shown.
public let MPNowPlayingInfoPropertyCurrentLanguageOptions: String = "MPNowPlayingInfoPropertyCurrentLanguageOptions"
/// The identifier of the collection (album, playlist) the item is played from, a `String`:
/// kept, not shown.
public let MPNowPlayingInfoCollectionIdentifier: String = "MPNowPlayingInfoCollectionIdentifier"

/// What kind of media is playing, the value of ``MPNowPlayingInfoPropertyMediaType``.
public enum MPNowPlayingInfoMediaType: UInt, Sendable {
    /// Neither audio nor video.
    case none = 0
    /// Audio.
    case audio = 1
    /// Video.
    case video = 2
}

/// Whether the app is playing, as ``MPNowPlayingInfoCenter/playbackState`` says.
public enum MPNowPlayingPlaybackState: UInt, Sendable {
    /// Not said: the playback rate tells (0 is paused, any other rate playing).
    case unknown = 0
    /// Playing (MPRIS `Playing`).
    case playing = 1
    /// Paused by the user (MPRIS `Paused`).
    case paused = 2
    /// Stopped: nothing to resume (MPRIS `Stopped`).
    case stopped = 3
    /// Paused by the system, another app having taken the audio output (MPRIS `Paused`).
    case interrupted = 4
}
