import MediaRemote
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A library as a car and a phone browse it while music comes and goes: an Artists tab
/// (artist → album → track) and a Tracks tab listing every track. Every identifier says where
/// its row belongs (`a3`, `a3.b1`, `a3.b1.t4`), so a reply that mixes up two nodes shows.
final class ShiftingLibrary: PlayableContentDataSource {
    struct Artist: Sendable {
        var identifier: String
        var albums: [(identifier: String, tracks: [String])]
    }

    private let artists: Mutex<[Artist]>
    private let answersAtOnce: Bool

    /// `answersAtOnce`: whether every container can be read at once (as the daemon's index),
    /// or only after loading it.
    init(artists count: Int, albums: Int = 3, tracks: Int = 6, answersAtOnce: Bool) {
        artists = Mutex(
            (0..<count).map { artist in
                Artist(
                    identifier: "a\(artist)",
                    albums: (0..<albums).map { album in
                        ("a\(artist).b\(album)", (0..<tracks).map { "a\(artist).b\(album).t\($0)" })
                    })
            })
        self.answersAtOnce = answersAtOnce
    }

    /// Takes the artist at `index` out (as its folder moved out of the library); returns it.
    func remove(at index: Int) -> Artist { artists.withLock { $0.remove(at: min(index, $0.count - 1)) } }
    /// Puts an artist back at `index` (its folder moved back).
    func insert(_ artist: Artist, at index: Int) { artists.withLock { $0.insert(artist, at: min(index, $0.count)) } }

    var loadsChildItemsAtOnce: Bool { answersAtOnce }

    func beginLoadingChildItems(at indexPath: IndexPath) async throws {
        if !answersAtOnce { await Task.yield() }
    }

    private func tracks(_ artists: [Artist]) -> [String] { artists.flatMap { $0.albums.flatMap(\.tracks) } }

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        artists.withLock { artists in
            switch Array(indexPath) {
            case []: 2
            case [0]: artists.count
            case [1]: tracks(artists).count
            case let path where path.count == 2 && path[0] == 0 && path[1] < artists.count:
                artists[path[1]].albums.count
            case let path where path.count == 3 && path[0] == 0 && path[1] < artists.count
                && path[2] < artists[path[1]].albums.count:
                artists[path[1]].albums[path[2]].tracks.count
            default: 0
            }
        }
    }

    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        artists.withLock { artists -> ContentItem? in
            let path = Array(indexPath)
            switch path.count {
            case 1: return path[0] == 0 ? container("artists") : path[0] == 1 ? container("tracks") : nil
            case 2 where path[0] == 1:
                let all = tracks(artists)
                return path[1] < all.count ? track(all[path[1]]) : nil
            case 2 where path[0] == 0:
                return path[1] < artists.count ? container(artists[path[1]].identifier) : nil
            case 3 where path[0] == 0 && path[1] < artists.count:
                let albums = artists[path[1]].albums
                return path[2] < albums.count ? container(albums[path[2]].identifier) : nil
            case 4 where path[0] == 0 && path[1] < artists.count && path[2] < artists[path[1]].albums.count:
                let tracks = artists[path[1]].albums[path[2]].tracks
                return path[3] < tracks.count ? track(tracks[path[3]]) : nil
            default: return nil
            }
        }
    }

    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? { indexPath == [1] ? .items : nil }

    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        guard indexPath == [1] else { return nil }
        return artists.withLock { tracks($0).firstIndex(of: identifier) }
    }
}

/// Walks of the tree from several remotes at once while the library changes under them and the
/// manager's copy keeps forgetting what it read: every reply is about the node asked for, and
/// nothing traps.
@Suite(.timeLimit(.minutes(2))) struct ContentCacheStressTests {
    /// The identifier of a row's parent, as `ShiftingLibrary` names rows (`a3.b1` → `a3`).
    static func parentIdentifier(of identifier: String) -> String? {
        guard let dot = identifier.lastIndex(of: ".") else { return nil }
        return String(identifier[..<dot])
    }

    /// Checks that every row of a listing of `path` belongs there; returns what was wrong.
    static func problems(in listing: ContentListing, of path: [String], page: Int) -> [String] {
        var problems: [String] = []
        if listing.entries.count > page { problems.append("\(path): \(listing.entries.count) rows in a page of \(page)") }
        for entry in listing.entries where !entry.isLoadingPlaceholder {
            let identifier = entry.item.identifier
            if entry.path.dropLast() != path[...] || entry.path.count != path.count + 1 {
                problems.append("\(path): row \(identifier) says it is at \(entry.path)")
            }
            if entry.path.last?.split(separator: "\u{0}").first.map(String.init) != identifier {
                problems.append("\(path): row \(identifier) has the key \(entry.path.last ?? "")")
            }
            if entry.depth != path.count + 1 { problems.append("\(path): row \(identifier) at depth \(entry.depth)") }
            let belongs =
                switch path.last {
                case nil: identifier == "artists" || identifier == "tracks"
                case "artists": parentIdentifier(of: identifier) == nil && identifier.hasPrefix("a")
                case "tracks": identifier.split(separator: ".").count == 3
                case let parent?: parentIdentifier(of: identifier) == parent
                }
            if !belongs { problems.append("\(path): row \(identifier) does not belong there") }
        }
        return problems
    }

    /// One remote's walk: every container page by page, each row looked up on its own too,
    /// some through their index paths. Content that vanished meanwhile is an answer, not a problem.
    static func walk(_ manager: PlayableContentManager, page: Int, seed: Int) async
        -> (calls: Int, listed: Int, refused: Int, problems: [String])
    {
        var calls = 0
        var listed = 0
        var refused = 0
        var problems: [String] = []
        var queue: [[String]] = [[]]
        var next = 0
        while next < queue.count {
            let path = queue[next]
            next += 1
            var offset = 0
            while offset < 200 {
                calls += 1
                guard let listing = try? await manager.listChildren(of: path, offset: offset, maximum: page) else {
                    refused += 1
                    break
                }
                listed += 1
                problems += Self.problems(in: listing, of: path, page: page)
                // Odd remotes go through each page backwards, so the walks do not move in step.
                let rows = seed % 2 == 0 ? listing.entries : listing.entries.reversed()
                for entry in rows where !entry.isLoadingPlaceholder {
                    if entry.item.isContainer { queue.append(entry.path) }
                    calls += 1
                    if let again = try? manager.entry(at: entry.path), again.path != entry.path {
                        problems.append("entry(at: \(entry.path)) answered \(again.path)")
                    }
                    if (calls + seed) % 7 == 0, let indexPath = entry.indexPath, let found = manager.entry(atIndexPath: indexPath),
                        found.indexPath != indexPath
                    {
                        problems.append("entry(atIndexPath: \(indexPath)) answered \(String(describing: found.indexPath))")
                    }
                }
                if (calls + seed) % 5 == 0 { _ = manager.childKeys(of: path) }
                offset += page
                if offset >= listing.totalCount { break }
            }
        }
        return (calls, listed, refused, problems)
    }

    /// Four remotes walk a tree while artists move out and back (a batch of updates each) and
    /// the copy, bounded to a few hundred rows, forgets what they read: every reply is
    /// consistent, and the process is still here.
    @Test(arguments: [true, false])
    func walksWhileTheLibraryChangesAndTheCopyForgetsGetConsistentReplies(answersAtOnce: Bool) async throws {
        let library = ShiftingLibrary(artists: 40, answersAtOnce: answersAtOnce)
        let manager = PlayableContentManager(
            dataSource: library, loadingDeadline: .milliseconds(50), maximumCachedRows: 150,
            pagedContainerThreshold: 100)
        let moves = 60
        let moving = MovingFlag()
        let mover = Task {
            defer { moving.value.store(false, ordering: .releasing) }
            for move in 0..<moves {
                let index = (move * 7) % 40
                manager.beginUpdates()
                let artist = library.remove(at: index)
                manager.endUpdates()
                await Task.yield()
                manager.beginUpdates()
                library.insert(artist, at: index)
                manager.endUpdates()
                if move % 10 == 9 { await manager.reloadData().value }
            }
        }
        let walkers = (0..<4).map { seed in
            Task { () -> (calls: Int, listed: Int, refused: Int, problems: [String]) in
                var calls = 0
                var listed = 0
                var refused = 0
                var problems: [String] = []
                repeat {
                    let walk = await Self.walk(manager, page: 7 + seed, seed: seed)
                    calls += walk.calls
                    listed += walk.listed
                    refused += walk.refused
                    problems += walk.problems
                } while moving.value.load(ordering: .acquiring) && problems.count < 20
                return (calls, listed, refused, problems)
            }
        }
        await mover.value
        var calls = 0
        var listed = 0
        var refused = 0
        for walker in walkers {
            let walk = await walker.value
            calls += walk.calls
            listed += walk.listed
            refused += walk.refused
            #expect(walk.problems.isEmpty, "\(walk.problems.prefix(5))")
        }
        #expect(calls > 1_000)
        // Refusals (an artist gone for the moment, or a batch being read) stay the exception:
        // most listings are answered while the library changes.
        #expect(refused * 2 < listed, "\(refused) listings refused, \(listed) answered")
        // Once the library is whole again, a listing shows it whole.
        let artists = try await manager.listChildren(of: ["artists"])
        #expect(artists.entries.map(\.item.identifier) == (0..<40).map { "a\($0)" })
        #expect(manager.cachedRowCount <= 150 + 40)
    }
}

/// Whether the library is still changing: walkers go on until it stops.
private final class MovingFlag: Sendable {
    let value = Atomic(true)
}
