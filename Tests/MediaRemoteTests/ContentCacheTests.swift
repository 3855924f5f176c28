import Testing

@testable import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The content manager's decisions as a value: driven step by step, with no data source,
/// threads or clock.
@Suite struct ContentCacheTests {
    static func read(_ items: [ContentItem]) -> ContentTree.ContainerRead {
        ContentTree.ContainerRead(items: items.enumerated().map { ($0.offset, $0.element) }, displaysProgress: false)
    }

    /// A root of `tabs` tabs, each read with `rows` tracks.
    static func cache(tabs: Int, rows: Int, maximumRows: Int = 1_000) -> ContentCache {
        var cache = ContentCache(maximumRows: maximumRows)
        _ = cache.merge(read((0..<tabs).map { container("t\($0)") }), into: ContentTree.rootID, complete: true)
        for tab in 0..<tabs {
            guard case .found(let id) = cache.lookUp(["t\(tab)"]) else { continue }
            _ = cache.merge(read((0..<rows).map { track("t\(tab).\($0)") }), into: id, complete: true)
        }
        return cache
    }

    /// An id kept past the node's removal names nothing, even once its slot holds a new node:
    /// a caller holding it finds out instead of reading another node.
    @Test func anIdOfARemovedNodeNeverNamesTheNodeThatTakesItsPlace() {
        var cache = Self.cache(tabs: 2, rows: 0)
        guard case .found(let removed) = cache.lookUp(["t0"]) else { Issue.record("no t0"); return }
        _ = cache.merge(Self.read([container("t1")]), into: ContentTree.rootID, complete: true)
        _ = cache.merge(Self.read([container("t1"), container("new")]), into: ContentTree.rootID, complete: true)
        guard case .found(let added) = cache.lookUp(["new"]) else { Issue.record("no new row"); return }
        #expect(!cache.tree.exists(removed))
        #expect(cache.tree.node(removed) == nil)
        #expect(cache.tree.node(added)?.key == "new")
        #expect(cache.lookUp(["t0"]) == .missing)
    }

    /// A lookup says what to read on the way, and finds the node once it is read.
    @Test func aLookupAsksForTheContainersOnTheWayItLacks() {
        var cache = ContentCache(maximumRows: 100)
        #expect(cache.lookUp(["a", "a1"]) == .read(ContentTree.rootID))
        _ = cache.merge(Self.read([container("a")]), into: ContentTree.rootID, complete: true)
        guard case .read(let a) = cache.lookUp(["a", "a1"]) else { Issue.record("a not asked for"); return }
        _ = cache.merge(Self.read([track("a1")]), into: a, complete: true)
        guard case .found(let found) = cache.lookUp(["a", "a1"]) else { Issue.record("a1 not found"); return }
        #expect(cache.entry(for: found).path == ["a", "a1"])
        #expect(cache.lookUp(IndexPath(indexes: [0, 0])) == .found(found))
        #expect(cache.lookUp(["a", "nothing"]) == .missing)
        // Below a track there is nothing to read.
        #expect(cache.lookUp(["a", "a1", "deeper"]) == .missing)
    }

    /// Past its bound the copy forgets the containers reached least recently, but not one a
    /// call is reading its way through, nor those above it; their fingerprints stay.
    @Test func forgettingSparesPinnedContainersAndKeepsFingerprints() {
        var cache = Self.cache(tabs: 4, rows: 30, maximumRows: 60)
        guard case .found(let pinned) = cache.lookUp(["t0"]) else { Issue.record("no t0"); return }
        cache.pin(pinned)
        _ = cache.lookUp(["t3"])
        cache.forgetLeastRecentlyUsed()
        // t1 and t2 go (124 rows, then 64); t0 is pinned and t3 was reached last.
        #expect(cache.tree.liveCount - 1 == 64)
        #expect(cache.tree.node(pinned)?.children?.count == 30)
        #expect(cache.isCopied(["t3"]) && !cache.isCopied(["t1"]) && !cache.isCopied(["t2"]))
        #expect(Set(cache.forgotten.keys) == [["t1"], ["t2"]])
        cache.unpin(pinned)
        #expect(cache.pins.isEmpty)
    }

    /// Content limits cap a listing's rows, and a page says which containers it shows unread.
    @Test func aPageAppliesTheContentLimits() {
        var cache = Self.cache(tabs: 3, rows: 10)
        cache.context = PlayableContentManagerContext(contentLimitsEnforced: true, enforcedContentItemsCount: 4)
        guard case .found(let tab) = cache.lookUp(["t1"]) else { Issue.record("no t1"); return }
        let page = cache.page(of: tab, at: ["t1"], kind: .all, sorted: nil, offset: 2, maximum: 5, prefetchLimit: 24)
        #expect(page.listing.totalCount == 4)
        #expect(page.listing.entries.map(\.item.identifier) == ["t1.2", "t1.3"])
        #expect(page.prefetch.isEmpty)
    }
}
