import MusicLibrary

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The library the media server serves: 200 artists × 5 albums × 10 tracks, filed in folders
/// `Artist/Album/`, and 20 playlists of 50 tracks each, as `Track` and `Playlist` values with
/// every field a scan fills in. No media files exist; nothing reads them.
///
/// The server builds it; the benchmark uses the same shape to know what a walk must see.
enum SyntheticLibrary {
    static let artists = 200
    static let albumsPerArtist = 5
    static let tracksPerAlbum = 10
    static let playlists = 20
    static let playlistLength = 50
    static var trackCount: Int { artists * albumsPerArtist * tracksPerAlbum }
    static var albumCount: Int { artists * albumsPerArtist }

    private static let words = [
        "Amber", "Blue", "Cinder", "Dawn", "Echo", "Fable", "Glass", "Harbor", "Iris", "Juniper", "Kite", "Lantern",
        "Meadow", "Night", "Orbit", "Paper", "Quiet", "River", "Salt", "Tide", "Umber", "Velvet", "Willow", "Zephyr",
    ]

    /// Every track; with `generation` > 0 each title ends in " (take N)", so that every track's
    /// item differs from the previous generation's.
    static func tracks(generation: Int = 0) -> [Track] {
        var tracks: [Track] = []
        tracks.reserveCapacity(trackCount)
        for artist in 0..<artists {
            let artistName = "Artist \(threeDigits(artist + 1))"
            for albumIndex in 0..<albumsPerArtist {
                let word = words[(artist * 5 + albumIndex) % words.count]
                let album = "\(word) Album \(threeDigits(artist + 1))-\(albumIndex + 1)"
                let folder = "\(artistName)/\(album)"
                for number in 1...tracksPerAlbum {
                    let index = tracks.count
                    let original =
                        "\(words[(index * 7919) % words.count]) \(words[(index * 31) % words.count]) \(index)"
                    // The id (the file's path) stays the same in every generation; only the title changes.
                    let id = "\(folder)/\(number < 10 ? "0" : "")\(number) \(original).flac"
                    let title = generation > 0 ? original + " (take \(generation))" : original
                    tracks.append(
                        Track(
                            id: id, url: URL(fileURLWithPath: "/music/" + id), title: title, artists: [artistName],
                            album: album, albumArtists: [artistName], genres: [words[artist % 12] + " Rock"],
                            trackNumber: number, trackCount: tracksPerAlbum, discNumber: 1, discCount: 1,
                            releaseDate: "\(1970 + (artist + albumIndex) % 50)-0\(1 + albumIndex)-15",
                            duration: .seconds(150 + (index * 37) % 200), mimeType: "audio/flac",
                            artwork: .file(URL(fileURLWithPath: "/music/\(folder)/cover.jpg")),
                            fileSize: 20_000_000 + index * 1_000, modified: 1_700_000_000_000_000_000 + Int64(index)))
                }
            }
        }
        return tracks
    }

    /// 20 playlists of 50 tracks, spread over the library. Their files do not exist (the model
    /// asks for a playlist file's modification time, and gets none).
    static func playlists(of tracks: [Track]) -> [Playlist] {
        (0..<playlists).map { playlist in
            let name = "Playlist \(threeDigits(playlist + 1))"
            return Playlist(
                id: "Playlists/\(name).m3u", name: name,
                url: URL(fileURLWithPath: "/nonexistent-mediatreebenchmark/\(name).m3u"),
                entries: (0..<playlistLength).map { entry in
                    .track(tracks[(playlist * 509 + entry * 197) % tracks.count].id)
                })
        }
    }

    /// The cover URL `LibraryContent` shows for a track: its folder's `cover.jpg`.
    static func artworkURL(_ track: Track) -> URL? {
        if case .file(let url) = track.artwork { return url }
        return nil
    }

    // MARK: What a walk sees

    /// Pages of `pageSize` a listing of `children` rows takes (1 for an empty container).
    static func pages(_ children: Int, pageSize: Int) -> Int { max(1, (children + pageSize - 1) / pageSize) }

    /// The containers listed by a walk of the whole tree: the root, the five tabs, the artists,
    /// their albums, the Albums tab's albums, the playlists, the artist and album folders.
    static var containers: Int { 1 + 5 + artists + albumCount + albumCount + playlists + artists + albumCount }

    /// The rows a walk sees: under the root 5 tabs; Artists: artists, albums, tracks; Albums:
    /// albums, tracks; Tracks: tracks; Playlists: playlists, entries; Folders: artist folders,
    /// album folders, tracks.
    static var nodes: Int {
        5 + (artists + albumCount + trackCount) + (albumCount + trackCount) + trackCount
            + (playlists + playlists * playlistLength) + (artists + albumCount + trackCount)
    }

    /// The `ListChildren` calls of a walk in pages of `pageSize`.
    static func calls(pageSize: Int) -> Int {
        func p(_ children: Int) -> Int { pages(children, pageSize: pageSize) }
        return p(5)  // root
            + p(artists) + artists * p(albumsPerArtist) + albumCount * p(tracksPerAlbum)  // Artists
            + p(albumCount) + albumCount * p(tracksPerAlbum)  // Albums
            + p(trackCount)  // Tracks
            + p(playlists) + playlists * p(playlistLength)  // Playlists
            + p(artists) + artists * p(albumsPerArtist) + albumCount * p(tracksPerAlbum)  // Folders
    }

    /// The containers whose rows change when every title changes: those that list tracks (each
    /// album twice, under its artist and in the Albums tab; the Tracks tab; each playlist; each
    /// album folder). No container's own row shows a track's title.
    static var containersListingTracks: Int { albumCount + albumCount + 1 + playlists + albumCount }

    private static func threeDigits(_ value: Int) -> String {
        String(repeating: "0", count: max(0, 3 - String(value).count)) + String(value)
    }
}
