import BenchmarkSupport
import Glibc

/// `DaemonBenchmark [--daemon PATH] [--media DIR] [--regenerate] [--json PATH] [--starts N]
/// [--plays N] [--quick]`: the mpris-bridge daemon's indexing speed, start-up time, memory,
/// idle wake-ups and time to play.
@main
struct Main {
    static func main() {
        benchmarkMain(name: "DaemonBenchmark", options: Options.self, run: { await Benchmark(options: $0).run() })
    }
}

struct Options: BenchmarkOptions {
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
    /// A pause between a change (ready, pause) and a measurement of the state it led to.
    var settleTime: Duration = .seconds(1)
    var help = false

    /// Benchmarks/, from this file's path.
    static let packageFolder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    static let usage = """
        usage: DaemonBenchmark [--daemon PATH] [--media DIR] [--regenerate] [--json PATH] [--starts N]
                               [--plays N] [--quick]

        Measures the mpris-bridge daemon (its release build), each part against a private
        dbus-daemon it starts and kills itself: cold indexing of generated 2,000-file libraries and
        an unchanged rescan; exec -> bus name owned and exec -> ready with a 10,000-track index;
        resident memory idle and playing; CPU time and context switches while idle and paused;
        "play" -> first buffer at the sink, in process and over D-Bus. Exits 1 when a regression
        threshold is exceeded, 2 when the run fails.

          --daemon PATH     the mpris-bridge executable (default: ../.build/release/mpris-bridge)
          --media DIR       where the generated libraries are kept between runs
                            (default: Benchmarks/.build/daemon-benchmark, about 530 MB)
          --regenerate      generate the libraries and the 10,000-track index again
          --json PATH       also write the figures as JSON to PATH
          --starts N        timed daemon starts of each kind (default 20)
          --plays N         timed plays, in process and over D-Bus (default 30)
          --quick           a short smoke run (5 starts, 10 plays, 1 cold scan per library,
                            2 s activity windows)
        """

    init(_ arguments: [String]) throws {
        var remaining = ArgumentReader(arguments)
        var starts: Int?
        var plays: Int?
        while let argument = remaining.next() {
            switch argument {
            case "--daemon": daemon = try remaining.value(for: argument)
            case "--media": mediaDirectory = try remaining.value(for: argument)
            case "--regenerate": regenerate = true
            case "--json": jsonPath = try remaining.value(for: argument)
            case "--starts": starts = try remaining.count(for: argument)
            case "--plays": plays = try remaining.count(for: argument)
            case "--quick":
                self.starts = 5
                fillingStarts = 2
                coldScans = 1
                rescans = 2
                self.plays = 10
                activityWindow = .seconds(2)
                playingTime = .seconds(2)
                settleTime = .milliseconds(500)
            case "-h", "--help": help = true
            default: throw UsageError(description: "unknown argument '\(argument)'")
            }
        }
        if let starts { self.starts = starts }
        if let plays { self.plays = plays }
        if !mediaDirectory.hasPrefix("/") || !daemon.hasPrefix("/") {
            let cwd = currentDirectory()
            if !mediaDirectory.hasPrefix("/") { mediaDirectory = cwd + "/" + mediaDirectory }
            if !daemon.hasPrefix("/") { daemon = cwd + "/" + daemon }
        }
    }
}
