import DBus
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// MPRIS track metadata: the `a{sv}` of `Metadata` (and of TrackList's
/// `GetTracksMetadata`), with its entries in a fixed order so that equal
/// metadata is equal on the wire and an unchanged track signals nothing.
public struct Metadata: DBusRepresentable, Sendable, Equatable {
    /// The fields by MPRIS key (`xesam:title`, `mpris:length`, …).
    public var fields: [String: Variant]

    public init(_ fields: [String: Variant] = [:]) { self.fields = fields }

    public static var dbusType: DBusType { .dictionary(key: .string, value: .variant) }

    public var dbusValue: DBusValue {
        .dictionary(
            key: .string, value: .variant,
            fields.keys.sorted().map { .init(.string($0), .variant(fields[$0]!)) })
    }

    public init(dbusValue: DBusValue) throws {
        fields = try [String: Variant](dbusValue: dbusValue)
    }

    /// The `mpris:trackid` of the metadata, if any.
    public var trackID: ObjectPath? { try? fields["mpris:trackid"]?.get(ObjectPath.self) }
}

extension Metadata {
    /// The track id MPRIS reserves for "nothing is loaded".
    public static let noTrack: ObjectPath = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// Where track ids live: outside `/org/mpris`, as the specification requires.
    public static let trackIDPrefix: ObjectPath = "/org/mprisbridge/Track"

    /// The `mpris:trackid` of an item: a valid object path for any identifier
    /// (every byte that is not a letter or digit is escaped), and always the
    /// same path for the same identifier.
    public static func trackID(forIdentifier identifier: String) -> ObjectPath {
        trackIDPrefix.appending(identifier)
    }

    /// Metadata of nothing loaded: only the `NoTrack` id.
    public static let nothingLoaded = Metadata(["mpris:trackid": Variant(noTrack)])

    /// The metadata of a now-playing value, mapped as the MPRIS specification
    /// and its metadata guidelines say: artists, album artists, genres and composers
    /// as string arrays; the length in microseconds (omitted for live streams
    /// and unknown lengths); track and disc numbers as int32; the release date
    /// in ISO 8601; URLs percent-encoded. `artURL` is the artwork's URL as
    /// resolved by the caller (image bytes are cached to a file first).
    public init(_ info: NowPlayingInfo, artURL: URL?) {
        var fields: [String: Variant] = ["mpris:trackid": Variant(Self.trackID(forIdentifier: info.effectiveIdentifier))]
        if let title = info.title { fields["xesam:title"] = Variant(title) }
        if !info.artists.isEmpty { fields["xesam:artist"] = Variant(info.artists) }
        if let album = info.albumTitle { fields["xesam:album"] = Variant(album) }
        if !info.albumArtists.isEmpty { fields["xesam:albumArtist"] = Variant(info.albumArtists) }
        if !info.genres.isEmpty { fields["xesam:genre"] = Variant(info.genres) }
        if !info.composers.isEmpty { fields["xesam:composer"] = Variant(info.composers) }
        if let duration = info.playbackDuration, !info.isLiveStream, duration > .zero {
            fields["mpris:length"] = Variant(duration.microseconds)
        }
        if let artURL { fields["mpris:artUrl"] = Variant(artURL.absoluteString) }
        if let number = info.trackNumber.flatMap(Int32.init(exactly:)) { fields["xesam:trackNumber"] = Variant(number) }
        if let number = info.discNumber.flatMap(Int32.init(exactly:)) { fields["xesam:discNumber"] = Variant(number) }
        if let date = info.releaseDate { fields["xesam:contentCreated"] = Variant(date.formatted(.iso8601)) }
        if let url = info.assetURL { fields["xesam:url"] = Variant(url.absoluteString) }
        self.init(fields)
    }
}

extension Duration {
    /// The duration in whole microseconds (truncated toward zero), the unit of MPRIS times.
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000).partialValue
    }
}
