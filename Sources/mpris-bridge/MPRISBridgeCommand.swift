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

    func makeLogger() -> Logger {
        let level = logLevel
        let budget = RateLimitedLogHandler.Budget()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return RateLimitedLogHandler(handler, budget: budget)
        }
        return Logger(label: "mpris-bridge")
    }
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

    @OptionGroup var libraryOptions: LibraryOptions

    @Option(
        help:
            "The player's name: the bus names are org.mpris.MediaPlayer2.<name> (…<name>.instance<pid> when taken) and org.gnome.UPnP.MediaServer2.<name>."
    )
    var name = "mprisbridge"

    @Option(help: "The message bus: session or system (there, OpenUri and AddTrack open only files inside the library).")
    var bus: BusKind = .session

    @Option(
        help:
            "The audio output, as a gst-launch-1.0 description: \"pulsesink device=…\" for one output, \"fakesink sync=true\" with no sound card."
    )
    var audioSink = "autoaudiosink"

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
    var bluetooth = false

    @Flag(help: "Do not rescan the library at start (use the index as it is).")
    var noScan = false

    @Flag(help: "Do not follow changes in the music folder (a Rescan, or mpris-bridge scan, shows them).")
    var noWatch = false

    @Option(
        help: ArgumentHelp(
            "The media tree's tabs: full (Artists, Albums, Tracks, Playlists, Folders, Recent) or car (Recent, Artists, Albums, Playlists, with a car's limits: 4 tabs, and while driving 21 rows, 3 levels, 120 characters).",
            valueName: "layout"))
    var treeLayout: LibraryContent.Layout = .full

    @Flag(help: "Exit at once, successfully, when a player of this name already serves on the bus (the desktop entry's Exec).")
    var unlessRunning = false

    @Option(
        help: ArgumentHelp(
            "The most rows of the media tree kept in memory (at least 100); containers browsed least recently are read again from the index when reached.",
            valueName: "rows"))
    var treeCacheRows = ServeSettings.defaultTreeCacheRows

    @Option(
        help: ArgumentHelp(
            "Tracks longer than this remember where they were left and resume there: seconds, or a length such as 20m, 1h30m or 90s; 0 or off: length alone does not.",
            valueName: "length"))
    var resumeLongerThan = ResumeLength(ResumePolicy.defaultMinimumDuration)

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
    var noMpd = false

    @Option(help: ArgumentHelp("The MPD port (0: any free port, which the log names).", valueName: "port"))
    var mpdPort = 6600

    @Option(
        help: ArgumentHelp(
            "The address MPD clients connect to; loopback unless you mean to be reached from the network.",
            valueName: "address"))
    var mpdBind = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "The MPD Unix socket (default: $XDG_RUNTIME_DIR/mpris-bridge/mpd.socket).", valueName: "path"))
    var mpdSocket: String?

    @Option(
        help: ArgumentHelp(
            "A file of MPD passwords, one per line as mpd's config has them (secret@read,add,control,admin, or a bare secret for all); clients without one may do nothing. Keep it unreadable by others.",
            valueName: "file"))
    var mpdPasswordFile: String?

    func validate() throws {
        if !(0...65535).contains(mpdPort) { throw ValidationError("--mpd-port \(mpdPort): 0 to 65535") }
        if let mpdPasswordFile { _ = try MPDServerConfiguration.load(passwordFile: absolute(mpdPasswordFile)) }
        let valid = !name.isEmpty && name.first.map { !$0.isNumber } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        guard valid else {
            throw ValidationError("--name must be letters, digits, _ or -, not starting with a digit: \"\(name)\"")
        }
        if let library = libraryOptions.library, !isDirectory(absolute(library)) {
            throw ValidationError("--library \(library): no such folder")
        }
        if let replayGain, AudioSession.ReplayGainMode(rawValue: replayGain) == nil {
            throw ValidationError("--replay-gain \"\(replayGain)\": off, track or album")
        }
        if treeCacheRows < 100 {
            throw ValidationError("--tree-cache-rows \(treeCacheRows): at least 100")
        }
        if let empty = resumeGenre.first(where: { $0.allSatisfy(\.isWhitespace) }) {
            throw ValidationError("--resume-genre \"\(empty)\": a genre needs a name (or off)")
        }
        _ = try resumePolicy(library: libraryOptions.libraryPath(Paths()))
    }

    /// The MPD face's settings, from the options; nil with `--no-mpd`.
    func mpdSettings(_ paths: Paths) throws -> MPDSettings? {
        guard !noMpd else { return nil }
        var server = MPDServerConfiguration()
        server.tcpHost = mpdBind
        server.tcpPort = mpdPort
        server.unixSocketPath = mpdSocket.map(absolute) ?? paths.runtimeDirectory.map { $0 + "/mpd.socket" }
        if let mpdPasswordFile { server.passwords = try MPDServerConfiguration.load(passwordFile: absolute(mpdPasswordFile)) }
        return MPDSettings(server: server)
    }

    /// Which tracks resume, from the options; a folder outside the library is an error.
    func resumePolicy(library: String) throws -> ResumePolicy {
        let genres =
            resumeGenre.isEmpty
            ? ResumePolicy.defaultGenres : resumeGenre.filter { $0.lowercased() != "off" }
        do {
            return try ResumePolicy(
                minimumDuration: resumeLongerThan.duration, folders: resumeFolder, genres: genres, in: library)
        } catch MusicLibraryError.folderOutsideLibrary(let folder) {
            throw ValidationError("--resume-folder \(folder): not a folder of the library \(library)")
        }
    }

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
        // A write to a pipe or socket whose reader is gone (snapserver restarted under a FIFO
        // sink, a client that hung up) fails with EPIPE, which the writer handles; SIGPIPE's
        // default would end the daemon silently, its state unsaved.
        _ = signal(SIGPIPE, SIG_IGN)
        let paths = Paths()
        let logger = libraryOptions.makeLogger()
        let library = libraryOptions.libraryPath(paths)
        if !isDirectory(library) {
            logger.warning("no music folder at \(library): serving an empty library (pass --library DIR)")
        }
        let settings = ServeSettings(
            library: library, libraryWasGiven: libraryOptions.library != nil, playerName: name, bus: bus,
            audioSink: audioSink, stateDirectory: absolute(stateDir ?? paths.stateDirectory),
            cacheDirectory: libraryOptions.cachePath(paths), scansAtStart: !noScan && isDirectory(library),
            watchesLibrary: !noWatch && isDirectory(library), resumePolicy: try resumePolicy(library: library),
            replayGain: replayGain.flatMap(AudioSession.ReplayGainMode.init(rawValue:)), unlessRunning: unlessRunning,
            treeLayout: treeLayout, treeCacheRows: treeCacheRows, registersWithBluetooth: bluetooth,
            mpd: try mpdSettings(paths))
        do {
            let connection = try await Daemon.connect(settings)
            if unlessRunning, let owner = try await Daemon.runningPlayer(settings, on: connection) {
                logger.info("a player named \(name) already serves on this bus (\(owner)); nothing to start")
                connection.close()
                return
            }
            // The name first, the player built after, with its calls held meanwhile: clients
            // find the player sooner (Benchmarks/README.md, "Start-up: exec → bus name").
            let playerName = try await Daemon.ownPlayerName(settings, on: connection)
            try await Daemon.serviceGroup(settings: settings, connection: connection, playerName: playerName, logger: logger)
                .run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
    }
}

/// A length from the command line: seconds (`1200`, `90.5`), or hours, minutes and seconds
/// (`1h30m`, `20m`, `90s`, `1m30s`); `0` or `off` for none.
struct ResumeLength: ExpressibleByArgument, Sendable {
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
