import DBus
import Dispatch
import Glibc

/// `DBusBenchmark [--json PATH] [--iterations N] [--signals N] [--quick]` runs the benchmark;
/// `DBusBenchmark serve --address ADDRESS` is the service it starts in a child process.
@main
struct Main {
    // A synchronous entry point that parks the main thread on a semaphore: valgrind 3.19 crashes
    // in the `async main` entry (it drains the main queue with dispatch_main), and callgrind is
    // how this benchmark's hotspots are found.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let parked = DispatchSemaphore(value: 0)
        Task.detached {
            exit(await run(arguments))
        }
        parked.wait()
    }

    static func run(_ arguments: [String]) async -> Int32 {
        if arguments.first == "serve" {
            guard arguments.count == 3, arguments[1] == "--address" else {
                writeError("usage: DBusBenchmark serve --address ADDRESS\n")
                return 64
            }
            do { try await Service.run(address: arguments[2]) } catch {
                writeError("DBusBenchmark serve: \(error)\n")
                return 1
            }
        }
        let options: Options
        do { options = try Options(arguments) } catch {
            writeError("DBusBenchmark: \(error)\n\n\(Options.usage)\n")
            return 64
        }
        if options.help {
            print(Options.usage)
            return 0
        }
        return await Benchmark(options: options).run()
    }
}

struct Options {
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

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        func value(for flag: String) throws -> String {
            guard let value = remaining.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return value
        }
        func count(for flag: String) throws -> Int {
            let text = try value(for: flag)
            guard let number = Int(text), number > 0 else {
                throw UsageError(description: "\(flag) needs a positive number, not '\(text)'")
            }
            return number
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json": jsonPath = try value(for: argument)
            case "--iterations": iterations = try count(for: argument)
            case "--signals": signals = try count(for: argument)
            case "--no-pin": pin = false
            case "--profile":
                let name = try value(for: argument)
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
