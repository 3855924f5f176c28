import ArgumentParser
import BenchmarkSupport
import Glibc

/// `PeerBenchmark [--daemon PATH] [--players LIST] [--starts N] [--iterations N] [--toggles N]
/// [--window S] [--clients N] [--json PATH] [--quick]`: the daemon beside its peers (VLC, mpd +
/// mpDris2, Mopidy + mopidy-mpris, mpv + mpv-mpris), each in turn on one private bus and one
/// private PulseAudio, measured by the same client.
@main
struct Main {
    static func main() {
        benchmarkMain(name: "PeerBenchmark", arguments: Arguments.self, run: { await PeerBenchmark(options: $0).run() })
    }
}

struct Arguments: BenchmarkArguments {
    static let configuration = CommandConfiguration(
        commandName: "PeerBenchmark",
        abstract: "Measures the mpris-bridge daemon beside VLC, mpd + mpDris2, Mopidy and mpv.",
        discussion: """
            One private dbus-daemon and one private PulseAudio (a null sink) for the whole run, a \
            generated 12-track library; each player runs on them in turn, never two at once, and is \
            killed by pid afterwards. For every player: exec -> its MPRIS bus name owned (median of \
            the starts), GetAll(Player) and Peer.Ping round trips (interleaved, same client), \
            PlayPause -> the PropertiesChanged carrying PlaybackStatus (at this caller, at \
            SignalWatcher, which only listens, and at ShellCaller, a GDBus caller), RSS paused, \
            CPU and context switches while playing and the sound server's CPU over the same \
            window, two PlayPause sent at once by one client and one PlayPause from each of many \
            clients at once. A peer that is not installed or cannot run is reported as missing. \
            Exits 1 when a goal (Thresholds/PeerBenchmark.json) is missed, 2 when the run fails.
            """)

    @Option(help: "The mpris-bridge executable (default: ../.build/release/mpris-bridge).")
    var daemon: String?

    @Option(help: "Only these players, comma-separated (mpris-bridge,vlc,mpd,mopidy,mpv; default all).")
    var players: String?

    @Option(help: "Timed starts per player (default 5, 3 with --quick).")
    var starts: Int?

    @Option(help: "Timed GetAll and Ping round trips of each kind per player (default 1000, 200 with --quick).")
    var iterations: Int?

    @Option(help: "Timed PlayPause toggles per player (default 60, 16 with --quick).")
    var toggles: Int?

    @Option(help: "Milliseconds between one toggle's signal and the next toggle (default 250).")
    var toggleGap: Int?

    @Option(help: "Seconds of the playing window (default 10, 4 with --quick).")
    var window: Int?

    @Option(help: "Clients that send PlayPause at once (default 50).")
    var clients: Int?

    @Option(help: "Where the generated library is kept (default: Benchmarks/.build/peer-benchmark).")
    var media: String?

    @Option(help: "Also write the figures as JSON to this file.")
    var json: String?

    @Flag(help: "A short smoke run: 3 starts, 200 round trips, 16 toggles, a 4 s window.")
    var quick = false

    func validate() throws {
        for (name, value) in [
            ("starts", starts), ("iterations", iterations), ("toggles", toggles), ("window", window),
            ("clients", clients), ("toggle-gap", toggleGap),
        ] {
            if let value, value <= 0 { throw ValidationError("--\(name) must be positive") }
        }
        if let players {
            for name in players.split(separator: ",") where PlayerKind(rawValue: String(name)) == nil {
                throw ValidationError("--players: no player named '\(name)'")
            }
        }
    }

    func settings() -> Options {
        var options = Options()
        let cwd = currentDirectory()
        func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : cwd + "/" + path }
        if let daemon { options.daemon = absolute(daemon) }
        if let media { options.media = absolute(media) }
        options.jsonPath = json
        if quick { (options.starts, options.iterations, options.toggles, options.window) = (3, 200, 16, 4) }
        if let starts { options.starts = starts }
        if let iterations { options.iterations = iterations }
        if let toggles { options.toggles = toggles }
        if let window { options.window = window }
        if let toggleGap { options.toggleGap = toggleGap }
        if let clients { options.clients = clients }
        if let players { options.players = players.split(separator: ",").compactMap { PlayerKind(rawValue: String($0)) } }
        return options
    }
}

struct Options: Sendable {
    var daemon = Options.packageFolder + "/../.build/release/mpris-bridge"
    var media = Options.packageFolder + "/.build/peer-benchmark"
    var jsonPath: String?
    var players = PlayerKind.allCases
    var starts = 5
    var iterations = 1000
    var toggles = 60
    var window = 10
    /// Milliseconds between one toggle's signal and the next toggle.
    var toggleGap = 250
    var clients = 50
    /// Rounds of the double tap (two PlayPause at once from one client).
    var doubleTaps = 5
    /// Benchmarks/, from this file's path.
    static let packageFolder: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path
    }()
}
