import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One immutable snapshot of the browsable tree: every container's children precomputed as
/// arrays of indices, so that a row is found from its index path in O(depth).
///
/// Built by ``LibraryContent`` from the library's tracks and playlists and swapped whole on
/// each update; never changed after ``init(tracks:playlists:reader:)`` returns. It keeps the
/// tracks' paths and places, not the tracks (see ``TrackRows``). Rows refer to their
/// folded title, artist and album by number in ``texts`` (``noText`` when absent): what search
/// reads, with no strings to retain.
final class LibraryContentModel: Sendable {
    /// The number standing for “no text” (a track without an artist).
    static let noText = -1

    /// Every track, in the order given (duplicates of an id left out).
    let rows: TrackRows
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
    /// The folded titles, artists and albums the rows refer to.
    let texts: FoldedTextTable

    let artistByIdentifier: [String: Int]
    let albumByIdentifier: [String: Int]
    let playlistByIdentifier: [String: Int]
    let folderByIdentifier: [String: Int]
    /// A stream's identifier to its first occurrence: (playlist, entry).
    let streamByIdentifier: [String: (Int, Int)]
    /// Which tracks remember where they were left, and which containers list such tracks.
    let resumable: ResumableRows
    /// What sorting rows reads and keeps, made when a remote first sorts (see ``LibrarySortKeys``).
    let sortKeys: LibrarySortKeys

    static let unknownArtist = "Unknown Artist"
    static let unknownAlbum = "Unknown Album"

    /// - Parameters:
    ///   - reader: where a row's fields are read when it is shown (the index); nil to keep
    ///     `tracks` in memory, which must then be ``Track`` values.
    ///   - resumePolicy: which tracks remember where they were left (their rows show progress).
    init<Outline: TrackOutlining>(
        tracks input: [Outline], playlists inputPlaylists: [Playlist], reader: (@Sendable ([TrackRows.Key]) -> [Track?])?,
        resumePolicy: ResumePolicy = .none, fieldReader: TrackFieldReader? = nil
    ) {
        sortKeys = LibrarySortKeys(fieldReader: fieldReader)
        // Tracks, each id once; the array given is kept (not copied) when no id repeats.
        var trackByID: [String: Int] = [:]
        trackByID.reserveCapacity(input.count)
        var repeated: Set<Int> = []
        for index in input.indices {
            let id = input[index].id
            if trackByID[id] == nil { trackByID[id] = index - repeated.count } else { repeated.insert(index) }
        }
        let tracks = repeated.isEmpty ? input : input.indices.filter { !repeated.contains($0) }.map { input[$0] }

        // The folded texts: titles one each, artist and album names once per distinct name.
        var texts = FoldedTextTable()
        var interned: [String: Int] = [:]
        func intern(_ text: String) -> Int {
            if let id = interned[text] { return id }
            let id = texts.append(text)
            interned[text] = id
            return id
        }
        var groups: [AlbumGroup] = []
        var groupByKey: [Int: Int] = [:]
        var titleText: [Int] = []
        var artistFieldText: [Int] = []
        var albumFieldText: [Int] = []
        titleText.reserveCapacity(tracks.count)
        artistFieldText.reserveCapacity(tracks.count)
        albumFieldText.reserveCapacity(tracks.count)
        // Fields are read one by one: copying a whole `Track` retains a dozen references. The
        // library lists an album's tracks together, so a track's artists and album are most
        // often the previous track's: then their texts are too, with no lookup.
        var previous: (artists: [String], albumArtists: [String], album: String?, group: Int)?
        for index in tracks.indices {
            titleText.append(texts.append(tracks[index].title))
            if let last = previous, last.album == tracks[index].album, last.artists == tracks[index].artists,
                last.albumArtists == tracks[index].albumArtists
            {
                artistFieldText.append(artistFieldText[index - 1])
                albumFieldText.append(albumFieldText[index - 1])
                groups[last.group].tracks.append(index)
                continue
            }
            artistFieldText.append(Self.line(tracks[index].artists).map(intern) ?? Self.noText)
            let album = Self.albumText(tracks[index].album)
            albumFieldText.append(album.map(intern) ?? Self.noText)
            // Filed under (album artist, album title).
            let artistName = Self.groupingArtist(
                albumArtists: tracks[index].albumArtists, artists: tracks[index].artists)
            let title = album ?? Self.unknownAlbum
            let artistText = intern(artistName)
            let albumText = intern(title)
            let key = artistText << 32 | albumText
            let group: Int
            if let existing = groupByKey[key] {
                group = existing
                groups[group].tracks.append(index)
            } else {
                group = groups.count
                groupByKey[key] = group
                groups.append(
                    AlbumGroup(
                        artistName: artistName, artistText: artistText, title: title, text: albumText, tracks: [index]))
            }
            previous = (tracks[index].artists, tracks[index].albumArtists, tracks[index].album, group)
        }
        var folderBuild = FolderBuild(tracks)
        for index in folderBuild.drafts.indices {
            folderBuild.drafts[index].text = texts.append(folderBuild.drafts[index].name)
        }
        let playlistDrafts = inputPlaylists.map { playlist in
            Self.playlistDraft(playlist, trackByID: trackByID, texts: &texts)
        }
        let rank = texts.ranks()
        func textRank(_ text: Int) -> Int { text == Self.noText ? -1 : rank[text] }

        // An album's tracks: disc, track number, title.
        let discs = tracks.indices.map { tracks[$0].discNumber ?? 1 }
        let numbers = tracks.indices.map { tracks[$0].trackNumber ?? Int.max }
        for group in groups.indices {
            groups[group].tracks.sort { left, right in
                if discs[left] != discs[right] { return discs[left] < discs[right] }
                if numbers[left] != numbers[right] { return numbers[left] < numbers[right] }
                let a = rank[titleText[left]]
                let b = rank[titleText[right]]
                return a != b ? a < b : tracks[left].id < tracks[right].id
            }
        }
        let groupDates: [String?] = groups.map { group in
            group.tracks.lazy.compactMap { tracks[$0].releaseDate.flatMap { $0.isEmpty ? nil : $0 } }.min()
        }

        // Albums tab: title, then artist.
        let tabOrder = groups.indices.sorted { left, right in
            let (a, b) = (groups[left], groups[right])
            if rank[a.text] != rank[b.text] { return rank[a.text] < rank[b.text] }
            if rank[a.artistText] != rank[b.artistText] { return rank[a.artistText] < rank[b.artistText] }
            return (a.title, a.artistName) < (b.title, b.artistName)
        }
        var albumOfGroup = [Int](repeating: 0, count: groups.count)
        for (position, group) in tabOrder.enumerated() { albumOfGroup[group] = position }

        // Artists by name, each with its albums by date (undated last), then title.
        var artistGroups: [Int: [Int]] = [:]
        for group in groups.indices { artistGroups[groups[group].artistText, default: []].append(group) }
        let artistOrder = artistGroups.keys.sorted { left, right in
            if rank[left] != rank[right] { return rank[left] < rank[right] }
            return groups[artistGroups[left]![0]].artistName < groups[artistGroups[right]![0]].artistName
        }
        var artistOfGroup = [Int](repeating: 0, count: groups.count)
        var positionInArtist = [Int](repeating: 0, count: groups.count)
        var artistAlbumGroups: [[Int]] = []
        artistAlbumGroups.reserveCapacity(artistOrder.count)
        for (artistIndex, artistText) in artistOrder.enumerated() {
            let ordered = artistGroups[artistText]!.sorted { left, right in
                switch (groupDates[left], groupDates[right]) {
                case (let a?, let b?) where a != b: return a < b
                case (.some, nil): return true
                case (nil, .some): return false
                default:
                    let (a, b) = (groups[left], groups[right])
                    return rank[a.text] != rank[b.text] ? rank[a.text] < rank[b.text] : a.title < b.title
                }
            }
            for (position, group) in ordered.enumerated() {
                artistOfGroup[group] = artistIndex
                positionInArtist[group] = position
            }
            artistAlbumGroups.append(ordered)
        }

        let representativeOfGroup = groups.map { group in
            group.tracks.first { tracks[$0].hasArtwork } ?? group.tracks[0]
        }
        albums = tabOrder.map { group in
            let album = groups[group]
            return AlbumNode(
                title: album.title, artist: artistOfGroup[group],
                identifier: Self.albumIdentifier(artist: album.artistName, album: album.title), text: album.text,
                tracks: album.tracks, date: groupDates[group], representative: representativeOfGroup[group],
                positionInArtist: positionInArtist[group])
        }
        artists = artistAlbumGroups.map { albumGroups in
            let name = groups[albumGroups[0]].artistName
            let representative =
                albumGroups.lazy.map { representativeOfGroup[$0] }.first { tracks[$0].hasArtwork }
                ?? representativeOfGroup[albumGroups[0]]
            return ArtistNode(
                name: name, identifier: Self.artistIdentifier(name), text: groups[albumGroups[0]].artistText,
                albums: albumGroups.map { albumOfGroup[$0] }, representative: representative)
        }

        // The Tracks tab: title, then artist.
        tracksByTitle = tracks.indices.sorted { left, right in
            let a = rank[titleText[left]]
            let b = rank[titleText[right]]
            if a != b { return a < b }
            let artistA = textRank(artistFieldText[left])
            let artistB = textRank(artistFieldText[right])
            if artistA != artistB { return artistA < artistB }
            return tracks[left].id < tracks[right].id
        }

        folders = folderBuild.folders(rank: rank) { tracks[$0].id }

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
        places = tracks.indices.map { index in
            TrackPlace(
                title: titleText[index], artist: artistFieldText[index], album: albumFieldText[index],
                albumIndex: albumOfTrack[index], positionInAlbum: positionInAlbum[index],
                positionInTracksTab: positionInTracksTab[index], folder: folderBuild.folderOfTrack[index],
                positionInFolder: folderBuild.positionInFolder[index])
        }

        // Playlists by name, each id once.
        var playlistIDs: Set<String> = []
        playlists = playlistDrafts.filter { playlistIDs.insert($0.id).inserted }.sorted { a, b in
            rank[a.text] != rank[b.text] ? rank[a.text] < rank[b.text] : (a.name, a.id) < (b.name, b.id)
        }

        if let reader {
            rows = TrackRows(
                ids: tracks.map(\.id), fingerprints: tracks.map(\.fingerprint), rowids: tracks.map(\.rowid),
                source: .reader(reader))
        } else {
            // Kept in memory: only ``Track`` values can be.
            let kept = tracks.compactMap { $0 as? Track }
            precondition(kept.count == tracks.count, "a tree without a reader keeps Track values")
            rows = TrackRows(ids: kept.map(\.id), fingerprints: kept.map(\.fingerprint), source: .memory(kept))
        }
        self.texts = texts
        // Identifiers are unique but for freak tags (an artist name holding U+001F) or paths
        // that differ only in Unicode normalization (Swift finds such strings equal): the
        // first one wins, and the manager tells such siblings apart.
        artistByIdentifier = Self.index(artists.map(\.identifier))
        albumByIdentifier = Self.index(albums.map(\.identifier))
        playlistByIdentifier = Self.index(playlists.map(\.identifier))
        folderByIdentifier = Self.index(folders.map(\.identifier))
        var streams: [String: (Int, Int)] = [:]
        for (playlistIndex, playlist) in playlists.enumerated() {
            for (entryIndex, entry) in playlist.entries.enumerated() {
                if case .stream(let url, _, _) = entry.kind, streams[Self.streamIdentifier(url)] == nil {
                    streams[Self.streamIdentifier(url)] = (playlistIndex, entryIndex)
                }
            }
        }
        streamByIdentifier = streams
        resumable = ResumableRows(
            tracks: tracks, policy: resumePolicy, albums: albums, folders: folders, playlists: playlists)
    }

    private static func index(_ identifiers: [String]) -> [String: Int] {
        Dictionary(identifiers.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// An album as the build gathers it: its artist and title, their texts, its tracks.
    private struct AlbumGroup {
        var artistName: String
        var artistText: Int
        var title: String
        var text: Int
        var tracks: [Int]
    }
}
