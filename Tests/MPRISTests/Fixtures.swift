import DBus
import DBusTestSupport
import MPRIS
import MediaRemote
import ProcessTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The folder of the Python clients next to this file.
func pythonScript(_ name: String) -> String {
    let file = #filePath
    return String(file[..<file.lastIndex(of: "/")!]) + "/Python/" + name
}

/// A scriptable app written against MediaRemote: every handler records what it
/// received (`"play"`, `"rate 1.25"`, `"position 30.0"`, …), applies it to the
/// now-playing value as a real player would, and returns ``status``.
final class TestApp: Sendable {
    let commands = RemoteCommandCenter()
    let nowPlaying = NowPlayingInfoCenter()
    private let state = Mutex<(log: [String], status: RemoteCommandHandlerStatus)>(([], .success))

    /// What the handlers received, in order.
    var received: [String] { state.withLock { $0.log } }
    /// What every handler returns from now on.
    var status: RemoteCommandHandlerStatus {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    /// The first track the tests load: any characters in its identifier.
    static let track = NowPlayingInfo(
        identifier: "spotify:track:ü/ñ 1?", title: "First Song", artists: ["Ann", "Bob"], albumTitle: "Album",
        albumArtists: ["Ann"], genres: ["Jazz", "Blues"], composers: ["Cole"], playbackDuration: .seconds(200),
        trackNumber: 3, discNumber: 2, releaseDate: Date(timeIntervalSince1970: 0),
        assetURL: URL(fileURLWithPath: "/music/A B/ça.ogg"), playbackState: .paused)
    static let secondTrack = NowPlayingInfo(
        identifier: "second", title: "Second Song", artists: ["Cy"], playbackDuration: .seconds(100),
        playbackState: .playing)

    private func record(_ entry: String) -> RemoteCommandHandlerStatus {
        state.withLock { state in
            state.log.append(entry)
            return state.status
        }
    }

    /// Applies a change to the now-playing value if the handler succeeds, taking the position into account.
    private func apply(_ entry: String, _ change: (inout NowPlayingInfo) -> Void) -> RemoteCommandHandlerStatus {
        let status = record(entry)
        guard status == .success, var info = nowPlaying.nowPlayingInfo else { return status }
        info.elapsedPlaybackTime = nowPlaying.position() ?? .zero
        change(&info)
        nowPlaying.publish(info)
        return status
    }

    /// Adds a target to every command (no feedback commands: those switch to radio mode).
    func enableCommands() {
        let c = commands
        c.performBatchUpdates {
            c.playCommand.addTarget { _ in self.apply("play") { $0.playbackState = .playing } }
            c.pauseCommand.addTarget { _ in self.apply("pause") { $0.playbackState = .paused } }
            c.togglePlayPauseCommand.addTarget { _ in
                self.apply("togglePlayPause") { $0.playbackState = $0.playbackState == .playing ? .paused : .playing }
            }
            c.stopCommand.addTarget { _ in
                self.apply("stop") {
                    $0.playbackState = .stopped
                    $0.elapsedPlaybackTime = .zero
                }
            }
            c.nextTrackCommand.addTarget { _ in
                let status = self.record("nextTrack")
                if status == .success { self.nowPlaying.publish(Self.secondTrack) }
                return status
            }
            c.previousTrackCommand.addTarget { _ in self.apply("previousTrack") { $0.elapsedPlaybackTime = .zero } }
            c.skipForwardCommand.addTarget { event in
                self.apply("skipForward \(event.interval)") { $0.elapsedPlaybackTime += event.interval }
            }
            c.skipBackwardCommand.addTarget { event in
                self.apply("skipBackward \(event.interval)") {
                    $0.elapsedPlaybackTime = max(.zero, $0.elapsedPlaybackTime - event.interval)
                }
            }
            c.changePlaybackPositionCommand.addTarget { event in
                self.apply("position \(event.positionTime)") { $0.elapsedPlaybackTime = event.positionTime }
            }
            c.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 1, 1.25, 1.5, 2]
            c.changePlaybackRateCommand.addTarget { event in
                self.apply("rate \(event.playbackRate)") {
                    $0.playbackRate = event.playbackRate
                    $0.defaultPlaybackRate = event.playbackRate
                }
            }
            c.changeRepeatModeCommand.addTarget { event in
                let status = self.record("repeat \(event.repeatType)")
                if status == .success { c.changeRepeatModeCommand.currentRepeatType = event.repeatType }
                return status
            }
            c.changeShuffleModeCommand.addTarget { event in
                let status = self.record("shuffle \(event.shuffleType)")
                if status == .success { c.changeShuffleModeCommand.currentShuffleType = event.shuffleType }
                return status
            }
            c.changeVolumeCommand.addTarget { event in
                let status = self.record("volume \(event.volume)")
                if status == .success { self.nowPlaying.volume = event.volume }
                return status
            }
            c.openURLCommand.supportedURLSchemes = ["file", "https"]
            c.openURLCommand.supportedMIMETypes = ["audio/ogg"]
            c.openURLCommand.addTarget { event in self.record("open \(event.url.absoluteString)") }
            c.seekForwardCommand.addTarget { event in self.record("seekForward \(event.phase)") }
            c.seekBackwardCommand.addTarget { event in self.record("seekBackward \(event.phase)") }
        }
    }

    /// An entry of the play queue the tests use: identifier `id`, titled `"Song <id>"`.
    static func queueItem(_ id: String, title: String? = nil) -> NowPlayingInfo {
        NowPlayingInfo(
            identifier: id, title: title ?? "Song \(id)", artists: ["Queue Artist"], playbackDuration: .seconds(60),
            assetURL: URL(fileURLWithPath: "/music/\(id).ogg"))
    }

    /// Adds targets to the three queue commands; each records what it received
    /// (`"playItem b"`, `"addItem URL after a now"`, `"removeItem c"`) and, on
    /// success, changes the queue (and the current item) as a real player would.
    /// An added item's identifier is its URL.
    func enableQueue() {
        let c = commands
        c.performBatchUpdates {
            c.playItemInQueueCommand.addTarget { event in
                let status = self.record("playItem \(event.identifier)")
                if status == .success,
                    let item = self.nowPlaying.playbackQueue.first(where: { $0.effectiveIdentifier == event.identifier })
                {
                    self.nowPlaying.publish(item)
                }
                return status
            }
            c.addItemToQueueCommand.addTarget { event in
                let now = event.playsImmediately ? " now" : ""
                let status = self.record(
                    "addItem \(event.url.absoluteString) after \(event.afterIdentifier ?? "start")\(now)")
                guard status == .success else { return status }
                let item = NowPlayingInfo(
                    identifier: event.url.absoluteString, title: event.url.lastPathComponent, assetURL: event.url)
                var queue = self.nowPlaying.playbackQueue
                let index = event.afterIdentifier.map { after in
                    (queue.firstIndex { $0.effectiveIdentifier == after } ?? queue.count - 1) + 1
                } ?? 0
                queue.insert(item, at: index)
                self.nowPlaying.playbackQueue = queue
                if event.playsImmediately { self.nowPlaying.publish(item) }
                return status
            }
            c.removeItemFromQueueCommand.addTarget { event in
                let status = self.record("removeItem \(event.identifier)")
                if status == .success {
                    self.nowPlaying.playbackQueue.removeAll { $0.effectiveIdentifier == event.identifier }
                }
                return status
            }
        }
    }

    /// Adds a target to the rating command, taking ratings from 1 to 5 stars.
    func enableRating() {
        let c = commands
        c.performBatchUpdates {
            c.ratingCommand.minimumRating = 1
            c.ratingCommand.maximumRating = 5
            c.ratingCommand.addTarget { event in self.record("rating \(event.rating)") }
        }
    }

    /// Adds targets to the feedback commands, which puts remotes in radio mode.
    func enableFeedback() {
        let c = commands
        c.performBatchUpdates {
            c.likeCommand.localizedTitle = "Love this song"
            c.likeCommand.localizedShortTitle = "Love"
            c.likeCommand.addTarget { event in
                let status = self.record(event.isNegative ? "unlike" : "like")
                if status == .success { c.likeCommand.isActive = !event.isNegative }
                return status
            }
            c.bookmarkCommand.addTarget { event in self.record(event.isNegative ? "unbookmark" : "bookmark") }
        }
    }
}

/// A private bus with a ``TestApp`` published by ``MPRISService``.
struct PlayerFixture: Sendable {
    static let playerName = "mprisbridge_test"
    static let busName = "org.mpris.MediaPlayer2.mprisbridge_test"

    let bus: PrivateBus
    let app: TestApp
    let service: MPRISService
    let artworkDirectory: String

    /// Runs `Python/mpris_client.py` with the operations; returns one output line per operation.
    func client(_ operations: String...) async throws -> [String] {
        let output = try await bus.run(
            PrivateBus.systemPython, [pythonScript("mpris_client.py"), Self.busName] + operations)
        guard output.status == 0 else { throw DBusError(.failed, "mpris_client.py failed: \(output.stderr)") }
        return output.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// Runs playerctl against the test player.
    func playerctl(_ arguments: String...) async throws -> ProcessOutput {
        try await bus.run("playerctl", ["--player=\(Self.playerName)"] + arguments)
    }

    /// Starts `Python/watch_player.py` and returns once it is subscribed.
    func watch() async throws -> ChildProcess {
        let watcher = try bus.spawn(PrivateBus.systemPython, ["-u", pythonScript("watch_player.py"), Self.busName])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }
}

/// Starts a private bus, publishes a ``TestApp`` (prepared by `configure`; by
/// default every command enabled and the first track loaded; with
/// `hasTrackList`, the TrackList interface exported) and runs `body`.
/// Stops everything afterwards.
func withPlayer<T: Sendable>(
    desktopEntry: String? = "mprisbridge-test", hasTrackList: Bool = false,
    configure: (TestApp) -> Void = { app in
        app.enableCommands()
        app.nowPlaying.nowPlayingInfo = TestApp.track
    },
    _ body: (PlayerFixture) async throws -> T
) async throws -> T {
    let artwork = try TemporaryDirectory(prefix: "mpris-artwork")
    defer { artwork.remove() }
    return try await PrivateBus.with { bus in
        let app = TestApp()
        configure(app)
        let service = try MPRISService(
            configuration: MPRISConfiguration(
                playerName: PlayerFixture.playerName, identity: "mpris-bridge test player", desktopEntry: desktopEntry,
                artworkCacheDirectory: artwork.path, hasTrackList: hasTrackList),
            commands: app.commands, nowPlaying: app.nowPlaying)
        let connection = try await Connection.connect(to: .address(bus.address))
        defer { connection.close() }
        let name = try await service.publish(on: connection)
        #expect(name.rawValue == PlayerFixture.busName)
        let result = try await body(PlayerFixture(bus: bus, app: app, service: service, artworkDirectory: artwork.path))
        await service.unpublish()
        return result
    }
}
