import Foundation
import MediaRemote

/// Apple's `nowPlayingInfo` dictionary read into MediaRemote's ``NowPlayingInfo``: the one
/// place that knows which key goes where. Each key is read with the value types apps put
/// there (any Swift integer or floating-point type, `NSNumber`, `Bool`, `String`, `Date`,
/// `URL`, ``MPMediaItemArtwork``); a value of another type, or one out of its range (a NaN or
/// negative duration, a negative track number, a rate that is not a finite number of at
/// least 0), is ignored as if absent, never trusted and never a crash.
enum NowPlayingInfoConversion {
    /// The longest time (in seconds) read as a duration or position: about 31,700 years.
    /// Anything longer is a mistake, and would overflow the microseconds MPRIS counts in.
    static let longestTime: TimeInterval = 1e12
    /// The fastest playback rate read; anything faster is a mistake.
    static let fastestRate: Double = 1_000

    /// The MediaRemote value of `dictionary`, as published when the app's `playbackState` is
    /// `playbackState`.
    ///
    /// Whether the item plays follows Apple's rule: an explicit `playbackState` other than
    /// `.unknown` says it; otherwise the playback rate does (0 is paused, any other rate
    /// playing, and an absent rate is 1).
    static func nowPlayingInfo(_ dictionary: [String: Any], playbackState: MPNowPlayingPlaybackState) -> NowPlayingInfo {
        let values = Values(dictionary: dictionary)
        var info = NowPlayingInfo()
        info.identifier =
            values.string(MPNowPlayingInfoPropertyExternalContentIdentifier)
            ?? values.unsignedInteger(MPMediaItemPropertyPersistentID).map { String($0) }
        info.title = values.string(MPMediaItemPropertyTitle)
        info.artists = values.string(MPMediaItemPropertyArtist).map { [$0] } ?? []
        info.albumTitle = values.string(MPMediaItemPropertyAlbumTitle)
        info.albumArtists = values.string(MPMediaItemPropertyAlbumArtist).map { [$0] } ?? []
        info.genres = values.string(MPMediaItemPropertyGenre).map { [$0] } ?? []
        info.composers = values.string(MPMediaItemPropertyComposer).map { [$0] } ?? []
        info.playbackDuration = values.time(MPMediaItemPropertyPlaybackDuration).map { .seconds($0) }
        info.artwork = values.artwork(MPMediaItemPropertyArtwork)
        info.trackNumber = values.count(MPMediaItemPropertyAlbumTrackNumber)
        info.trackCount = values.count(MPMediaItemPropertyAlbumTrackCount)
        info.discNumber = values.count(MPMediaItemPropertyDiscNumber)
        info.discCount = values.count(MPMediaItemPropertyDiscCount)
        info.releaseDate = values.date(MPMediaItemPropertyReleaseDate)
        info.assetURL = values.url(MPNowPlayingInfoPropertyAssetURL) ?? values.url(MPMediaItemPropertyAssetURL)
        info.isLiveStream = values.bool(MPNowPlayingInfoPropertyIsLiveStream) ?? false

        info.elapsedPlaybackTime = values.time(MPNowPlayingInfoPropertyElapsedPlaybackTime).map { .seconds($0) } ?? .zero
        // Apple documents an absent rate as 1.
        let rate = values.rate(MPNowPlayingInfoPropertyPlaybackRate) ?? 1
        info.playbackRate = rate
        info.defaultPlaybackRate = values.rate(MPNowPlayingInfoPropertyDefaultPlaybackRate).flatMap { $0 > 0 ? $0 : nil } ?? 1
        info.playbackQueueIndex = values.count(MPNowPlayingInfoPropertyPlaybackQueueIndex)
        info.playbackQueueCount = values.count(MPNowPlayingInfoPropertyPlaybackQueueCount)
        info.playbackState =
            switch playbackState {
            case .unknown: rate > 0 ? .playing : .paused
            case .playing: .playing
            case .paused: .paused
            case .stopped: .stopped
            case .interrupted: .interrupted
            }
        return info
    }

    /// The values of one dictionary, each read as the type its key holds.
    private struct Values {
        let dictionary: [String: Any]

        /// A string without NUL characters, which D-Bus cannot carry.
        func string(_ key: String) -> String? {
            guard let string = dictionary[key] as? String else { return nil }
            // Checked on the UTF-8 view: Foundation's `contains` goes through CFString, which
            // costs more than the rest of the conversion together.
            let hasNUL = string.utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? string.utf8.contains(0)
            return hasNUL ? String(string.unicodeScalars.filter { $0 != "\0" }) : string
        }

        /// Any number as a `Double`: Swift's integer and floating-point types and `NSNumber`.
        /// `integerFirst` tries `Int` before `Double`: the type apps put in counts, as a failed
        /// cast costs about as much as the rest of a key's reading.
        func number(_ key: String, integerFirst: Bool = false) -> Double? {
            guard let value = dictionary[key] else { return nil }
            // The types apps put there most, cast directly; then any other, through the
            // protocols (a slower cast, as it looks the conformance up).
            if integerFirst, let integer = value as? Int { return Double(integer) }
            if let double = value as? Double { return double }
            if let integer = value as? Int { return Double(integer) }
            if let float = value as? Float { return Double(float) }
            if let integer = value as? any BinaryInteger { return Double(integer) }
            if let float = value as? any BinaryFloatingPoint { return Double(float) }
            if let number = value as? NSNumber { return number.doubleValue }
            return nil
        }

        /// A time in seconds: finite, at least 0 and at most ``NowPlayingInfoConversion/longestTime``.
        func time(_ key: String) -> TimeInterval? {
            number(key).flatMap { (0...NowPlayingInfoConversion.longestTime).contains($0) ? $0 : nil }
        }

        /// A rate: finite, at least 0 and at most ``NowPlayingInfoConversion/fastestRate``.
        func rate(_ key: String) -> Double? {
            number(key).flatMap { (0...NowPlayingInfoConversion.fastestRate).contains($0) ? $0 : nil }
        }

        /// A number, index or count: a whole number of at least 0 that fits in an `Int32`, as
        /// MPRIS carries track numbers; a fractional part is dropped, as `NSNumber.intValue` does.
        func count(_ key: String) -> Int? {
            number(key, integerFirst: true).flatMap { $0 >= 0 && $0 <= Double(Int32.max) ? Int($0) : nil }
        }

        /// An unsigned 64-bit integer (a persistent ID), given as any integer type or an `NSNumber`.
        func unsignedInteger(_ key: String) -> UInt64? {
            guard let value = dictionary[key] else { return nil }
            if let integer = value as? UInt64 { return integer }
            if let integer = value as? Int { return UInt64(exactly: integer) }
            if let integer = value as? any BinaryInteger { return UInt64(exactly: integer) }
            if let number = value as? NSNumber {
                // NSNumber holds persistent IDs above Int64.max as unsigned; a negative signed one is a wrapped UInt64.
                return number.uint64Value
            }
            return nil
        }

        func bool(_ key: String) -> Bool? {
            guard let value = dictionary[key] else { return nil }
            if let bool = value as? Bool { return bool }
            return number(key).map { $0 != 0 && !$0.isNaN }
        }

        /// A date between the years 1 and 9999, which ISO 8601 can write.
        func date(_ key: String) -> Date? {
            guard let date = dictionary[key] as? Date else { return nil }
            return (-62_135_596_800...253_402_300_799).contains(date.timeIntervalSince1970) ? date : nil
        }

        func url(_ key: String) -> URL? { dictionary[key] as? URL }

        func artwork(_ key: String) -> MediaItemArtwork? {
            (dictionary[key] as? MPMediaItemArtwork)?.mediaItemArtwork
        }
    }
}
