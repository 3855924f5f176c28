import BenchmarkSupport
import DBus
import Glibc
import MPRIS
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The player, run in a child process (`MPRISBenchmark serve --address ADDRESS`): an app written
/// against MediaRemote, as an adopter writes one, published by `MPRISService`. The benchmark adds
/// only a control object that hands out the times at which the togglePlayPause target ran.
enum Service {
    static let playerName = "mprisbenchmark"
    static let busName: BusName = "org.mpris.MediaPlayer2.mprisbenchmark"
    static let controlPath: ObjectPath = "/org/example/MPRISBenchmark"
    static let controlInterface: InterfaceName = "org.example.MPRISBenchmark1"

    /// A realistic track: every field a music library fills in, and artwork at an https URL
    /// (passed through as `mpris:artUrl`, so the artwork cache writes nothing).
    static let track = NowPlayingInfo(
        identifier: "library:track/3f2a9c41", title: "A Reasonably Long Track Title (Remastered 2011)",
        artists: ["First Artist", "Second Artist"], albumTitle: "The Album Name", albumArtists: ["First Artist"],
        genres: ["Alternative Rock", "Indie"], playbackDuration: .seconds(245),
        artwork: .url(URL(string: "https://images.example.com/covers/3f2a9c41/600x600.jpg")!),
        trackNumber: 7, trackCount: 12, discNumber: 1, discCount: 2,
        releaseDate: Date(timeIntervalSince1970: 1_302_393_600),
        assetURL: URL(fileURLWithPath: "/home/user/Music/First Artist/The Album Name/07 Track Title.flac"),
        playbackState: .playing, elapsedPlaybackTime: .milliseconds(93_500))

    /// Where `MPRISConfiguration.artworkCacheDirectory` points for the service with this pid: under
    /// /tmp, never the user's cache. The cache creates it only to store image bytes, which this
    /// player never publishes; the benchmark removes it if it exists.
    static func artworkDirectory(pid: Int32) -> String { "/tmp/mprisbenchmark-artwork-\(pid)" }

    static func run(address: String) async throws -> Never {
        System.exitWhenStdinCloses()
        let player = Player()
        player.start()
        let service = try MPRISService(
            configuration: MPRISConfiguration(
                playerName: playerName, identity: "MPRIS benchmark player",
                artworkCacheDirectory: artworkDirectory(pid: getpid())),
            commands: player.commands, nowPlaying: player.nowPlaying)
        let connection = try await Connection.connect(to: .address(address))

        let control = Interface(controlInterface)
        control.method("ToggleTimes", results: ["entered", "publishing", "published"]) {
            () async throws -> ([UInt64], [UInt64], [UInt64]) in
            player.toggleTimes.withLock { ($0.entered, $0.publishing, $0.published) }
        }
        try connection.export(control, at: controlPath)
        let name = try await service.publish(on: connection)
        guard name == busName else {
            writeError("MPRISBenchmark serve: owns \(name), not \(busName)\n")
            exit(3)
        }
        print("ready")
        fflush(nil)
        await connection.waitUntilDisconnected()
        exit(0)
    }
}

/// The app: a one-track player whose every command target changes the now-playing value and
/// republishes it, as a real player does after acting.
final class Player: Sendable {
    let commands = RemoteCommandCenter()
    let nowPlaying = NowPlayingInfoCenter()
    /// Monotonic times at which each togglePlayPause target started, called `publish`, and had it
    /// return. `MPRISService` sends the `PropertiesChanged` inside `publish`, from its observer.
    let toggleTimes = Mutex<(entered: [UInt64], publishing: [UInt64], published: [UInt64])>(([], [], []))

    /// Publishes the current value changed by `body`, at the current position.
    private func change(
        _ body: (inout NowPlayingInfo) -> Void, publishing: () -> Void = {}
    ) -> RemoteCommandHandlerStatus {
        guard var info = nowPlaying.nowPlayingInfo else { return .noActionableNowPlayingItem }
        info.elapsedPlaybackTime = nowPlaying.position() ?? .zero
        body(&info)
        publishing()
        nowPlaying.publish(info)
        return .success
    }

    func start() {
        let c = commands
        c.performBatchUpdates {
            c.playCommand.addTarget { _ in self.change { $0.playbackState = .playing } }
            c.pauseCommand.addTarget { _ in self.change { $0.playbackState = .paused } }
            c.togglePlayPauseCommand.addTarget { _ in
                let entered = monotonicNanoseconds()
                var publishing: UInt64 = 0
                let status = self.change {
                    $0.playbackState = $0.playbackState == .playing ? .paused : .playing
                } publishing: {
                    publishing = monotonicNanoseconds()
                }
                let published = monotonicNanoseconds()
                self.toggleTimes.withLock {
                    $0.entered.append(entered)
                    $0.publishing.append(publishing)
                    $0.published.append(published)
                }
                return status
            }
            // One track in the queue: next and previous start it over.
            c.nextTrackCommand.addTarget { _ in self.change { $0.elapsedPlaybackTime = .zero } }
            c.previousTrackCommand.addTarget { _ in self.change { $0.elapsedPlaybackTime = .zero } }
            c.changePlaybackPositionCommand.addTarget { event in
                self.change { $0.elapsedPlaybackTime = event.positionTime }
            }
            c.skipForwardCommand.addTarget { event in self.change { $0.elapsedPlaybackTime += event.interval } }
            c.skipBackwardCommand.addTarget { event in
                self.change { $0.elapsedPlaybackTime = max(.zero, $0.elapsedPlaybackTime - event.interval) }
            }
            c.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 1, 1.5, 2]
            c.changePlaybackRateCommand.addTarget { event in self.change { $0.playbackRate = event.playbackRate } }
            c.changeRepeatModeCommand.addTarget { event in
                c.changeRepeatModeCommand.currentRepeatType = event.repeatType
                return .success
            }
            c.changeShuffleModeCommand.addTarget { event in
                c.changeShuffleModeCommand.currentShuffleType = event.shuffleType
                return .success
            }
            c.changeVolumeCommand.addTarget { event in
                self.nowPlaying.volume = event.volume
                return .success
            }
        }
        nowPlaying.volume = 0.8
        nowPlaying.publish(Service.track)
    }
}
