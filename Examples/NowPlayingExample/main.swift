// The adoption example of the README and of the MPRIS documentation: an app with its own (here, silent, in-memory)
// player adopts MediaRemote, and MPRIS publishes it on the session bus.
// Try it: `swift run now-playing-example`, then `playerctl -p mprisbridge_example status`.
// Its queue is the MPRIS TrackList: `gdbus call --session --dest org.mpris.MediaPlayer2.mprisbridge_example
// --object-path /org/mpris/MediaPlayer2 --method org.freedesktop.DBus.Properties.Get
// org.mpris.MediaPlayer2.TrackList Tracks`.
import DBus
import MPRIS
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

let radioMode = CommandLine.arguments.contains("--radio")
let commands = RemoteCommandCenter()
let nowPlaying = NowPlayingInfoCenter()
let player = InMemoryPlayer(queue: demoQueue(), commands: commands, nowPlaying: nowPlaying)

commands.playCommand.addTarget { _ in await player.play() }
commands.pauseCommand.addTarget { _ in await player.pause() }
commands.togglePlayPauseCommand.addTarget { _ in await player.togglePlayPause() }
commands.stopCommand.addTarget { _ in await player.stop() }
commands.nextTrackCommand.addTarget { _ in await player.next() }
commands.previousTrackCommand.addTarget { _ in await player.previous() }
commands.skipForwardCommand.addTarget { event in await player.skip(by: event.interval) }
commands.skipBackwardCommand.addTarget { event in await player.skip(by: .zero - event.interval) }
commands.changePlaybackPositionCommand.addTarget { event in await player.seek(to: event.positionTime) }
commands.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 1, 1.25, 1.5, 2]
commands.changePlaybackRateCommand.addTarget { event in await player.setRate(event.playbackRate) }
commands.changeRepeatModeCommand.addTarget { event in await player.setRepeat(event.repeatType) }
commands.changeShuffleModeCommand.addTarget { event in await player.setShuffle(event.shuffleType) }
commands.changeVolumeCommand.addTarget { event in await player.setVolume(event.volume) }
commands.openURLCommand.supportedURLSchemes = ["file", "http", "https"]
commands.openURLCommand.supportedMIMETypes = ["audio/mpeg", "audio/ogg", "audio/flac"]
commands.openURLCommand.addTarget { event in await player.open(event.url) }
// The queue, shown as the MPRIS TrackList: pick (GoTo), add (AddTrack) and remove (RemoveTrack) items.
commands.playItemInQueueCommand.addTarget { event in await player.playItem(identifier: event.identifier) }
commands.addItemToQueueCommand.addTarget { event in
    await player.addItem(event.url, after: event.afterIdentifier, playsImmediately: event.playsImmediately)
}
commands.removeItemFromQueueCommand.addTarget { event in await player.removeItem(identifier: event.identifier) }
if radioMode {
    // Feedback commands switch remotes to radio mode: no previous-track button.
    commands.likeCommand.localizedTitle = "Love this track"
    commands.likeCommand.localizedShortTitle = "Love"
    commands.likeCommand.addTarget { event in await player.setLiked(!event.isNegative) }
}

let service = try MPRISService(
    configuration: MPRISConfiguration(
        playerName: "mprisbridge_example", identity: "mpris-bridge example", hasTrackList: true),
    commands: commands, nowPlaying: nowPlaying)
await player.start()
let bus = try await Connection.session()
let name = try await service.publish(on: bus)
print("Serving \(name). Try: playerctl -p mprisbridge_example play")
await bus.waitUntilDisconnected()

/// Three silent tracks with the fields a real library would have.
func demoQueue() -> [Track] {
    // A 1×1 PNG, so the first track has artwork bytes to cache.
    let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0,
        0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
        0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
    return [
        Track(
            id: "demo:1/Sine à 440 Hz", title: "Sine at 440 Hz", artists: ["Oscillator", "Guest"],
            album: "Test Tones", duration: .seconds(180), url: URL(fileURLWithPath: "/music/Test Tones/01 Sine 440.ogg"),
            trackNumber: 1, artwork: .imageData(Data(png))),
        Track(
            id: "demo:2", title: "Square at 220 Hz", artists: ["Oscillator"], album: "Test Tones",
            duration: .seconds(200), url: URL(fileURLWithPath: "/music/Test Tones/02 Square 220.ogg"), trackNumber: 2),
        Track(
            id: "demo:3", title: "Pink Noise", artists: ["Noise Generator"], album: "Test Tones",
            duration: .seconds(240), url: URL(fileURLWithPath: "/music/Test Tones/03 Pink Noise.ogg"), trackNumber: 3),
    ]
}
