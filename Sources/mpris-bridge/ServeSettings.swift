import MediaRemote
import MusicLibrary

/// Which message bus the daemon serves on.
enum BusKind: String, Sendable, CaseIterable {
    /// The user's desktop session (`DBUS_SESSION_BUS_ADDRESS`).
    case session
    /// The system bus: a car computer or a shared music box, with `dbus/mpris-bridge.conf` installed.
    case system
}

/// Everything `mpris-bridge` serves with, resolved from the command line and the environment.
struct ServeSettings: Sendable {
    var library: String
    var libraryWasGiven: Bool
    var playerName: String
    var bus: BusKind
    var audioSink: String
    var stateDirectory: String
    var cacheDirectory: String
    var scansAtStart: Bool
    var watchesLibrary: Bool
    /// Which tracks remember where they were left.
    var resumePolicy: ResumePolicy
    /// The ReplayGain mode asked for on the command line; nil keeps the saved one.
    var replayGain: AudioSession.ReplayGainMode?
    /// Whether to exit at once when the player's name already has an owner: a desktop shell
    /// runs the desktop entry's Exec each time the player is clicked, and the daemon has no
    /// window for it to bring forward.
    var unlessRunning = false
    /// Which tabs the media tree's root shows, and the content limits a car gets by default.
    var treeLayout: LibraryContent.Layout = .full
    /// The most rows the media tree keeps in memory (`--tree-cache-rows`).
    var treeCacheRows = Self.defaultTreeCacheRows
    /// Whether the player registers itself with BlueZ on the system bus (`--bluetooth`).
    var registersWithBluetooth = false
    /// The MPD face's sockets and passwords; nil with `--no-mpd`.
    var mpd: MPDSettings?

    var indexPath: String { cacheDirectory + "/index.sqlite" }

    /// The tree's rows are read from the index in microseconds, so the copy can be small:
    /// 10,000 rows (about 15 MB) keep a head unit's walk of 50,000 tracks under 80 MB.
    static let defaultTreeCacheRows = 10_000

    /// The arguments after `mpris-bridge` of the daemon's own rescans.
    var scanArguments: [String] {
        ["scan", "--library", library, "--cache-dir", cacheDirectory, "--quiet", "--no-notify"]
    }
}
