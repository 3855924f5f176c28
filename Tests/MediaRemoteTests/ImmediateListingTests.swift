import MediaRemote
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A data source held in memory: tab 0 three albums of five tracks, tab 1 `bigCount` tracks
/// (served page by page by a manager with a small `pagedContainerThreshold`). It says it reads
/// from memory only while `fromMemory` is set, and counts the rows it is asked for.
final class MemorySource: PlayableContentDataSource {
    let bigCount = 1_000
    let fromMemory = Atomic<Bool>(true)
    let rowsRead = Atomic<Int>(0)

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        switch indexPath.count {
        case 0: 2
        case 1: indexPath[0] == 0 ? 3 : bigCount
        case 2: indexPath[0] == 0 ? 5 : 0
        default: 0
        }
    }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        rowsRead.add(1, ordering: .relaxed)
        switch Array(indexPath) {
        case [0]: return ContentItem(identifier: "albums", title: "Albums", isContainer: true)
        case [1]: return ContentItem(identifier: "tracks", title: "Tracks", isContainer: true)
        case let path where path.count == 2 && path[0] == 0 && path[1] < 3:
            return ContentItem(identifier: "album\(path[1])", title: "Album \(path[1])", isContainer: true)
        case let path where path.count == 3 && path[0] == 0 && path[1] < 3 && path[2] < 5:
            return ContentItem(identifier: "track\(path[1])-\(path[2])", title: "Song \(path[2])", isPlayable: true)
        case let path where path.count == 2 && path[0] == 1 && path[1] < bigCount:
            return ContentItem(identifier: "big\(path[1])", title: "Big \(path[1])", isPlayable: true)
        default: return nil
        }
    }

    var loadsChildItemsAtOnce: Bool { true }
    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? {
        Array(indexPath) == [1] ? .items : Array(indexPath) == [0] ? .containers : nil
    }
    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        Array(indexPath) == [1] && identifier.hasPrefix("big") ? Int(identifier.dropFirst(3)) : nil
    }
    func readsChildItemsFromMemory(at indexPath: IndexPath) -> Bool { fromMemory.load(ordering: .relaxed) }
}

@Suite(.timeLimit(.minutes(1))) struct ImmediateListingTests {
    /// The pages compared: an album first reached, the albums tab, pages of the paged tab, and
    /// windows past the end.
    static let pages: [(path: [String], kind: ContentListingKind, offset: Int, maximum: Int?)] = [
        (["albums", "album1"], .all, 0, nil), (["albums", "album2"], .items, 2, 2), (["albums"], .all, 0, nil),
        (["albums"], .containers, 1, 5), (["tracks"], .all, 0, 100), (["tracks"], .all, 950, 100),
        (["tracks"], .items, 990, nil), (["albums", "album0"], .all, 9, 3), ([], .all, 0, nil),
    ]

    @Test func aPageFromMemoryIsTheListingsOwnPageOnFirstReachAndFromTheCopy() async throws {
        // Two managers over one source: one answers at once, the other as a listing does.
        let source = MemorySource()
        let immediate = PlayableContentManager(dataSource: source, pagedContainerThreshold: 100)
        let listed = PlayableContentManager(dataSource: source, pagedContainerThreshold: 100)
        for round in 0..<2 {
            for page in Self.pages {
                let expected = try await listed.listChildren(
                    of: page.path, kind: page.kind, offset: page.offset, maximum: page.maximum)
                // An object lookup reaches the container first, as a D-Bus call's does.
                _ = try immediate.entry(at: page.path, readingChildren: false)
                let answered = immediate.listChildrenImmediately(
                    of: page.path, kind: page.kind, offset: page.offset, maximum: page.maximum, rowLimit: 200)
                #expect(answered == expected, "round \(round): \(page.path) \(page.offset)+\(page.maximum ?? -1)")
            }
        }
    }

    @Test func aPageOverTheRowLimitIsLeftToTheListing() async throws {
        let source = MemorySource()
        let manager = PlayableContentManager(dataSource: source, pagedContainerThreshold: 100)
        _ = try manager.entry(at: ["tracks"], readingChildren: false)
        #expect(manager.listChildrenImmediately(of: ["tracks"], offset: 0, maximum: 101, rowLimit: 100) == nil)
        #expect(manager.listChildrenImmediately(of: ["tracks"], offset: 0, maximum: nil, rowLimit: 999) == nil)
        // The same window ending past the last row shows fewer rows: answered.
        #expect(manager.listChildrenImmediately(of: ["tracks"], offset: 950, maximum: 101, rowLimit: 100)?.entries.count == 50)
        // A copied container is held to the limit too.
        _ = try await manager.listChildren(of: ["albums", "album0"])
        #expect(manager.listChildrenImmediately(of: ["albums", "album0"], rowLimit: 4) == nil)
        #expect(manager.listChildrenImmediately(of: ["albums", "album0"], rowLimit: 5)?.entries.count == 5)
    }

    @Test func aContainerNotInMemoryIsReadOnlyByTheListing() async throws {
        let source = MemorySource()
        source.fromMemory.store(false, ordering: .relaxed)
        let manager = PlayableContentManager(dataSource: source, pagedContainerThreshold: 100)
        _ = try manager.entry(at: ["albums", "album1"], readingChildren: false)
        let before = source.rowsRead.load(ordering: .relaxed)
        #expect(manager.listChildrenImmediately(of: ["albums", "album1"], rowLimit: 200) == nil)
        #expect(manager.listChildrenImmediately(of: ["tracks"], maximum: 10, rowLimit: 200) == nil)
        #expect(source.rowsRead.load(ordering: .relaxed) == before, "rows were read for a page left to the listing")
        // Once the listing read it into the copy, the copy answers it at once.
        let listed = try await manager.listChildren(of: ["albums", "album1"])
        #expect(manager.listChildrenImmediately(of: ["albums", "album1"], rowLimit: 200) == listed)
    }

    @Test func nothingIsAnsweredAtOnceWhileABatchOfUpdatesIsOpen() async throws {
        let source = MemorySource()
        let manager = PlayableContentManager(dataSource: source, pagedContainerThreshold: 100)
        _ = try manager.entry(at: ["albums", "album1"], readingChildren: false)
        manager.beginUpdates()
        #expect(manager.listChildrenImmediately(of: ["albums", "album1"], rowLimit: 200) == nil)
        #expect(manager.listChildrenImmediately(of: ["tracks"], maximum: 10, rowLimit: 200) == nil)
        manager.endUpdates()
        let listed = try await manager.listChildren(of: ["albums", "album1"])
        #expect(listed.entries.map(\.item.identifier) == (0..<5).map { "track1-\($0)" })
    }
}
