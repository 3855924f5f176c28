import Testing

@testable import MusicLibrary

/// The folder-wise reads MPD's database commands make (`lsinfo`, `find`, `add FOLDER`, `stats`),
/// on rows inserted without reading files.
@Suite struct FolderQueryTests {
    static func row(
        _ path: String, artists: [String] = ["Someone"], album: String? = "Album", seconds: Int = 100,
        modified: Int64 = 1_700_000_000_000_000_000
    ) -> (file: FolderWalk.File, media: AudioFileMetadata) {
        (
            FolderWalk.File(path: path, size: 1_000, modified: modified, kind: .audio),
            AudioFileMetadata(
                duration: .seconds(seconds), title: path, artists: artists, album: album, albumArtists: [], genres: [],
                mimeType: "audio/x-flac")
        )
    }

    static let paths = [
        "A/01 x.flac", "A/02 y.flac", "A/Sub/03.flac", "A B/01.flac", "root.flac", "Z/Deep/Deeper/z.flac", "É/1.flac",
    ]

    /// A library of ``paths`` with a playlist at the root and one alone in the folder `P`.
    static func makeLibrary(_ folder: LibraryFolder) throws -> MusicLibrary {
        let library = try folder.open()
        try library.write { index in
            try index.insertSyntheticTracks(
                paths.map { path in
                    path == "A/Sub/03.flac"
                        ? row(path, artists: ["Someone", "Guest"], album: "Other", modified: 1_800_000_000_000_000_000)
                        : row(path, album: path.hasPrefix("root") ? nil : "Album")
                })
            for (path, modified) in [("root.m3u", Int64(5)), ("P/list.m3u", Int64(1_900_000_000_000_000_000))] {
                try index.store(
                    playlist: FolderWalk.File(path: path, size: 10, modified: modified, kind: .playlist),
                    outcome: .read(LibraryIndex.PlaylistContents(name: "List", entries: [])))
            }
            try index.finishScan(folderArt: ["A": "A/cover.jpg"], walkFailures: [])
        }
        return library
    }

    @Test func tracksStreamByPathWithinAFolderAndStopWhenAsked() throws {
        let folder = try LibraryFolder("folder-stream")
        defer { folder.remove() }
        let library = try Self.makeLibrary(folder)
        var all: [String] = []
        try library.forEachTrack {
            all.append($0.id)
            return true
        }
        #expect(all == Self.paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        var inA: [Track] = []
        try library.forEachTrack(inFolder: "/A/") {
            inA.append($0)
            return true
        }
        // "A B/…" sorts between "A/" and "A0" as bytes go, but is not in A.
        #expect(inA.map(\.id) == ["A/01 x.flac", "A/02 y.flac", "A/Sub/03.flac"])
        #expect(inA[0].artwork == .file(folder.url("A/cover.jpg")))
        #expect(inA[2].artists == ["Someone", "Guest"])
        var first: [String] = []
        try library.forEachTrack(inFolder: "") {
            first.append($0.id)
            return false
        }
        #expect(first == ["A B/01.flac"])
        var none = 0
        try library.forEachTrack(inFolder: "Nope") { _ in
            none += 1
            return true
        }
        #expect(none == 0)
    }

    @Test func aFolderListsItsSubfoldersTracksAndPlaylists() throws {
        let folder = try LibraryFolder("folder-listing")
        defer { folder.remove() }
        let library = try Self.makeLibrary(folder)

        let root = try #require(try library.folderListing(""))
        #expect(root.subfolders.map(\.path) == ["A", "A B", "P", "Z", "É"])
        #expect(root.subfolders.first { $0.path == "A" }?.modified == 1_800_000_000_000_000_000)
        #expect(root.subfolders.first { $0.path == "P" }?.modified == 1_900_000_000_000_000_000)
        #expect(root.tracks.map(\.id) == ["root.flac"])
        #expect(root.playlists == [FolderListing.PlaylistFile(path: "root.m3u", name: "List", modified: 5)])
        #expect(try library.folderListing("/") == root)

        let a = try #require(try library.folderListing("A"))
        #expect(a.subfolders.map(\.path) == ["A/Sub"])
        #expect(a.tracks.map(\.id) == ["A/01 x.flac", "A/02 y.flac"])
        #expect(a.tracks.first?.artwork == .file(folder.url("A/cover.jpg")))
        #expect(a.playlists.isEmpty)
        #expect(try library.folderListing("Z")?.subfolders.map(\.path) == ["Z/Deep"])
        #expect(try library.folderListing("P")?.playlists.map(\.path) == ["P/list.m3u"])

        // MPD's "No such directory": nothing below, a track's path, a prefix of a name.
        #expect(try library.folderListing("Nope") == nil)
        #expect(try library.folderListing("A/01 x.flac") == nil)
        #expect(try library.folderListing("Z/De") == nil)
    }

    @Test func anEmptyLibraryStillHasItsRoot() throws {
        let folder = try LibraryFolder("folder-empty")
        defer { folder.remove() }
        let library = try folder.open()
        #expect(try library.folderListing("") == FolderListing())
        #expect(try library.trackIDs(inFolder: "") == [])
        let statistics = try library.statistics()
        #expect((statistics.tracks, statistics.artists, statistics.albums) == (0, 0, 0))
        #expect(statistics.totalDuration == .zero)
    }

    @Test func aFoldersTracksAreAddedInMPDsDatabaseOrder() throws {
        let folder = try LibraryFolder("folder-ids")
        defer { folder.remove() }
        let library = try Self.makeLibrary(folder)
        // A folder's files, then its subfolders by name: `A` before `A B`, the root's file first.
        #expect(
            try library.trackIDs(inFolder: "") == [
                "root.flac", "A/01 x.flac", "A/02 y.flac", "A/Sub/03.flac", "A B/01.flac", "Z/Deep/Deeper/z.flac",
                "É/1.flac",
            ])
        #expect(try library.trackIDs(inFolder: "/") == library.trackIDs(inFolder: ""))
        #expect(try library.trackIDs(inFolder: "A/") == ["A/01 x.flac", "A/02 y.flac", "A/Sub/03.flac"])
        #expect(try library.trackIDs(inFolder: "A/Sub") == ["A/Sub/03.flac"])
        #expect(try library.trackIDs(inFolder: "Nope") == [])
    }

    @Test func statisticsCountTracksArtistsAlbumsAndTheirLength() throws {
        let folder = try LibraryFolder("folder-statistics")
        defer { folder.remove() }
        let before = LibraryIndex.secondsSince1970()
        let library = try Self.makeLibrary(folder)
        let statistics = try library.statistics()
        #expect(statistics.tracks == 7)
        #expect(statistics.artists == 2)  // Someone, Guest
        #expect(statistics.albums == 2)  // Album, Other; root.flac has none
        #expect(statistics.totalDuration == .seconds(700))
        #expect(try #require(statistics.lastScan) >= before)
    }

    /// 50,000 tracks in 500 artist folders of 10 album folders: prints what each read takes. The
    /// rows are inserted in path order, as a scan's walk inserts them (`interleaved`: the worst
    /// case, every next path on another page of the table).
    @Test(arguments: [false, true]) func fiftyThousandTracksAreReadFolderWise(interleaved: Bool) throws {
        let folder = try LibraryFolder("folder-scale")
        defer { folder.remove() }
        let library = try folder.open()
        let count = 50_000
        var rows = (0..<count).map { index in
            Self.row(
                "Artist \(index % 500)/Album \(index / 500 % 10)/\(index / 5000) Song \(index).flac",
                artists: ["Artist \(index % 500)"], album: "Album \(index % 500)-\(index / 500 % 10)",
                seconds: 200, modified: 1_700_000_000_000_000_000 + Int64(index))
        }
        if !interleaved { rows.sort { $0.file.path.utf8.lexicographicallyPrecedes($1.file.path.utf8) } }
        try library.write { [rows] in
            try $0.insertSyntheticTracks(rows)
            try $0.finishScan(folderArt: [:], walkFailures: [])
        }

        let clock = ContinuousClock()
        func best<Result>(_ body: () throws -> Result) rethrows -> (Result, Duration) {
            var fastest = Duration.seconds(1000)
            var result: Result?
            for _ in 0..<3 {
                let start = clock.now
                result = try body()
                fastest = min(fastest, clock.now - start)
            }
            return (result!, fastest)
        }
        let (streamed, stream) = try best {
            var seen = 0
            try library.forEachTrack { _ in
                seen += 1
                return true
            }
            return seen
        }
        let (albums, distinct) = try best {
            var albums: Set<String> = []
            try library.forEachTrack { track in
                if let album = track.album { albums.insert(album) }
                return true
            }
            return albums.count
        }
        let (root, rootListing) = try best { try library.folderListing("") }
        let (artist, artistListing) = try best { try library.folderListing("Artist 7/Album 3") }
        let statisticsStart = clock.now
        let statistics = try library.statistics()
        let statisticsTime = clock.now - statisticsStart
        let (_, cachedStatisticsTime) = try best { try library.statistics() }
        let (ids, idsTime) = try best { try library.trackIDs(inFolder: "") }
        let (inArtist, artistStream) = try best {
            var seen = 0
            try library.forEachTrack(inFolder: "Artist 7") { _ in
                seen += 1
                return true
            }
            return seen
        }
        print(
            "MusicLibrary: 50,000 tracks\(interleaved ? " (interleaved)" : ""): forEachTrack \(stream.milliseconds) ms, "
                + "distinct albums by streaming \(distinct.milliseconds) ms, folderListing(\"\") \(rootListing.milliseconds) ms, "
                + "folderListing(album) \(artistListing.milliseconds) ms, statistics \(statisticsTime.milliseconds) ms "
                + "(again \(cachedStatisticsTime.milliseconds) ms), "
                + "trackIDs(\"\") \(idsTime.milliseconds) ms, forEachTrack(artist) \(artistStream.milliseconds) ms")
        #expect(streamed == count)
        #expect(albums == 5_000)
        #expect(root?.subfolders.count == 500)
        let firstArtist = root?.subfolders.first { $0.path == "Artist 0" }
        #expect(firstArtist?.modified == 1_700_000_000_000_049_500)
        #expect(artist?.tracks.count == 10)
        #expect(statistics.tracks == count && statistics.artists == 500 && statistics.albums == 5_000)
        #expect(statistics.totalDuration == .seconds(200 * count))
        #expect(ids.count == count && ids.first == "Artist 0/Album 0/0 Song 0.flac")
        #expect(inArtist == 100)
    }
}

extension Duration {
    /// Milliseconds with one decimal, for printed figures.
    fileprivate var milliseconds: String {
        let (seconds, attoseconds) = components
        let value = (Double(seconds) + Double(attoseconds) / 1e18) * 1000
        return String(Double(Int(value * 10)) / 10)
    }
}
