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

    @OptionGroup var options: RoundTripArguments

    func settings() -> RoundTripOptions { options.settings() }
}

typealias Options = RoundTripOptions
