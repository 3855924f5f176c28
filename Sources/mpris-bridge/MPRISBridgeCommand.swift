import ArgumentParser
import CMalloc
import DBus
import Logging
import MPD
import MediaRemote
import MusicLibrary
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

@main
struct MPRISBridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpris-bridge",
        abstract: "Plays a music folder and serves it to media keys, playerctl, desktops and head units over MPRIS.",
        version: Version.current,
        subcommands: [Serve.self, Scan.self],
        defaultSubcommand: Serve.self)

    /// An ordinary start (`serve`'s options, all valid) is parsed without ArgumentParser, which
    /// would cost about a millisecond before the bus name (``ServeOptions``); anything else is
    /// ArgumentParser's, as it always was: help, completions, `scan`, errors and their messages.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let options = ServeOptions(quickParsing: arguments), (try? options.validate()) != nil else {
            return await main(arguments)
        }
        do {
            try await options.run()
        } catch {
            exit(withError: error)
        }
    }
}

/// Options every subcommand shares: which library, and where its index lives.
struct LibraryOptions: ParsableArguments {
    @Option(help: "The music folder (default: the XDG music directory, usually ~/Music).")
    var library: String?

    @Option(help: "Where the index and artwork are cached (default: $XDG_CACHE_HOME/mpris-bridge).")
    var cacheDir: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func libraryPath(_ paths: Paths) -> String { absolute(library ?? paths.musicDirectory) }
    func cachePath(_ paths: Paths) -> String { absolute(cacheDir ?? paths.cacheDirectory) }

    func makeLogger() -> Logger { mpris_bridge.makeLogger(level: logLevel) }
}

/// The daemon's logger, to stderr at `level` and above, each label's lines rate-limited.
func makeLogger(level: Logger.Level) -> Logger {
    let budget = RateLimitedLogHandler.Budget()
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return RateLimitedLogHandler(handler, budget: budget)
    }
    return Logger(label: "mpris-bridge")
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension BusKind: ExpressibleByArgument {}

/// A path made absolute against the working directory, so the child scanner and the index agree.
func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    return FileManager.default.currentDirectoryPath + "/" + path
}

struct Serve: AsyncParsableCommand {
    // Named here: ArgumentParser otherwise derives the name from the type's by reflection, at
    // every start (Benchmarks/README.md, "Start-up: exec → bus name").
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the library as an MPRIS player (the default).")

    /// The defaults shown in the help: ``ServeOptions``'s.
    private static let defaults = ServeOptions()

    @OptionGroup var libraryOptions: LibraryOptions

    @Option(
        help:
            "The player's name: the bus names are org.mpris.MediaPlayer2.<name> (…<name>.instance<pid> when taken) and org.gnome.UPnP.MediaServer2.<name>."
    )
    var name = defaults.name

    @Option(help: "The message bus: session or system (there, OpenUri and AddTrack open only files inside the library).")
    var bus: BusKind = defaults.bus

    @Option(
        help:
            "The audio output, as a gst-launch-1.0 description: \"pulsesink device=…\" for one output, \"fakesink sync=true\" with no sound card."
    )
    var audioSink = defaults.audioSink

    @Option(
        help: ArgumentHelp(
            "ReplayGain: off, track or album (kept across restarts; remotes may change it). Default: the saved mode, else off.",
            valueName: "mode"))
    var replayGain: String?

    @Option(help: "Where the queue and position are saved (default: $XDG_STATE_HOME/mpris-bridge).")
    var stateDir: String?

    @Flag(
        help:
            "Register the player with BlueZ (org.bluez.Media1) on every Bluetooth adapter on the system bus, so a car shows it without mpris-proxy."
    )
    var bluetooth = defaults.bluetooth

    @Flag(help: "Do not rescan the library at start (use the index as it is).")
    var noScan = defaults.noScan

    @Flag(help: "Do not follow changes in the music folder (a Rescan, or mpris-bridge scan, shows them).")
    var noWatch = defaults.noWatch

    @Option(
        help: ArgumentHelp(
            "The media tree's tabs: full (Artists, Albums, Tracks, Playlists, Folders, Recent) or car (Recent, Artists, Albums, Playlists, with a car's limits: 4 tabs, and while driving 21 rows, 3 levels, 120 characters).",
            valueName: "layout"))
    var treeLayout: LibraryContent.Layout = defaults.treeLayout

    @Flag(help: "Exit at once, successfully, when a player of this name already serves on the bus (the desktop entry's Exec).")
    var unlessRunning = defaults.unlessRunning

    @Option(
        help: ArgumentHelp(
            "The most rows of the media tree kept in memory (at least 100); containers browsed least recently are read again from the index when reached.",
            valueName: "rows"))
    var treeCacheRows = defaults.treeCacheRows

    @Option(
        help: ArgumentHelp(
            "Tracks longer than this remember where they were left and resume there: seconds, or a length such as 20m, 1h30m or 90s; 0 or off: length alone does not.",
            valueName: "length"))
    var resumeLongerThan = defaults.resumeLongerThan

    @Option(
        help: ArgumentHelp(
            "The tracks below this folder of the library (absolute, or relative to it) remember where they were left. Repeatable.",
            valueName: "folder"))
    var resumeFolder: [String] = []

    @Option(
        help: ArgumentHelp(
            "Tracks of this genre (any case) remember where they were left. Repeatable; replaces the defaults (\(ResumePolicy.defaultGenres.joined(separator: ", "))); off: no genre does.",
            valueName: "genre"))
    var resumeGenre: [String] = []

    @Flag(help: "Do not serve MPD clients (mpc, phone apps, head units, Home Assistant, Snapcast).")
    var noMpd = defaults.noMpd

    @Option(help: ArgumentHelp("The MPD port (0: any free port, which the log names).", valueName: "port"))
    var mpdPort = defaults.mpdPort

    @Option(
        help: ArgumentHelp(
            "The address MPD clients connect to; loopback unless you mean to be reached from the network.",
            valueName: "address"))
    var mpdBind = defaults.mpdBind

    @Option(
        help: ArgumentHelp(
            "The MPD Unix socket (default: $XDG_RUNTIME_DIR/mpris-bridge/mpd.socket).", valueName: "path"))
    var mpdSocket: String?

    @Option(
        help: ArgumentHelp(
            "A file of MPD passwords, one per line as mpd's config has them (secret@read,add,control,admin, or a bare secret for all); clients without one may do nothing. Keep it unreadable by others.",
            valueName: "file"))
    var mpdPasswordFile: String?

    /// The options' values, for ``ServeOptions``'s checks and start.
    var options: ServeOptions {
        var options = ServeOptions()
        options.library = libraryOptions.library
        options.cacheDir = libraryOptions.cacheDir
        options.logLevel = libraryOptions.logLevel
        options.name = name
        options.bus = bus
        options.audioSink = audioSink
        options.replayGain = replayGain
        options.stateDir = stateDir
        options.bluetooth = bluetooth
        options.noScan = noScan
        options.noWatch = noWatch
        options.treeLayout = treeLayout
        options.unlessRunning = unlessRunning
        options.treeCacheRows = treeCacheRows
        options.resumeLongerThan = resumeLongerThan
        options.resumeFolder = resumeFolder
        options.resumeGenre = resumeGenre
        options.noMpd = noMpd
        options.mpdPort = mpdPort
        options.mpdBind = mpdBind
        options.mpdSocket = mpdSocket
        options.mpdPasswordFile = mpdPasswordFile
        return options
    }

    func validate() throws { try options.validate() }

    func run() async throws { try await options.run() }
}

extension ServeOptions {
    /// Serves until SIGTERM, SIGINT, a remote's Quit or the loss of the bus.
    func run() async throws {
        // glibc gives each thread that allocates an arena of its own, up to 8 per core; the
        // daemon's threads (Swift's pool, GStreamer's streaming threads) then hold memory in
        // many half-empty arenas. Two keep its RSS about 6 MB lower and flat under load (a
        // 100,000-call fuzz run: 47 MB at the end instead of 53).
        _ = mallopt(M_ARENA_MAX, 2)
        // Blocks of 256 KB and more are mapped apart and unmapped when freed. glibc otherwise
        // raises this threshold after each large free, and a client's one big message then
        // leaves its megabytes in the heap for good (a 2.6 MB call: +6 MB kept, 0 with this).
        _ = mallopt(M_MMAP_THRESHOLD, 256 * 1024)
        // Fixing that threshold also fixes the trim threshold at 128 KB: each page of 100 rows
        // (two buffers of about 110 KB) then gave its memory back with `brk` and faulted it in
        // again, 6 % of the daemon's CPU for a page. The heap's top keeps up to 1 MB; an idle
        // daemon trims it all (`ResidentMemory`).
        _ = mallopt(M_TRIM_THRESHOLD, 1024 * 1024)
        // A write to a pipe or socket whose reader is gone (snapserver restarted under a FIFO
        // sink, a client that hung up) fails with EPIPE, which the writer handles; SIGPIPE's
        // default would end the daemon silently, its state unsaved.
        _ = signal(SIGPIPE, SIG_IGN)
        let logger = makeLogger(level: logLevel)
        do {
            try OpenFileLimit.raise()
            let connection = try await Daemon.connect(bus)
            if unlessRunning, let owner = try await Daemon.runningPlayer(name, on: connection) {
                logger.info("a player named \(name) already serves on this bus (\(owner)); nothing to start")
                connection.close()
                return
            }
            // The name first, the settings and the player made after, with its calls held
            // meanwhile: clients find the player sooner (Benchmarks/README.md, "Start-up: exec →
            // bus name"). Nothing before it looks up a protocol conformance, whose first lookup
            // scans all the binary's (the resume policy's set of genres, a dictionary).
            let playerName = try await Daemon.ownPlayerName(name, on: connection)
            let settings = try settings(logger: logger)
            try await Daemon.serviceGroup(settings: settings, connection: connection, playerName: playerName, logger: logger)
                .run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
    }

    /// What the daemon serves with, from the options and the environment; throws only what
    /// ``validate()`` has checked already.
    private func settings(logger: Logger) throws -> ServeSettings {
        let paths = Paths()
        let library = libraryPath(paths)
        if !isDirectory(library) {
            logger.warning("no music folder at \(library): serving an empty library (pass --library DIR)")
        }
        return ServeSettings(
            library: library, libraryWasGiven: self.library != nil, playerName: name, bus: bus,
            audioSink: audioSink, stateDirectory: absolute(stateDir ?? paths.stateDirectory),
            cacheDirectory: cachePath(paths), scansAtStart: !noScan && isDirectory(library),
            watchesLibrary: !noWatch && isDirectory(library), resumePolicy: try resumePolicy(library: library),
            replayGain: replayGain.flatMap(AudioSession.ReplayGainMode.init(rawValue:)), unlessRunning: unlessRunning,
            treeLayout: treeLayout, treeCacheRows: treeCacheRows, registersWithBluetooth: bluetooth,
            mpd: try mpdSettings(paths))
    }
}

/// A length from the command line: seconds (`1200`, `90.5`), or hours, minutes and seconds
/// (`1h30m`, `20m`, `90s`, `1m30s`); `0` or `off` for none.
struct ResumeLength: ExpressibleByArgument, Equatable, Sendable {
    /// Nil for none.
    var duration: Duration?

    init(_ duration: Duration?) { self.duration = duration }

    init?(argument: String) {
        let text = argument.filter { !$0.isWhitespace }.lowercased()
        if text == "off" || text == "none" {
            duration = nil
            return
        }
        if let seconds = Double(text) {
            guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return nil }
            duration = seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded()))
            return
        }
        var total = Duration.zero
        var number = ""
        var units: [Character] = []
        for character in text {
            if character.isNumber || character == "." {
                number.append(character)
                continue
            }
            let scale: Int64
            switch character {
            case "h": scale = 3600
            case "m": scale = 60
            case "s": scale = 1
            default: return nil
            }
            // Each unit once, largest first, each with a number.
            guard let value = Double(number), value.isFinite, value < 1e9, units.allSatisfy({ "hms".firstIndex(of: $0)! < "hms".firstIndex(of: character)! }) else {
                return nil
            }
            units.append(character)
            total += .milliseconds(Int64((value * Double(scale) * 1000).rounded()))
            number = ""
        }
        guard number.isEmpty, !units.isEmpty else { return nil }
        duration = total == .zero ? nil : total
    }

    var defaultValueDescription: String {
        guard let duration else { return "off" }
        let seconds = duration.components.seconds
        return seconds % 60 == 0 ? "\(seconds / 60)m" : "\(seconds)s"
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Index the library (only what changed since the last scan) and print a summary.")

    @OptionGroup var libraryOptions: LibraryOptions

    @Flag(help: "Print only failures and errors.")
    var quiet = false

    @Option(help: "The name of a running player to tell, once done, so that it shows the changes.")
    var name = "mprisbridge"

    @Flag(help: "Do not tell a running player (the player's own rescans run this way).")
    var noNotify = false

    @Option(help: "The message bus that player serves on: session or system.")
    var bus: BusKind = .session

    func validate() throws {
        if let library = libraryOptions.library, !isDirectory(absolute(library)) {
            throw ValidationError("--library \(library): no such folder")
        }
    }

    func run() async throws {
        let paths = Paths()
        let root = libraryOptions.libraryPath(paths)
        guard isDirectory(root) else { throw ValidationError("no music folder at \(root); pass --library DIR") }
        let cache = libraryOptions.cachePath(paths)
        try makeDirectory(cache)
        let library = try MusicLibrary(
            root: root, indexPath: cache + "/index.sqlite", discoverer: GStreamerFileDiscoverer.factory())
        let progress = quiet ? nil : ProgressLine()
        var report: (@Sendable (ScanProgress) -> Void)?
        if let progress { report = { progress.show($0) } }
        let summary = try await library.scan(progress: report)
        progress?.finish()
        for failure in summary.failures { printError("cannot index \(failure.path): \(failure.reason)") }
        let toldDaemon = noNotify ? false : await tellRunningDaemon()
        guard !quiet else { return }
        let milliseconds = Int(summary.duration / .milliseconds(1))
        let seconds = "\(milliseconds / 1000).\(String(milliseconds % 1000 + 1000).dropFirst())"
        var rate = ""
        if summary.read > 0, milliseconds > 0 { rate = ", \(summary.read * 1000 / milliseconds) files/s" }
        print(
            "\(root): \(try library.trackCount) tracks, \(summary.playlists) playlists. Scan took \(seconds) s"
                + " (\(summary.read) files read\(rate)): \(summary.added) added, \(summary.updated) updated,"
                + " \(summary.removed) removed, \(summary.unchanged) unchanged, \(summary.failures.count) failed")
        if toldDaemon { print("The running mpris-bridge (\(name)) shows the changes.") }
    }

    /// Asks a player serving as `name` to rescan, and waits until its tree shows the changes
    /// (it reads only what this scan did not). Nothing when none is running; a failure is said.
    private func tellRunningDaemon() async -> Bool {
        guard let connection = try? await bus == .system ? Connection.system() : Connection.session() else { return false }
        defer { connection.close() }
        let treeName = "org.gnome.UPnP.MediaServer2.\(name)"
        guard let busName = try? BusName(validating: treeName), (try? await connection.nameOwner(of: busName)) ?? nil != nil,
            let path = try? ObjectPath(validating: "/org/gnome/UPnP/MediaServer2/\(name)")
        else { return false }
        let root = Proxy(connection, destination: busName, path: path, interface: "org.mprisbridge.MediaRoot1", timeout: .seconds(600))
        do {
            try await root.call("Rescan") as Void
            return true
        } catch {
            printError("the running mpris-bridge (\(name)) was not told of the changes: \(error)")
            return false
        }
    }
}

/// Scan progress on one terminal line, redrawn at most ten times a second;
/// nothing when stderr is not a terminal.
final class ProgressLine: Sendable {
    private let isTerminal = isatty(2) == 1
    private let lastDrawn = Mutex<ContinuousClock.Instant?>(nil)

    func show(_ progress: ScanProgress) {
        guard isTerminal else { return }
        let now = ContinuousClock.now
        let due = lastDrawn.withLock { last in
            guard last.map({ now - $0 >= .milliseconds(100) }) ?? true || progress.examined == progress.total
            else { return false }
            last = now
            return true
        }
        guard due else { return }
        let width = 60
        let path = progress.currentPath.count > width ? "…" + progress.currentPath.suffix(width - 1) : progress.currentPath
        printError("\r\u{1B}[K[\(progress.examined)/\(progress.total)] \(path)", terminator: "")
    }

    func finish() {
        if isTerminal { printError("\r\u{1B}[K", terminator: "") }
    }
}

/// Writes `text` to stderr, unbuffered, so progress and errors interleave correctly with the log.
func printError(_ text: String, terminator: String = "\n") {
    let line = text + terminator
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

extension LibraryContent.Layout: ExpressibleByArgument {}
