import DBusTestSupport
import Dispatch
import Glibc

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

/// A benchmark's command-line options.
public protocol BenchmarkOptions: SendableMetatype {
    /// Parses the arguments; throws a ``UsageError`` for bad ones.
    init(_ arguments: [String]) throws
    /// The usage text, printed for `-h` and after a usage error.
    static var usage: String { get }
    /// Whether `-h`/`--help` was given.
    var help: Bool { get }
}

/// The whole entry point of a benchmark executable, shared so the two benchmarks behave alike:
/// `NAME serve --address ADDRESS` runs `serve`, the service the benchmark starts in a child
/// process; any other arguments are parsed as `Options` and handed to `run`, whose result is the
/// exit status. Bad usage exits 64 with the usage text; a failing service exits 1.
public func benchmarkMain<Options: BenchmarkOptions>(
    name: String, options: Options.Type,
    serve: @escaping @Sendable (_ address: String) async throws -> Void,
    run: @escaping @Sendable (Options) async -> Int32
) -> Never {
    runMain { arguments in
        if arguments.first == "serve" {
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
        return await parseAndRun(name: name, arguments, run)
    }
}

/// The entry point of a benchmark that starts no service of its own (it measures other
/// programs): the arguments are parsed as `Options` and handed to `run`, whose result is the
/// exit status. Bad usage exits 64 with the usage text.
public func benchmarkMain<Options: BenchmarkOptions>(
    name: String, options: Options.Type, run: @escaping @Sendable (Options) async -> Int32
) -> Never {
    runMain { arguments in await parseAndRun(name: name, arguments, run) }
}

private func parseAndRun<Options: BenchmarkOptions>(
    name: String, _ arguments: [String], _ run: @Sendable (Options) async -> Int32
) async -> Int32 {
    let parsed: Options
    do { parsed = try Options(arguments) } catch {
        writeError("\(name): \(error)\n\n\(Options.usage)\n")
        return 64
    }
    if parsed.help {
        print(Options.usage)
        return 0
    }
    return await run(parsed)
}

public struct UsageError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Reads command-line arguments one by one, with the values of options.
public struct ArgumentReader {
    private var remaining: ArraySlice<String>

    public init(_ arguments: [String]) { remaining = arguments[...] }

    public mutating func next() -> String? { remaining.popFirst() }

    /// The value after `flag`.
    public mutating func value(for flag: String) throws -> String {
        guard let value = remaining.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
        return value
    }

    /// The positive number after `flag`.
    public mutating func count(for flag: String) throws -> Int {
        let text = try value(for: flag)
        guard let number = Int(text), number > 0 else {
            throw UsageError(description: "\(flag) needs a positive number, not '\(text)'")
        }
        return number
    }
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

/// SplitMix64: reproducible offsets without Foundation.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
