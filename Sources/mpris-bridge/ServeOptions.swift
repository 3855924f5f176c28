import ArgumentParser
import Logging
import MPD
import MediaRemote
import MusicLibrary

/// `serve`'s options as plain values, whichever parsed them: ArgumentParser (``Serve``, which
/// declares them with their help), or, for an ordinary start, ``init(quickParsing:)`` alone.
///
/// ArgumentParser finds every option by reflection and describes every default, each first
/// cast a scan of all the binary's protocol conformances: about a millisecond of every start,
/// before the bus name (Benchmarks/README.md, "Start-up: exec → bus name"). The defaults are
/// these properties' initial values; `Serve` shows them.
struct ServeOptions: Equatable, Sendable {
    var library: String?
    var cacheDir: String?
    var logLevel: Logger.Level = .info
    var name = "mprisbridge"
    var bus: BusKind = .session
    var audioSink = "autoaudiosink"
    var replayGain: String?
    var stateDir: String?
    var bluetooth = false
    var noScan = false
    var noWatch = false
    var treeLayout: LibraryContent.Layout = .full
    var unlessRunning = false
    var treeCacheRows = ServeSettings.defaultTreeCacheRows
    var resumeLongerThan = ResumeLength(ResumePolicy.defaultMinimumDuration)
    var resumeFolder: [String] = []
    var resumeGenre: [String] = []
    var noMpd = false
    var mpdPort = 6600
    var mpdBind = "127.0.0.1"
    var mpdSocket: String?
    var mpdPasswordFile: String?

    init() {}

    /// Parses an ordinary start's arguments without ArgumentParser: `serve` or nothing, then
    /// `--option value`, `--option=value` and `--flag`, each option once but the repeatable
    /// ones. Nil for anything else (`--help`, `--version`, `scan`, an unknown or repeated option,
    /// a flag given a value, a missing value or one starting with `-`, a value the option does
    /// not take), which ArgumentParser then parses and reports as it always has.
    init?(quickParsing arguments: [String]) {
        var rest = arguments[...]
        if rest.first == "serve" { rest = rest.dropFirst() }
        // Arrays, not sets: a set of substrings would be the start's first Hashable conformance
        // looked up, a scan of all the binary's conformances.
        var seen: [Substring] = []
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else { return nil }
            var key = argument.dropFirst(2)
            var value: String?
            if let equals = key.firstIndex(of: "=") {
                value = String(key[key.index(after: equals)...])
                key = key[..<equals]
            }
            guard key == "resume-folder" || key == "resume-genre" || !seen.contains(key) else { return nil }
            seen.append(key)
            if Self.flags.contains(key) {
                guard value == nil else { return nil }
            } else if value == nil {
                guard let next = rest.popFirst(), !next.hasPrefix("-") else { return nil }
                value = next
            }
            guard set(key, value ?? "") else { return nil }
        }
    }

    private static let flags: [Substring] = ["bluetooth", "no-scan", "no-watch", "unless-running", "no-mpd"]

    /// Sets the option named `key` (a flag: to true) from `value`; false if there is no such
    /// option or it does not take `value`, as ArgumentParser would refuse it.
    private mutating func set(_ key: Substring, _ value: String) -> Bool {
        switch key {
        case "library": library = value
        case "cache-dir": cacheDir = value
        case "log-level":
            guard let level = Logger.Level(rawValue: value) else { return false }
            logLevel = level
        case "name": name = value
        case "bus":
            guard let kind = BusKind(rawValue: value) else { return false }
            bus = kind
        case "audio-sink": audioSink = value
        case "replay-gain": replayGain = value
        case "state-dir": stateDir = value
        case "bluetooth": bluetooth = true
        case "no-scan": noScan = true
        case "no-watch": noWatch = true
        case "tree-layout":
            guard let layout = LibraryContent.Layout(rawValue: value) else { return false }
            treeLayout = layout
        case "unless-running": unlessRunning = true
        case "tree-cache-rows":
            guard let rows = Int(value) else { return false }
            treeCacheRows = rows
        case "resume-longer-than":
            guard let length = ResumeLength(argument: value) else { return false }
            resumeLongerThan = length
        case "resume-folder": resumeFolder.append(value)
        case "resume-genre": resumeGenre.append(value)
        case "no-mpd": noMpd = true
        case "mpd-port":
            guard let port = Int(value) else { return false }
            mpdPort = port
        case "mpd-bind": mpdBind = value
        case "mpd-socket": mpdSocket = value
        case "mpd-password-file": mpdPasswordFile = value
        default: return false
        }
        return true
    }

    func libraryPath(_ paths: Paths) -> String { absolute(library ?? paths.musicDirectory) }
    func cachePath(_ paths: Paths) -> String { absolute(cacheDir ?? paths.cacheDirectory) }

    func validate() throws {
        if !(0...65535).contains(mpdPort) { throw ValidationError("--mpd-port \(mpdPort): 0 to 65535") }
        if let mpdPasswordFile { _ = try MPDServerConfiguration.load(passwordFile: absolute(mpdPasswordFile)) }
        let valid = !name.isEmpty && name.first.map { !$0.isNumber } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        guard valid else {
            throw ValidationError("--name must be letters, digits, _ or -, not starting with a digit: \"\(name)\"")
        }
        if let library, !isDirectory(absolute(library)) {
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
        // Only a folder can be refused; without one the policy is made after the bus name.
        if !resumeFolder.isEmpty { _ = try resumePolicy(library: libraryPath(Paths())) }
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
}
