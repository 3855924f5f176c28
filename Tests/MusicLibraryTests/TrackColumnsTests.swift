import MediaRemote
import Testing

@testable import MusicLibrary

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A tree given covers by where they come from makes its track rows from every track's fields
/// read at once, in columns: each row must be the one a tree of the tracks themselves shows,
/// also after a rescan changed a track's tags or a folder's cover.
@Suite struct TrackColumnsTests {
    static let artwork: @Sendable (TrackArtwork) -> MediaItemArtwork? = { cover in
        switch cover {
        case .file(let url): .url(url)
        case .embedded(let sha256): .url(URL(string: "embedded:" + sha256)!)
        }
    }

    static func media(_ index: Int, title: String? = nil, image: Data? = nil) -> AudioFileMetadata {
        AudioFileMetadata(
            duration: index % 13 == 0 ? nil : .milliseconds(100_000 + index * 7), title: title ?? "Song \(index) ✓",
            artists: index % 9 == 0 ? [] : index % 5 == 0 ? ["Artist \(index % 37)", "", "Guest"] : ["Artist \(index % 37)"],
            album: index % 17 == 0 ? "" : index % 19 == 0 ? nil : "Album \(index % 11)", albumArtists: [],
            genres: index % 4 == 0 ? [] : ["Jazz", "Blues"], trackNumber: index % 6 == 0 ? nil : index % 15 + 1,
            discNumber: 1, releaseDate: index % 3 == 0 ? "" : "1999-0\(index % 9 + 1)",
            image: image, mimeType: index % 2 == 0 ? "audio/x-flac" : nil)
    }

    static func file(_ index: Int, size: Int? = nil) -> FolderWalk.File {
        FolderWalk.File(
            path: "Artist \(index % 37)/Album \(index % 11)/\(index) é #%.flac", size: size ?? (index % 10 == 0 ? 0 : 1_000 + index),
            modified: index % 7 == 0 ? 0 : 1_700_000_000_123_456_789 + Int64(index), kind: .audio)
    }

    @Test func rowsFromColumnsAreTheTracksRowsAlsoAfterARescan() async throws {
        let folder = try LibraryFolder("track-columns")
        defer { folder.remove() }
        let library = try folder.open()
        let image = Data([1, 2, 3])
        try library.write { index in
            try index.insertSyntheticTracks((0..<600).map { (file: Self.file($0), media: Self.media($0)) })
            // Some tracks with a cover of their own.
            try index.store(
                (0..<600).filter { $0 % 23 == 0 }.map {
                    LibraryIndex.ReadFile(file: Self.file($0), outcome: .success(Self.media($0, image: image)), imageHash: "ab12")
                })
            _ = try index.finishScan(
                folderArt: ["Artist 1/Album 1": "Artist 1/Album 1/cover.jpg", "Artist 2/Album 2": "Artist 2/Album 2/front.png"],
                walkFailures: [])
        }
        let trackArtwork: @Sendable (Track) -> MediaItemArtwork? = { $0.artwork.flatMap(Self.artwork) }
        let fromColumns = try LibraryContent(library: library, libraryName: "Music", coverArtwork: Self.artwork)
        let model = fromColumns.snapshot.0
        let columns = try #require(model.rows.readColumnsNow())
        #expect((0..<model.rows.count).allSatisfy(columns.has))
        #expect(columns.artwork(try #require(model.rows.index(ofID: Self.file(23).path))) == .embedded(sha256: "ab12"))
        var inMemory = LibraryContent(tracks: try library.tracks(), playlists: [], libraryName: "Music", artwork: trackArtwork)
        #expect(compareEveryRow(of: fromColumns, with: inMemory) > 4 * 600)
        let byIdentifier = LibraryContent.identifier(ofTrack: Self.file(1).path)
        #expect(
            try await fromColumns.contentItem(forIdentifier: byIdentifier)
                == inMemory.contentItem(forIdentifier: byIdentifier))

        // A rescan changes a track's tags and size, and a folder's cover: the tree built again
        // reads its columns again, and shows the change.
        try library.write { index in
            try index.insertSyntheticTracks([(file: Self.file(1, size: 77), media: Self.media(1, title: "Changed"))])
            _ = try index.finishScan(folderArt: ["Artist 2/Album 2": "Artist 2/Album 2/new.jpg"], walkFailures: [])
        }
        try fromColumns.update(from: library)
        let rebuilt = fromColumns.snapshot.0
        #expect(rebuilt !== model)
        #expect(rebuilt.rows.readColumnsNow() != nil)
        inMemory = LibraryContent(tracks: try library.tracks(), playlists: [], libraryName: "Music", artwork: trackArtwork)
        #expect(compareEveryRow(of: fromColumns, with: inMemory) > 4 * 600)
        let changed = try await fromColumns.contentItem(forIdentifier: byIdentifier)
        #expect(changed?.title == "Changed")
        #expect(changed?.media?.size == 77)
    }

    /// Once its columns are read, a tree says its pages are read from memory, and a manager
    /// serving its large containers page by page reads them on the caller's thread: the pages
    /// are those of a manager copying them, and of a tree reading tracks.
    @Test func pagesReadFromMemoryAreThoseReadOnTheManagersThreads() async throws {
        let folder = try LibraryFolder("track-columns-memory")
        defer { folder.remove() }
        let library = try folder.open()
        try library.write { try $0.insertSyntheticTracks((0..<300).map { (file: Self.file($0), media: Self.media($0)) }) }
        let content = try LibraryContent(library: library, libraryName: "Music", coverArtwork: Self.artwork)
        let tracks = try LibraryContent(library: library, libraryName: "Music") { $0.artwork.flatMap(Self.artwork) }
        // The columns are not read yet: their reading starts now.
        #expect(!content.readsChildItemsFromMemory(at: [2]))
        content.snapshot.0.rows.readColumnsNow()
        for indexPath: IndexPath in [[0], [1], [2], [3], [4], [1, 0]] {
            #expect(content.readsChildItemsFromMemory(at: indexPath) == (indexPath != [3]), "\(Array(indexPath))")
            #expect(!tracks.readsChildItemsFromMemory(at: indexPath))
        }
        let paged = PlayableContentManager(dataSource: content, pagedContainerThreshold: 4)
        let pagedTracks = PlayableContentManager(dataSource: tracks, pagedContainerThreshold: 4)
        let copied = PlayableContentManager(dataSource: content, pagedContainerThreshold: 100_000)
        for tab in ["artists", "albums", "tracks", "folders"] {
            for (offset, maximum) in [(0, 5), (5, 100), (290, 20), (0, nil)] as [(Int, Int?)] {
                let page = try await paged.listChildren(of: [tab], offset: offset, maximum: maximum)
                #expect(page == (try await copied.listChildren(of: [tab], offset: offset, maximum: maximum)), "\(tab) \(offset)")
                #expect(page == (try await pagedTracks.listChildren(of: [tab], offset: offset, maximum: maximum)), "\(tab) \(offset)")
                // As a media tree asks, in its natural order.
                #expect(page == (try await paged.listChildren(of: [tab], sortedBy: .natural, offset: offset, maximum: maximum)))
            }
        }
        // Containers first reached are read on the caller's thread too: an artist's albums, an
        // album's tracks, a folder's rows, as a manager over a tree reading tracks lists them.
        let copiedTracks = PlayableContentManager(dataSource: tracks, pagedContainerThreshold: 100_000)
        for tab in ["artists", "albums", "folders"] {
            let rows = try await copied.listChildren(of: [tab], maximum: 4).entries
            #expect(rows.count == 4)
            for row in rows {
                let listing = try await copied.listChildren(of: row.path, sortedBy: .natural)
                #expect(!listing.entries.isEmpty)
                #expect(listing == (try await copiedTracks.listChildren(of: row.path)), "\(row.path)")
            }
        }
    }

    /// A row's URL text, written without a `URL`, is the track's `url`'s.
    @Test func aFileURLsTextIsWhatURLWrites() {
        var relatives = (1..<0x80).map { "a\(String(UnicodeScalar(UInt8($0))))b/c" }
        relatives += ["é ü/日本 🎵.flac", "\u{A0}\u{FEFF}e\u{301}", "a/./b", "a//b", "a/../b", "a/..", "a/.", "x/", ".", "..",
            ".hidden/.x", "..a/b..", "...", "", "%41%", "a?b#c", "[x]{y}|z^`\"", "Artist 0001/Album 00002/01 Title.ogg"]
        // Roots the writer encodes once, and roots whose text it leaves to `URL`.
        for root in ["/", "/home/me/Music", "/a b/%c/ü", "/r/x.y", "/a/./b", "/x/", "//y", "/c\u{7}d", "rel"] {
            let writer = LibraryPath.FileURLWriter(root: root)
            for relative in relatives {
                let url = LibraryPath.fileURL(root, relative).absoluteString
                #expect(LibraryPath.fileURLString(root, relative) == url, "\(root) \(relative)")
                #expect(writer.string(relative) == url, "writer: \(root) \(relative)")
            }
        }
    }

    /// A track the index no longer held when the columns were read is read as a track (nil,
    /// gone), as a tree without columns reads it.
    @Test func aTrackMissingFromTheColumnsIsReadAsATrack() throws {
        let folder = try LibraryFolder("track-columns-missing")
        defer { folder.remove() }
        let library = try folder.open()
        try library.write { try $0.insertSyntheticTracks((0..<50).map { (file: Self.file($0), media: Self.media($0)) }) }
        let content = try LibraryContent(library: library, libraryName: "Music", coverArtwork: Self.artwork)
        let gone = Self.file(3).path
        try library.write { try $0.remove(paths: [gone]) }
        let model = content.snapshot.0
        let columns = try #require(model.rows.readColumnsNow())
        let track = try #require(model.rows.index(ofID: gone))
        #expect(!columns.has(track))
        let path = try #require(content.indexPath(ofTrack: gone, inContainer: nil))
        #expect(content.contentItem(at: path) == nil)
        let other = try #require(content.indexPath(ofTrack: Self.file(4).path, inContainer: nil))
        #expect(content.contentItem(at: other)?.title == "Song 4 ✓")
    }
}
