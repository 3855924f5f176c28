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
    struct ArtistNode: Sendable {
        let name: String
        let identifier: String
        let text: Int
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
        let text: Int
        /// Track indices, by disc, track number and title.
        let tracks: [Int]
        /// The earliest release date of its tracks.
        let date: String?
        /// The track whose cover stands for the album: the first with artwork.
        let representative: Int
        /// Where the album is among its artist's.
        let positionInArtist: Int
    }

    /// A track's folded fields, and where it is in each container that lists it.
    ///
    /// Kept as 32-bit numbers (a library has far fewer than 2^31 tracks or texts): one of
    /// these per track, so it is half the size.
    struct TrackPlace: Sendable {
        private let fields: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32)

        init(
            title: Int, artist: Int, album: Int, albumIndex: Int, positionInAlbum: Int, positionInTracksTab: Int,
            folder: Int, positionInFolder: Int
        ) {
            fields = (
                Int32(title), Int32(artist), Int32(album), Int32(albumIndex), Int32(positionInAlbum),
                Int32(positionInTracksTab), Int32(folder), Int32(positionInFolder)
            )
        }

        var title: Int { Int(fields.0) }
        var artist: Int { Int(fields.1) }
        var album: Int { Int(fields.2) }
        /// Index in ``LibraryContentModel/albums``.
        var albumIndex: Int { Int(fields.3) }
        var positionInAlbum: Int { Int(fields.4) }
        var positionInTracksTab: Int { Int(fields.5) }
        var folder: Int { Int(fields.6) }
        var positionInFolder: Int { Int(fields.7) }
    }

    struct FolderNode: Sendable {
        /// Relative to the library root; `""` for the root, which is the Folders tab.
        let path: String
        let name: String
        let identifier: String
        let text: Int
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
            case stream(URL, title: String?, text: Int)
        }
        let kind: Kind
        /// Unique in the playlist: a repeated entry's identifier gets an occurrence suffix.
        let identifier: String
    }

    struct PlaylistNode: Sendable {
        let id: String
        let name: String
        let identifier: String
        let text: Int
        let modified: Date?
        let entries: [PlaylistItem]
    }

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
        tracks input: [Outline], playlists inputPlaylists: [Playlist], reader: (@Sendable ([Track.ID]) -> [Track?])?,
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
            rows = TrackRows(ids: tracks.map(\.id), fingerprints: tracks.map(\.fingerprint), source: .reader(reader))
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

    /// Every container's identifier (`""` for the root) with a hash of what it lists: its
    /// children's identifiers and everything their rows show. Two trees' containers with
    /// equal hashes list the same rows.
    func containerSignatures(showingInformative informative: Bool, status: LibraryContent.Status) -> [String: Int] {
        var signatures: [String: Int] = [:]
        signatures.reserveCapacity(artists.count + albums.count + playlists.count + folders.count + 6)
        func sign(_ identifier: String, _ body: (inout Hasher) -> Void) {
            var hasher = Hasher()
            body(&hasher)
            signatures[identifier] = hasher.finalize()
        }
        func artistRow(_ index: Int, _ hasher: inout Hasher) {
            let artist = artists[index]
            hasher.combine(artist.identifier)
            hasher.combine(artist.albums.count)
            hasher.combine(rows.fingerprints[artist.representative])
        }
        func albumRow(_ index: Int, _ hasher: inout Hasher) {
            let album = albums[index]
            hasher.combine(album.identifier)
            hasher.combine(artists[album.artist].name)
            hasher.combine(album.date)
            hasher.combine(rows.fingerprints[album.representative])
        }
        func trackRows(_ tracks: [Int], _ hasher: inout Hasher) {
            hasher.combine(tracks.count)
            for track in tracks { hasher.combine(rows.fingerprints[track]) }
        }
        func folderRows(_ index: Int, _ hasher: inout Hasher) {
            for subfolder in folders[index].subfolders { hasher.combine(folders[subfolder].identifier) }
            trackRows(folders[index].tracks, &hasher)
        }
        sign("") { hasher in
            hasher.combine(informative)
            if informative { hasher.combine(status) }
        }
        sign(LibraryContent.Tab.artists.identifier) { hasher in for index in artists.indices { artistRow(index, &hasher) } }
        sign(LibraryContent.Tab.albums.identifier) { hasher in for index in albums.indices { albumRow(index, &hasher) } }
        sign(LibraryContent.Tab.tracks.identifier) { hasher in trackRows(tracksByTitle, &hasher) }
        sign(LibraryContent.Tab.playlists.identifier) { hasher in
            for playlist in playlists {
                hasher.combine(playlist.identifier)
                hasher.combine(playlist.name)
                hasher.combine(playlist.modified)
                hasher.combine(playlist.entries.count)
                for entry in playlist.entries { if case .stream = entry.kind { hasher.combine(entry.identifier) } }
            }
        }
        sign(LibraryContent.Tab.folders.identifier) { hasher in folderRows(0, &hasher) }
        for artist in artists {
            sign(artist.identifier) { hasher in for album in artist.albums { albumRow(album, &hasher) } }
        }
        for album in albums { sign(album.identifier) { hasher in trackRows(album.tracks, &hasher) } }
        for playlist in playlists {
            sign(playlist.identifier) { hasher in
                for entry in playlist.entries {
                    hasher.combine(entry.identifier)
                    switch entry.kind {
                    case .track(let track): hasher.combine(rows.fingerprints[track])
                    case .stream(let url, let title, _):
                        hasher.combine(url)
                        hasher.combine(title)
                    }
                }
            }
        }
        for index in folders.indices.dropFirst() { sign(folders[index].identifier) { hasher in folderRows(index, &hasher) } }
        return signatures
    }

    private static func index(_ identifiers: [String]) -> [String: Int] {
        Dictionary(identifiers.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

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

    // MARK: Building

    /// A playlist's node, its entries in the file's order; those not in the library left out.
    private static func playlistDraft(_ playlist: Playlist, trackByID: [String: Int], texts: inout FoldedTextTable)
        -> PlaylistNode
    {
        var entries: [PlaylistItem] = []
        var seen: Set<String> = []
        for entry in playlist.entries {
            let kind: PlaylistItem.Kind
            let identifier: String
            switch entry {
            case .track(let id):
                guard let track = trackByID[id] else { continue }
                kind = .track(track)
                identifier = trackIdentifier(id)
            case .stream(let url, let title):
                kind = .stream(url, title: title, text: texts.append(title ?? url.absoluteString))
                identifier = streamIdentifier(url)
            case .missing:
                continue
            }
            var unique = identifier
            var occurrence = 1
            while !seen.insert(unique).inserted {
                occurrence += 1
                unique = identifier + occurrenceSeparator + String(occurrence)
            }
            entries.append(PlaylistItem(kind: kind, identifier: unique))
        }
        return PlaylistNode(
            id: playlist.id, name: playlist.name, identifier: playlistIdentifier(playlist.id),
            text: texts.append(playlist.name), modified: modificationDate(of: playlist.url), entries: entries)
    }

    /// An album as the build gathers it: its artist and title, their texts, its tracks.
    private struct AlbumGroup {
        var artistName: String
        var artistText: Int
        var title: String
        var text: Int
        var tracks: [Int]
    }

    /// The folders of the tracks' relative paths and their ancestors.
    private struct FolderBuild {
        struct Draft {
            var path: Substring
            var name: Substring
            var parent: Int?
            var text = 0
            var subfolders: [Int] = []
            var tracks: [Int] = []
        }
        var drafts = [Draft(path: "", name: "Folders", parent: nil)]
        var folderOfTrack: [Int] = []
        var positionInFolder: [Int] = []
        /// The tracks' file names, folded, to order the tracks of a folder.
        private var fileNames = FoldedTextTable()

        init<Outline: TrackOutlining>(_ tracks: [Outline]) {
            var byPath: [PathKey: Int] = [PathKey(""): 0]
            var last: (path: Substring, folder: Int) = ("", 0)
            folderOfTrack.reserveCapacity(tracks.count)
            for index in tracks.indices {
                let (folderPath, name) = Self.split(Substring(tracks[index].id))
                let folder: Int
                if folderPath.utf8.elementsEqual(last.path.utf8) {
                    folder = last.folder
                } else {
                    folder = Self.folder(folderPath, &drafts, &byPath)
                    last = (folderPath, folder)
                }
                drafts[folder].tracks.append(index)
                folderOfTrack.append(folder)
                _ = fileNames.append(name)
            }
        }

        /// A folder path compared and hashed by its bytes, as the file system tells folders
        /// apart (and cheaper than `String`'s Unicode-aware hashing).
        private struct PathKey: Hashable {
            let path: Substring
            init(_ path: Substring) { self.path = path }
            static func == (left: PathKey, right: PathKey) -> Bool { left.path.utf8.elementsEqual(right.path.utf8) }
            func hash(into hasher: inout Hasher) {
                if path.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) })
                    == nil
                {
                    for byte in path.utf8 { hasher.combine(byte) }
                }
            }
        }

        /// A path's folder and last component, split at its last `/`.
        private static func split(_ path: Substring) -> (folder: Substring, name: Substring) {
            guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
            return (path[..<slash], path[path.index(after: slash)...])
        }

        private static func folder(_ path: Substring, _ drafts: inout [Draft], _ byPath: inout [PathKey: Int]) -> Int {
            if let existing = byPath[PathKey(path)] { return existing }
            let (parentPath, name) = split(path)
            let parent = folder(parentPath, &drafts, &byPath)
            let index = drafts.count
            drafts.append(Draft(path: path, name: name, parent: parent))
            drafts[parent].subfolders.append(index)
            byPath[PathKey(path)] = index
            return index
        }

        /// The folders, their subfolders sorted by the ranks of their names' texts, their
        /// tracks by file name.
        mutating func folders(rank: [Int], trackIDs: (Int) -> String) -> [FolderNode] {
            positionInFolder = [Int](repeating: 0, count: folderOfTrack.count)
            var positionInParent = [Int](repeating: 0, count: drafts.count)
            let texts = drafts.map(\.text)
            let names = drafts.map(\.name)
            for index in drafts.indices {
                drafts[index].subfolders.sort { left, right in
                    rank[texts[left]] != rank[texts[right]]
                        ? rank[texts[left]] < rank[texts[right]] : names[left] < names[right]
                }
                let tracks = drafts[index].tracks
                drafts[index].tracks = fileNames.withReader { names in
                    tracks.sorted { left, right in
                        let order = names.compare(left, right)
                        return order != 0 ? order < 0 : trackIDs(left) < trackIDs(right)
                    }
                }
                for (position, child) in drafts[index].subfolders.enumerated() { positionInParent[child] = position }
                for (position, track) in drafts[index].tracks.enumerated() { positionInFolder[track] = position }
            }
            return drafts.enumerated().map { index, draft in
                FolderNode(
                    path: String(draft.path), name: String(draft.name),
                    identifier: index == 0
                        ? LibraryContent.Tab.folders.identifier
                        : LibraryContentModel.folderIdentifier(String(draft.path)),
                    text: draft.text, parent: draft.parent, positionInParent: positionInParent[index],
                    subfolders: draft.subfolders, tracks: draft.tracks)
            }
        }
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

/// The tracks of a tree that remember where they were left (``ResumePolicy``), and the
/// containers whose rows show progress because they list one: found once per build, in
/// O(tracks), so that a listing asks a bit per row and a set per container.
struct ResumableRows: Sendable {
    /// A bit per track.
    private let bits: [UInt64]
    let albums: Set<Int>
    let folders: Set<Int>
    let playlists: Set<Int>
    /// Whether the Tracks tab lists any.
    let inTracksTab: Bool

    init(
        tracks: [some TrackOutlining], policy: ResumePolicy, albums: [LibraryContentModel.AlbumNode],
        folders: [LibraryContentModel.FolderNode], playlists: [LibraryContentModel.PlaylistNode]
    ) {
        guard !policy.isNone else {
            (bits, self.albums, self.folders, self.playlists, inTracksTab) = ([], [], [], [], false)
            return
        }
        var bits = [UInt64](repeating: 0, count: (tracks.count + 63) / 64)
        var any = false
        for index in tracks.indices
        where policy.remembersPosition(path: tracks[index].id, duration: tracks[index].duration, genres: tracks[index].genres)
        {
            bits[index / 64] |= 1 << UInt64(index % 64)
            any = true
        }
        func has(_ index: Int) -> Bool { bits[index / 64] & (1 << UInt64(index % 64)) != 0 }
        self.bits = any ? bits : []
        inTracksTab = any
        self.albums = any ? Set(albums.indices.filter { albums[$0].tracks.contains(where: has) }) : []
        self.folders = any ? Set(folders.indices.filter { folders[$0].tracks.contains(where: has) }) : []
        self.playlists =
            any
            ? Set(
                playlists.indices.filter { index in
                    playlists[index].entries.contains { if case .track(let track) = $0.kind { has(track) } else { false } }
                }) : []
    }

    /// Whether track `index` remembers where it was left.
    func contains(_ index: Int) -> Bool {
        index / 64 < bits.count && bits[index / 64] & (1 << UInt64(index % 64)) != 0
    }
}
