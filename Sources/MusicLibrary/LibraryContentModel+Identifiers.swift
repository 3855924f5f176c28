#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryContentModel {
    // MARK: Identifiers

    static let occurrenceSeparator = "\u{1F}#"

    static func trackIdentifier(_ id: Track.ID) -> String { "track:" + id }
    static func artistIdentifier(_ name: String) -> String { "artist:" + name }
    static func albumIdentifier(artist: String, album: String) -> String { "album:" + artist + "\u{1F}" + album }
    static func playlistIdentifier(_ id: String) -> String { "playlist:" + id }
    static func folderIdentifier(_ path: String) -> String { "folder:" + path }
    static func streamIdentifier(_ url: URL) -> String { "stream:" + url.absoluteString }

    // MARK: A track's fields

    /// The artist a track is filed under: its first album artist, else its first artist.
    static func groupingArtist(albumArtists: [String], artists: [String]) -> String {
        albumArtists.first { !$0.isEmpty } ?? artists.first { !$0.isEmpty } ?? unknownArtist
    }

    /// The track's artists (or genres) as one line: those not empty, separated by commas; nil
    /// when there are none. Takes the field, not the track, so that no `Track` is copied.
    static func line(_ names: [String]) -> String? {
        if names.count == 1 { return names[0].isEmpty ? nil : names[0] }
        let names = names.filter { !$0.isEmpty }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }

    /// The track's album title, or nil when it has none.
    static func albumText(_ album: String?) -> String? {
        album.flatMap { $0.isEmpty ? nil : $0 }
    }
}
