import ArgumentParser
import BenchmarkSupport

/// `MediaPlayerBenchmark [--json PATH] [--iterations N] [--toggles N] [--no-pin] [--quick]` runs the
/// benchmark; `MediaPlayerBenchmark serve --address ADDRESS` (with `MEDIAPLAYER_BENCHMARK_API` set)
/// is a player it starts in a child process.
@main
struct Main {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Not through benchmarkMain's serve: that parks the main thread, and the MediaPlayer
        // app's handlers run on the main queue.
        if arguments.first == "serve" { Apps.serve(arguments) }
        benchmarkMain(name: "MediaPlayerBenchmark", arguments: Arguments.self, run: { await Benchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "MediaPlayerBenchmark",
        abstract: "Measures what Apple's MediaPlayer API adds over the native MediaRemote API.",
        discussion: """
            Two players with the same track, one written against MediaRemote and one against MediaPlayer \
            as an iOS app is, each in its own process on a private dbus-daemon the benchmark starts (and \
            kills): GetAll(org.mpris.MediaPlayer2.Player) to each, interleaved with the bus floor (GetId), \
            and PlayPause -> PropertiesChanged(PlaybackStatus), alternating between the two. Prints each \
            MediaPlayer figure as a ratio to the native one; exits 1 when a ratio exceeds its threshold. \
            --quick makes a short smoke run: 1000 round trips, 500 toggles of each.
            """)

    @OptionGroup var options: RoundTripArguments

    func settings() -> RoundTripOptions { options.settings() }
}

typealias Options = RoundTripOptions
