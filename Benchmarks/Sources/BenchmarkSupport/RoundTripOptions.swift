import ArgumentParser

/// The command line of a benchmark that times round trips and PlayPause toggles against
/// players it starts (`MPRISBenchmark`, `MediaPlayerBenchmark`): `--iterations`, `--toggles`
/// and the service options.
public struct RoundTripArguments: ParsableArguments {
    @OptionGroup public var run: ServiceRunOptions

    @Option(help: "Timed round trips of each kind.")
    public var iterations = 10_000

    @Option(help: "Timed PlayPause toggles (of each player).")
    public var toggles = 2_000

    public init() {}

    public func validate() throws {
        guard iterations > 0, toggles > 0 else { throw ValidationError("--iterations and --toggles must be positive") }
    }

    /// The run's settings: `--quick` makes a short smoke run (1,000 round trips, 500 toggles).
    public func settings() -> RoundTripOptions {
        var options = RoundTripOptions()
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

/// What one run of a round-trip benchmark uses.
public struct RoundTripOptions: Sendable {
    public var jsonPath: String?
    /// Timed round trips of each kind.
    public var iterations = 10_000
    /// Untimed round trips of each kind first.
    public var warmUp = 1_000
    /// Round trips (or toggles) of one kind in a row before switching to the next kind.
    public var batch = 100
    /// Timed PlayPause toggles, after `toggleWarmUp` untimed ones.
    public var toggles = 2_000
    public var toggleWarmUp = 200
    /// Pin the benchmark, the bus and the processes measured to one CPU.
    public var pin = true

    public init() {}
}
