import BenchmarkSupport
import DBus

/// `DBusBenchmark [--json PATH] [--iterations N] [--signals N] [--quick]` runs the benchmark;
/// `DBusBenchmark serve --address ADDRESS` is the service it starts in a child process.
@main
struct Main {
    static func main() {
        benchmarkMain(
            name: "DBusBenchmark", options: Options.self, serve: { try await Service.run(address: $0) },
            run: { await Benchmark(options: $0).run() })
    }
}

struct Options: BenchmarkOptions {
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
    var help = false

    static let usage = """
        usage: DBusBenchmark [--json PATH] [--iterations N] [--signals N] [--no-pin] [--quick] [--profile KIND]

        Measures the D-Bus layer against a private dbus-daemon it starts (and kills) itself:
        round trips (bus floor GetId, Peer.Ping to the service, GetAll of a 15-property interface),
        signal throughput, and allocations per call. Exits 1 when a threshold is exceeded.

          --json PATH       also write the figures as JSON to PATH
          --iterations N    timed round trips of each kind (default 10000)
          --signals N       signals in each of 3 bursts (default 50000)
          --no-pin          let the scheduler place the processes on any CPU (by default the
                            benchmark, the bus and the service share one CPU: steadier figures)
          --quick           a short smoke run (1000 iterations, 5000 signals)
          --profile KIND    only KIND: busFloorGetId, servicePing or getAll15Properties round trips
                            (--iterations of them), or one burst of signals (--signals); no report.
                            For valgrind --tool=callgrind --trace-children=yes, which then
                            profiles client and service apart (see Benchmarks/README.md)
        """

    init(_ arguments: [String]) throws {
        var remaining = ArgumentReader(arguments)
        while let argument = remaining.next() {
            switch argument {
            case "--json": jsonPath = try remaining.value(for: argument)
            case "--iterations": iterations = try remaining.count(for: argument)
            case "--signals": signals = try remaining.count(for: argument)
            case "--no-pin": pin = false
            case "--profile":
                let name = try remaining.value(for: argument)
                if name == "signals" {
                    profile = .signals
                    bursts = 1
                } else if let kind = RoundTrip.allCases.first(where: { $0.key == name }) {
                    profile = .roundTrip(kind)
                } else {
                    throw UsageError(
                        description: "--profile takes busFloorGetId, servicePing, getAll15Properties or signals")
                }
            case "--quick":
                iterations = 1_000
                warmUp = 200
                accountingCalls = 500
                signals = 5_000
                bursts = 1
            case "-h", "--help": help = true
            default: throw UsageError(description: "unknown argument '\(argument)'")
            }
        }
        batch = min(batch, iterations)
    }
}
