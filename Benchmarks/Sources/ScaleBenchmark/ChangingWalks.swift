import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport
import Synchronization

/// Remotes walking the whole tree at once while the library changes under them, as a car and a
/// phone browse while a disk is plugged in: artist folders renamed out of the library and back,
/// a `Rescan` after each rename, with the tree's copy (10,000 rows) forgetting as they go.
struct ChangingWalkFigures: Sendable {
    static let walkers = 4
    /// Renames out and back made while the walks went on, each followed by a `Rescan`.
    var moves = 0
    /// Walks that reached the end of the tree, of ``walkers``.
    var completed = 0
    /// Calls answered with `UnknownObject` or `NoSuchContent` (an artist away for the moment).
    var refused = 0
    var calls = 0
    /// The longest of the walks.
    var seconds = 0.0
    /// Whether the daemon still answered once the walks ended.
    var daemonServing = false
    /// Why a walk did not reach the end, when one did not.
    var failures: [String] = []
}

extension ScaleBenchmark {
    /// Runs ``ChangingWalkFigures/walkers`` `WalkClient`s, one call in flight each, while artist
    /// folders are renamed out of the library and back with a `Rescan` after each rename, until
    /// the walks end (at most `maximumMoves` moves).
    func changingWalks(
        _ launch: DaemonLaunch, bus: PrivateBus, client: BusClient, daemon: Int32, artists: Int, maximumMoves: Int = 40
    ) async throws -> ChangingWalkFigures {
        let benchmark = try System.executablePath()
        let walker = String(benchmark[..<(benchmark.lastIndex(of: "/") ?? benchmark.endIndex)]) + "/WalkClient"
        let rescan = Proxy(
            client.connection, destination: launch.treeName, path: launch.treeRoot,
            interface: "org.mprisbridge.MediaRoot1", timeout: .seconds(600))
        let away = library.folder + "/away"
        let music = library.music
        try makeDirectories(away)
        let walking = WalksUnderWay(ChangingWalkFigures.walkers)
        var figures = ChangingWalkFigures()
        try await withThrowingTaskGroup(of: (ProcessOutput?, Int, String?).self) { group in
            for _ in 0..<ChangingWalkFigures.walkers {
                group.addTask {
                    defer { walking.end() }
                    let output = try await bus.run(
                        walker, [launch.treeName.rawValue, launch.treeRoot.rawValue, "1", "--tolerate-missing"],
                        timeout: .seconds(900))
                    return (output, 0, nil)
                }
            }
            group.addTask {
                var moves = 0
                do {
                    while moves < maximumMoves, walking.any {
                        // Artists spread over the library, each a folder of 1 to 6 albums.
                        let number = String(moves * 37 % artists + 1)
                        let name = "Artist " + String(repeating: "0", count: max(0, 4 - number.count)) + number
                        try rename(music + "/" + name, to: away + "/" + name)
                        // Back in the library also when a Rescan fails (after the rename below,
                        // this one finds nothing to move).
                        defer { try? rename(away + "/" + name, to: music + "/" + name) }
                        let _: () = try await rescan.call("Rescan")
                        try rename(away + "/" + name, to: music + "/" + name)
                        let _: () = try await rescan.call("Rescan")
                        moves += 1
                    }
                } catch {
                    // The daemon gone or stuck: the report says so, after the walks end.
                    return (nil, moves, "moving artists stopped after \(moves) moves: \(error)")
                }
                return (nil, moves, nil)
            }
            for try await (output, moves, failure) in group {
                guard let output else {
                    figures.moves = moves
                    if let failure { figures.failures.append(failure) }
                    continue
                }
                // `walk SECONDS CALLS CONTAINERS ITEMS IN_FLIGHT CPU_SECONDS MISSING`
                let fields = output.stdout.split(whereSeparator: \.isWhitespace)
                guard output.status == 0, fields.count == 8, fields[0] == "walk", let seconds = Double(fields[1]),
                    let calls = Int(fields[2]), let missing = Int(fields[7])
                else {
                    figures.failures.append("status \(output.status): \(output.stdout)\(output.stderr)")
                    continue
                }
                figures.completed += 1
                figures.calls += calls
                figures.refused += missing
                figures.seconds = max(figures.seconds, seconds)
            }
        }
        let status = try? await client.playbackStatus()
        figures.daemonServing = kill(daemon, 0) == 0 && status != nil
        return figures
    }
}

/// How many walks are still going, for the task that moves folders until they end.
private final class WalksUnderWay: Sendable {
    private let count: Mutex<Int>

    init(_ count: Int) { self.count = Mutex(count) }

    func end() { count.withLock { $0 -= 1 } }
    var any: Bool { count.withLock { $0 > 0 } }
}
