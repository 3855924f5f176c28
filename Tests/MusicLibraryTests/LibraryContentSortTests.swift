import MediaRemote
import MusicLibrary
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The library's own sorting (keys per row, computed once) gives exactly the order
/// ``ContentSort`` defines, which the manager applies to items it holds: every sortable field,
/// both directions, on tabs of tracks, albums and artists and on search results.
@Suite struct LibraryContentSortTests {
    static func track(
        _ path: String, _ title: String, artist: String?, album: String?, number: Int?, date: String?, genre: String?,
        seconds: Int?
    ) -> Track {
        Track(
            id: path, url: URL(filePath: "/music/" + path), title: title, artists: artist.map { [$0] } ?? [],
            album: album, albumArtists: [], genres: genre.map { [$0] } ?? [], trackNumber: number, releaseDate: date,
            duration: seconds.map { .seconds($0) }, mimeType: "audio/flac", fileSize: 1000)
    }

    /// Titles and names differing in case and accents, values missing, values repeated.
    static let tracks: [Track] = [
        track("a/1.flac", "éclair", artist: "Zoë", album: "B-Sides", number: 2, date: "1999", genre: "Pop", seconds: 200),
        track("a/2.flac", "Éclair", artist: "zoë", album: "B-Sides", number: 1, date: "1999-05", genre: "pop", seconds: 90),
        track("b/1.flac", "apple", artist: nil, album: nil, number: nil, date: nil, genre: nil, seconds: nil),
        track("b/2.flac", "Banana", artist: "Ärzte", album: "Zeit", number: 10, date: "2005", genre: "Rock", seconds: 200),
        track("c/1.flac", "cherry", artist: "arzte", album: "zeit", number: 3, date: "", genre: "Jazz", seconds: 45),
        track("c/2.flac", "Date", artist: "Mann", album: "Alpha", number: 3, date: "1980", genre: nil, seconds: 3600),
        track("c/3.flac", "apple", artist: "mann", album: "alpha", number: nil, date: "1980", genre: "Jazz", seconds: 45),
    ]

    static let content = LibraryContent(tracks: tracks, playlists: [], libraryName: "Music")

    static var sorts: [ContentSort] {
        ContentSort.sortableFields.flatMap { field in
            [ContentSort([.init(field)]), ContentSort([.init(field, ascending: false)]),
             ContentSort([.init(field, ascending: false), .init(.title)])]
        } + [ContentSort([.init(.artist, ascending: false), .init(.title)]), ContentSort([.init(.date), .init(.trackNumber, ascending: false)])]
    }

    @Test(arguments: [LibraryContent.Tab.tracks, .albums, .artists])
    func aTabSortsAsContentSortOrdersItsItems(_ tab: LibraryContent.Tab) throws {
        let content = Self.content
        let count = content.numberOfChildItems(at: tab.indexPath)
        let items = try (0..<count).map { try #require(content.contentItem(at: tab.indexPath.appending($0))) }
        for sort in Self.sorts {
            let sorted = try #require(content.sortedChildIndexes(at: tab.indexPath, by: sort, in: 0..<count))
            #expect(sorted == sort.order(of: items), "\(tab) by \(sort): \(sorted.map { items[$0].title ?? "" })")
            // A window of the kept order.
            #expect(content.sortedChildIndexes(at: tab.indexPath, by: sort, in: 1..<3) == Array(sorted[1..<3]))
        }
    }

    @Test func searchResultsSortAsContentSortOrdersTheirItems() async throws {
        let content = Self.content
        let found = try await content.searchContent(matching: .all, in: IndexPath())
        let items = try found.map { try #require(content.contentItem(at: $0)) }
        for sort in Self.sorts {
            let sorted = try #require(content.sortedIndexPaths(found, by: sort))
            #expect(sorted == sort.order(of: items).map { found[$0] }, "by \(sort)")
        }
    }

    @Test func theRootIsLeftToTheManager() {
        #expect(Self.content.sortedChildIndexes(at: IndexPath(), by: ContentSort([.init(.title)]), in: 0..<5) == nil)
    }
}
