import MediaPlayer
#if canImport(UIKit)
    import UIKit
#endif

/// The app's delegate, as an iOS audio app of the CarPlay-era writes it: at launch it sets up
/// the content manager's data source and delegate, the remote-command targets and the
/// now-playing info. Nothing in it is Linux-specific.
@main
class AppDelegate: UIResponder, UIApplicationDelegate {
    let player = AudioPlayer()
    let content = ContentProvider()

    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        content.player = player
        MPPlayableContentManager.shared().dataSource = content
        MPPlayableContentManager.shared().delegate = content

        configureRemoteCommands()
        player.onChange = { [weak self] in self?.updateNowPlayingInfo() }
        // Where the listener left off: the first show, paused, ready for the play button.
        player.load(Catalog.tabs[0].collections[0].episodes, startingAt: 0, playing: false)
        application.beginReceivingRemoteControlEvents()
        return true
    }

    func configureRemoteCommands() {
        let commandCenter = MPRemoteCommandCenter.shared()

        commandCenter.playCommand.addTarget { [unowned self] _ in
            self.player.play() ? .success : .noActionableNowPlayingItem
        }
        commandCenter.pauseCommand.addTarget { [unowned self] _ in
            self.player.pause() ? .success : .noActionableNowPlayingItem
        }
        commandCenter.togglePlayPauseCommand.addTarget { [unowned self] _ in
            let done = self.player.isPlaying ? self.player.pause() : self.player.play()
            return done ? .success : .noActionableNowPlayingItem
        }
        commandCenter.stopCommand.addTarget { [unowned self] _ in
            self.player.stop()
            return .success
        }
        commandCenter.nextTrackCommand.addTarget { [unowned self] _ in
            self.player.next() ? .success : .noSuchContent
        }
        commandCenter.previousTrackCommand.addTarget { [unowned self] _ in
            self.player.previous() ? .success : .noActionableNowPlayingItem
        }

        commandCenter.skipForwardCommand.preferredIntervals = [30]
        commandCenter.skipForwardCommand.addTarget { [unowned self] event in
            guard let event = event as? MPSkipIntervalCommandEvent else { return .commandFailed }
            return self.player.seek(to: self.player.currentTime + event.interval) ? .success : .commandFailed
        }
        commandCenter.skipBackwardCommand.preferredIntervals = [15]
        commandCenter.skipBackwardCommand.addTarget { [unowned self] event in
            guard let event = event as? MPSkipIntervalCommandEvent else { return .commandFailed }
            return self.player.seek(to: self.player.currentTime - event.interval) ? .success : .commandFailed
        }

        commandCenter.changePlaybackPositionCommand.addTarget { [unowned self] event in
            guard let event = event as? MPChangePlaybackPositionCommandEvent else { return .commandFailed }
            return self.player.seek(to: event.positionTime) ? .success : .commandFailed
        }

        commandCenter.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 1.0, 1.5, 2.0]
        commandCenter.changePlaybackRateCommand.addTarget { [unowned self] event in
            guard let event = event as? MPChangePlaybackRateCommandEvent else { return .commandFailed }
            self.player.setRate(event.playbackRate)
            return .success
        }

        commandCenter.changeRepeatModeCommand.addTarget { [unowned self] event in
            guard let event = event as? MPChangeRepeatModeCommandEvent else { return .commandFailed }
            self.player.repeatsAll = event.repeatType != .off
            commandCenter.changeRepeatModeCommand.currentRepeatType = event.repeatType
            return .success
        }
        commandCenter.changeShuffleModeCommand.addTarget { [unowned self] event in
            guard let event = event as? MPChangeShuffleModeCommandEvent else { return .commandFailed }
            self.player.isShuffled = event.shuffleType != .off
            commandCenter.changeShuffleModeCommand.currentShuffleType = event.shuffleType
            return .success
        }
    }

    /// Publishes what is playing. The rate says whether it plays: 0 is paused, as iOS reads it.
    func updateNowPlayingInfo() {
        guard let episode = player.current else {
            MPNowPlayingInfoCenter.default().nowPlayingInfo = nil
            MPPlayableContentManager.shared().nowPlayingIdentifiers = []
            return
        }
        var info: [String: Any] = [
            MPMediaItemPropertyTitle: episode.title,
            MPMediaItemPropertyArtist: episode.artist,
            MPMediaItemPropertyAlbumTitle: episode.album,
            MPMediaItemPropertyAlbumTrackNumber: episode.trackNumber,
            MPMediaItemPropertyPlaybackDuration: episode.duration,
            MPNowPlayingInfoPropertyElapsedPlaybackTime: player.currentTime,
            MPNowPlayingInfoPropertyPlaybackRate: player.isPlaying ? player.rate : 0.0,
            // The speed it plays at once played: what a remote shows while paused.
            MPNowPlayingInfoPropertyDefaultPlaybackRate: player.rate,
            MPNowPlayingInfoPropertyPlaybackQueueIndex: player.index,
            MPNowPlayingInfoPropertyPlaybackQueueCount: player.queue.count,
            MPNowPlayingInfoPropertyExternalContentIdentifier: episode.identifier,
        ]
        if let image = UIImage(named: "Artwork") {
            info[MPMediaItemPropertyArtwork] = MPMediaItemArtwork(boundsSize: image.size) { _ in image }
        }
        MPNowPlayingInfoCenter.default().nowPlayingInfo = info
        if let collection = Catalog.collection(containing: episode.identifier) {
            MPPlayableContentManager.shared().nowPlayingIdentifiers = [collection.identifier, episode.identifier]
        }
    }
}
