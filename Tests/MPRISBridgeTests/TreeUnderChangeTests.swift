import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import TestMedia
import Testing

/// A car and a phone browse the daemon's tree while music comes and goes: artist folders moved
/// out of the library and back, a rescan each time, with a copy of the tree small enough that
/// it keeps forgetting what the remotes read.
@Suite(.timeLimit(.minutes(3))) struct TreeUnderChangeTests {
    typealias Tree = MediaTreeDaemonTests

    /// `artists` artists of `albums` albums of `tracks` tracks each, in folders `Artist NN/Album M`.
    static func makeLibrary(artists: Int, albums: Int, tracks: Int) async throws -> GeneratedLibrary {
        try await GeneratedLibrary.makeCopies(prefix: "bridge-artists", seconds: 1) {
            (0..<artists).flatMap { artist in
                let name = String(format: "Artist %02d", artist)
                return (0..<albums).flatMap { album in
                    (1...tracks).map { number in
                        (
                            LibraryTrack(
                                path: "\(name)/Album \(album)/0\(number) Song.ogg", format: .ogg, seconds: 1,
                                title: "Song \(number)", album: "\(name) Album \(album)", trackNumber: number),
                            artist: name
                        )
                    }
                }
            }
        }
    }

    /// Four remotes walk the tree page by page, reading rows on their own too, while artist
    /// folders move out of the library and back with a rescan after each move, and the tree's
    /// copy (100 rows) forgets what they read: every reply is about the node asked for, most
    /// calls are answered, and the daemon is still serving at the end.
    @Test func remotesWalkingWhileArtistsMoveOutAndBackGetConsistentReplies() async throws {
        let artists = 24
        let library = try await Self.makeLibrary(artists: artists, albums: 2, tracks: 3)
        defer { library.remove() }
        let outside = library.folder.path + "/outside"
        #expect(mkdir(outside, 0o755) == 0)
        try await PrivateBus.with { bus in
            let scan = try await DaemonFixture.scan(library)
            #expect(scan.succeeded, "\(scan)")
            let daemon = try await DaemonFixture.start(
                on: bus, library: library, arguments: ["--no-watch", "--tree-cache-rows", "100"])
            let walkers = try (0..<4).map { seed in
                try bus.spawn(
                    PrivateBus.systemPython,
                    ["-u", pythonScript("tree_walker.py"), Tree.treeName, Tree.root, "\(5 + seed * 3)", "\(seed)"])
            }
            defer { for walker in walkers { walker.kill() } }
            for move in 0..<10 {
                let name = String(format: "Artist %02d", (move * 7) % artists)
                #expect(rename(library.path + "/" + name, outside + "/" + name) == 0)
                let out = try await Tree.headUnit(daemon, ["rescan"])
                #expect(out.first?.hasPrefix("rescanned in") == true, "\(out)")
                #expect(rename(outside + "/" + name, library.path + "/" + name) == 0)
                let back = try await Tree.headUnit(daemon, ["rescan"])
                #expect(back.first?.hasPrefix("rescanned in") == true, "\(back)")
            }
            var listed = 0
            var refused = 0
            for walker in walkers {
                walker.closeStdin()
                let report = try await walker.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("{") }
                let stats = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any] ?? [:]
                #expect((stats["problems"] as? [String])?.isEmpty == true, "\(report)")
                #expect((stats["walks"] as? Int ?? 0) >= 1, "\(report)")
                listed += stats["listed"] as? Int ?? 0
                refused += stats["refused"] as? Int ?? 0
            }
            // Refusals (an artist away for the moment) stay the exception.
            #expect(listed > 200 && refused * 4 < listed, "\(listed) pages listed, \(refused) calls refused")
            // The daemon is still here, and its tree shows every artist again.
            let count = try await Tree.headUnit(
                daemon, ["get", Tree.path("artists"), "org.gnome.UPnP.MediaContainer2", "ChildCount"])
            #expect(count == ["UInt32 \(artists)"], "\(count)")
            try await daemon.stop()
        }
    }

    /// A bound on the tree's copy too small to hold a screen, or not a number, is refused with
    /// the reason before anything starts.
    @Test func aBadTreeCacheBoundIsRefusedWithTheReason() async throws {
        let folder = try TemporaryDirectory(prefix: "bridge-tree-cache")
        defer { folder.remove() }
        let cases: [([String], String)] = [
            (["--tree-cache-rows", "5"], "--tree-cache-rows 5: at least 100"),
            (["--tree-cache-rows", "many"], "'many' is invalid for '--tree-cache-rows <rows>'"),
        ]
        for (arguments, message) in cases {
            try await DaemonFixture.expectRefusal(of: arguments, library: folder.path, saying: message)
        }
    }
}
