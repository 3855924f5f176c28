import MediaRemote
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A data source of two tabs that sorts nothing itself unless told to: tab 0 a few tracks and
/// an informative row, tab 1 `bigCount` alike tracks, which a manager with a small
/// `pagedContainerThreshold` serves page by page.
final class SortingSource: PlayableContentDataSource {
    let small: [ContentItem]
    let bigCount: Int
    let sortsBigTab: Bool
    /// The ranges asked of ``sortedChildIndexes(at:by:in:)``.
    let asked = Mutex<[Range<Int>]>([])

    init(small: [ContentItem], bigCount: Int, sortsBigTab: Bool) {
        (self.small, self.bigCount, self.sortsBigTab) = (small, bigCount, sortsBigTab)
    }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        switch Array(indexPath) {
        case []: 2
        case [0]: small.count
        case [1]: bigCount
        default: 0
        }
    }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        switch Array(indexPath) {
        case [0]: container("small")
        case [1]: container("big")
        case let path where path.count == 2 && path[0] == 0 && path[1] < small.count: small[path[1]]
        case let path where path.count == 2 && path[0] == 1 && path[1] < bigCount: bigTrack(path[1])
        default: nil
        }
    }

    func bigTrack(_ index: Int) -> ContentItem {
        ContentItem(identifier: "big\(index)", title: "Song \(index)", isPlayable: true, media: ContentMedia(trackNumber: index % 3))
    }

    var loadsChildItemsAtOnce: Bool { true }
    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? { Array(indexPath) == [1] ? .items : nil }
    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        Array(indexPath) == [1] ? Int(identifier.dropFirst(3)) : nil
    }

    /// The big tab by track number, descending (its own order among equals); nothing else.
    func sortedChildIndexes(at indexPath: IndexPath, by sort: ContentSort, in range: Range<Int>) -> [Int]? {
        guard sortsBigTab, Array(indexPath) == [1], sort == ContentSort([.init(.trackNumber, ascending: false)]) else {
            return nil
        }
        asked.withLock { $0.append(range) }
        let order = (0..<bigCount).sorted { ($0 % 3, -$0) > ($1 % 3, -$1) }
        return Array(order[range])
    }

    var supportsSearch: Bool { true }
    func searchContent(matching query: ContentQuery, in indexPath: IndexPath) async throws -> [IndexPath] {
        small.indices.filter { !small[$0].isInformative && query.matches(small[$0]) }.map { [0, $0] }
    }
}

@Suite(.timeLimit(.minutes(1))) struct ContentSortTests {
    static func song(_ title: String, artist: String?, number: Int? = nil) -> ContentItem {
        ContentItem(
            identifier: title, title: title, isPlayable: true, media: ContentMedia(artist: artist, trackNumber: number))
    }

    static let small: [ContentItem] = [
        song("delta", artist: "Beta", number: 3), song("alpha", artist: "alpha", number: 1),
        .informative(identifier: "note", title: "Zzz offline"), song("Charlie", artist: "beta", number: 1),
        song("Bravo", artist: nil, number: 2), ContentItem(identifier: "sub", title: "Echo", isContainer: true),
    ]

    static func manager(sortsBigTab: Bool = false) -> (PlayableContentManager, SortingSource) {
        let source = SortingSource(small: small, bigCount: 20, sortsBigTab: sortsBigTab)
        return (PlayableContentManager(dataSource: source, pagedContainerThreshold: 10), source)
    }

    static func titles(_ entries: [ContentEntry]) -> [String] { entries.map { $0.item.title ?? "" } }

    @Test func theManagerSortsItsCopyInformativeRowsFirstMissingValuesLast() async throws {
        let (manager, _) = Self.manager()
        let byArtist = ContentSort([.init(.artist, ascending: false), .init(.title)])
        let all = try await manager.listChildren(of: ["small"], sortedBy: byArtist)
        // Case-insensitive: Beta and beta are equal, so the titles decide; no artist comes last.
        #expect(Self.titles(all.entries) == ["Zzz offline", "Charlie", "delta", "alpha", "Bravo", "Echo"])
        #expect(all.totalCount == 6)
        let byNumber = try await manager.listChildren(of: ["small"], sortedBy: ContentSort([.init(.trackNumber)]))
        // Ties keep the natural order (alpha before Charlie).
        #expect(Self.titles(byNumber.entries) == ["Zzz offline", "alpha", "Charlie", "Bravo", "delta", "Echo"])
        let items = try await manager.listChildren(
            of: ["small"], kind: .items, sortedBy: ContentSort([.init(.title, ascending: false)]), offset: 1, maximum: 2)
        #expect(Self.titles(items.entries) == ["Charlie", "Bravo"])
        let natural = try await manager.listChildren(of: ["small"], sortedBy: .natural)
        #expect(natural == (try await manager.listChildren(of: ["small"])))
    }

    @Test func limitsCapTheSortedRowsBeforeTheKindFilter() async throws {
        let (manager, _) = Self.manager()
        manager.updateContext {
            $0.contentLimitsEnforced = true
            $0.enforcedContentItemsCount = 3
        }
        let sort = ContentSort([.init(.title)])
        #expect(Self.titles(try await manager.listChildren(of: ["small"], sortedBy: sort).entries) == ["Zzz offline", "alpha", "Bravo"])
        #expect(Self.titles(try await manager.listChildren(of: ["small"], kind: .items, sortedBy: sort).entries) == ["alpha", "Bravo"])
        let found = try await manager.search(.all, below: ["small"], sortedBy: ContentSort([.init(.title, ascending: false)]))
        #expect(Self.titles(found.entries) == ["Echo", "delta", "Charlie"])
        #expect(found.totalCount == 3)
    }

    @Test func aSearchIsSortedAndCounted() async throws {
        let (manager, _) = Self.manager()
        let found = try await manager.search(
            .compare(.title, .contains, "a"), below: [], sortedBy: ContentSort([.init(.title)]), offset: 1, maximum: 2)
        #expect(Self.titles(found.entries) == ["Bravo", "Charlie"])
        #expect(found.totalCount == 4)
    }

    @Test func aPagedContainerIsSortedByItsDataSourceOrNotAtAll() async throws {
        let (refusing, _) = Self.manager()
        let byNumber = ContentSort([.init(.trackNumber, ascending: false)])
        await #expect(throws: ContentError.self) { try await refusing.listChildren(of: ["big"], sortedBy: byNumber) }
        #expect(try await refusing.listChildren(of: ["big"], sortedBy: .natural, maximum: 3).entries.count == 3)

        let (manager, source) = Self.manager(sortsBigTab: true)
        let page = try await manager.listChildren(of: ["big"], sortedBy: byNumber, offset: 2, maximum: 4)
        // Numbers 2 first (2, 5, 8, …); the source was asked for one page.
        #expect(page.entries.map(\.item.identifier) == ["big8", "big11", "big14", "big17"])
        #expect(page.totalCount == 20)
        #expect(source.asked.withLock { $0 } == [2..<6])
        // Content limits cap the sorted rows: the places asked stay within them.
        manager.updateContext {
            $0.contentLimitsEnforced = true
            $0.enforcedContentItemsCount = 3
        }
        let limited = try await manager.listChildren(of: ["big"], sortedBy: byNumber, offset: 2, maximum: 4)
        #expect(limited.entries.map(\.item.identifier) == ["big8"])
        #expect(source.asked.withLock { $0.last } == 2..<3)
    }
}
