import ArgumentParser
import BenchmarkSupport

/// `MPRISBenchmark [--json PATH] [--iterations N] [--toggles N] [--no-pin] [--quick]` runs the
/// benchmark; `MPRISBenchmark serve --address ADDRESS` is the player it starts in a child process.
@main
struct Main {
    static func main() {
        benchmarkMain(
            name: "MPRISBenchmark", arguments: Arguments.self, serve: { try await Service.run(address: $0) },
            run: { await Benchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "MPRISBenchmark",
        abstract: "Measures an app written against MediaRemote and published by MPRISService.",
        discussion: """
            Against a private dbus-daemon it starts (and kills) itself: GetAll(org.mpris.MediaPlayer2.Player) \
            against the bus floor (GetId) from the library's own client and from a python3-dbus client \
            (Benchmarks/Python/mpris_roundtrips.py), and the latency from a PlayPause call to the \
            PropertiesChanged(PlaybackStatus) it causes. Exits 1 when a threshold is exceeded. \
            --quick makes a short smoke run: 1000 round trips, 500 toggles.
            """)

    @OptionGroup var run: ServiceRunOptions

    @Option(help: "Timed round trips of each kind, from each client.")
    var iterations = 10_000

    @Option(help: "Timed PlayPause toggles.")
    var toggles = 2_000

    func validate() throws {
        guard iterations > 0, toggles > 0 else { throw ValidationError("--iterations and --toggles must be positive") }
    }

    func settings() -> Options {
        var options = Options()
        options.jsonPath = run.json
        options.pin = run.pin
        if run.quick {
            options.iterations = 1_000
            options.warmUp = 200
            options.toggles = 500
            options.toggleWarmUp = 100
        } else {
            options.iterations = iterations
            options.toggles = toggles
        }
        options.batch = min(options.batch, options.iterations)
        return options
    }
}

/// What one run uses.
struct Options: Sendable {
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
}
