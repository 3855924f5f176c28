import AsyncSupport
import MediaRemote
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A two-level data source that counts what the manager asks of it.
final class CountingSource: PlayableContentDataSource {
    struct Calls {
        var items = 0
        var loads: [IndexPath] = []
    }
    private let state: Mutex<(tabs: [(ContentItem, [ContentItem])], calls: Calls)>

    /// How long reading each row inside a tab blocks its thread, as a read from a slow disk does.
    let readDelay: Duration?

    init(_ tabs: [(ContentItem, [ContentItem])], readDelay: Duration? = nil) {
        state = Mutex((tabs, Calls()))
        self.readDelay = readDelay
    }

    var calls: Calls { state.withLock { $0.calls } }
    func change(_ body: (inout [(ContentItem, [ContentItem])]) -> Void) { state.withLock { body(&$0.tabs) } }

    func beginLoadingChildItems(at indexPath: IndexPath) async throws {
        state.withLock { $0.calls.loads.append(indexPath) }
    }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        state.withLock { state in
            switch indexPath.count {
            case 0: state.tabs.count
            case 1: indexPath[0] < state.tabs.count ? state.tabs[indexPath[0]].1.count : 0
            default: 0
            }
        }
    }

    /// The most rows read at the same time so far.
    var mostReadsAtOnce: Int { reads.withLock { $0.most } }
    private let reads = Mutex((now: 0, most: 0))

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        if let readDelay, indexPath.count == 2 {
            reads.withLock { reads in
                reads.now += 1
                reads.most = max(reads.most, reads.now)
            }
            let (seconds, attoseconds) = readDelay.components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            reads.withLock { $0.now -= 1 }
        }
        return state.withLock { state in
            state.calls.items += 1
            guard indexPath[0] < state.tabs.count else { return nil }
            let tab = state.tabs[indexPath[0]]
            if indexPath.count == 1 { return tab.0 }
            return indexPath[1] < tab.1.count ? tab.1[indexPath[1]] : nil
        }
    }
}

func container(_ identifier: String) -> ContentItem { ContentItem(identifier: identifier, title: identifier, isContainer: true) }
func track(_ identifier: String) -> ContentItem { ContentItem(identifier: identifier, title: identifier, isPlayable: true) }

@Suite(.timeLimit(.minutes(1))) struct PlayableContentManagerTests {
    static func source() -> CountingSource {
        CountingSource([
            (container("a"), (1...5).map { track("a\($0)") }),
            (container("b"), [track("b1"), .informative(identifier: "note", title: "Offline")]),
        ])
    }

    /// Listings waiting on a slow data source (each row blocks its thread for 100 ms, as a
    /// cold disk may) wait on threads of the manager's own: more of them wait side by side than
    /// the machine has cores, the number of threads Swift's tasks share, which they would
    /// otherwise fill, stopping every other task of the program (the player's included).
    @Test func listingsWaitingOnASlowDataSourceDoNotHoldTheThreadsTasksShare() async throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let tabs = (0...cores).map { tab in (container("t\(tab)"), (0..<10).map { track("t\(tab).\($0)") }) }
        let source = CountingSource(tabs, readDelay: .milliseconds(100))
        let manager = PlayableContentManager(dataSource: source)
        let listings = tabs.indices.map { tab in Task { try await manager.listChildren(of: ["t\(tab)"]) } }
        for listing in listings { #expect(try await listing.value.entries.count == 10) }
        #expect(source.mostReadsAtOnce > cores)
    }

    @Test func listingsAreServedFromMemoryAndTheDataSourceIsAskedOnce() async throws {
        let source = Self.source()
        let manager = PlayableContentManager(dataSource: source)
        var callsAfterFirstListing = 0
        for _ in 0..<3 {
            let page = try await manager.listChildren(of: ["a"], offset: 1, maximum: 2)
            #expect(page.entries.map(\.item.identifier) == ["a2", "a3"])
            #expect(page.totalCount == 5)
            #expect(page.entries.map(\.path) == [["a", "a2"], ["a", "a3"]])
            #expect(page.entries.map(\.indexPath) == [[0, 1], [0, 2]])
            if callsAfterFirstListing == 0 {
                // Let the root's loading (started to resolve the path) finish and read it.
                while source.calls.items < 9 { await Task.yield() }
                callsAfterFirstListing = source.calls.items
            }
        }
        // The root twice (a snapshot to find "a", then once loaded), the tab's five rows once;
        // later listings ask nothing.
        #expect(source.calls.items == 9)
        #expect(source.calls.loads.filter { $0 == [0] }.count == 1)
    }

    @Test func listingAContainerPrefetchesTheContainersItShows() async throws {
        let source = Self.source()
        let manager = PlayableContentManager(dataSource: source)
        _ = try await manager.listChildren(of: [])
        // Prefetch runs in the background; a listing of the tab then finds it loaded.
        let page = try await manager.listChildren(of: ["b"])
        #expect(page.isComplete)
        // The prefetch of the other tab runs on a task of its own, which a busy machine may not
        // have started yet: wait (at most 10 s) for its load, then check nothing else was asked.
        let deadline = ContinuousClock.now + .seconds(10)
        while !source.calls.loads.contains([0]), ContinuousClock.now < deadline { await Task.yield() }
        #expect(Set(source.calls.loads) == [[], [0], [1]])
    }

    @Test func theInformativeRowIsListedFirstWhereverTheDataSourcePutsIt() async throws {
        let manager = PlayableContentManager(dataSource: Self.source())
        let rows = try await manager.listChildren(of: ["b"])
        #expect(rows.entries.map(\.item.identifier) == ["note", "b1"])
        #expect(rows.entries[0].item.isInformative)
        await #expect(throws: ContentError.notPlayable("Offline")) { try await manager.initiatePlayback(at: ["b", "note"]) }
    }

    @Test func endUpdatesReportsEachChangedContainerOnce() async throws {
        let source = Self.source()
        let manager = PlayableContentManager(dataSource: source)
        _ = try await manager.listChildren(of: ["a"])
        _ = try await manager.listChildren(of: ["b"])
        let heard = Mutex<[ContentChange]>([])
        let observation = manager.observe { change in heard.withLock { $0.append(change) } }
        defer { observation.cancel() }
        manager.beginUpdates()
        source.change { tabs in
            tabs[0].1 = tabs[0].1.map { var item = $0; item.playbackProgress = 0.25; return item }
            tabs[0].1.removeLast()
        }
        #expect(heard.withLock { $0.isEmpty })
        manager.endUpdates()
        #expect(heard.withLock { $0 } == [.containersUpdated([["a"]])])
        #expect(try await manager.listChildren(of: ["a"]).entries.map(\.item.playbackProgress) == [0.25, 0.25, 0.25, 0.25])
        // Nothing changed: nothing heard.
        manager.beginUpdates()
        manager.endUpdates()
        #expect(heard.withLock { $0.count } == 1)
    }

    /// The copy keeps at most `maximumCachedRows` rows: the containers reached least recently
    /// are forgotten, a listing reads one again, and a batch of updates still tells remotes
    /// which forgotten container changed, and only that one.
    /// While a batch is open the data source's index paths may not match the copy: what was
    /// read is still listed as it was, a row never read is refused with a word to ask again,
    /// and a listing of a container never read waits for the batch to end, then lists it as the
    /// data source has it now.
    @Test func whileABatchIsOpenNothingIsReadFromTheDataSource() async throws {
        let source = Self.source()
        let manager = PlayableContentManager(dataSource: source, loadingDeadline: .seconds(30))
        _ = try await manager.listChildren(of: ["a"])
        manager.beginUpdates()
        source.change { tabs in tabs.insert((container("new"), [track("n1")]), at: 0) }
        let listed = try await manager.listChildren(of: ["a"])
        #expect(listed.entries.map(\.item.identifier) == ["a1", "a2", "a3", "a4", "a5"])
        #expect(throws: ContentError.self) { _ = try manager.entry(at: ["b", "b1"]) }
        do {
            _ = try manager.entry(at: ["b", "b1"])
        } catch {
            #expect("\(error)".contains("ask again"), "\(error)")
        }
        let waiting = Task { try await manager.listChildren(of: ["b"]) }
        // It waits for the batch (a remote's call arriving meanwhile would too).
        try await Task.sleep(for: .milliseconds(50))
        manager.endUpdates()
        #expect(try await waiting.value.entries.map(\.item.identifier) == ["note", "b1"])
        #expect(try await manager.listChildren(of: ["new"]).entries.map(\.item.identifier) == ["n1"])
        #expect(try await manager.listChildren(of: []).entries.map(\.item.identifier) == ["new", "a", "b"])
    }

    @Test func theCopyIsBoundedAndForgottenContainersStillReportTheirChanges() async throws {
        let tabs = (0..<20).map { tab in (container("t\(tab)"), (0..<10).map { track("t\(tab)-\($0)") }) }
        let source = CountingSource(tabs)
        let manager = PlayableContentManager(dataSource: source, maximumCachedRows: 50)
        for tab in 0..<20 {
            let rows = try await manager.listChildren(of: ["t\(tab)"], prefetch: false)
            #expect(rows.entries.count == 10)
            // 20 tabs and the listed tab's 10 rows at least; never much past the bound.
            #expect(manager.cachedRowCount <= 50, "\(manager.cachedRowCount) rows after tab \(tab)")
        }
        #expect(manager.cachedRowCount >= 30)
        // A forgotten tab is read again when listed, with the same rows.
        let itemsBefore = source.calls.items
        #expect(try await manager.listChildren(of: ["t0"]).entries.map(\.item.identifier) == (0..<10).map { "t0-\($0)" })
        #expect(source.calls.items > itemsBefore)

        let heard = Mutex<[ContentChange]>([])
        let observation = manager.observe { change in heard.withLock { $0.append(change) } }
        defer { observation.cancel() }
        // t1 was forgotten long ago; t5's rows are unchanged; t19 is in the copy.
        manager.beginUpdates()
        source.change { tabs in
            tabs[1].1[3].title = "Renamed"
            tabs[19].1.removeLast()
        }
        manager.endUpdates()
        let updated = heard.withLock { $0 }
        guard case .containersUpdated(let paths) = updated.first else {
            Issue.record("heard \(updated)")
            return
        }
        #expect(updated.count == 1)
        #expect(Set(paths) == [["t1"], ["t19"]])
        #expect(try await manager.listChildren(of: ["t1"]).entries[3].item.title == "Renamed")
        // Nothing changed since: nothing heard, forgotten or not.
        manager.beginUpdates()
        manager.endUpdates()
        #expect(heard.withLock { $0.count } == 1)
    }

    /// A container of more than half the bound stays once read: forgotten, it would be read
    /// whole again on every return to it.
    @Test func aContainerLargerThanHalfTheBoundStays() async throws {
        let tabs = [(container("big"), (0..<30).map { track("big-\($0)") })]
            + (0..<10).map { tab in (container("t\(tab)"), (0..<10).map { track("t\(tab)-\($0)") }) }
        let source = CountingSource(tabs)
        let manager = PlayableContentManager(dataSource: source, maximumCachedRows: 50)
        _ = try await manager.listChildren(of: ["big"], prefetch: false)
        for tab in 0..<10 { _ = try await manager.listChildren(of: ["t\(tab)"], prefetch: false) }
        let itemsBefore = source.calls.items
        #expect(try await manager.listChildren(of: ["big"], prefetch: false).totalCount == 30)
        #expect(source.calls.items == itemsBefore, "the big tab was read again")
    }

    @Test func reloadDataLoadsAgainAndReportsWhatChanged() async throws {
        let source = Self.source()
        let manager = PlayableContentManager(dataSource: source)
        _ = try await manager.listChildren(of: ["a"])
        let heard = Mutex<[ContentChange]>([])
        let observation = manager.observe { change in heard.withLock { $0.append(change) } }
        defer { observation.cancel() }
        source.change { tabs in tabs[1].0.title = "Bee" }
        await manager.reloadData().value
        // The tab's own row changed: the root lists it (and the tab, read, is told too if it was read).
        #expect(heard.withLock { $0 } == [.containersUpdated([[]])])
        #expect(source.calls.loads.filter { $0 == [0] }.count == 2)
        #expect(try manager.entry(at: ["b"]).item.title == "Bee")
    }

    @Test func aNewDataSourceReplacesEverythingReadAndIsAnnouncedAsTheRootChanging() async throws {
        let manager = PlayableContentManager()
        #expect(try await manager.listChildren(of: []).entries.isEmpty)
        let heard = Mutex<[ContentChange]>([])
        let observation = manager.observe { change in heard.withLock { $0.append(change) } }
        defer { observation.cancel() }
        manager.dataSource = Self.source()
        #expect(heard.withLock { $0 } == [.containersUpdated([[]])])
        #expect(try await manager.listChildren(of: []).entries.map(\.item.identifier) == ["a", "b"])
        manager.dataSource = CountingSource([(container("c"), [])])
        #expect(try await manager.listChildren(of: []).entries.map(\.item.identifier) == ["c"])
        #expect(throws: ContentError.self) { try manager.entry(at: ["a"]) }
    }

    @Test func limitsCapListingsCountsAndDepth() async throws {
        let manager = PlayableContentManager(dataSource: Self.source())
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        manager.updateContext {
            $0.contentLimitsEnforced = true
            $0.enforcedContentItemsCount = 3
            $0.enforcedContentTreeDepth = 1
        }
        #expect(delegate.contexts.count == 1)
        #expect(try await manager.listChildren(of: []).entries.count == 2)
        #expect(try await manager.listChildren(of: ["a"]).entries.isEmpty)
        #expect(try manager.entry(at: ["a"]).children?.childCount == 0)
        #expect(throws: ContentError.self) { try manager.entry(at: ["a", "a1"]) }
        manager.updateContext { $0.enforcedContentTreeDepth = 2 }
        let page = try await manager.listChildren(of: ["a"])
        #expect(page.entries.map(\.item.identifier) == ["a1", "a2", "a3"])
        #expect(page.totalCount == 3)
        #expect(try manager.entry(at: ["a"]).children?.childCount == 3)
        // Setting the same context again tells nobody.
        manager.updateContext { $0.enforcedContentTreeDepth = 2 }
        #expect(delegate.contexts.count == 2)
    }

    /// A car lists at most four tabs whatever it is doing; informative rows are listed besides.
    @Test func theTabLimitKeepsTheFirstTabsAndTheInformativeRows() async throws {
        let tabs = (1...6).map { (container("t\($0)"), [track("t\($0).1")]) }
        let manager = PlayableContentManager(
            dataSource: CountingSource([(ContentItem.informative(identifier: "note", title: "Offline"), [])] + tabs))
        manager.updateContext { $0.maximumTabCount = 4 }
        let listing = try await manager.listChildren(of: [])
        #expect(listing.entries.map(\.item.identifier) == ["note", "t1", "t2", "t3", "t4"])
        #expect(try manager.entry(at: []).children?.childCount == 5)
        #expect(manager.childKeys(of: []).count == 5)
        // Below the root, nothing is cut.
        manager.updateContext { $0.maximumTabCount = 1 }
        #expect(try await manager.listChildren(of: ["t1"]).entries.count == 1)
        manager.updateContext { $0.maximumTabCount = 0 }
        #expect(try await manager.listChildren(of: []).entries.count == 7)
    }

    @Test func textsAreCutToTheEnforcedLengthOnlyWhileLimitsAreEnforced() {
        var context = PlayableContentManagerContext(enforcedTextLength: 5)
        #expect(context.fitted("Abbey Road") == "Abbey Road")
        context.contentLimitsEnforced = true
        #expect(context.fitted("Abbey Road") == "Abbe…")
        #expect(context.fitted("Abbey") == "Abbey")
        #expect(context.fitted("Björk Guðmundsdóttir").count == 5)
        context.enforcedTextLength = 0
        #expect(context.fitted("Abbey Road") == "Abbey Road")
        #expect(PlayableContentManagerContext(maximumTabCount: -3, enforcedTextLength: -1).tabLimit == nil)
    }

    @Test func nowPlayingMarksRowsAndReportsTheirPaths() async throws {
        let manager = PlayableContentManager(dataSource: Self.source())
        _ = try await manager.listChildren(of: ["a"])
        let heard = Mutex<[ContentChange]>([])
        let observation = manager.observe { change in heard.withLock { $0.append(change) } }
        defer { observation.cancel() }
        manager.nowPlayingIdentifiers = ["a", "a2"]
        manager.nowPlayingIdentifiers = ["a", "a3"]
        #expect(heard.withLock { $0 } == [.nowPlayingChanged([["a"], ["a", "a2"]]), .nowPlayingChanged([["a", "a2"], ["a", "a3"]])])
        #expect(try await manager.listChildren(of: ["a"]).entries.map(\.isNowPlaying) == [false, false, true, false, false])
    }

    @Test func repeatedIdentifiersGetPathsOfTheirOwn() async throws {
        let manager = PlayableContentManager(dataSource: CountingSource([(container("a"), [track("x"), track("x"), track("x")])]))
        let rows = try await manager.listChildren(of: ["a"])
        #expect(rows.entries.map(\.path) == [["a", "x"], ["a", "x\u{0}2"], ["a", "x\u{0}3"]])
        #expect(try manager.entry(at: ["a", "x\u{0}3"]).indexPath == [0, 2])
    }

    @Test func playbackProgressStaysWithinZeroAndOneAndNaNIsNone() {
        var item = ContentItem(identifier: "e", playbackProgress: .nan)
        #expect(item.playbackProgress == nil)
        item.playbackProgress = 1.5
        #expect(item.playbackProgress == 1)
        item.playbackProgress = -.infinity
        #expect(item.playbackProgress == nil)
        item.playbackProgress = -0.25
        #expect(item.playbackProgress == 0)
        #expect(ContentItem(identifier: "e", playbackProgress: 0.4).playbackProgress == 0.4)
    }

    @Test func queriesMatchFieldsIgnoringCase() {
        let item = ContentItem(
            identifier: "t", title: "Dancing Queen", isPlayable: true,
            media: ContentMedia(duration: .seconds(231), artist: "ABBA", trackNumber: 2))
        #expect(ContentQuery.text("abba").matches(item))
        #expect(ContentQuery.text("queen").matches(item))
        #expect(!ContentQuery.text("beatles").matches(item))
        #expect(ContentQuery.compare(.trackNumber, .less, "10").matches(item))
        #expect(ContentQuery.and(.compare(.duration, .greaterOrEqual, "231"), .compare(.kind, .derivedFrom, "music")).matches(item))
        #expect(ContentQuery.exists(.album, false).matches(item))
        #expect(ContentQuery.compare(.album, .notEqual, "x").matches(item))
    }
}

final class RecordingDelegate: PlayableContentDelegate {
    private let state = Mutex<[PlayableContentManagerContext]>([])
    var contexts: [PlayableContentManagerContext] { state.withLock { $0 } }

    func playableContentManager(_ manager: PlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath)
        async throws
    {}

    func playableContentManager(_ manager: PlayableContentManager, didUpdate context: PlayableContentManagerContext) {
        state.withLock { $0.append(context) }
    }
}
