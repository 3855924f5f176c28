import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Text lowercased once, the way ``ContentQuery`` folds text, for sorting and searching.
struct FoldedText: Sendable {
    let text: String
    /// All ASCII: searched byte by byte, which gives the same answer as comparing characters.
    let isASCII: Bool

    init(_ original: String) {
        text = original.lowercased()
        isASCII = text.utf8.allSatisfy { $0 < 0x80 }
    }
}

/// One immutable snapshot of the browsable tree: every container's children precomputed as
/// arrays of indices, so that a row is found from its index path in O(depth).
///
/// Built by ``LibraryContent`` from the library's tracks and playlists and swapped whole on
/// each update; never changed after ``init(tracks:playlists:)`` returns.
final class LibraryContentModel: Sendable {
    struct ArtistNode: Sendable {
        let name: String
        let identifier: String
        let folded: FoldedText
        /// Album indices, by date then title.
        let albums: [Int]
        /// The track whose cover stands for the artist.
        let representative: Int
    }

    struct AlbumNode: Sendable {
        let title: String
        /// Index in ``LibraryContentModel/artists``.
        let artist: Int
        let identifier: String
        let foldedTitle: FoldedText
        /// Track indices, by disc, track number and title.
        let tracks: [Int]
        /// The earliest release date of its tracks.
        let date: String?
        /// The track whose cover stands for the album: the first with artwork.
        let representative: Int
        /// Where the album is among its artist's.
        let positionInArtist: Int
    }

    /// Where a track is in each container that lists it.
    struct TrackPlace: Sendable {
        /// The item's title, artist and album fields, folded for search.
        let title: FoldedText
        let artist: FoldedText?
        let album: FoldedText?
        /// Index in ``LibraryContentModel/albums``.
        let albumIndex: Int
        let positionInAlbum: Int
        let positionInTracksTab: Int
        let folder: Int
        let positionInFolder: Int
    }

    struct FolderNode: Sendable {
        /// Relative to the library root; `""` for the root, which is the Folders tab.
        let path: String
        let name: String
        let identifier: String
        let folded: FoldedText
        let parent: Int?
        let positionInParent: Int
        /// Folder indices, by name.
        let subfolders: [Int]
        /// Track indices, by file name.
        let tracks: [Int]
    }

    struct PlaylistItem: Sendable {
        enum Kind: Sendable {
            case track(Int)
            case stream(URL, title: String?, folded: FoldedText)
        }
        let kind: Kind
        /// Unique in the playlist: a repeated entry's identifier gets an occurrence suffix.
        let identifier: String
    }

    struct PlaylistNode: Sendable {
        let id: String
        let name: String
        let identifier: String
        let folded: FoldedText
        let modified: Date?
        let entries: [PlaylistItem]
    }

    /// Every track, in the order given (duplicates of an id left out).
    let tracks: [Track]
    let places: [TrackPlace]
    /// In the Artists tab's order.
    let artists: [ArtistNode]
    /// In the Albums tab's order.
    let albums: [AlbumNode]
    /// The Tracks tab: track indices by title.
    let tracksByTitle: [Int]
    /// In the Playlists tab's order.
    let playlists: [PlaylistNode]
    /// Index 0 is the root (the Folders tab).
    let folders: [FolderNode]

    let trackByID: [String: Int]
    let artistByIdentifier: [String: Int]
    let albumByIdentifier: [String: Int]
    let playlistByIdentifier: [String: Int]
    let folderByIdentifier: [String: Int]
    /// A stream's identifier to its first occurrence: (playlist, entry).
    let streamByIdentifier: [String: (Int, Int)]

    static let unknownArtist = "Unknown Artist"
    static let unknownAlbum = "Unknown Album"

    init(tracks input: [Track], playlists inputPlaylists: [Playlist]) {
        // Tracks, each id once.
        var trackByID: [String: Int] = [:]
        trackByID.reserveCapacity(input.count)
        var tracks: [Track] = []
        tracks.reserveCapacity(input.count)
        for track in input where trackByID[track.id] == nil {
            trackByID[track.id] = tracks.count
            tracks.append(track)
        }
        let titles = tracks.map { FoldedText($0.title) }
        let artistTexts = tracks.map { Self.artistText(of: $0).map(FoldedText.init) }
        let albumTexts = tracks.map { Self.albumText(of: $0).map(FoldedText.init) }

        // Albums, grouped by (album artist, title).
        struct AlbumGroup {
            var artistName: String
            var title: String
            var tracks: [Int]
        }
        var groups: [AlbumGroup] = []
        var groupByKey: [String: Int] = [:]
        for (index, track) in tracks.enumerated() {
            let artistName = Self.groupingArtist(of: track)
            let title = Self.albumText(of: track) ?? Self.unknownAlbum
            let key = Self.albumIdentifier(artist: artistName, album: title)
            if let group = groupByKey[key] {
                groups[group].tracks.append(index)
            } else {
                groupByKey[key] = groups.count
                groups.append(AlbumGroup(artistName: artistName, title: title, tracks: [index]))
            }
        }
        for group in groups.indices {
            groups[group].tracks.sort { left, right in
                let a = tracks[left]
                let b = tracks[right]
                let discA = a.discNumber ?? 1
                let discB = b.discNumber ?? 1
                if discA != discB { return discA < discB }
                let numberA = a.trackNumber ?? Int.max
                let numberB = b.trackNumber ?? Int.max
                if numberA != numberB { return numberA < numberB }
                return Self.ordered(titles[left], a.id, titles[right], b.id)
            }
        }
        let groupDates: [String?] = groups.map { group in
            group.tracks.compactMap { tracks[$0].releaseDate.flatMap { $0.isEmpty ? nil : $0 } }.min()
        }
        let groupTitles = groups.map { FoldedText($0.title) }
        let groupArtists = groups.map { FoldedText($0.artistName) }

        // Albums tab order: title, then artist.
        let tabOrder = groups.indices.sorted { left, right in
            let a = groupTitles[left].text
            let b = groupTitles[right].text
            if a != b { return a < b }
            return Self.ordered(groupArtists[left], groups[left].artistName, groupArtists[right], groups[right].artistName)
        }
        var albumOfGroup = [Int](repeating: 0, count: groups.count)
        for (position, group) in tabOrder.enumerated() { albumOfGroup[group] = position }

        // Artists, each with its albums by date (undated last) then title.
        var artistGroups: [String: [Int]] = [:]
        for group in groups.indices { artistGroups[groups[group].artistName, default: []].append(group) }
        let artistNames = artistGroups.keys.map { ($0, FoldedText($0)) }.sorted { Self.ordered($0.1, $0.0, $1.1, $1.0) }
        var artistOfGroup = [Int](repeating: 0, count: groups.count)
        var positionInArtist = [Int](repeating: 0, count: groups.count)
        var artistAlbumGroups: [[Int]] = []
        for (artistIndex, (name, _)) in artistNames.enumerated() {
            let ordered = artistGroups[name]!.sorted { left, right in
                switch (groupDates[left], groupDates[right]) {
                case (let a?, let b?) where a != b: return a < b
                case (.some, nil): return true
                case (nil, .some): return false
                default: return Self.ordered(groupTitles[left], groups[left].title, groupTitles[right], groups[right].title)
                }
            }
            for (position, group) in ordered.enumerated() {
                artistOfGroup[group] = artistIndex
                positionInArtist[group] = position
            }
            artistAlbumGroups.append(ordered)
        }

        let representativeOfGroup = groups.map { group in
            group.tracks.first { tracks[$0].artwork != nil } ?? group.tracks[0]
        }
        albums = tabOrder.map { group in
            AlbumNode(
                title: groups[group].title, artist: artistOfGroup[group],
                identifier: Self.albumIdentifier(artist: groups[group].artistName, album: groups[group].title),
                foldedTitle: groupTitles[group], tracks: groups[group].tracks, date: groupDates[group],
                representative: representativeOfGroup[group], positionInArtist: positionInArtist[group])
        }
        artists = zip(artistNames, artistAlbumGroups).map { artist, albumGroups in
            let representative =
                albumGroups.lazy.map { representativeOfGroup[$0] }.first { tracks[$0].artwork != nil }
                ?? representativeOfGroup[albumGroups[0]]
            return ArtistNode(
                name: artist.0, identifier: Self.artistIdentifier(artist.0), folded: artist.1,
                albums: albumGroups.map { albumOfGroup[$0] }, representative: representative)
        }

        // The Tracks tab.
        tracksByTitle = tracks.indices.sorted { left, right in
            let a = titles[left].text
            let b = titles[right].text
            if a != b { return a < b }
            let artistA = artistTexts[left]?.text ?? ""
            let artistB = artistTexts[right]?.text ?? ""
            if artistA != artistB { return artistA < artistB }
            return tracks[left].id < tracks[right].id
        }

        // Folders: the directories of the tracks' relative paths and their ancestors.
        let folderBuild = Self.buildFolders(tracks)
        folders = folderBuild.folders

        var places: [TrackPlace] = []
        places.reserveCapacity(tracks.count)
        var positionInTracksTab = [Int](repeating: 0, count: tracks.count)
        for (position, track) in tracksByTitle.enumerated() { positionInTracksTab[track] = position }
        var positionInAlbum = [Int](repeating: 0, count: tracks.count)
        var albumOfTrack = [Int](repeating: 0, count: tracks.count)
        for (index, album) in albums.enumerated() {
            for (position, track) in album.tracks.enumerated() {
                positionInAlbum[track] = position
                albumOfTrack[track] = index
            }
        }
        for index in tracks.indices {
            places.append(
                TrackPlace(
                    title: titles[index], artist: artistTexts[index], album: albumTexts[index],
                    albumIndex: albumOfTrack[index], positionInAlbum: positionInAlbum[index],
                    positionInTracksTab: positionInTracksTab[index], folder: folderBuild.folderOfTrack[index],
                    positionInFolder: folderBuild.positionInFolder[index]))
        }
        self.places = places

        // Playlists, by name; entries in the file's order, those not in the library left out.
        var playlists: [PlaylistNode] = []
        for playlist in inputPlaylists {
            var entries: [PlaylistItem] = []
            var seen: Set<String> = []
            for entry in playlist.entries {
                let kind: PlaylistItem.Kind
                let identifier: String
                switch entry {
                case .track(let id):
                    guard let track = trackByID[id] else { continue }
                    kind = .track(track)
                    identifier = Self.trackIdentifier(id)
                case .stream(let url, let title):
                    kind = .stream(url, title: title, folded: FoldedText(title ?? url.absoluteString))
                    identifier = Self.streamIdentifier(url)
                case .missing:
                    continue
                }
                var unique = identifier
                var occurrence = 1
                while !seen.insert(unique).inserted {
                    occurrence += 1
                    unique = identifier + Self.occurrenceSeparator + String(occurrence)
                }
                entries.append(PlaylistItem(kind: kind, identifier: unique))
            }
            playlists.append(
                PlaylistNode(
                    id: playlist.id, name: playlist.name, identifier: Self.playlistIdentifier(playlist.id),
                    folded: FoldedText(playlist.name), modified: Self.modificationDate(of: playlist.url),
                    entries: entries))
        }
        var playlistIDs: Set<String> = []
        playlists = playlists.filter { playlistIDs.insert($0.id).inserted }
        playlists.sort { Self.ordered($0.folded, $0.name + "\u{0}" + $0.id, $1.folded, $1.name + "\u{0}" + $1.id) }
        self.playlists = playlists

        self.tracks = tracks
        self.trackByID = trackByID
        artistByIdentifier = Dictionary(uniqueKeysWithValues: artists.enumerated().map { ($1.identifier, $0) })
        albumByIdentifier = Dictionary(uniqueKeysWithValues: albums.enumerated().map { ($1.identifier, $0) })
        playlistByIdentifier = Dictionary(uniqueKeysWithValues: playlists.enumerated().map { ($1.identifier, $0) })
        folderByIdentifier = Dictionary(uniqueKeysWithValues: folders.enumerated().map { ($1.identifier, $0) })
        var streams: [String: (Int, Int)] = [:]
        for (playlistIndex, playlist) in playlists.enumerated() {
            for (entryIndex, entry) in playlist.entries.enumerated() {
                if case .stream(let url, _, _) = entry.kind, streams[Self.streamIdentifier(url)] == nil {
                    streams[Self.streamIdentifier(url)] = (playlistIndex, entryIndex)
                }
            }
        }
        streamByIdentifier = streams
    }

    /// An empty library.
    static let empty = LibraryContentModel(tracks: [], playlists: [])

    // MARK: Identifiers

    static let occurrenceSeparator = "\u{1F}#"

    static func trackIdentifier(_ id: Track.ID) -> String { "track:" + id }
    static func artistIdentifier(_ name: String) -> String { "artist:" + name }
    static func albumIdentifier(artist: String, album: String) -> String { "album:" + artist + "\u{1F}" + album }
    static func playlistIdentifier(_ id: String) -> String { "playlist:" + id }
    static func folderIdentifier(_ path: String) -> String { "folder:" + path }
    static func streamIdentifier(_ url: URL) -> String { "stream:" + url.absoluteString }

    // MARK: Building

    /// The artist a track is filed under: its first album artist, else its first artist.
    static func groupingArtist(of track: Track) -> String {
        track.albumArtists.first { !$0.isEmpty } ?? track.artists.first { !$0.isEmpty } ?? unknownArtist
    }

    /// The track's artists as one line, or nil when it has none.
    static func artistText(of track: Track) -> String? {
        let artists = track.artists.filter { !$0.isEmpty }
        return artists.isEmpty ? nil : artists.joined(separator: ", ")
    }

    /// The track's album title, or nil when it has none.
    static func albumText(of track: Track) -> String? {
        track.album.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The track's genres as one line, or nil when it has none.
    static func genreText(of track: Track) -> String? {
        let genres = track.genres.filter { !$0.isEmpty }
        return genres.isEmpty ? nil : genres.joined(separator: ", ")
    }

    /// Case-insensitive order, ties broken by the exact text so that the order is total.
    private static func ordered(_ a: FoldedText, _ exactA: String, _ b: FoldedText, _ exactB: String) -> Bool {
        if a.text != b.text { return a.text < b.text }
        return exactA < exactB
    }

    private static func buildFolders(_ tracks: [Track]) -> (folders: [FolderNode], folderOfTrack: [Int], positionInFolder: [Int]) {
        struct Draft {
            var path: String
            var name: String
            var parent: Int?
            var subfolders: [Int] = []
            var tracks: [Int] = []
        }
        var drafts = [Draft(path: "", name: "Folders", parent: nil)]
        var byPath: [Substring: Int] = ["": 0]
        func folder(_ path: Substring) -> Int {
            if let existing = byPath[path] { return existing }
            let slash = path.lastIndex(of: "/")
            let parent = folder(slash.map { path[..<$0] } ?? "")
            let name = slash.map { path[path.index(after: $0)...] } ?? path
            let index = drafts.count
            drafts.append(Draft(path: String(path), name: String(name), parent: parent))
            drafts[parent].subfolders.append(index)
            byPath[path] = index
            return index
        }
        var fileNames: [FoldedText] = []
        fileNames.reserveCapacity(tracks.count)
        var folderOfTrack: [Int] = []
        folderOfTrack.reserveCapacity(tracks.count)
        for (index, track) in tracks.enumerated() {
            let path = Substring(track.id)
            let slash = path.lastIndex(of: "/")
            let parent = folder(slash.map { path[..<$0] } ?? "")
            drafts[parent].tracks.append(index)
            folderOfTrack.append(parent)
            fileNames.append(FoldedText(String(slash.map { path[path.index(after: $0)...] } ?? path)))
        }
        let foldedNames = drafts.map { FoldedText($0.name) }
        let names = drafts.map(\.name)
        var positionInParent = [Int](repeating: 0, count: drafts.count)
        var positionInFolder = [Int](repeating: 0, count: tracks.count)
        for index in drafts.indices {
            drafts[index].subfolders.sort {
                ordered(foldedNames[$0], names[$0], foldedNames[$1], names[$1])
            }
            drafts[index].tracks.sort { ordered(fileNames[$0], tracks[$0].id, fileNames[$1], tracks[$1].id) }
            for (position, child) in drafts[index].subfolders.enumerated() { positionInParent[child] = position }
            for (position, track) in drafts[index].tracks.enumerated() { positionInFolder[track] = position }
        }
        let folders = drafts.enumerated().map { index, draft in
            FolderNode(
                path: draft.path, name: draft.name,
                identifier: index == 0 ? LibraryContent.Tab.folders.identifier : folderIdentifier(draft.path),
                folded: foldedNames[index], parent: draft.parent, positionInParent: positionInParent[index],
                subfolders: draft.subfolders, tracks: draft.tracks)
        }
        return (folders, folderOfTrack, positionInFolder)
    }

    /// The file's modification time, for a `file:` URL whose status can be read; one `stat`.
    private static func modificationDate(of url: URL) -> Date? {
        guard url.isFileURL else { return nil }
        var status = stat()
        guard stat(url.path(percentEncoded: false), &status) == 0 else { return nil }
        return Date(
            timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1_000_000_000)
    }
}
