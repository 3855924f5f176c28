import BenchmarkSupport

/// `MPRISBenchmark [--json PATH] [--iterations N] [--toggles N] [--no-pin] [--quick]` runs the
/// benchmark; `MPRISBenchmark serve --address ADDRESS` is the player it starts in a child process.
@main
struct Main {
    static func main() {
        benchmarkMain(
            name: "MPRISBenchmark", options: Options.self, serve: { try await Service.run(address: $0) },
            run: { await Benchmark(options: $0).run() })
    }
}

struct Options: BenchmarkOptions {
    var jsonPath: String?
    /// Timed round trips of each kind, from each client.
    var iterations = 10_000
    /// Untimed round trips of each kind first.
    var warmUp = 1_000
    /// Round trips of one kind in a row before switching to the next kind.
    var batch = 100
    /// Timed PlayPause toggles, after `toggleWarmUp` untimed ones.
    var toggles = 2_000
    var toggleWarmUp = 200
    /// Pin the benchmark, the bus, the player and the Python client to one CPU.
    var pin = true
    var help = false

    static let usage = """
        usage: MPRISBenchmark [--json PATH] [--iterations N] [--toggles N] [--no-pin] [--quick]

        Measures an app written against MediaRemote and published by MPRISService, against a
        private dbus-daemon it starts (and kills) itself: GetAll(org.mpris.MediaPlayer2.Player)
        against the bus floor (GetId) from the library's own client and from a python3-dbus client
        (Benchmarks/Python/mpris_roundtrips.py), and the latency from a PlayPause call to the
        PropertiesChanged(PlaybackStatus) it causes. Exits 1 when a threshold is exceeded.

          --json PATH       also write the figures as JSON to PATH
          --iterations N    timed round trips of each kind, from each client (default 10000)
          --toggles N       timed PlayPause toggles (default 2000)
          --no-pin          let the scheduler place the processes on any CPU (by default the
                            benchmark, the bus, the player and the Python client share one CPU)
          --quick           a short smoke run (1000 round trips, 500 toggles)
        """

    init(_ arguments: [String]) throws {
        var remaining = ArgumentReader(arguments)
        while let argument = remaining.next() {
            switch argument {
            case "--json": jsonPath = try remaining.value(for: argument)
            case "--iterations": iterations = try remaining.count(for: argument)
            case "--toggles": toggles = try remaining.count(for: argument)
            case "--no-pin": pin = false
            case "--quick":
                iterations = 1_000
                warmUp = 200
                toggles = 500
                toggleWarmUp = 100
            case "-h", "--help": help = true
            default: throw UsageError(description: "unknown argument '\(argument)'")
            }
        }
        batch = min(batch, iterations)
    }
}
