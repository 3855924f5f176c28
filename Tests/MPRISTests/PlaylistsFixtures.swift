import DBus
import DBusTestSupport
import MPRIS
import MediaRemote
import ProcessTestSupport
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A content tree in memory, as an app's data source would serve it: tabs
/// Albums, Artists and Playlists, with albums and playlists (playable
/// containers), an informative row, a folder and a loose track. Changed with
/// ``update(_:)`` between the manager's `beginUpdates` and `endUpdates`.
final class TestLibrary: PlayableContentDataSource {
    struct Node: Sendable {
        var item: ContentItem
        var children: [Node] = []
    }

    private struct State {
        var tabs: [Node]
        /// Containers whose children appear only once ``TestLibrary/loadingGate`` opens.
        var slowContainers: Set<String>
        var loaded: Set<String> = []
    }

    private let state: Mutex<State>
    /// What slow containers wait for in `beginLoadingChildItems`.
    let loadingGate = Gate()

    /// A small PNG, as embedded artwork.
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 9, count: 64))
    static let blueTrainCover = URL(string: "https://covers.example/blue%20train.jpg")!

    /// - Parameter slowContainers: identifiers of containers whose children load only when ``loadingGate`` opens.
    init(slowContainers: Set<String> = []) {
        state = Mutex(State(tabs: Self.initialTabs(), slowContainers: slowContainers))
    }

    static func playlist(
        _ identifier: String, _ title: String, artwork: MediaItemArtwork? = nil, created: Double? = nil,
        modified: Double? = nil, tracks: [(String, String)]
    ) -> Node {
        Node(
            item: ContentItem(
                identifier: identifier, title: title, artwork: artwork, isContainer: true, isPlayable: true,
                media: ContentMedia(
                    creationDate: created.map { Date(timeIntervalSince1970: $0) },
                    modificationDate: modified.map { Date(timeIntervalSince1970: $0) })),
            children: tracks.map { Node(item: ContentItem(identifier: $0.0, title: $0.1, isPlayable: true)) })
    }

    static func folder(_ identifier: String, _ title: String, _ children: [Node]) -> Node {
        Node(item: ContentItem(identifier: identifier, title: title, isContainer: true), children: children)
    }

    /// The tree the tests start from. Playlists in `User` order: Blue Train,
    /// Abbey Road, Broken Record (under Albums), road trip, Favourites (under Playlists).
    static func initialTabs() -> [Node] {
        [
            folder(
                "albums", "Albums",
                [
                    playlist(
                        "album-b", "Blue Train", artwork: .url(blueTrainCover), created: 1000, modified: 5000,
                        tracks: [("b1", "Moment's Notice"), ("b2", "Locomotion")]),
                    playlist(
                        "album-a", "Abbey Road", artwork: .imageData(png), created: 3000, modified: 4000,
                        tracks: [("a1", "Come Together"), ("a2", "Something")]),
                    Node(item: .informative(identifier: "indexing", title: "Still indexing 3 folders")),
                    playlist("album-x", "Broken Record", tracks: [("x1", "Skip")]),
                ]),
            folder("artists", "Artists", [playlist("ann-greatest", "Greatest Hits", tracks: [("g1", "Hit")])]),
            folder(
                "playlists", "Playlists",
                [
                    playlist("mix/1 ü", "road trip", created: 2000, tracks: [("r1", "Highway Song")]),
                    folder("old", "Old Playlists", [playlist("older", "Older", tracks: [("o1", "Old")])]),
                    Node(item: ContentItem(identifier: "loose", title: "Loose Track", isPlayable: true)),
                    playlist("faves", "Favourites", tracks: [("f1", "Fav One")]),
                ]),
        ]
    }

    /// Changes the tree.
    func update(_ change: (inout [Node]) -> Void) {
        state.withLock { change(&$0.tabs) }
    }

    /// Changes every item with `identifier`.
    func updateItem(_ identifier: String, _ change: @escaping (inout ContentItem) -> Void) {
        func visit(_ nodes: inout [Node]) {
            for index in nodes.indices {
                if nodes[index].item.identifier == identifier { change(&nodes[index].item) }
                visit(&nodes[index].children)
            }
        }
        update { visit(&$0) }
    }

    /// The node at `indexPath` (`[]`: a root holding the tabs).
    private func node(at indexPath: IndexPath, in state: State) -> Node? {
        var node = Node(item: ContentItem(identifier: ""), children: state.tabs)
        for index in indexPath {
            guard node.children.indices.contains(index) else { return nil }
            node = node.children[index]
        }
        return node
    }

    func item(at indexPath: IndexPath) -> ContentItem? {
        state.withLock { node(at: indexPath, in: $0)?.item }
    }

    // MARK: PlayableContentDataSource

    func beginLoadingChildItems(at indexPath: IndexPath) async throws {
        guard let identifier = state.withLock({ state in
            node(at: indexPath, in: state).map(\.item.identifier).flatMap { state.slowContainers.contains($0) ? $0 : nil }
        }) else { return }
        await loadingGate.wait()
        state.withLock { _ = $0.loaded.insert(identifier) }
    }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        state.withLock { state in
            guard let node = node(at: indexPath, in: state) else { return 0 }
            let waiting = state.slowContainers.contains(node.item.identifier) && !state.loaded.contains(node.item.identifier)
            return waiting ? 0 : node.children.count
        }
    }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        guard !indexPath.isEmpty else { return nil }
        return item(at: indexPath)
    }
}

/// Why the test delegate cannot play a playlist.
struct PlaybackFailure: Error, CustomStringConvertible {
    var description: String
}

/// Starts playback as a real player would, slowly: waits ``startDelay``
/// (the pipeline starting), then marks the container and its first track as
/// playing in the manager, publishes the track as now playing, and returns.
/// `Broken Record` fails after the same wait. Records `play <id>` when asked
/// and `started <id>` just before returning.
final class TestPlaybackDelegate: PlayableContentDelegate {
    let app: TestApp
    let library: TestLibrary
    let startDelay: Duration
    private let log = Mutex<[String]>([])

    init(app: TestApp, library: TestLibrary, startDelay: Duration = .milliseconds(300)) {
        self.app = app
        self.library = library
        self.startDelay = startDelay
    }

    var received: [String] { log.withLock { $0 } }

    func playableContentManager(
        _ manager: PlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath
    ) async throws {
        guard let container = library.item(at: indexPath) else { throw ContentError.noSuchContent("\(indexPath)") }
        log.withLock { $0.append("play \(container.identifier)") }
        try await Task.sleep(for: startDelay)
        if container.identifier == "album-x" { throw PlaybackFailure(description: "the record is scratched") }
        guard let first = library.item(at: indexPath.appending(0)) else {
            throw PlaybackFailure(description: "the playlist is empty")
        }
        manager.nowPlayingIdentifiers = [container.identifier, first.identifier]
        app.nowPlaying.publish(
            NowPlayingInfo(
                identifier: first.identifier, title: first.title, albumTitle: container.title,
                playbackDuration: .seconds(180), playbackState: .playing))
        log.withLock { $0.append("started \(container.identifier)") }
    }
}

/// A private bus with a ``TestApp`` published by an ``MPRISService`` that has
/// a content manager over a ``TestLibrary``.
struct PlaylistsFixture: Sendable {
    let player: PlayerFixture
    let content: PlayableContentManager
    let library: TestLibrary
    let delegate: TestPlaybackDelegate

    /// Runs `Python/playlists_client.py` with the operations; returns its output lines.
    func client(_ operations: String...) async throws -> [String] {
        let output = try await player.bus.run(
            PrivateBus.systemPython, [pythonScript("playlists_client.py"), PlayerFixture.busName] + operations)
        guard output.status == 0 else { throw DBusError(.failed, "playlists_client.py failed: \(output.stderr)") }
        return output.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Starts `playlists_client.py watch` and returns once it is subscribed.
    func watch() async throws -> ChildProcess {
        let watcher = try player.bus.spawn(
            PrivateBus.systemPython, ["-u", pythonScript("playlists_client.py"), PlayerFixture.busName, "watch"])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }

    /// Changes the library in one batch of the manager, as an app does.
    func change(_ body: (TestLibrary) -> Void) {
        content.beginUpdates()
        body(library)
        content.endUpdates()
    }
}

/// The playlist id of the playlist at `path` (keys from the content root).
func playlistID(_ path: String...) -> String { MPRISPlaylist.id(forContentPath: path).rawValue }

/// Starts a private bus, publishes a ``TestApp`` (every command enabled,
/// nothing playing) with a content manager over a ``TestLibrary`` and the
/// playlists of `locations` (default: the Albums and Playlists tabs), and runs
/// `body`. Stops everything afterwards.
func withPlaylists<T: Sendable>(
    locations: [IndexPath] = [[0], [2]], content hasContent: Bool = true, slowContainers: Set<String> = [],
    loadingDeadline: Duration = .milliseconds(500), _ body: (PlaylistsFixture) async throws -> T
) async throws -> T {
    let artwork = try TemporaryDirectory(prefix: "mpris-playlists")
    defer { artwork.remove() }
    let library = TestLibrary(slowContainers: slowContainers)
    // A test that fails before opening the gate must not leave loads waiting.
    defer { library.loadingGate.open() }
    return try await PrivateBus.with { bus in
        let app = TestApp()
        app.enableCommands()
        let delegate = TestPlaybackDelegate(app: app, library: library)
        let content = PlayableContentManager(dataSource: library, delegate: delegate, loadingDeadline: loadingDeadline)
        let service = try MPRISService(
            configuration: MPRISConfiguration(
                playerName: PlayerFixture.playerName, identity: "mpris-bridge playlists test", desktopEntry: "mprisbridge-test",
                artworkCacheDirectory: artwork.path, playlistLocations: locations),
            commands: app.commands, nowPlaying: app.nowPlaying, content: hasContent ? content : nil)
        let connection = try await Connection.connect(to: .address(bus.address))
        defer { connection.close() }
        try await service.publish(on: connection)
        let player = PlayerFixture(bus: bus, app: app, service: service, artworkDirectory: artwork.path)
        let result = try await body(
            PlaylistsFixture(player: player, content: content, library: library, delegate: delegate))
        await service.unpublish()
        return result
    }
}
