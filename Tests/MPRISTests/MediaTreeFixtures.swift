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

/// A node of a ``TestContent`` tree.
struct TestNode: Sendable {
    var item: ContentItem
    var children: [TestNode]
    /// How long `beginLoadingChildItems` takes; until then only the first `partial` children are there.
    var loadDelay: Duration?
    var partial = 0

    static func container(
        _ identifier: String, _ title: String, playable: Bool = true, loadDelay: Duration? = nil, partial: Int = 0,
        _ children: [TestNode]
    ) -> TestNode {
        TestNode(
            item: ContentItem(identifier: identifier, title: title, isContainer: true, isPlayable: playable),
            children: children, loadDelay: loadDelay, partial: partial)
    }

    static func track(_ identifier: String, _ title: String, artist: String = "Ann", album: String = "Album", number: Int = 1)
        -> TestNode
    {
        TestNode(
            item: ContentItem(
                identifier: identifier, title: title, subtitle: "\(artist) — \(album)",
                artwork: .url(URL(fileURLWithPath: "/music/\(album)/cover.png")), isPlayable: true,
                media: ContentMedia(
                    url: URL(fileURLWithPath: "/music/\(title).ogg"), mimeType: "audio/ogg", duration: .seconds(180),
                    size: 4096, artist: artist, album: album, genre: "Jazz", trackNumber: number, date: "2019")),
            children: [])
    }
}

/// A data source over a tree held in memory, which tests change as an app would.
final class TestContent: PlayableContentDataSource {
    private let state: Mutex<(root: [TestNode], loaded: Set<IndexPath>)>
    /// Whether it says which containers hold children all alike, so a manager may page large ones.
    let tellsLeafContainers: Bool

    /// How many times a child of each container (by identifier) was read with `contentItem(at:)`.
    private let childReads = Mutex<[String: Int]>([:])

    func childReads(of container: String) -> Int { childReads.withLock { $0[container] ?? 0 } }

    init(_ root: [TestNode], tellsLeafContainers: Bool = false) {
        state = Mutex((root, []))
        self.tellsLeafContainers = tellsLeafContainers
    }

    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? {
        guard tellsLeafContainers, !indexPath.isEmpty else { return nil }
        let children = children(at: indexPath)
        guard !children.contains(where: \.item.isInformative) else { return nil }
        if children.allSatisfy({ !$0.item.isContainer }) { return .items }
        if children.allSatisfy(\.item.isContainer) { return .containers }
        return nil
    }

    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        children(at: indexPath).firstIndex { $0.item.identifier == identifier }
    }

    /// Replaces the tree (call inside the manager's beginUpdates/endUpdates).
    func replace(_ change: (inout [TestNode]) -> Void) { state.withLock { change(&$0.root) } }

    private func node(at indexPath: IndexPath, in root: [TestNode]) -> TestNode? {
        var children = root
        var found: TestNode?
        for index in indexPath {
            guard index < children.count else { return nil }
            found = children[index]
            children = found!.children
        }
        return found
    }

    private func children(at indexPath: IndexPath) -> [TestNode] {
        state.withLock { state in
            if indexPath.isEmpty { return state.root }
            guard let node = node(at: indexPath, in: state.root) else { return [] }
            if node.loadDelay != nil, !state.loaded.contains(indexPath) { return Array(node.children.prefix(node.partial)) }
            return node.children
        }
    }

    func beginLoadingChildItems(at indexPath: IndexPath) async throws {
        guard let delay = state.withLock({ node(at: indexPath, in: $0.root)?.loadDelay }) else { return }
        try await Task.sleep(for: delay)
        state.withLock { _ = $0.loaded.insert(indexPath) }
    }

    func numberOfChildItems(at indexPath: IndexPath) -> Int { children(at: indexPath).count }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        guard let last = indexPath.last else { return nil }
        if indexPath.count > 1, let parent = state.withLock({ node(at: indexPath.dropLast(), in: $0.root)?.item.identifier }) {
            childReads.withLock { $0[parent, default: 0] += 1 }
        }
        let siblings = children(at: indexPath.dropLast())
        return last < siblings.count ? siblings[last].item : nil
    }

    var supportsSearch: Bool { true }

    func searchContent(matching query: ContentQuery, in indexPath: IndexPath) async throws -> [IndexPath] {
        var found: [IndexPath] = []
        func visit(_ path: IndexPath) {
            for (index, child) in children(at: path).enumerated() {
                let childPath = path.appending(index)
                if query.matches(child.item) { found.append(childPath) }
                if child.item.isContainer, child.loadDelay == nil { visit(childPath) }
            }
        }
        visit(indexPath)
        return found
    }

    func contentItem(forIdentifier identifier: String) async throws -> ContentItem? {
        func find(_ nodes: [TestNode]) -> ContentItem? {
            for node in nodes {
                if node.item.identifier == identifier { return node.item }
                if let found = find(node.children) { return found }
            }
            return nil
        }
        return find(state.withLock { $0.root })
    }
}

/// A player that starts what a remote picks after `startDelay`, as a real one
/// waits for its pipeline, then marks it playing.
final class TestDelegate: PlayableContentDelegate {
    let nowPlaying: NowPlayingInfoCenter
    private let state = Mutex<(started: [IndexPath], contexts: [PlayableContentManagerContext], prepared: [[String]?])>(([], [], []))
    let startDelay: Duration

    init(nowPlaying: NowPlayingInfoCenter = NowPlayingInfoCenter(), startDelay: Duration = .milliseconds(300)) {
        self.nowPlaying = nowPlaying
        self.startDelay = startDelay
    }

    var started: [IndexPath] { state.withLock { $0.started } }
    var contexts: [PlayableContentManagerContext] { state.withLock { $0.contexts } }
    var prepared: [[String]?] { state.withLock { $0.prepared } }

    struct PlaybackFailure: Error, CustomStringConvertible {
        var description: String { "the file is unreadable" }
    }

    func playableContentManager(_ manager: PlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath)
        async throws
    {
        try await Task.sleep(for: startDelay)
        guard let entry = manager.entry(atIndexPath: indexPath) else { throw ContentError.noSuchContent("\(indexPath)") }
        if entry.item.title == "Broken" { throw PlaybackFailure() }
        state.withLock { $0.started.append(indexPath) }
        nowPlaying.publish(
            NowPlayingInfo(identifier: entry.item.identifier, title: entry.item.title, playbackState: .playing))
        manager.nowPlayingIdentifiers = entry.path.map { $0 }
    }

    func playableContentManager(
        _ manager: PlayableContentManager, initializePlaybackQueueWithContentItems items: [ContentItem]?
    ) async throws {
        state.withLock { $0.prepared.append(items?.map(\.identifier)) }
    }

    func playableContentManager(_ manager: PlayableContentManager, didUpdate context: PlayableContentManagerContext) {
        state.withLock { $0.contexts.append(context) }
    }
}

/// The tree most tests browse: four tabs, one of them loading slowly, odd identifiers, a stream.
func sampleTree(albums: Int = 3, tracksPerAlbum: Int = 4, slowDelay: Duration = .seconds(1)) -> [TestNode] {
    let music = (1...albums).map { album in
        TestNode.container(
            "album:\(album)", "Album \(album)",
            (1...tracksPerAlbum).map { number in
                .track("track:\(album)-\(number)", "Song \(album).\(number)", artist: album == 2 ? "ABBA" : "Ann",
                    album: "Album \(album)", number: number)
            })
    }
    return [
        .container("music", "Music", playable: false, music),
        .container(
            "odd", "Odd identifiers", playable: false,
            [
                .track("spotify:track:ü/ñ 1?", "Unicode"), .track("", "Empty"), .track("dup", "Dup one"),
                .track("dup", "Dup two"), .track("Broken", "Broken"),
                TestNode(item: .informative(identifier: "note", title: "Sign in for more"), children: []),
            ]),
        TestNode(
            item: ContentItem(
                identifier: "radio", title: "Radio", isStreamingContent: true, isPlayable: true,
                media: ContentMedia(url: URL(string: "http://127.0.0.1:9/radio")!, mimeType: "audio/mpeg")),
            children: []),
        .container(
            "slow", "Slow", playable: false, loadDelay: slowDelay, partial: 2,
            (1...5).map { .track("slow:\($0)", "Slow \($0)") }),
    ]
}

struct MediaTreeFixture: Sendable {
    static let name = "mprisbridge_test"
    static let busName = "org.gnome.UPnP.MediaServer2.mprisbridge_test"
    static let root = "/org/gnome/UPnP/MediaServer2/mprisbridge_test"

    let bus: PrivateBus
    let content: TestContent
    let manager: PlayableContentManager
    let delegate: TestDelegate
    let service: MediaTreeService

    /// Runs `Python/media_tree_client.py` with operations separated by `--`; one line per operation.
    func client(_ operations: [String]...) async throws -> [String] {
        let arguments = operations.enumerated().flatMap { index, operation in (index == 0 ? [] : ["--"]) + operation }
        let output = try await bus.run(
            PrivateBus.systemPython, [pythonScript("media_tree_client.py"), Self.busName, Self.root] + arguments)
        guard output.status == 0 else { throw DBusError(.failed, "media_tree_client.py failed: \(output.stderr)") }
        if !output.stderr.isEmpty { print("media_tree_client.py: \(output.stderr)") }
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// The client's relative path of a node: its keys, escaped.
    static func path(_ keys: String...) -> String { keys.map(ObjectPath.escapeElement).joined(separator: "/") }
}

func withMediaTree<T: Sendable>(
    _ tree: [TestNode] = sampleTree(), loadingDeadline: Duration = .milliseconds(200), tellsLeafContainers: Bool = false,
    pagedContainerThreshold: Int = 5_000,
    _ body: (MediaTreeFixture) async throws -> T
) async throws -> T {
    let artwork = try TemporaryDirectory(prefix: "media-tree-artwork")
    defer { artwork.remove() }
    return try await PrivateBus.with { bus in
        let content = TestContent(tree, tellsLeafContainers: tellsLeafContainers)
        let delegate = TestDelegate()
        let manager = PlayableContentManager(
            dataSource: content, delegate: delegate, loadingDeadline: loadingDeadline,
            pagedContainerThreshold: pagedContainerThreshold)
        let service = try MediaTreeService(
            name: MediaTreeFixture.name, displayName: "Test Music", content: manager, artworkCacheDirectory: artwork.path)
        let connection = try await Connection.connect(to: .address(bus.address))
        defer { connection.close() }
        try await service.publish(on: connection)
        let result = try await body(
            MediaTreeFixture(bus: bus, content: content, manager: manager, delegate: delegate, service: service))
        await service.unpublish()
        return result
    }
}
