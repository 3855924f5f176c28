import AsyncSupport
import BenchmarkSupport
import DBus
import Glibc
import MPRIS
import MediaRemote
import MusicLibrary
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The media server, run in a child process (`MediaTreeBenchmark serve --address ADDRESS`): the
/// daemon's browsable tree (`LibraryContent`) of ``SyntheticLibrary``, a `PlayableContentManager`
/// over it, published by `MediaTreeService` as `org.gnome.UPnP.MediaServer2.mediatreebenchmark`.
///
/// A control object of its own (`org.example.MediaTreeBenchmark1` at `/org/example/MediaTreeBenchmark`)
/// changes the library on request. Its `Marker` signal is emitted from the tree's root path, so
/// that the benchmark receives it on the same subscription as the tree's `Updated` signals, and in
/// order after them.
enum Service {
    static let serverName = "mediatreebenchmark"
    static let busName: BusName = "org.gnome.UPnP.MediaServer2.mediatreebenchmark"
    static let rootPath: ObjectPath = "/org/gnome/UPnP/MediaServer2/mediatreebenchmark"
    static let controlPath: ObjectPath = "/org/example/MediaTreeBenchmark"
    static let controlInterface: InterfaceName = "org.example.MediaTreeBenchmark1"
    /// `Marker(u)`, from ``rootPath``: everything the server emitted before it has been sent.
    static let marker: MemberName = "Marker"

    /// Where `MediaTreeService`'s artwork cache points for the server with this pid: under /tmp,
    /// never the user's cache. Every cover is a file URL, so nothing is written there; the
    /// benchmark removes the directory if it exists.
    static func artworkDirectory(pid: Int32) -> String { "/tmp/mediatreebenchmark-artwork-\(pid)" }

    static func run(address: String) async throws -> Never {
        System.exitWhenStdinCloses()
        let started = monotonicNanoseconds()
        let tracks = SyntheticLibrary.tracks()
        let library = LibraryContent(
            tracks: tracks, playlists: SyntheticLibrary.playlists(of: tracks), libraryName: "/music",
            artworkURL: SyntheticLibrary.artworkURL)
        let built = monotonicNanoseconds() - started
        // One read of the Tracks tab as the manager reads a container, to set the cold listing against.
        let readStart = monotonicNanoseconds()
        let tracksTab = LibraryContent.Tab.tracks.indexPath
        var rows = 0
        for index in 0..<library.numberOfChildItems(at: tracksTab)
        where library.contentItem(at: tracksTab.appending(index)) != nil {
            rows += 1
        }
        let read = monotonicNanoseconds() - readStart
        guard rows == SyntheticLibrary.trackCount else {
            writeError(
                "MediaTreeBenchmark serve: the Tracks tab has \(rows) rows, not \(SyntheticLibrary.trackCount)\n")
            exit(3)
        }
        let content = PlayableContentManager(dataSource: library)
        let tree = try MediaTreeService(
            name: serverName, displayName: "Media tree benchmark", content: content,
            artworkCacheDirectory: artworkDirectory(pid: getpid()))
        guard tree.rootPath == rootPath else {
            writeError("MediaTreeBenchmark serve: the tree is at \(tree.rootPath), not \(rootPath)\n")
            exit(3)
        }
        let connection = try await Connection.connect(to: .address(address))

        // The paths the manager announces, to compare with the signals the benchmark receives.
        let announced = Mutex<[[String]]>([])
        let observation = content.observe { change in
            if case .containersUpdated(let paths) = change { announced.withLock { $0 += paths } }
        }

        let control = Interface(controlInterface)
        control.method("Mark", arguments: ["serial"]) { (serial: UInt32) async throws in
            try connection.emitSignal(
                path: rootPath, interface: controlInterface, member: marker, body: [.uint32(serial)])
        }
        // The tracks and playlists of generation N (each title ends in " (take N)"), made before
        // the timed `Storm` so that it measures only the library's work.
        let prepared = Mutex<(generation: UInt32, tracks: [Track], playlists: [Playlist])?>(nil)
        control.method("Prepare", arguments: ["generation"]) { (generation: UInt32) async throws in
            let tracks = SyntheticLibrary.tracks(generation: Int(generation))
            let playlists = SyntheticLibrary.playlists(of: tracks)
            prepared.withLock { $0 = (generation, tracks, playlists) }
        }
        // One batch changing every track's title to the prepared generation's, as a rescan that
        // finds every file retagged would; then the marker.
        control.method(
            "Storm", arguments: ["generation"],
            results: ["updateNanoseconds", "endUpdatesNanoseconds", "announcedPaths", "distinctPaths"]
        ) { (generation: UInt32) async throws -> (UInt64, UInt64, UInt32, UInt32) in
            guard let (_, tracks, playlists) = prepared.withLock({ $0?.generation == generation ? $0 : nil }) else {
                throw DBusError(.invalidArgs, "Generation \(generation) was not prepared")
            }
            announced.withLock { $0 = [] }
            let start = monotonicNanoseconds()
            content.beginUpdates()
            library.update(tracks: tracks, playlists: playlists)
            let updated = monotonicNanoseconds()
            content.endUpdates()
            let ended = monotonicNanoseconds()
            let paths = announced.withLock { $0 }
            try connection.emitSignal(
                path: rootPath, interface: controlInterface, member: marker, body: [.uint32(generation)])
            prepared.withLock { $0 = nil }
            return (updated - start, ended - updated, UInt32(paths.count), UInt32(Set(paths).count))
        }
        try connection.export(control, at: controlPath)
        let name = try await tree.publish(on: connection)
        guard name == busName else {
            writeError("MediaTreeBenchmark serve: owns \(name), not \(busName)\n")
            exit(3)
        }
        print("ready \(built) \(read)")
        fflush(nil)
        await connection.waitUntilDisconnected()
        observation.cancel()
        exit(0)
    }
}
