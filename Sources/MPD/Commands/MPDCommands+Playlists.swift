import MusicLibrary
import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MPDCommands {
    /// The stored playlists are the library's playlist files, named by their path in the
    /// library (`Favourites.m3u`), as `lsinfo` shows them: read-only, as the folder is.
    static let playlistCommands: [(String, MPDPermissions, Command)] = [
        ("listplaylists", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            let playlists = try await c.read { try $0.playlists() }
            var response = client.response()
            for playlist in playlists {
                try response.add("playlist", playlist.id)
                if let modified = MPDCommands.modificationTime(of: playlist.url) {
                    try response.add("Last-Modified", MPDFormat.timestamp(modified))
                }
            }
            return response
        }),
        ("listplaylist", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            var response = client.response()
            for entry in try await c.playlistEntries(a[0]) {
                switch entry {
                case .track(let track): try response.add("file", track.id)
                case .stream(let url, _): try response.add("file", url.absoluteString)
                }
            }
            return response
        }),
        ("listplaylistinfo", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            var response = client.response()
            for entry in try await c.playlistEntries(a[0]) {
                switch entry {
                case .track(let track): try MPDSong(track).write(to: &response, client: client)
                case .stream(let url, let title):
                    try MPDSong(uri: url.absoluteString, tags: title.map { [(.name, $0)] } ?? []).write(
                        to: &response, client: client)
                }
            }
            return response
        }),
        ("load", .add, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...3)
            var entries = try await c.playlistEntries(a[0])
            if a.count > 1 {
                // As mpd, a range past the playlist's end loads what there is (maybe nothing).
                let (start, end) = try Arguments.bounds(a[1])
                let upper = a[1].contains(":") ? min(end ?? entries.count, entries.count) : min(start + 1, entries.count)
                entries = start < upper ? Array(entries[start..<upper]) : []
            }
            let count = await c.environment.player.queueSummary.count
            let destination = try a.count > 2 ? MPDCommands.destination(a[2], maximum: count) : nil
            var items: [QueueItem] = []
            for entry in entries {
                switch entry {
                case .track(let track): items.append(c.environment.queueItem(track.id))
                case .stream(let url, _):
                    if let item = try? await c.environment.resolveURL(url) { items.append(item) }
                }
            }
            _ = try await c.insert(items, at: destination)
            return client.response()
        }),
    ]

    enum PlaylistSong: Sendable {
        case track(Track)
        case stream(URL, title: String?)
    }

    /// The playable entries of the library playlist `name` (its path in the library); entries
    /// naming a file that is no longer indexed are left out.
    func playlistEntries(_ name: String) async throws(MPDError) -> [PlaylistSong] {
        let path = MPDCommands.libraryPath(name)
        return try await read { library in
            guard let playlist = try library.playlists().first(where: { $0.id == path }) else {
                throw MPDError.noExist("No such playlist")
            }
            var songs: [PlaylistSong] = []
            let ids = playlist.entries.compactMap { entry -> Track.ID? in
                if case .track(let id) = entry { return id }
                return nil
            }
            var tracks = try library.tracks(identifiedBy: ids).makeIterator()
            for entry in playlist.entries {
                switch entry {
                case .track:
                    if let track = tracks.next() ?? nil { songs.append(.track(track)) }
                case .stream(let url, let title): songs.append(.stream(url, title: title))
                default: continue
                }
            }
            return songs
        }
    }

    static func modificationTime(of url: URL) -> Int64? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false))
        return (attributes?[.modificationDate] as? Date).map { Int64($0.timeIntervalSince1970) }
    }
}
