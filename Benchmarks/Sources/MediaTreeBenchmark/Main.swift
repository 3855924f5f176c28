import ArgumentParser
import BenchmarkSupport

/// `MediaTreeBenchmark [--json PATH] [--listings N] [--walks N] [--storms N] [--no-pin] [--quick]`
/// runs the benchmark; `MediaTreeBenchmark serve --address ADDRESS` is the media server it starts
/// in a child process.
@main
struct Main {
    static func main() {
        benchmarkMain(
            name: "MediaTreeBenchmark", arguments: Arguments.self, serve: { try await Service.run(address: $0) },
            run: { await Benchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "MediaTreeBenchmark",
        abstract: "Measures a MediaServer2 tree of 10,000 synthetic tracks.",
        discussion: """
            MediaTreeService over a PlayableContentManager over the daemon's LibraryContent, served \
            by a child process on a private dbus-daemon that the benchmark starts (and kills) itself: \
            a page of 100 from the 10,000-child Tracks container, cold and warm, against the bus floor \
            (GetId); a walk of the whole tree, cold and warm, with the server's memory; a batch \
            changing every track's title and the Updated signals it causes. Exits 1 when a threshold \
            is exceeded. \
            --quick makes a short smoke run: 1000 round trips, 1 warm walk, 1 storm.
            """)

    @OptionGroup var run: ServiceRunOptions

    @Option(help: "Timed warm round trips of each kind.")
    var listings = 3_000

    @Option(help: "Warm walks after the cold one.")
    var walks = 3

    @Option(help: "Batches changing every title.")
    var storms = 3

    func validate() throws {
        guard listings > 0, walks > 0, storms > 0 else {
            throw ValidationError("--listings, --walks and --storms must be positive")
        }
    }

    func settings() -> Options {
        var options = Options()
        options.jsonPath = run.json
        options.pin = run.pin
        if run.quick {
            options.listings = 1_000
            options.warmUp = 100
            options.cpuListings = 200
            options.walks = 1
            options.storms = 1
        } else {
            options.listings = listings
            options.walks = walks
            options.storms = storms
        }
        options.batch = min(options.batch, options.listings)
        return options
    }
}

/// What one run uses.
struct Options: Sendable {
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
}
