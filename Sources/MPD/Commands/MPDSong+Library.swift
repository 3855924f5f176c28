import MediaRemote
import MusicLibrary
import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MPDSong {
    /// A library track as MPD shows it: its path in the library, its tags, length and time.
    init(_ track: Track) {
        var tags: [(tag: MPDTag, value: String)] = []
        for artist in track.artists { tags.append((.artist, artist)) }
        for artist in track.albumArtists { tags.append((.albumArtist, artist)) }
        tags.append((.title, track.title))
        if let album = track.album { tags.append((.album, album)) }
        if let number = track.trackNumber { tags.append((.track, String(number))) }
        if let date = track.releaseDate { tags.append((.date, date)) }
        for genre in track.genres { tags.append((.genre, genre)) }
        for composer in track.composers { tags.append((.composer, composer)) }
        if let disc = track.discNumber { tags.append((.disc, String(disc))) }
        self.init(
            uri: track.id, tags: tags, duration: track.duration, lastModified: track.modified / 1_000_000_000,
            mediaType: track.mimeType)
    }

    /// An entry that is not a library track (a stream, a file opened from elsewhere), from what
    /// the player shows of it: `file:` is its URL.
    init(described info: NowPlayingInfo, url: URL) {
        var tags: [(tag: MPDTag, value: String)] = []
        for artist in info.artists { tags.append((.artist, artist)) }
        if let title = info.title { tags.append((info.isLiveStream ? .name : .title, title)) }
        if let album = info.albumTitle { tags.append((.album, album)) }
        for genre in info.genres { tags.append((.genre, genre)) }
        self.init(uri: url.absoluteString, tags: tags, duration: info.isLiveStream ? nil : info.playbackDuration)
    }

    /// Writes the song's lines as mpd does (`file:`, `Last-Modified:`, the tags the client
    /// asked for, `Time:` and `duration:`), then `extra` (`Pos:`, `Id:`).
    func write(to response: inout MPDResponse, client: MPDClient, extra: [(String, Int)] = []) throws(MPDError) {
        try response.add("file", uri)
        if let lastModified { try response.add("Last-Modified", MPDFormat.timestamp(lastModified)) }
        for (tag, value) in tags where client.tags.contains(tag) { try response.add(tag.rawValue, value) }
        if let duration {
            try response.add("Time", Int((duration.seconds).rounded()))
            try response.add("duration", MPDFormat.seconds(duration))
        }
        for (key, value) in extra { try response.add(key, value) }
    }
}

/// How mpd writes numbers and times.
enum MPDFormat {
    /// Seconds with three decimals: `12.345`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = max(0, Int64((duration.seconds * 1000).rounded()))
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// ISO 8601 in UTC, to the second: `2024-05-17T08:45:20Z`.
    static func timestamp(_ secondsSince1970: Int64) -> String {
        var seconds = secondsSince1970
        let days = Int64((Double(seconds) / 86_400).rounded(.down))
        seconds -= days * 86_400
        // Howard Hinnant's civil-from-days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60))Z"
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
