import ArgumentParser
import BenchmarkSupport
import Glibc

/// `DaemonBenchmark [--daemon PATH] [--media DIR] [--regenerate] [--json PATH] [--starts N]
/// [--plays N] [--quick]`: the mpris-bridge daemon's indexing speed, start-up time, memory,
/// idle wake-ups and time to play.
@main
struct Main {
    static func main() {
        benchmarkMain(name: "DaemonBenchmark", arguments: Arguments.self, run: { await Benchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "DaemonBenchmark",
        abstract: "Measures the mpris-bridge daemon (its release build).",
        discussion: """
            Each part against a private dbus-daemon it starts and kills itself: cold indexing of \
            generated 2,000-file libraries and an unchanged rescan; exec -> bus name owned and exec -> \
            ready with a 10,000-track index; resident memory idle and playing; CPU time and context \
            switches while idle and paused; "play" -> first buffer at the sink, in process and over \
            D-Bus. Exits 1 when a regression threshold is exceeded, 2 when the run fails.
            """)

    @Option(help: "The mpris-bridge executable (default: ../.build/release/mpris-bridge).")
    var daemon: String?

    @Option(
        name: .customLong("media"),
        help: "Where the generated libraries are kept between runs (default: Benchmarks/.build/daemon-benchmark, about 530 MB).")
    var mediaDirectory: String?

    @Flag(help: "Generate the libraries and the 10,000-track index again.")
    var regenerate = false

    @Option(help: "Also write the figures as JSON to this file.")
    var json: String?

    @Option(help: "Timed daemon starts of each kind (default 20, 5 with --quick).")
    var starts: Int?

    @Option(help: "Timed plays, in process and over D-Bus (default 30, 10 with --quick).")
    var plays: Int?

    @Flag(help: "A short smoke run: 5 starts, 10 plays, 1 cold scan per library, 2 s activity windows.")
    var quick = false

    func validate() throws {
        if let starts, starts <= 0 { throw ValidationError("--starts must be positive") }
        if let plays, plays <= 0 { throw ValidationError("--plays must be positive") }
    }

    func settings() -> Options {
        var options = Options()
        let cwd = currentDirectory()
        func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : cwd + "/" + path }
        if let daemon { options.daemon = absolute(daemon) }
        if let mediaDirectory { options.mediaDirectory = absolute(mediaDirectory) }
        options.regenerate = regenerate
        options.jsonPath = json
        if quick {
            options.starts = 5
            options.fillingStarts = 2
            options.coldScans = 1
            options.rescans = 2
            options.plays = 10
            options.activityWindow = .seconds(2)
            options.playingTime = .seconds(2)
            // Not shorter: the daemon gives back its memory 0.5 s after it became ready or
            // paused, releases the audio output 1 s after a pause and gives back again 0.6 s
            // later (mpris-bridge's `ResidentMemory`), and the memory and the quiet windows are
            // read after that. Not 2 s either: Swift's pool threads woke 2-4 times between 2 s
            // and 4 s after a pause (with or without the release), and not from 3 s on.
            options.settleTime = .seconds(3)
        }
        if let starts { options.starts = starts }
        if let plays { options.plays = plays }
        return options
    }
}

/// What one run uses.
struct Options: Sendable {
    /// The release build of the daemon.
    var daemon = Options.packageFolder + "/../.build/release/mpris-bridge"
    /// Where the generated music is cached between runs.
    var mediaDirectory = Options.packageFolder + "/.build/daemon-benchmark"
    var regenerate = false
    var jsonPath: String?
    /// Timed starts of each kind (bus name, ready with a restored queue).
    var starts = 20
    /// Starts with an empty state folder (the queue filled from the index), timed separately.
    var fillingStarts = 5
    /// Cold scans of each 2,000-file library (the median is reported) and unchanged rescans.
    var coldScans = 3
    var rescans = 5
    /// Timed "play" calls, in process and over D-Bus.
    var plays = 30
    /// How long CPU time and context switches are counted while idle and while paused.
    var activityWindow: Duration = .seconds(5)
    /// How long the daemon plays before its memory is read.
    var playingTime: Duration = .seconds(3)
    /// A pause between a change (ready, pause) and a measurement of the state it led to: what
    /// the daemon does once quiet is over 1.6 s after a pause (see `--quick`'s).
    var settleTime: Duration = .seconds(3)

    /// Benchmarks/, from this file's path.
    static let packageFolder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()
}
