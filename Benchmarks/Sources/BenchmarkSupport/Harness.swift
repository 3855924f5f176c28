import ArgumentParser
import DBusTestSupport
import Dispatch
import Glibc
import ProcessTestSupport

/// Runs `run` with the command-line arguments and exits with its status.
///
/// A synchronous entry point that parks the main thread on a semaphore: valgrind 3.19 crashes in
/// the `async main` entry (it drains the main queue with dispatch_main), and callgrind is how the
/// benchmarks' hotspots are found.
public func runMain(_ run: @escaping @Sendable ([String]) async -> Int32) -> Never {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let parked = DispatchSemaphore(value: 0)
    Task.detached {
        exit(await run(arguments))
    }
    parked.wait()
    fatalError("unreachable")
}

/// A benchmark's command line, parsed by ArgumentParser: its options and flags, and the
/// settings of one run they give.
public protocol BenchmarkArguments: ParsableCommand {
    /// What one run uses.
    associatedtype Settings: Sendable
    /// The run's settings from the parsed arguments (defaults filled in, paths made absolute).
    func settings() -> Settings
}

/// The options of a benchmark that measures a service it starts on a private bus.
public struct ServiceRunOptions: ParsableArguments {
    @Option(help: "Also write the figures as JSON to this file.")
    public var json: String?

    @Flag(
        inversion: .prefixedNo,
        help: "Pin the benchmark, the bus and the processes measured to one CPU (steadier figures).")
    public var pin = true

    @Flag(help: "A short smoke run (the discussion above says what it shortens).")
    public var quick = false

    public init() {}
}

/// The whole entry point of a benchmark executable, shared so the benchmarks behave alike:
/// `NAME serve --address ADDRESS` runs `serve`, the service the benchmark starts in a child
/// process; any other arguments are parsed as `Arguments` and their settings handed to `run`,
/// whose result is the exit status. Bad usage exits 64 with ArgumentParser's message, `--help`
/// 0; a failing service exits 1.
public func benchmarkMain<Arguments: BenchmarkArguments>(
    name: String, arguments: Arguments.Type,
    serve: (@Sendable (_ address: String) async throws -> Void)? = nil,
    run: @escaping @Sendable (Arguments.Settings) async -> Int32
) -> Never {
    let commandLine = Array(CommandLine.arguments.dropFirst())
    if let serve, commandLine.first == "serve" {
        runMain { arguments in
            guard arguments.count == 3, arguments[1] == "--address" else {
                writeError("usage: \(name) serve --address ADDRESS\n")
                return 64
            }
            do { try await serve(arguments[2]) } catch {
                writeError("\(name) serve: \(error)\n")
                return 1
            }
            return 0
        }
    }
    // Parsed before the run starts, on the main thread: ArgumentParser exits by itself.
    let settings = Arguments.parseOrExit(commandLine).settings()
    runMain { _ in await run(settings) }
}

/// Times `iterations` calls of `roundTrip(kind)` for each of `kinds` kinds: batches of `batch`
/// calls of one kind in turn, the order rotating every round, so that every kind sees the same
/// machine conditions and none always follows another. Returns nanoseconds per call, by kind.
public func interleavedSamples(
    kinds: Int, iterations: Int, batch: Int, _ roundTrip: (Int) async throws -> Void
) async rethrows -> [[UInt64]] {
    var samples = (0..<kinds).map { _ in [UInt64]() }
    for index in samples.indices { samples[index].reserveCapacity(iterations) }
    var round = 0
    while samples[0].count < iterations {
        let count = min(batch, iterations - samples[0].count)
        for offset in 0..<kinds {
            let kind = (offset + round) % kinds
            for _ in 0..<count {
                let start = monotonicNanoseconds()
                try await roundTrip(kind)
                samples[kind].append(monotonicNanoseconds() - start)
            }
        }
        round += 1
    }
    return samples
}

/// What a benchmark runs against: a private bus and this executable started as its service.
public struct ServiceHarness: Sendable {
    public let bus: PrivateBus
    /// `<this executable> serve --address ADDRESS`, not yet known to be ready.
    public let service: ChildProcess
    /// The CPU that the benchmark, the bus and the service share, if pinned.
    public let pinnedCPU: Int?

    /// Pins this process to the last allowed CPU if `pin` (before the bus and the service start,
    /// so that they inherit it), starts a private bus and `<this executable> serve --address
    /// ADDRESS` with `serviceEnvironment` added, and runs `body`. Afterwards closes the service's
    /// stdin (it then exits by itself, see ``System/exitWhenStdinCloses()``), kills it if it takes
    /// longer than `exitTimeout`, and stops the bus.
    ///
    /// Returns `body`'s status; 2 (with the error on stderr, prefixed by `program`) if anything
    /// failed or the bus daemon is still there at the end.
    public static func run(
        program: String, pin: Bool, serviceEnvironment: [String: String] = [:],
        exitTimeout: Duration = .seconds(5), _ body: (ServiceHarness) async throws -> Int32
    ) async -> Int32 {
        var pinnedCPU: Int?
        if pin, let cpu = System.allowedCPUs().last {
            if System.pinProcess(to: cpu) {
                pinnedCPU = cpu
            } else {
                writeError("\(program): could not pin to CPU \(cpu)\n")
            }
        }
        let bus: PrivateBus
        do { bus = try await PrivateBus.start() } catch {
            writeError("\(program): could not start a private bus: \(error)\n")
            return 2
        }
        var status: Int32 = 2
        var service: ChildProcess?
        do {
            var environment = bus.environment
            environment.merge(serviceEnvironment) { $1 }
            service = try ChildProcess.spawn(
                System.executablePath(), ["serve", "--address", bus.address], environment: environment)
            status = try await body(ServiceHarness(bus: bus, service: service!, pinnedCPU: pinnedCPU))
        } catch {
            writeError("\(program): \(error)\n")
            if let service, !service.capturedStderr.isEmpty {
                writeError("service stderr:\n\(service.capturedStderr)\n")
            }
        }
        if let service {
            // End of file on its stdin makes the service exit by itself (so a profiler can write
            // its data); killed if it takes too long.
            service.closeStdin()
            _ = try? await service.waitForExit(timeout: exitTimeout)
            service.kill()
            _ = await service.waitForExit()
        }
        await bus.stop()
        if kill(bus.daemonPID, 0) == 0 || errno != ESRCH {
            writeError("\(program): the bus daemon (pid \(bus.daemonPID)) is still there\n")
            return 2
        }
        return status
    }
}

