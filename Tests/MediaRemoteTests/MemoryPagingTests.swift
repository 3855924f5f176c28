import AsyncSupport
import MediaRemote
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Albums held in memory under one tab: `albums[i]` is the album at index `i`, five tracks each.
/// The order of the albums can be changed (between a manager's `beginUpdates` and `endUpdates`),
/// and it counts the rows it is asked for.
final class MemoryAlbums: PlayableContentDataSource {
    let albums: Mutex<[String]>
    let rowsRead = Atomic<Int>(0)

    init(_ albums: [String]) { self.albums = Mutex(albums) }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        switch indexPath.count {
        case 0: 1
        case 1: albums.withLock { $0.count }
        case 2: 5
        default: 0
        }
    }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        let albums = albums.withLock { $0 }
        switch Array(indexPath) {
        case [0]: return ContentItem(identifier: "albums", title: "Albums", isContainer: true)
        case let path where path.count == 2 && path[1] < albums.count:
            return ContentItem(identifier: albums[path[1]], title: albums[path[1]], isContainer: true)
        case let path where path.count == 3 && path[1] < albums.count && path[2] < 5:
            rowsRead.add(1, ordering: .relaxed)
            let album = albums[path[1]]
            // Titles in reverse order of the tracks, so a sort by title reverses the listing.
            return ContentItem(identifier: "\(album)-\(path[2])", title: "\(album) \(4 - path[2])", isPlayable: true)
        default: return nil
        }
    }

    var loadsChildItemsAtOnce: Bool { true }
    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? {
        indexPath.count == 2 ? .items : indexPath.count == 1 ? .containers : nil
    }
    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        guard indexPath.count == 2, let album = albums.withLock({ $0.indices.contains(indexPath[1]) ? $0[indexPath[1]] : nil }),
            identifier.hasPrefix(album + "-")
        else { return nil }
        return Int(identifier.dropFirst(album.count + 1))
    }
    func readsChildItemsFromMemory(at indexPath: IndexPath) -> Bool { true }
    func changedContainerIdentifiers() -> Set<String>? { ["albums"] }
}

@Suite(.timeLimit(.minutes(1))) struct MemoryPagingTests {
    @Test func anAlbumReadFromMemoryIsServedPageByPageNeverCopied() async throws {
        let source = MemoryAlbums(["red", "blue", "green"])
        let manager = PlayableContentManager(dataSource: source)
        let listed = try await manager.listChildren(of: ["albums", "blue"])
        #expect(listed.entries.map(\.item.identifier) == (0..<5).map { "blue-\($0)" })
        #expect(listed.totalCount == 5 && listed.isComplete)
        // Each listing reads its rows again: nothing of them was copied.
        let before = source.rowsRead.load(ordering: .relaxed)
        let page = try await manager.listChildren(of: ["albums", "blue"], offset: 1, maximum: 2)
        #expect(page.entries.map(\.item.identifier) == ["blue-1", "blue-2"])
        #expect(source.rowsRead.load(ordering: .relaxed) == before + 2)
        // Its rows are in introspection, and sorted here (the source sorts nothing).
        #expect(manager.childKeys(of: ["albums", "blue"]) == (0..<5).map { "blue-\($0)" })
        let sorted = try await manager.listChildren(
            of: ["albums", "blue"], sortedBy: ContentSort([.init(.title, ascending: true)]))
        #expect(sorted.entries.map(\.item.identifier) == (0..<5).reversed().map { "blue-\($0)" })
        // Under content limits, the first rows of the whole sorted listing.
        manager.updateContext {
            $0.contentLimitsEnforced = true
            $0.enforcedContentItemsCount = 2
        }
        let limited = try await manager.listChildren(
            of: ["albums", "blue"], sortedBy: ContentSort([.init(.title, ascending: true)]))
        #expect(limited.entries.map(\.item.identifier) == ["blue-4", "blue-3"])
        manager.updateContext { $0.contentLimitsEnforced = false }
        // A row below it is found by path.
        #expect(try manager.entry(at: ["albums", "blue", "blue-3"]).item.title == "blue 1")
    }

    @Test func aRowOfAPagedAlbumIsMarkedAsPlayingAndRemotesHearOfIt() async throws {
        let source = MemoryAlbums(["red", "blue", "green"])
        let manager = PlayableContentManager(dataSource: source)
        for album in ["red", "blue", "green"] { _ = try await manager.listChildren(of: ["albums", album]) }
        let heard = Mutex<[[String]]>([])
        let observation = manager.observe { change in
            if case .nowPlayingChanged(let paths) = change { heard.withLock { $0 += paths } }
        }
        defer { observation.cancel() }
        manager.nowPlayingIdentifiers = ["green-2"]
        #expect(heard.withLock { $0 } == [["albums", "green", "green-2"]])
        let listed = try await manager.listChildren(of: ["albums", "green"])
        #expect(listed.entries.map(\.isNowPlaying) == [false, false, true, false, false])
        manager.nowPlayingIdentifiers = ["red-0"]
        #expect(Set(heard.withLock { $0 }) == [["albums", "green", "green-2"], ["albums", "red", "red-0"]])
    }

    @Test func aPageAskedForWhileABatchMovesItsAlbumListsThatAlbumOnceTheBatchEnds() async throws {
        let source = MemoryAlbums(["red", "blue", "green"])
        let manager = PlayableContentManager(dataSource: source)
        _ = try await manager.listChildren(of: ["albums", "blue"])
        // `blue` moves from index 1 to 2; `green` takes its place. A page read at the place the
        // copy still has would list green's tracks.
        manager.beginUpdates()
        source.albums.withLock { $0 = ["red", "green", "blue"] }
        let listing = Task { try await manager.listChildren(of: ["albums", "blue"]) }
        // Time for the listing to reach the open batch (not a wait for an event: had it not
        // started by the end of the batch, it lists after it, which must show the same).
        try await Task.sleep(for: .milliseconds(50))
        manager.endUpdates()
        let listed = try await listing.value
        #expect(listed.entries.map(\.item.identifier) == (0..<5).map { "blue-\($0)" })
        #expect(listed.entries.allSatisfy { $0.indexPath?.dropLast() == [0, 2] })
    }
}
