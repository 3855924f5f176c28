import DBus
import DBusTestSupport
import Dispatch
import Foundation
import MediaRemote
import ProcessTestSupport
import Synchronization
import Testing

@testable import MediaPlayer

// MARK: The app

/// Whether the caller runs on the main queue: what `Thread.isMainThread` tells an iOS app. On
/// Linux the test runner parks its main thread in `dispatchMain()`, and libdispatch then drains
/// the main queue on other threads, so the queue itself is asked (by a key only it carries).
func onMainQueue() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: MainQueueKey.shared.key) == true
}

final class MainQueueKey: @unchecked Sendable {  // immutable; libdispatch reads the key from any thread
    static let shared: MainQueueKey = {
        let marker = MainQueueKey()
        DispatchQueue.main.setSpecific(key: marker.key, value: true)
        return marker
    }()
    let key = DispatchSpecificKey<Bool>()
}

/// An app's content as an iOS developer writes it: tabs (Music → albums → tracks, Podcasts →
/// episodes) and an informative row. Every call notes whether it came on the main thread.
class PodcastLibrary: NSObject, MPPlayableContentDataSource {
    struct Album {
        var identifier: String
        var title: String
        var artist: String
        var tracks: [String]
    }

    var albums = [
        Album(identifier: "album:blue", title: "Blue", artist: "Joni Mitchell", tracks: ["All I Want", "My Old Man"]),
        Album(identifier: "album:kind", title: "Kind of Blue", artist: "Miles Davis", tracks: ["So What", "Freddie Freeloader"]),
    ]
    let calls = Atomic<Int>(0)
    let callsOffMain = Atomic<Int>(0)

    private func note() {
        calls.add(1, ordering: .relaxed)
        if !onMainQueue() { callsOffMain.add(1, ordering: .relaxed) }
    }

    // The iOS 13 spelling of the handler's type (not `@Sendable`): it implements the requirement too.
    func beginLoadingChildItems(at indexPath: IndexPath, completionHandler: @escaping ((any Error)?) -> Void) {
        note()
        completionHandler(nil)
    }

    func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool {
        note()
        return indexPath == [1]
    }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        note()
        switch (indexPath.count, indexPath.first) {
        case (0, _): return 3
        case (1, 0): return albums.count
        case (1, 1): return 3
        case (2, 0): return albums[indexPath[1]].tracks.count
        default: return 0
        }
    }

    func contentItem(at indexPath: IndexPath) -> MPContentItem? {
        note()
        switch (indexPath.count, indexPath.first) {
        case (1, 0):
            let item = MPContentItem(identifier: "music")
            item.title = "Music"
            item.isContainer = true
            return item
        case (1, 1):
            let item = MPContentItem(identifier: "podcasts")
            item.title = "Podcasts"
            item.isContainer = true
            return item
        case (1, 2):
            let item = MPContentItem(identifier: "sign-in")
            item.title = "Sign in to see more"
            return item
        case (2, 0):
            let album = albums[indexPath[1]]
            let item = MPContentItem(identifier: album.identifier)
            item.title = album.title
            item.subtitle = album.artist
            item.isContainer = true
            item.isPlayable = true
            return item
        case (3, 0):
            let album = albums[indexPath[1]]
            let item = MPContentItem(identifier: "\(album.identifier)/\(indexPath[2])")
            item.title = album.tracks[indexPath[2]]
            item.subtitle = album.title
            item.isPlayable = true
            item.isExplicitContent = album.tracks[indexPath[2]] == "My Old Man"
            return item
        case (2, 1):
            let index = indexPath[1]
            let item = MPContentItem(identifier: ["ep:1", "ep:2", "radio"][index])
            item.title = ["Episode 1", "Episode 2", "Radio One"][index]
            item.subtitle = "The Show"
            item.isPlayable = true
            item.isStreamingContent = index == 2
            if index == 0 { item.playbackProgress = 0.5 }
            return item
        default:
            return nil
        }
    }
}

/// What a player's errors look like to a head unit.
struct StationOffAir: Error, CustomStringConvertible {
    var description: String { "the station is off the air" }
}

/// The app's player as its content delegate: it starts playback on its own queue and answers
/// from there (twice, by mistake: only the first answer counts).
final class ContentPlayer: NSObject, MPPlayableContentDelegate {
    let requests = Mutex<[IndexPath]>([])
    let requestsOffMain = Atomic<Int>(0)
    /// What to answer for an index path; success for any other.
    let failures = Mutex<[IndexPath: any Error]>([:])
    let contexts = Mutex<[(onMain: Bool, endpoint: Bool, enforced: Bool, items: Int, depth: Int)]>([])
    let queued = Mutex<[[String]?]>([])

    func playableContentManager(
        _ contentManager: MPPlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        requests.withLock { $0.append(indexPath) }
        if !onMainQueue() { requestsOffMain.add(1, ordering: .relaxed) }
        let failure = failures.withLock { $0[indexPath] }
        if failure == nil { contentManager.nowPlayingIdentifiers = ["album:blue", "album:blue/1"] }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) {
            completionHandler(failure)
            completionHandler(StationOffAir())
        }
    }

    func playableContentManager(
        _ contentManager: MPPlayableContentManager, initializePlaybackQueueWithContentItems contentItems: [Any]?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        queued.withLock { $0.append(contentItems?.compactMap { ($0 as? MPContentItem)?.identifier }) }
        completionHandler(nil)
    }

    func playableContentManager(_ contentManager: MPPlayableContentManager, didUpdate context: MPPlayableContentManagerContext) {
        contexts.withLock {
            $0.append(
                (onMainQueue(), context.endpointAvailable, context.contentLimitsEnforced,
                 context.enforcedContentItemsCount, context.enforcedContentTreeDepth))
        }
    }
}

/// A delegate that only listens to the context: it does not start playback.
final class ContextListener: NSObject, MPPlayableContentDelegate {
    func playableContentManager(_ contentManager: MPPlayableContentManager, didUpdate context: MPPlayableContentManagerContext) {}
}

// MARK: The remote

/// Runs `Python/content_client.py` on the tree with operations separated by `--`; its lines.
func contentClient(_ bus: PrivateBus, _ operations: [String]...) async throws -> [String] {
    let arguments = operations.enumerated().flatMap { index, operation in (index == 0 ? [] : ["--"]) + operation }
    let output = try await bus.run(
        PrivateBus.systemPython, [pythonScript("content_client.py"), MediaPlayerBus.treeName, MediaPlayerBus.treeRoot] + arguments,
        timeout: .seconds(60))
    guard output.status == 0 else { throw DBusError(.failed, "content_client.py failed: \(output.stderr)") }
    return output.stdout.split(separator: "\n").map(String.init)
}

/// The client's path of a row: its identifiers on the way from the root, escaped.
func treePath(_ identifiers: String...) -> String { identifiers.map(ObjectPath.escapeElement).joined(separator: "/") }

/// Starts the media-tree tests' `Tests/MPRISTests/Python/watch_tree.py` on the tree; returns once
/// it is subscribed.
func watchTree(_ bus: PrivateBus) async throws -> ChildProcess {
    let watcher = try bus.spawn(PrivateBus.systemPython, ["-u", repositoryRoot + "/Tests/MPRISTests/Python/watch_tree.py", MediaPlayerBus.treeName, MediaPlayerBus.treeRoot])
    _ = try await watcher.waitForLine { $0 == "READY" }
    return watcher
}

/// Waits for `condition`, polling (for state no signal announces), at most 10 seconds.
func eventually(_ condition: () -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while !condition() {
        guard clock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(20))
    }
    return true
}

extension MediaPlayerTests {
    @Suite(.timeLimit(.minutes(1))) struct PlayableContent {
        /// Sets the app's data source and delegate as an app does, runs `body`, and leaves the
        /// singletons as they were.
        func withApp<T>(
            _ library: any MPPlayableContentDataSource = PodcastLibrary(), delegate: (any MPPlayableContentDelegate)? = nil,
            _ body: (PrivateBus) async throws -> T
        ) async throws -> T {
            let bus = try await MediaPlayerBus.start()
            let manager = MPPlayableContentManager.shared()
            manager.dataSource = library
            manager.delegate = delegate
            defer {
                manager.dataSource = nil
                manager.delegate = nil
                manager.nowPlayingIdentifiers = []
                CompletionLimit.value.withLock { $0 = .seconds(30) }
            }
            let name = try await LinuxMediaPlayer.mediaTreeBusName()
            #expect(name.description == MediaPlayerBus.treeName)
            // The manager holds the app's objects weakly: the app keeps them.
            defer { withExtendedLifetime(library) {} }
            return try await body(bus)
        }

        @Test func aHeadUnitWalksTheAppsTreeAndSeesEveryTitleSubtitleAndFlag() async throws {
            let library = PodcastLibrary()
            try await withApp(library) { bus in
                #expect(MPPlayableContentManager.shared().dataSource === library)
                let walk = try await contentClient(bus, ["walk"])
                let blue = treePath("music", "album:blue")
                let kind = treePath("music", "album:kind")
                #expect(
                    walk == [
                        "\(treePath("sign-in"))|Sign in to see more||Informative|-1",
                        "music|Music||Container|-1",
                        "\(blue)|Blue|Joni Mitchell|Playable,Container|-1",
                        "\(treePath("music", "album:blue", "album:blue/0"))|All I Want|Blue|Playable|-1",
                        "\(treePath("music", "album:blue", "album:blue/1"))|My Old Man|Blue|Playable,Explicit|-1",
                        "\(kind)|Kind of Blue|Miles Davis|Playable,Container|-1",
                        "\(treePath("music", "album:kind", "album:kind/0"))|So What|Kind of Blue|Playable|-1",
                        "\(treePath("music", "album:kind", "album:kind/1"))|Freddie Freeloader|Kind of Blue|Playable|-1",
                        "podcasts|Podcasts||Container|-1",
                        "\(treePath("podcasts", "ep:1"))|Episode 1|The Show|Playable,DisplaysPlaybackProgress|0.5",
                        "\(treePath("podcasts", "ep:2"))|Episode 2|The Show|Playable,DisplaysPlaybackProgress|-1",
                        "\(treePath("podcasts", "radio"))|Radio One|The Show|Playable,Streaming,DisplaysPlaybackProgress|-1",
                        "problems 0",
                    ])
                // Every call into the app came on the main queue.
                #expect(library.calls.load(ordering: .relaxed) > 20)
                #expect(library.callsOffMain.load(ordering: .relaxed) == 0)
            }
        }

        @Test func aMainActorDataSourceConformsAndIsCalledOnTheMainActor() async throws {
            /// A Swift 6 app's data source: isolated to the main actor, conforming on it.
            @MainActor final class Shelf: @MainActor MPPlayableContentDataSource {
                var reads = 0
                func numberOfChildItems(at indexPath: IndexPath) -> Int {
                    MainActor.assertIsolated()
                    reads += 1
                    return indexPath.isEmpty ? 2 : 0
                }
                func contentItem(at indexPath: IndexPath) -> MPContentItem? {
                    MainActor.assertIsolated()
                    reads += 1
                    let item = MPContentItem(identifier: "book:\(indexPath[0])")
                    item.title = "Book \(indexPath[0] + 1)"
                    item.isPlayable = true
                    return item
                }
            }
            let bus = try await MediaPlayerBus.start()
            let shelf = await MainActor.run {
                let shelf = Shelf()
                MPPlayableContentManager.shared().dataSource = shelf
                return shelf
            }
            defer { MPPlayableContentManager.shared().dataSource = nil }
            _ = try await LinuxMediaPlayer.mediaTreeBusName()
            #expect(try await contentClient(bus, ["list", ""]) == ["Book 1|Playable Book 2|Playable"])
            #expect(await shelf.reads >= 3)
        }

        @Test func playingATrackFromTheTreeReachesTheDelegateWithItsIndexPathAndMarksItsRow() async throws {
            let player = ContentPlayer()
            try await withApp(delegate: player) { bus in
                #expect(MPPlayableContentManager.shared().delegate === player)
                let track = treePath("music", "album:blue", "album:blue/1")
                let lines = try await contentClient(
                    bus, ["play", track], ["get", track, "org.mprisbridge.MediaNode1", "NowPlaying"],
                    ["get", treePath("music", "album:blue"), "org.mprisbridge.MediaNode1", "NowPlaying"],
                    ["get", treePath("music", "album:kind"), "org.mprisbridge.MediaNode1", "NowPlaying"],
                    ["play", treePath("music", "album:kind")])
                #expect(lines == ["played", "Boolean 1", "Boolean 1", "Boolean 0", "played"])
                #expect(player.requests.withLock { $0 } == [[0, 0, 1], [0, 1]])
                #expect(player.requestsOffMain.load(ordering: .relaxed) == 0)
                #expect(MPPlayableContentManager.shared().nowPlayingIdentifiers == ["album:blue", "album:blue/1"])
            }
        }

        /// A head unit's `Play` on each of the library's four tracks, in order; a line each.
        func playEveryTrack(_ bus: PrivateBus) async throws -> [String] {
            try await contentClient(
                bus, ["play", treePath("music", "album:blue", "album:blue/0")],
                ["play", treePath("music", "album:blue", "album:blue/1")],
                ["play", treePath("music", "album:kind", "album:kind/0")],
                ["play", treePath("music", "album:kind", "album:kind/1")])
        }

        @Test func anErrorTheDelegatePassesIsTheTypedErrorTheHeadUnitSees() async throws {
            let player = ContentPlayer()
            player.failures.withLock {
                $0[[0, 0, 0]] = StationOffAir()
                $0[[0, 0, 1]] = DBusError(ErrorName(stringLiteral: "com.example.Radio.Offline"), "No signal here")
                $0[[0, 1, 0]] = ContentError.notPlayable("So What")
                $0[[0, 1, 1]] = NSError(domain: "Radio", code: 7, userInfo: [NSLocalizedDescriptionKey: "The tuner is busy"])
            }
            try await withApp(delegate: player) { bus in
                let lines = try await playEveryTrack(bus)
                #expect(
                    lines == [
                        "error org.mprisbridge.Error.CommandFailed Could not start playback: the station is off the air",
                        "error com.example.Radio.Offline No signal here",
                        "error org.mprisbridge.Error.NotPlayable Not playable: So What",
                        "error org.mprisbridge.Error.CommandFailed Could not start playback: The tuner is busy",
                    ])
                #expect(MPPlayableContentManager.shared().nowPlayingIdentifiers.isEmpty)
            }
        }

        /// Apple's own errors, as an app passes them: an `MPError`, or an `NSError` of
        /// `MPErrorDomain` with its code, reach the head unit under the D-Bus name of their code.
        @Test func anMPErrorTheDelegatePassesReachesTheHeadUnitByItsCode() async throws {
            let player = ContentPlayer()
            player.failures.withLock {
                $0[[0, 0, 0]] = NSError(domain: MPErrorDomain, code: MPError.Code.notFound.rawValue)
                $0[[0, 0, 1]] = MPError(.notSupported)
                $0[[0, 1, 0]] = MPError(MPError.permissionDenied, userInfo: [NSLocalizedDescriptionKey: "Sign in first"])
                $0[[0, 1, 1]] = NSError(domain: MPErrorDomain, code: 99, userInfo: [NSLocalizedDescriptionKey: "A code of no one"])
            }
            try await withApp(delegate: player) { bus in
                let lines = try await playEveryTrack(bus)
                #expect(
                    lines == [
                        "error org.mprisbridge.Error.NoSuchContent The app answered: not found.",
                        "error org.freedesktop.DBus.Error.NotSupported The app answered: not supported.",
                        "error org.freedesktop.DBus.Error.AccessDenied The app answered: Sign in first.",
                        "error org.mprisbridge.Error.CommandFailed Could not start playback: A code of no one",
                    ])
            }
            #expect(MPError.errorDomain == "MPErrorDomain" && MPError(.notFound).errorCode == 4)
            #expect(MPError.Code.requestTimedOut.rawValue == 7 && MPError.Code.unknown.rawValue == 0)
        }

        @Test func withoutInitiatePlaybackPlayIsRefusedAtOnce() async throws {
            let listener = ContextListener()
            try await withApp(delegate: listener) { bus in
                let track = treePath("music", "album:blue", "album:blue/0")
                let clock = ContinuousClock()
                let start = clock.now
                let refused = try await contentClient(bus, ["play", track])
                #expect(refused == ["error org.freedesktop.DBus.Error.NotSupported The app's content delegate does not start playback"])
                #expect(clock.now - start < .seconds(5))
                MPPlayableContentManager.shared().delegate = nil
                let none = try await contentClient(bus, ["play", track])
                #expect(none == ["error org.freedesktop.DBus.Error.NotSupported The app has no content delegate to start playback"])
            }
        }

        @Test func aCompletionHandlerNeverCalledIsGivenUp() async throws {
            final class SilentPlayer: NSObject, MPPlayableContentDelegate {
                let asked = Atomic<Int>(0)
                func playableContentManager(
                    _ contentManager: MPPlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath,
                    completionHandler: @escaping ((any Error)?) -> Void
                ) {
                    asked.add(1, ordering: .relaxed)
                }
            }
            let player = SilentPlayer()
            try await withApp(delegate: player) { bus in
                CompletionLimit.value.withLock { $0 = .seconds(1) }
                let lines = try await contentClient(bus, ["play", treePath("podcasts", "ep:2")])
                #expect(lines == ["error org.mprisbridge.Error.CommandFailed The app did not answer within 1.0 seconds"])
                #expect(player.asked.load(ordering: .relaxed) == 1)
            }
        }

        @Test func aContainerWhoseLoadingNeverEndsIsListedWhenTheWaitIsGivenUp() async throws {
            final class StuckLibrary: PodcastLibrary {
                override func beginLoadingChildItems(at indexPath: IndexPath, completionHandler: @escaping ((any Error)?) -> Void) {
                    if indexPath != [1] { completionHandler(nil) }
                }
            }
            try await withApp(StuckLibrary()) { bus in
                CompletionLimit.value.withLock { $0 = .seconds(2) }
                let watcher = try await watchTree(bus)
                defer { watcher.kill() }
                // Past the listing's deadline: what the data source has so far, and a loading row.
                let first = try await contentClient(bus, ["list", "podcasts"])
                #expect(first.first?.hasSuffix("Radio One|Playable,Streaming,DisplaysPlaybackProgress Loading…|Loading") == true, "\(first)")
                // Given up: the container is read as it is, and the head unit hears of it.
                _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "updated podcasts" }
                let then = try await contentClient(bus, ["list", "podcasts"])
                #expect(
                    then == [
                        "Episode 1|Playable,DisplaysPlaybackProgress Episode 2|Playable,DisplaysPlaybackProgress "
                            + "Radio One|Playable,Streaming,DisplaysPlaybackProgress"
                    ])
            }
        }

        @Test func aBatchOfUpdatesTellsTheHeadUnitWhichContainerChanged() async throws {
            let library = PodcastLibrary()
            try await withApp(library) { bus in
                let manager = MPPlayableContentManager.shared()
                _ = try await contentClient(bus, ["walk"])
                let watcher = try await watchTree(bus)
                defer { watcher.kill() }
                manager.beginUpdates()
                library.albums[1].title = "Kind of Blue (Legacy Edition)"
                library.albums[1].tracks.append("Blue in Green")
                // Ended on the main queue, as an app does: the manager reads the data source there at once.
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.main.async {
                        manager.endUpdates()
                        done.resume()
                    }
                }
                _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "updated \(treePath("music", "album:kind"))" }
                let lines = try await contentClient(
                    bus, ["list", "music"], ["list", treePath("music", "album:kind")])
                #expect(
                    lines == [
                        "Blue|Playable,Container Kind of Blue (Legacy Edition)|Playable,Container",
                        "So What|Playable Freddie Freeloader|Playable Blue in Green|Playable",
                    ])
                // Each changed container was announced once, and nothing else.
                let updates = watcher.capturedStdout.split(separator: "\n").filter { $0.hasPrefix("updated") }
                #expect(updates.sorted() == ["updated music", "updated \(treePath("music", "album:kind"))"])
                #expect(library.callsOffMain.load(ordering: .relaxed) == 0)
            }
        }

        @Test func anItemChangedAfterItWasReturnedReachesTheHeadUnit() async throws {
            /// Keeps its episodes, and updates their progress as they play.
            final class EpisodeLibrary: PodcastLibrary {
                let episodes: [MPContentItem] = (0..<3).map { index in
                    let item = MPContentItem(identifier: ["ep:1", "ep:2", "radio"][index])
                    item.title = ["Episode 1", "Episode 2", "Radio One"][index]
                    item.isPlayable = true
                    return item
                }
                override func contentItem(at indexPath: IndexPath) -> MPContentItem? {
                    guard indexPath.count == 2, indexPath[0] == 1 else { return super.contentItem(at: indexPath) }
                    // Changed while it is returned: part of the answer, not a change to send.
                    episodes[indexPath[1]].subtitle = "The Show"
                    return episodes[indexPath[1]]
                }
            }
            let library = EpisodeLibrary()
            try await withApp(library) { bus in
                _ = try await contentClient(bus, ["walk"])
                let watcher = try await watchTree(bus)
                defer { watcher.kill() }
                let episodes = library.episodes.map { MainQueueBound($0) }
                // The player's progress timer, on a queue of its own.
                DispatchQueue.global().async { episodes[2].value.isExplicitContent = true }
                _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "updated podcasts" }
                // Two changes in one turn of the main queue go to the head unit together.
                DispatchQueue.main.async {
                    episodes[0].value.playbackProgress = 0.75
                    episodes[1].value.playbackProgress = 0.25
                }
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(10)
                var lines: [String] = []
                while lines != ["Double 0.75", "Double 0.25"], clock.now < deadline {
                    lines = try await contentClient(
                        bus, ["get", treePath("podcasts", "ep:1"), "org.mprisbridge.MediaNode1", "PlaybackProgress"],
                        ["get", treePath("podcasts", "ep:2"), "org.mprisbridge.MediaNode1", "PlaybackProgress"])
                }
                #expect(lines == ["Double 0.75", "Double 0.25"])
                #expect(try await contentClient(bus, ["list", "podcasts"]).first?.contains("Radio One|Playable,Explicit") == true)
                _ = try await watcher.waitForLine(timeout: .seconds(10)) { _ in
                    watcher.capturedStdout.split(separator: "\n").filter { $0.hasPrefix("updated") }.count >= 2
                }
                // Only the container they are in changed, once per turn.
                let updates = watcher.capturedStdout.split(separator: "\n").filter { $0.hasPrefix("updated") }
                #expect(updates == ["updated podcasts", "updated podcasts"])
            }
        }

        /// A change to one item reads again only the container it is in: a head unit that read a
        /// large container meanwhile costs the change nothing.
        @Test func anItemChangedReadsAgainOnlyItsContainer() async throws {
            final class Shelves: NSObject, MPPlayableContentDataSource {
                let small: [MPContentItem] = (0..<3).map { index in
                    let item = MPContentItem(identifier: "small:\(index)")
                    item.title = "Small \(index)"
                    item.isPlayable = true
                    return item
                }
                let itemReads = Atomic<Int>(0)
                func numberOfChildItems(at indexPath: IndexPath) -> Int {
                    switch indexPath.count {
                    case 0: 2
                    case 1: indexPath[0] == 0 ? 5_000 : small.count
                    default: 0
                    }
                }
                func contentItem(at indexPath: IndexPath) -> MPContentItem? {
                    itemReads.add(1, ordering: .relaxed)
                    if indexPath.count == 1 {
                        let tab = MPContentItem(identifier: indexPath[0] == 0 ? "big" : "small")
                        tab.isContainer = true
                        return tab
                    }
                    if indexPath[0] == 1 { return small[indexPath[1]] }
                    let item = MPContentItem(identifier: "big:\(indexPath[1])")
                    item.title = "Big \(indexPath[1])"
                    item.isPlayable = true
                    return item
                }
            }
            let shelves = Shelves()
            try await withApp(shelves) { bus in
                #expect(try await contentClient(bus, ["list", "big"]).count == 1)
                #expect(try await contentClient(bus, ["list", "small"]) == ["Small 0|Playable Small 1|Playable Small 2|Playable"])
                let watcher = try await watchTree(bus)
                defer { watcher.kill() }
                let readsBefore = shelves.itemReads.load(ordering: .relaxed)
                #expect(readsBefore >= 5_003)
                let changed = MainQueueBound(shelves.small[1])
                DispatchQueue.global().async { changed.value.title = "Small one, renamed" }
                _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "updated small" }
                #expect(try await contentClient(bus, ["list", "small"]) == ["Small 0|Playable Small one, renamed|Playable Small 2|Playable"])
                // The small container's three rows, read again; not the 5,000 of the other.
                let reads = shelves.itemReads.load(ordering: .relaxed) - readsBefore
                #expect(reads < 100, "\(reads) items read for one change")
                #expect(!watcher.capturedStdout.contains("updated big"))
            }
        }

        @Test func aHeadUnitsLimitsReachTheDelegateOnTheMainQueueAndTheContext() async throws {
            let player = ContentPlayer()
            try await withApp(delegate: player) { bus in
                let manager = MPPlayableContentManager.shared()
                #expect(manager.context.enforcedContentItemsCount == Int.max)
                #expect(manager.context.enforcedContentTreeDepth == Int.max)
                #expect(!manager.context.endpointAvailable)
                let set = try await contentClient(
                    bus, ["set", "", "org.mprisbridge.MediaRoot1", "EndpointAvailable", "b", "true"], ["limits", "true", "12", "2"])
                #expect(set == ["set", "set"])
                #expect(try await eventually { player.contexts.withLock { $0.count } == 2 })
                let contexts = player.contexts.withLock { $0 }
                #expect(contexts.allSatisfy { $0.onMain })
                #expect(contexts.map { "\($0.endpoint) \($0.enforced) \($0.items) \($0.depth)" } == [
                    "true false \(Int.max) \(Int.max)", "true true 12 2",
                ])
                let context = manager.context
                #expect(context.endpointAvailable && context.contentLimitsEnforced)
                #expect(context.enforcedContentItemsCount == 12 && context.enforcedContentTreeDepth == 2)
                // The limits apply to what the head unit sees: albums (depth 2) show no children.
                let limited = try await contentClient(bus, ["list", treePath("music", "album:blue")])
                #expect(limited == ["(empty)"])
                let cleared = try await contentClient(
                    bus, ["limits", "false", "100", "5"], ["set", "", "org.mprisbridge.MediaRoot1", "EndpointAvailable", "b", "false"])
                #expect(cleared == ["set", "set"])
                #expect(try await eventually { player.contexts.withLock { $0.count } == 4 })
                #expect(manager.context.enforcedContentItemsCount == Int.max && !manager.context.endpointAvailable)
            }
        }

        @Test func aQueueAHeadUnitPreparesReachesTheDelegateAsContentItems() async throws {
            let player = ContentPlayer()
            try await withApp(delegate: player) { bus in
                let lines = try await contentClient(
                    bus, ["prepare", treePath("music", "album:blue", "album:blue/0"), treePath("podcasts", "ep:1")], ["prepare"])
                #expect(lines == ["prepared", "prepared"])
                #expect(player.queued.withLock { $0 } == [["album:blue/0", "ep:1"], nil])
                // A delegate with neither of Apple's queue methods prepares nothing, and says so kindly.
                let listener = ContextListener()
                MPPlayableContentManager.shared().delegate = listener
                #expect(try await contentClient(bus, ["prepare"]) == ["prepared"])
                // One the app let go of (the manager holds it weakly) is no delegate.
                withExtendedLifetime(listener) {}
                MPPlayableContentManager.shared().delegate = ContextListener()
                #expect(
                    try await contentClient(bus, ["prepare"]) == [
                        "error org.freedesktop.DBus.Error.NotSupported The app has no content delegate to start playback"
                    ])
            }
        }

        @Test func identifierLookupsAskTheDataSourceAndFallBackOnlyWhenItDoesNotLookUp() async throws {
            // Its own class: a subclass's method does not replace the default its superclass's
            // conformance chose.
            final class LookingUpLibrary: NSObject, MPPlayableContentDataSource {
                let tree = PodcastLibrary()
                func numberOfChildItems(at indexPath: IndexPath) -> Int { tree.numberOfChildItems(at: indexPath) }
                func contentItem(at indexPath: IndexPath) -> MPContentItem? { tree.contentItem(at: indexPath) }
                func contentItem(forIdentifier identifier: String, completionHandler: @escaping (MPContentItem?, (any Error)?) -> Void) {
                    let found = identifier == "ep:9" ? MPContentItem(identifier: "ep:9") : nil
                    found?.title = "Episode 9"
                    completionHandler(found, nil)
                }
            }
            let content = MediaPlayerRuntime.shared.content
            try await withApp(LookingUpLibrary()) { bus in
                #expect(try await content.contentItem(forIdentifier: "ep:9")?.title == "Episode 9")
                // The app says there is no such item: the manager does not look further.
                _ = try await contentClient(bus, ["list", "podcasts"])
                await #expect(throws: ContentError.self) { try await content.contentItem(forIdentifier: "ep:1") }
            }
            try await withApp(PodcastLibrary()) { bus in
                // A data source that does not look identifiers up: the rows read so far are found.
                _ = try await contentClient(bus, ["list", "podcasts"])
                #expect(try await content.contentItem(forIdentifier: "ep:1")?.title == "Episode 1")
                #expect(try await content.contentItem(forIdentifier: "ep:9") == nil)
            }
        }

        @Test func aDataSourceTheAppReleasedShowsNoChildren() async throws {
            let bus = try await MediaPlayerBus.start()
            let manager = MPPlayableContentManager.shared()
            defer { manager.dataSource = nil }
            do {
                let library = PodcastLibrary()
                manager.dataSource = library
                _ = try await LinuxMediaPlayer.mediaTreeBusName()
                #expect(try await contentClient(bus, ["list", ""]) == ["Sign in to see more|Informative Music|Container Podcasts|Container"])
            }
            // The manager held it weakly, as Apple's does.
            #expect(manager.dataSource == nil)
            let watcher = try await watchTree(bus)
            defer { watcher.kill() }
            manager.reloadData()
            _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "updated " }
            #expect(try await contentClient(bus, ["list", ""]) == ["(empty)"])
        }

        /// Each read of the data source is a turn of the main queue: a large container costs one
        /// per row when first listed. At the scale of a large library (50,000 rows in one
        /// container), the first page still comes promptly, and the last page is its rows.
        @Test func aLargeContainerIsListedPromptly() async throws {
            final class LongPlaylist: NSObject, MPPlayableContentDataSource {
                func numberOfChildItems(at indexPath: IndexPath) -> Int { indexPath.isEmpty ? 1 : 50_000 }
                func contentItem(at indexPath: IndexPath) -> MPContentItem? {
                    let item = MPContentItem(identifier: indexPath.count == 1 ? "all" : "track:\(indexPath[1])")
                    item.title = indexPath.count == 1 ? "All Songs" : "Song \(indexPath[1])"
                    item.isContainer = indexPath.count == 1
                    item.isPlayable = true
                    return item
                }
            }
            try await withApp(LongPlaylist()) { bus in
                let clock = ContinuousClock()
                let start = clock.now
                let output = try await bus.python(
                    """
                    import sys, time, dbus
                    bus = dbus.SessionBus()
                    node = bus.get_object(sys.argv[1], sys.argv[2] + "/all", introspect=False)
                    container = dbus.Interface(node, "org.gnome.UPnP.MediaContainer2")
                    first = container.ListChildren(dbus.UInt32(0), dbus.UInt32(100), ["DisplayName"], timeout=60)
                    print(len(first), first[0]["DisplayName"], first[-1]["DisplayName"])
                    last = container.ListChildren(dbus.UInt32(49_900), dbus.UInt32(100), ["DisplayName"], timeout=60)
                    print(len(last), last[-1]["DisplayName"])
                    count = dbus.Interface(node, "org.freedesktop.DBus.Properties").Get(
                        "org.gnome.UPnP.MediaContainer2", "ChildCount")
                    print(int(count))
                    """, [MediaPlayerBus.treeName, MediaPlayerBus.treeRoot])
                let took = clock.now - start
                print("50,000 rows read through the main queue, first and last pages listed in \(took)")
                #expect(output.stdout == "100 Song 0 Song 99\n100 Song 49999\n50000\n", "\(output.stderr)")
                #expect(took < .seconds(10))
            }
        }

        @Test func hostileRequestsGetClearErrorsAndChangeNothing() async throws {
            final class BrokenLibrary: PodcastLibrary {
                override func numberOfChildItems(at indexPath: IndexPath) -> Int {
                    indexPath == [1] ? -5 : super.numberOfChildItems(at: indexPath)
                }
                override func contentItem(at indexPath: IndexPath) -> MPContentItem? {
                    indexPath == [0, 0] ? nil : super.contentItem(at: indexPath)
                }
            }
            let library = BrokenLibrary()
            let player = ContentPlayer()
            try await withApp(library, delegate: player) { bus in
                let manager = MPPlayableContentManager.shared()
                let kindTrack = treePath("music", "album:kind", "album:kind/1")
                _ = try await contentClient(bus, ["walk"])
                manager.beginUpdates()
                library.albums[1].tracks.removeLast()
                manager.endUpdates()
                let lines = try await contentClient(
                    bus, ["list", "podcasts"], ["list", "music"],
                    ["playat", MediaPlayerBus.treeRoot + "/not_an_escape_zz"],
                    ["playat", "/org/elsewhere"],
                    ["play", kindTrack],
                    ["play", "music"],
                    ["play", treePath("sign-in")])
                // A negative count is no rows; a nil item is not shown.
                #expect(lines[0] == "(empty)")
                #expect(lines[1] == "Kind of Blue|Playable,Container")
                // No escape of an identifier, outside the tree, a row removed by the last batch.
                #expect(lines[2].hasPrefix("error org.freedesktop.DBus.Error.UnknownObject No object at path"), "\(lines[2])")
                #expect(lines[3] == "error org.freedesktop.DBus.Error.UnknownObject No object at path '/org/elsewhere'")
                #expect(lines[4].hasPrefix("error org.freedesktop.DBus.Error.UnknownObject No object at path"), "\(lines[4])")
                // A tab and an informative row are not playable.
                #expect(lines[5] == "error org.mprisbridge.Error.NotPlayable Not playable: Music")
                #expect(lines[6] == "error org.mprisbridge.Error.NotPlayable Not playable: Sign in to see more")
                #expect(player.requests.withLock { $0 }.isEmpty)
                // The tree still serves what is there.
                #expect(try await contentClient(bus, ["play", treePath("music", "album:kind", "album:kind/0")]) == ["played"])
            }
        }
    }
}
