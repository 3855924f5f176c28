import ArgumentParser
import BenchmarkSupport
import DBus

/// `DBusBenchmark [--json PATH] [--iterations N] [--signals N] [--no-pin] [--quick] [--profile KIND]`
/// runs the benchmark; `DBusBenchmark serve --address ADDRESS` is the service it starts in a child
/// process.
@main
struct Main {
    static func main() {
        benchmarkMain(
            name: "DBusBenchmark", arguments: Arguments.self, serve: { try await Service.run(address: $0) },
            run: { await Benchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "DBusBenchmark",
        abstract: "Measures the D-Bus layer against a private dbus-daemon it starts (and kills) itself.",
        discussion: """
            Round trips (bus floor GetId, Peer.Ping to the service, GetAll of a 15-property \
            interface), signal throughput, and allocations per call. Exits 1 when a threshold is \
            exceeded. \
            --quick makes a short smoke run: 1000 iterations, 5000 signals.
            """)

    @OptionGroup var run: ServiceRunOptions

    @Option(help: "Timed round trips of each kind.")
    var iterations = 10_000

    @Option(help: "Signals in each of 3 bursts.")
    var signals = 50_000

    @Option(
        help: ArgumentHelp(
            "Only KIND: busFloorGetId, servicePing or getAll15Properties round trips (--iterations of them), or one burst of signals (--signals); no report.",
            discussion: "For valgrind --tool=callgrind --trace-children=yes, which then profiles client and service apart.",
            valueName: "KIND"))
    var profile: String?

    func validate() throws {
        guard iterations > 0, signals > 0 else { throw ValidationError("--iterations and --signals must be positive") }
        if let profile, profile != "signals", !RoundTrip.allCases.contains(where: { $0.key == profile }) {
            throw ValidationError("--profile takes busFloorGetId, servicePing, getAll15Properties or signals")
        }
    }

    func settings() -> Options {
        var options = Options()
        options.jsonPath = run.json
        options.pin = run.pin
        if run.quick {
            options.iterations = 1_000
            options.warmUp = 200
            options.accountingCalls = 500
            options.signals = 5_000
            options.bursts = 1
        } else {
            options.iterations = iterations
            options.signals = signals
        }
        switch profile {
        case "signals":
            options.profile = .signals
            options.bursts = 1
        case let name?:
            options.profile = RoundTrip.allCases.first { $0.key == name }.map(Options.ProfileTarget.roundTrip)
        case nil:
            break
        }
        options.batch = min(options.batch, options.iterations)
        return options
    }
}

/// What one run uses.
struct Options: Sendable {
    var jsonPath: String?
    /// Timed round trips of each kind.
    var iterations = 10_000
    /// Untimed round trips of each kind first.
    var warmUp = 1_000
    /// Round trips of one kind in a row before switching to the next kind.
    var batch = 100
    /// Round trips of each kind for the CPU-time and allocation counts.
    var accountingCalls = 2_000
    var signals = 50_000
    /// Signal bursts; the median one is reported.
    var bursts = 3
    /// Pin the benchmark, the bus and the service to one CPU.
    var pin = true
    /// Only this round trip, `iterations` times, without a report: for profiling under
    /// `valgrind --tool=callgrind --trace-children=yes`.
    var profile: ProfileTarget?

    enum ProfileTarget {
        case roundTrip(RoundTrip)
        /// One burst of `signals` signals.
        case signals
    }
}
