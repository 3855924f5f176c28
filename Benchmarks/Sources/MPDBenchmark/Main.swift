import ArgumentParser
import BenchmarkSupport

/// `MPDBenchmark [--daemon PATH] [--mpd PATH] [--tracks N] [--rounds N] [--wakes N] [--clients N]
/// [--listings N] [--library DIR] [--json PATH] [--mpd-twice] [--quick]`: the daemon's MPD face
/// beside the real mpd 0.23, on the same generated library, with the same client.
@main
struct Main {
    static func main() {
        benchmarkMain(name: "MPDBenchmark", arguments: Arguments.self, run: { await Benchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "MPDBenchmark",
        abstract: "Measures the daemon's MPD face beside the real mpd 0.23.",
        discussion: """
            Both servers run at once on the same generated library of tagged Ogg tracks (mpd with the \
            null output, mpris-bridge with a fakesink in real time on a private bus), each on a free \
            loopback port and a Unix socket in a temporary folder, each with the same 1,000-track queue, \
            paused on its first track. One client, this process, talks to both, interleaving their \
            samples in batches: status + currentsong round trips, pipelined and as a command list; \
            playlistinfo of the queue and list album group albumartist; the wake of a client parked in \
            'idle player' when another connection pauses or resumes; resident memory with no clients and \
            with 100 idle ones. Exits 1 when a regression threshold is exceeded, 2 when the run fails. \
            The benchmark and both servers are pinned to one CPU unless --no-pin. \
            --mpd-twice runs a second mpd in the daemon's place, to check the harness (ratios near 1). \
            --quick makes a short smoke run: 500 round trips, 50 wakes, 30 listings.
            """)

    @Option(help: "The mpris-bridge executable (default: ../.build/release/mpris-bridge).")
    var daemon: String?

    @Option(help: "The mpd executable.")
    var mpd = "/usr/bin/mpd"

    @Option(help: "Tracks in the generated library.")
    var tracks = 3_000

    @Option(
        name: .customLong("library"),
        help: "Where the generated library is kept between runs (default: Benchmarks/.build/mpd-benchmark-N).")
    var libraryFolder: String?

    @Option(help: "Timed status + currentsong round trips of each kind.")
    var rounds = 2_000

    @Option(help: "Timed idle wakes of each server on each transport.")
    var wakes = 400

    @Option(help: "Timed playlistinfo and list round trips of each server.")
    var listings = 200

    @Option(help: "Idle clients connected for the memory measurement.")
    var clients = 100

    @Flag(
        inversion: .prefixedNo,
        help: "Pin the benchmark and both servers (every thread) to one CPU (steadier figures).")
    var pin = true

    @Flag(help: "Run a second mpd in the daemon's place (checks the harness: every ratio near 1).")
    var mpdTwice = false

    @Option(help: "Also write the figures as JSON to this file.")
    var json: String?

    @Flag(help: "A short smoke run: 500 round trips, 50 wakes, 30 listings.")
    var quick = false

    func validate() throws {
        guard tracks >= 1_000 else { throw ValidationError("--tracks must be at least 1000 (the queue's length)") }
        guard rounds > 0, wakes > 0, listings > 0, clients > 0 else {
            throw ValidationError("--rounds, --wakes, --listings and --clients must be positive")
        }
    }

    func settings() -> Options {
        var options = Options()
        let cwd = currentDirectory()
        func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : cwd + "/" + path }
        if let daemon { options.daemon = absolute(daemon) }
        options.mpd = absolute(mpd)
        options.tracks = tracks
        options.libraryFolder = absolute(libraryFolder ?? Options.packageFolder + "/.build/mpd-benchmark-\(tracks)")
        options.rounds = rounds
        options.wakes = wakes
        options.listings = listings
        options.clients = clients
        options.mpdTwice = mpdTwice
        options.pin = pin
        options.jsonPath = json.map(absolute)
        if quick {
            options.rounds = 500
            options.warmUp = 100
            options.wakes = 50
            options.wakeWarmUp = 10
            options.listings = 30
            options.listingWarmUp = 5
        }
        options.batch = min(options.batch, options.rounds)
        return options
    }
}

/// What one run uses.
struct Options: Sendable {
    var daemon = Options.packageFolder + "/../.build/release/mpris-bridge"
    var mpd = "/usr/bin/mpd"
    var tracks = 3_000
    var libraryFolder = Options.packageFolder + "/.build/mpd-benchmark-3000"
    /// The queue each server holds: the library's first tracks by path.
    var queueLength = 1_000
    /// Timed status + currentsong round trips of each kind, after `warmUp` untimed ones.
    var rounds = 2_000
    var warmUp = 200
    /// Round trips of one kind in a row before the next kind: few, so that a burst of load from
    /// elsewhere on the machine falls on both servers alike (with 100, two identical mpds
    /// differed by up to 2x at the median while compilers ran beside them; with 10, by 5 %).
    var batch = 10
    /// Timed idle wakes of each server on each transport, after `wakeWarmUp` untimed ones.
    var wakes = 400
    var wakeWarmUp = 20
    /// Wakes of one server in a row before the other's.
    var wakeBatch = 10
    /// Timed playlistinfo and list round trips of each server, after `listingWarmUp` untimed ones.
    var listings = 200
    var listingWarmUp = 20
    /// Idle clients for the memory measurement.
    var clients = 100
    /// A second mpd in the daemon's place.
    var mpdTwice = false
    /// Pin the benchmark and the servers (which inherit it) to one CPU: unpinned, two identical
    /// mpds differed by up to 1.8x at the median on this 2-core machine, with where the scheduler
    /// woke each server relative to the client (a cross-CPU wake-up costs about 20 µs more).
    var pin = true
    var jsonPath: String?

    /// Benchmarks/, from this file's path.
    static let packageFolder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()
}
