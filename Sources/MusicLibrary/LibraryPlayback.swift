import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What to queue when a remote plays a row of ``LibraryContent``: the entries in order, where
/// to start, and the container they come from.
public struct LibraryPlayback: Sendable, Equatable {
    /// One entry to queue.
    public struct Entry: Sendable, Hashable {
        /// What plays.
        public enum Media: Sendable, Hashable {
            /// A track of the library, by identifier (its path relative to the library root).
            case track(Track.ID)
            /// A network stream from a playlist, with the title the playlist gives it.
            case stream(URL, title: String?)
        }

        public var media: Media
        /// The identifier of the entry's row in the tree (for
        /// ``PlayableContentManager/nowPlayingIdentifiers``).
        public var identifier: String

        public init(media: Media, identifier: String) {
            self.media = media
            self.identifier = identifier
        }
    }

    /// The entries, in play order; never empty.
    public var entries: [Entry]
    /// The index in ``entries`` to start at.
    public var startIndex: Int
    /// The identifier of the container the entries come from (an album, an artist, a playlist,
    /// a folder, or a tab such as `tracks`).
    public var containerIdentifier: String

    public init(entries: [Entry], startIndex: Int, containerIdentifier: String) {
        self.entries = entries
        self.startIndex = startIndex
        self.containerIdentifier = containerIdentifier
    }

    /// What ``PlayableContentManager/nowPlayingIdentifiers`` should be while entry `index`
    /// plays: the container, then the entry.
    public func nowPlayingIdentifiers(at index: Int) -> [String] {
        guard entries.indices.contains(index) else { return [containerIdentifier] }
        return [containerIdentifier, entries[index].identifier]
    }
}

extension LibraryContent {
    /// What to play when a remote picks the row at `indexPath`, or nil when it is not playable
    /// (a tab, the informative row) or nothing playable is beneath it.
    ///
    /// - A track or stream plays its container's tracks and streams (not those of subfolders),
    ///   from that one on: an album's, a playlist's, a folder's, or the Tracks tab's.
    /// - An album, a playlist, an artist (every album in order) or a folder (recursively,
    ///   subfolders first) plays every track beneath it, from the first.
    ///
    /// Answers from the tree as it is now, in O(entries).
    public func playback(forItemAt indexPath: IndexPath) -> LibraryPlayback? {
        let (model, root) = state.withLock { ($0.model, rootRows($0)) }
        guard let location = Location(indexPath, in: model, root: root) else { return nil }
        func tracks(_ indices: some Sequence<Int>) -> [LibraryPlayback.Entry] {
            indices.map {
                .init(
                    media: .track(model.rows.id($0)), identifier: LibraryContentModel.trackIdentifier(model.rows.id($0)))
            }
        }
        func entries(ofPlaylist index: Int) -> [LibraryPlayback.Entry] {
            model.playlists[index].entries.map { entry in
                switch entry.kind {
                case .track(let track): .init(media: .track(model.rows.id(track)), identifier: entry.identifier)
                case .stream(let url, let title, _):
                    .init(media: .stream(url, title: title), identifier: entry.identifier)
                }
            }
        }
        let playback: LibraryPlayback
        switch location {
        case .root, .informative, .tab:
            return nil
        case .artist(let index):
            let artist = model.artists[index]
            playback = LibraryPlayback(
                entries: tracks(artist.albums.lazy.flatMap { model.albums[$0].tracks }), startIndex: 0,
                containerIdentifier: artist.identifier)
        case .album(let index):
            let album = model.albums[index]
            playback = LibraryPlayback(
                entries: tracks(album.tracks), startIndex: 0, containerIdentifier: album.identifier)
        case .albumTrack(let album, let position):
            let album = model.albums[album]
            playback = LibraryPlayback(
                entries: tracks(album.tracks), startIndex: position, containerIdentifier: album.identifier)
        case .tracksTabTrack(let position):
            playback = LibraryPlayback(
                entries: tracks(model.tracksByTitle), startIndex: position, containerIdentifier: Tab.tracks.identifier)
        case .playlist(let index):
            playback = LibraryPlayback(
                entries: entries(ofPlaylist: index), startIndex: 0,
                containerIdentifier: model.playlists[index].identifier)
        case .playlistEntry(let playlist, let position):
            playback = LibraryPlayback(
                entries: entries(ofPlaylist: playlist), startIndex: position,
                containerIdentifier: model.playlists[playlist].identifier)
        case .folder(let index):
            var order: [Int] = []
            func collect(_ folder: Int) {
                for subfolder in model.folders[folder].subfolders { collect(subfolder) }
                order += model.folders[folder].tracks
            }
            collect(index)
            playback = LibraryPlayback(
                entries: tracks(order), startIndex: 0, containerIdentifier: model.folders[index].identifier)
        case .folderTrack(let index, let position):
            let folder = model.folders[index]
            playback = LibraryPlayback(
                entries: tracks(folder.tracks), startIndex: position, containerIdentifier: folder.identifier)
        }
        return playback.entries.isEmpty ? nil : playback
    }

    /// Where the track `id` is listed in the container with identifier `container`, or nil
    /// when it is not there.
    ///
    /// `container` is an album's, an artist's, a playlist's (its first occurrence) or a
    /// folder's identifier, or a tab's: `tracks` (also for nil), `folders` (tracks at the top
    /// of the library). For the daemon to find the row of what plays. O(depth), or
    /// O(entries) for a playlist.
    public func indexPath(ofTrack id: Track.ID, inContainer container: String?) -> IndexPath? {
        let model = state.withLock { $0.model }
        guard let track = model.rows.index(ofID: id) else { return nil }
        let place = model.places[track]
        let container = container ?? Tab.tracks.identifier
        if container == Tab.tracks.identifier { return [Tab.tracks.rawValue, place.positionInTracksTab] }
        if let album = model.albumByIdentifier[container] {
            return album == place.albumIndex ? [Tab.albums.rawValue, album, place.positionInAlbum] : nil
        }
        if let artist = model.artistByIdentifier[container] {
            let album = model.albums[place.albumIndex]
            guard album.artist == artist else { return nil }
            return [Tab.artists.rawValue, artist, album.positionInArtist, place.positionInAlbum]
        }
        if let playlist = model.playlistByIdentifier[container] {
            let entries = model.playlists[playlist].entries
            guard let position = entries.firstIndex(where: { if case .track(track) = $0.kind { true } else { false } })
            else { return nil }
            return [Tab.playlists.rawValue, playlist, position]
        }
        if let folder = model.folderByIdentifier[container] {
            guard place.folder == folder else { return nil }
            var indexes = [model.folders[folder].subfolders.count + place.positionInFolder]
            var current = folder
            while let parent = model.folders[current].parent {
                indexes.append(model.folders[current].positionInParent)
                current = parent
            }
            indexes.append(Tab.folders.rawValue)
            return IndexPath(indexes: indexes.reversed())
        }
        return nil
    }
}
