import BenchmarkSupport
import DBus
import Dispatch
import Foundation
import Glibc
import MPRIS
import MediaPlayer
import MediaRemote
import Synchronization

/// The two players measured side by side, each in its own child process on the same bus: one
/// written against MediaRemote and published with `MPRISService` (the native API), one written
/// as an iOS app writes it against `MediaPlayer`. They publish the same track with the same
/// fields, and their togglePlayPause targets do the same: flip the state and republish.
enum Apps {
    static let nativeName: BusName = "org.mpris.MediaPlayer2.mpbench_native"
    static let mediaPlayerName: BusName = "org.mpris.MediaPlayer2.mpbench_mediaplayer"

    static let title = "A Reasonably Long Track Title (Remastered 2011)"
    static let duration: TimeInterval = 245
    /// A 1×1 PNG, the artwork both publish (written once to the artwork cache, then named by URL).
    static let png = Data([
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0,
        0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
        0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ])

    /// Where each service's artwork cache is: under /tmp, removed by the benchmark.
    static func artworkDirectory(pid: Int32) -> String { "/tmp/mediaplayerbenchmark-artwork-\(pid)" }

    /// The environment variable that says which player a service runs: `native` or `mediaplayer`.
    static let apiVariable = "MEDIAPLAYER_BENCHMARK_API"

    /// `MediaPlayerBenchmark serve --address ADDRESS` with ``apiVariable`` set: runs one player
    /// until its stdin closes. The main thread runs the main queue (`dispatchMain()`), where an
    /// iOS app's handlers run.
    static func serve(_ arguments: [String]) -> Never {
        let api = ProcessInfo.processInfo.environment[apiVariable] ?? ""
        guard arguments.count == 3, arguments[1] == "--address", ["native", "mediaplayer"].contains(api) else {
            writeError("usage: \(apiVariable)=native|mediaplayer MediaPlayerBenchmark serve --address ADDRESS\n")
            exit(64)
        }
        System.exitWhenStdinCloses()
        let address = arguments[2]
        if api == "native" {
            Task {
                do {
                    try await NativeApp.run(address: address)
                } catch {
                    writeError("MediaPlayerBenchmark serve: \(error)\n")
                    exit(1)
                }
            }
        } else {
            MainActor.assumeIsolated { MediaPlayerApp.launch(address: address) }
        }
        dispatchMain()
    }
}

/// The player written against MediaRemote.
enum NativeApp {
    static func run(address: String) async throws {
        let commands = RemoteCommandCenter()
        let nowPlaying = NowPlayingInfoCenter()
        let artwork = MediaItemArtwork.requested(identifier: "bench-artwork", load: ArtworkLoader { Apps.png })
        @Sendable func info(playing: Bool, at elapsed: Duration) -> NowPlayingInfo {
            NowPlayingInfo(
                identifier: "library:track/3f2a9c41", title: Apps.title, artists: ["First Artist"],
                albumTitle: "The Album Name", albumArtists: ["First Artist"], genres: ["Alternative Rock"],
                composers: ["Composer"], playbackDuration: .seconds(Apps.duration), artwork: artwork, trackNumber: 7,
                trackCount: 12, discNumber: 1, discCount: 2, playbackState: playing ? .playing : .paused,
                elapsedPlaybackTime: elapsed)
        }
        commands.togglePlayPauseCommand.addTarget { _ in
            let playing = nowPlaying.nowPlayingInfo?.playbackState == .playing
            nowPlaying.publish(info(playing: !playing, at: nowPlaying.position() ?? .zero))
            return .success
        }
        commands.playCommand.addTarget { _ in .success }
        commands.pauseCommand.addTarget { _ in .success }
        nowPlaying.publish(info(playing: false, at: .seconds(93.5)))
        let service = try MPRISService(
            configuration: MPRISConfiguration(
                playerName: "mpbench_native", identity: "MediaPlayer benchmark (native)",
                artworkCacheDirectory: Apps.artworkDirectory(pid: getpid())),
            commands: commands, nowPlaying: nowPlaying)
        let connection = try await Connection.connect(to: .address(address))
        _ = try await service.publish(on: connection)
        print("ready")
        fflush(nil)
        await connection.waitUntilDisconnected()
        exit(0)
    }
}

/// The player written as an iOS app writes it, against MediaPlayer; it lives on the main queue.
@MainActor final class MediaPlayerApp {
    private static var app: MediaPlayerApp?
    private var isPlaying = false
    private var elapsed: TimeInterval = 93.5
    private var since = Date()
    /// Made once, as a well-written app keeps its artwork for the item it plays.
    private let artwork: MPMediaItemArtwork = {
        let image = ArtworkImage(data: Apps.png)!
        return MPMediaItemArtwork(boundsSize: image.size) { _ in image }
    }()

    static func launch(address: String) {
        LinuxMediaPlayer.configuration = LinuxMediaPlayer.Configuration(
            playerName: "mpbench_mediaplayer", identity: "MediaPlayer benchmark (MediaPlayer)", busAddress: address,
            artworkCacheDirectory: Apps.artworkDirectory(pid: getpid()))
        let app = MediaPlayerApp()
        Self.app = app
        app.configureRemoteCommands()
        app.updateNowPlayingInfo()
        Task {
            do {
                _ = try await LinuxMediaPlayer.playerBusName()
                print("ready")
                fflush(nil)
            } catch {
                writeError("MediaPlayerBenchmark serve: \(error)\n")
                exit(1)
            }
        }
    }

    func configureRemoteCommands() {
        let commandCenter = MPRemoteCommandCenter.shared()
        commandCenter.togglePlayPauseCommand.addTarget { [unowned self] _ in
            let now = Date()
            if isPlaying { elapsed += now.timeIntervalSince(since) }
            since = now
            isPlaying.toggle()
            updateNowPlayingInfo()
            return .success
        }
        commandCenter.playCommand.addTarget { _ in .success }
        commandCenter.pauseCommand.addTarget { _ in .success }
    }

    func updateNowPlayingInfo() {
        MPNowPlayingInfoCenter.default().nowPlayingInfo = [
            MPMediaItemPropertyPersistentID: UInt64(0x3f2a_9c41),
            MPMediaItemPropertyTitle: Apps.title,
            MPMediaItemPropertyArtist: "First Artist",
            MPMediaItemPropertyAlbumTitle: "The Album Name",
            MPMediaItemPropertyAlbumArtist: "First Artist",
            MPMediaItemPropertyGenre: "Alternative Rock",
            MPMediaItemPropertyComposer: "Composer",
            MPMediaItemPropertyPlaybackDuration: Apps.duration,
            MPMediaItemPropertyArtwork: artwork,
            MPMediaItemPropertyAlbumTrackNumber: 7,
            MPMediaItemPropertyAlbumTrackCount: 12,
            MPMediaItemPropertyDiscNumber: 1,
            MPMediaItemPropertyDiscCount: 2,
            MPNowPlayingInfoPropertyElapsedPlaybackTime: elapsed,
            MPNowPlayingInfoPropertyPlaybackRate: isPlaying ? 1.0 : 0.0,
        ]
    }
}
