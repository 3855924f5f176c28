import BenchmarkSupport
import DBus
import Glibc
import MallocInterposerSwift

/// The service side of the benchmark, run in a child process (`DBusBenchmark serve --address ADDRESS`)
/// so that its allocations are counted apart from the client's, as a real player and a real
/// client would be two processes.
///
/// It serves an MPRIS-Player-like interface with 15 stored properties, a `Seeked` signal, and a
/// control interface the benchmark drives: allocation counters and a signal burst.
enum Service {
    static let name: BusName = "org.mpris.MediaPlayer2.dbusbenchmark"
    static let playerPath: ObjectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface: InterfaceName = "org.mpris.MediaPlayer2.Player"
    static let controlPath: ObjectPath = "/org/example/DBusBenchmark"
    static let controlInterface: InterfaceName = "org.example.DBusBenchmark1"
    static let propertyCount = 15

    /// The Player interface: the 15 properties of MPRIS's Player, with `MinimumRate` replaced by a
    /// string array (`SupportedUriSchemes`, from the MPRIS root interface) so that every common
    /// property type is on the wire: strings, booleans, doubles, int64, `as` and an `a{sv}` of 9 entries.
    static func makePlayer() -> (Interface, SignalEmitter<Int64>) {
        let player = Interface(playerInterface)
        let metadata: [String: Variant] = [
            "mpris:trackid": Variant(ObjectPath("/org/example/DBusBenchmark/track/42")),
            "mpris:length": Variant(Int64(245_000_000)),
            "mpris:artUrl": Variant("file:///home/user/Music/Artist/Album/cover.jpg"),
            "xesam:title": Variant("A Reasonably Long Track Title (Remastered 2011)"),
            "xesam:album": Variant("The Album Name"),
            "xesam:artist": Variant(["First Artist", "Second Artist"]),
            "xesam:albumArtist": Variant(["First Artist"]),
            "xesam:trackNumber": Variant(Int32(7)),
            "xesam:url": Variant("file:///home/user/Music/Artist/Album/07%20Track.flac"),
        ]
        _ = player.property("PlaybackStatus", "Playing")
        _ = player.property("LoopStatus", "None", access: .readWrite)
        _ = player.property("Rate", 1.0, access: .readWrite)
        _ = player.property("Shuffle", false, access: .readWrite)
        _ = player.property("Metadata", metadata)
        _ = player.property("Volume", 0.8, access: .readWrite)
        _ = player.property("Position", Int64(93_500_000), changes: .none)
        _ = player.property("SupportedUriSchemes", ["file", "http", "https"])
        _ = player.property("MaximumRate", 2.0)
        _ = player.property("CanGoNext", true)
        _ = player.property("CanGoPrevious", true)
        _ = player.property("CanPlay", true)
        _ = player.property("CanPause", true)
        _ = player.property("CanSeek", true)
        _ = player.property("CanControl", true, changes: .const)
        let seeked = player.signal("Seeked", arguments: ["Position"], of: Int64.self)
        return (player, seeked)
    }

    static func run(address: String) async throws -> Never {
        System.exitWhenStdinCloses()
        // Count from the start; the client reads differences, so the absolute total does not matter.
        MallocInterposerSwift.hook()
        let counting = allocationCountingWorks()

        let connection = try await Connection.connect(to: .address(address))
        let (player, seeked) = makePlayer()
        let bus = Proxy(connection, destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus")

        let control = Interface(controlInterface)
        control.method("AllocationCounters", results: ["mallocs", "frees", "bytes"]) {
            () async throws -> (Int64, Int64, Int64) in
            guard counting else { return (-1, -1, -1) }
            let statistics = MallocInterposerSwift.getStatistics()
            return (Int64(statistics.mallocCount), Int64(statistics.freeCount), Int64(statistics.mallocBytesCount))
        }
        // Emits `count` Seeked signals as fast as the API allows, then makes one round trip to the
        // bus: the connection sends in order, so its reply means the bus has taken every signal.
        control.method("EmitSeeked", arguments: ["count"], results: ["queuedNanoseconds", "sentNanoseconds"]) {
            (count: UInt32) async throws -> (UInt64, UInt64) in
            let start = monotonicNanoseconds()
            for index in 0..<Int64(count) { seeked.emit(index) }
            let queued = monotonicNanoseconds()
            let _: String = try await bus.call("GetId")
            return (queued - start, monotonicNanoseconds() - start)
        }

        try connection.export(player, at: playerPath)
        try connection.export(control, at: controlPath, ordering: .concurrent)
        let reply = try await connection.requestName(name, flags: [.doNotQueue])
        guard reply == .primaryOwner else {
            writeError("DBusBenchmark serve: could not own \(name) (\(reply))\n")
            exit(3)
        }
        print("ready")
        fflush(nil)
        await connection.waitUntilDisconnected()
        exit(0)
    }

    /// Whether the interposer is preloaded: a counted malloc must show in the statistics.
    private static func allocationCountingWorks() -> Bool {
        let before = MallocInterposerSwift.getStatistics().mallocCount
        opaqueMallocAndFree()
        return MallocInterposerSwift.getStatistics().mallocCount > before
    }
}

/// Calls `malloc` and `free` through pointers looked up at run time, so that the optimizer cannot
/// remove the pair (it does remove a plain `free(malloc(n))`).
func opaqueMallocAndFree() {
    typealias Malloc = @convention(c) (Int) -> UnsafeMutableRawPointer?
    typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void
    guard let mallocSymbol = dlsym(nil, "malloc"), let freeSymbol = dlsym(nil, "free") else { return }
    let pointer = unsafeBitCast(mallocSymbol, to: Malloc.self)(24)
    unsafeBitCast(freeSymbol, to: Free.self)(pointer)
}
