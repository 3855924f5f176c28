import BenchmarkSupport

/// `MediaTreeBenchmark [--json PATH] [--listings N] [--walks N] [--storms N] [--no-pin] [--quick]`
/// runs the benchmark; `MediaTreeBenchmark serve --address ADDRESS` is the media server it starts
/// in a child process.
@main
struct Main {
    static func main() {
        benchmarkMain(
            name: "MediaTreeBenchmark", options: Options.self, serve: { try await Service.run(address: $0) },
            run: { await Benchmark(options: $0).run() })
    }
}

struct Options: BenchmarkOptions {
    var jsonPath: String?
    /// Timed warm round trips of each kind (the two listings, GetId, Ping), after the cold listing.
    var listings = 3_000
    /// Untimed round trips of each kind first.
    var warmUp = 200
    /// Round trips of one kind in a row before switching to the next kind.
    var batch = 100
    /// Untimed `ListChildren(*)` calls whose CPU time is counted per process.
    var cpuListings = 500
    /// Warm walks after the cold one.
    var walks = 3
    /// Batches of 10,000 changed titles.
    var storms = 3
    /// Pin the benchmark, the bus and the media server to one CPU.
    var pin = true
    var help = false

    static let usage = """
        usage: MediaTreeBenchmark [--json PATH] [--listings N] [--walks N] [--storms N] [--no-pin] [--quick]

        Measures a MediaServer2 tree (MediaTreeService over a PlayableContentManager over the
        daemon's LibraryContent) of 10,000 synthetic tracks, served by a child process on a
        private dbus-daemon that the benchmark starts (and kills) itself: a page of 100 from the
        10,000-child Tracks container, cold and warm, against the bus floor (GetId); a walk of the
        whole tree, cold and warm, with the server's memory; a batch changing every track's title
        and the Updated signals it causes. Exits 1 when a threshold is exceeded.

          --json PATH       also write the figures as JSON to PATH
          --listings N      timed warm round trips of each kind (default 3000)
          --walks N         warm walks after the cold one (default 3)
          --storms N        batches changing every title (default 3)
          --no-pin          let the scheduler place the processes on any CPU (by default the
                            benchmark, the bus and the server share one CPU)
          --quick           a short smoke run (1000 round trips, 1 warm walk, 1 storm)
        """

    init(_ arguments: [String]) throws {
        var remaining = ArgumentReader(arguments)
        while let argument = remaining.next() {
            switch argument {
            case "--json": jsonPath = try remaining.value(for: argument)
            case "--listings": listings = try remaining.count(for: argument)
            case "--walks": walks = try remaining.count(for: argument)
            case "--storms": storms = try remaining.count(for: argument)
            case "--no-pin": pin = false
            case "--quick":
                listings = 1_000
                warmUp = 100
                cpuListings = 200
                walks = 1
                storms = 1
            case "-h", "--help": help = true
            default: throw UsageError(description: "unknown argument '\(argument)'")
            }
        }
        batch = min(batch, listings)
    }
}
