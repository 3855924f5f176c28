import ArgumentParser
import BenchmarkSupport
import Glibc

/// `ScaleBenchmark [--daemon PATH] [--tracks N] [--folder DIR] [--json PATH] [--quick]`: the
/// mpris-bridge daemon on a generated library of N tracks, its figures beside the goals.
@main
struct Main {
    static func main() {
        benchmarkMain(name: "ScaleBenchmark", arguments: Arguments.self) { await ScaleBenchmark(options: $0).run() }
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "ScaleBenchmark",
        abstract: "Measures the mpris-bridge daemon on a generated library of N tagged tracks.",
        discussion: """
            Generates the library once (kept in --folder and reused), then, with the daemon on a private \
            dbus-daemon: a cold index and an unchanged one, exec -> bus name and -> tree ready on a fresh \
            state and on a restart with the queue restored, RSS idle, after a walk of the whole tree, while \
            playing and after the restart, bytes written per track change, the walk's time and page \
            latencies, a search, TrackList.Tracks, and 1,000 added files until the tree shows them. Prints \
            each figure beside its goal. Exits 1 when a goal is missed, 2 when the run fails.
            """)

    @Option(help: "The mpris-bridge executable, a release build.")
    var daemon: String = Arguments.packageFolder + "/../.build/release/mpris-bridge"

    @Option(help: "How many tracks the library has.")
    var tracks = 50_000

    @Option(help: "Where the generated library is kept between runs (default: Benchmarks/.build/scale-N).")
    var folder: String?

    @Option(help: "Also write the figures as JSON to this file.")
    var json: String?

    @Flag(help: "A shorter run: 3 track changes and 2 searches instead of 20 and 5, shorter pauses.")
    var quick = false

    func validate() throws {
        guard tracks >= ScaleLibrary.tracksPerAlbum else {
            throw ValidationError("--tracks must be at least \(ScaleLibrary.tracksPerAlbum)")
        }
    }

    /// Benchmarks/, from this file's path.
    static let packageFolder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()

    /// The paths made absolute, the defaults that depend on N filled in.
    func settings() -> Settings {
        let cwd = currentDirectory()
        func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : cwd + "/" + path }
        return Settings(
            daemon: absolute(daemon), tracks: tracks,
            folder: absolute(folder ?? Arguments.packageFolder + "/.build/scale-\(tracks)"), jsonPath: json.map(absolute),
            trackChanges: quick ? 3 : 20, searches: quick ? 2 : 5, settleTime: quick ? .milliseconds(500) : .seconds(2))
    }
}

/// What one run uses, resolved from the options.
struct Settings: Sendable {
    var daemon: String
    var tracks: Int
    var folder: String
    var jsonPath: String?
    /// `Player.Next` calls whose writes are counted.
    var trackChanges: Int
    /// Timed `SearchObjects` calls (the first is reported apart: it may read what the others reuse).
    var searches: Int
    /// A pause before memory is read, so that what a change started (a save, a free) is done.
    var settleTime: Duration
}
