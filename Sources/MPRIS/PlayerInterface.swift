import DBus
import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `org.mpris.MediaPlayer2.Player`: the remote commands as methods and
/// writable properties, the now-playing value as `Metadata`,
/// `PlaybackStatus`, `Rate` and `Position`.
///
/// Every property's value is derived from the command centre and the
/// now-playing centre by ``refresh(artURL:)``, which the service calls after
/// each change there; unchanged values signal nothing, and the changed ones go
/// out in one `PropertiesChanged`.
final class PlayerInterface: Sendable {
    static let name: InterfaceName = "org.mpris.MediaPlayer2.Player"

    let interface = Interface(PlayerInterface.name)
    private let commands: RemoteCommandCenter
    private let nowPlaying: NowPlayingInfoCenter

    /// `Playing`, `Paused` or `Stopped`; nothing loaded is `Stopped`, an interruption `Paused`.
    let playbackStatus: Property<String>
    /// `None`, `Track` or `Playlist`: the command centre's current repeat mode.
    /// A write carries the requested mode to the app (never a toggle); the
    /// property then shows the mode the app reports.
    let loopStatus: Property<String>
    /// The rate being played (never 0: a paused player shows its playing rate).
    /// A write of 0 pauses; another write is snapped to the nearest supported
    /// rate and carried to the app; NaN, infinities and negative rates are
    /// refused with `InvalidArgs`.
    let rate: Property<Double>
    /// Whether the queue is shuffled. A write carries the requested state to the app.
    let shuffle: Property<Bool>
    /// The current item's metadata; only `mpris:trackid` = `NoTrack` when nothing is loaded.
    let metadata: Property<Metadata>
    /// Linear volume, 0 silent, 1 full. A write is carried to the app;
    /// negative becomes 0; NaN and infinities are refused with `InvalidArgs`.
    let volume: Property<Double>
    /// The slowest and fastest supported rates.
    let minimumRate: Property<Double>
    let maximumRate: Property<Double>
    /// Capabilities, from the availability of the matching commands.
    let canGoNext: Property<Bool>
    /// False in radio mode (a feedback command is available).
    let canGoPrevious: Property<Bool>
    let canPlay: Property<Bool>
    let canPause: Property<Bool>
    /// Whether some way of seeking is available and the item is not a live stream.
    let canSeek: Property<Bool>
    /// Constant once published: false only when the app offers no command at all. Set it with
    /// ``setCanControl(_:)``, which the methods and property writes follow too.
    let canControl: Property<Bool>
    /// `CanControl` as the methods and property writes see it.
    private let control: ControlSwitch
    /// `Seeked(x Position)`: the position (µs) after every jump: a seek, a new
    /// position, or the item starting over. Never sent for a new item.
    let seeked: SignalEmitter<Int64>
    /// Whether radio mode (a feedback command offered) withdraws Previous; see
    /// ``MPRISConfiguration/radioModeHidesPrevious``.
    private let radioModeHidesPrevious: Bool

    init(commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter, radioModeHidesPrevious: Bool = true) {
        self.commands = commands
        self.radioModeHidesPrevious = radioModeHidesPrevious
        self.nowPlaying = nowPlaying
        let interface = self.interface
        let control = ControlSwitch()
        self.control = control

        // MARK: Methods
        //
        // What the specification requires of each method is said above it. A method whose
        // capability is false has no effect and is not an error, except where the
        // specification asks for one (PlayPause while CanPause is false, Stop while
        // CanControl is false); while CanControl is false every other capability is false
        // too, so every method has no effect. A handler's failure is a CommandError.

        // Next: skips to the next track; with none (repeat off), playback stops; paused or
        // stopped stays so. No effect while CanGoNext is false.
        interface.method("Next") { () async throws in
            try await commands.nextTrackCommand.performForRemote(RemoteCommandEvent(), action: "go to the next track")
        }
        // Previous: skips to the previous track; paused or stopped stays so. No effect while
        // CanGoPrevious is false (in radio mode too, unless the app keeps Previous there).
        interface.method("Previous") { () async throws in
            guard !(radioModeHidesPrevious && commands.isInRadioMode) else { return }
            try await commands.previousTrackCommand.performForRemote(
                RemoteCommandEvent(), action: "go to the previous track")
        }
        // Pause: pauses; already paused, no effect; Play then resumes where it was. No effect
        // while CanPause is false.
        interface.method("Pause") { () async throws in
            if commands.pauseCommand.isAvailable {
                try await commands.pauseCommand.performForRemote(RemoteCommandEvent(), action: "pause")
            } else if nowPlaying.nowPlayingInfo?.playbackState == .playing {
                try await commands.togglePlayPauseCommand.performForRemote(RemoteCommandEvent(), action: "pause")
            }
        }
        // PlayPause: pauses while playing, resumes while paused, starts while stopped. While
        // CanPause is false: no effect, and an error (NotSupported), as the specification asks.
        interface.method("PlayPause") { () async throws in
            guard commands.pauseCommand.isAvailable || commands.togglePlayPauseCommand.isAvailable else {
                throw DBusError(.notSupported, "The player cannot pause now (CanPause is false).")
            }
            if commands.togglePlayPauseCommand.isAvailable {
                try await commands.togglePlayPauseCommand.performForRemote(
                    RemoteCommandEvent(), action: "toggle play and pause")
            } else if nowPlaying.nowPlayingInfo?.playbackState == .playing {
                try await commands.pauseCommand.performForRemote(RemoteCommandEvent(), action: "pause")
            } else {
                try await commands.playCommand.performForRemote(RemoteCommandEvent(), action: "play")
            }
        }
        // Stop: stops; already stopped, no effect; Play then starts the track from its
        // beginning. While CanControl is false: no effect, and an error (NotSupported).
        interface.method("Stop") { () async throws in
            guard control.isOn else { throw Self.notControllable }
            try await commands.stopCommand.performForRemote(RemoteCommandEvent(), action: "stop")
        }
        // Play: starts or resumes; already playing, or nothing to play, no effect; paused, it
        // resumes where it was. No effect while CanPlay is false. Replies once playing.
        interface.method("Play") { () async throws in
            if commands.playCommand.isAvailable {
                try await commands.playCommand.performForRemote(RemoteCommandEvent(), action: "play")
            } else if nowPlaying.nowPlayingInfo?.playbackState != .playing {
                try await commands.togglePlayPauseCommand.performForRemote(RemoteCommandEvent(), action: "play")
            }
        }
        // Seek(Offset µs): moves by the offset; before the start it goes to 0, past the end it
        // acts as Next. No effect while CanSeek is false.
        interface.method("Seek", arguments: ["Offset"]) { (offset: Int64) async throws in
            try await Self.seek(by: .microseconds(offset), commands: commands, nowPlaying: nowPlaying)
        }
        // SetPosition(TrackId, Position µs): moves to the position in the current track; a track
        // id that is not the current one (stale), a negative position or one past the end does
        // nothing. No effect while CanSeek is false.
        interface.method("SetPosition", arguments: ["TrackId", "Position"]) {
            (trackID: ObjectPath, position: Int64) async throws in
            // A stale track id, a negative position or one past the end is ignored, as the specification says.
            guard let info = nowPlaying.nowPlayingInfo, !info.isLiveStream,
                Metadata.trackID(forIdentifier: info.effectiveIdentifier) == trackID, position >= 0
            else { return }
            let target = Duration.microseconds(position)
            if let length = info.playbackDuration, target > length { return }
            try await commands.changePlaybackPositionCommand.performForRemote(
                ChangePlaybackPositionCommandEvent(positionTime: target), action: "change the position")
        }
        // OpenUri(Uri): opens and plays it (added to the TrackList, which signals it); a scheme or
        // type not in SupportedUriSchemes / SupportedMimeTypes is refused with an error, and a
        // client waits for Metadata's mpris:trackid to change rather than for the reply. While
        // the app cannot open URLs (CanControl false included): no effect, and an error
        // (NotSupported), as the specification allows, so a client is not told a URI was opened.
        interface.method("OpenUri", arguments: ["Uri"]) { (uri: String) async throws in
            let command = commands.openURLCommand
            guard command.isAvailable else { throw DBusError(.notSupported, "The player cannot open URIs.") }
            let url = try command.url(fromRemote: uri)
            try await command.performForRemote(OpenURLCommandEvent(url: url), action: "open \(DBusError.excerpt(uri))")
        }

        // MARK: Properties

        playbackStatus = interface.property("PlaybackStatus", "Stopped")
        // The writable properties: while CanControl is false they are read-only, and a write is
        // an error (PropertyReadOnly), as the specification says.
        loopStatus = interface.property("LoopStatus", "None", access: .readWrite) { (requested: String) async throws in
            guard control.isOn else { throw Self.readOnly("LoopStatus") }
            guard let mode = RepeatType(loopStatus: requested) else {
                throw DBusError(.invalidArgs, "LoopStatus must be None, Track or Playlist, not '\(DBusError.excerpt(requested))'.")
            }
            try await commands.changeRepeatModeCommand.performForRemote(
                ChangeRepeatModeCommandEvent(repeatType: mode), action: "change the repeat mode")
            return commands.changeRepeatModeCommand.currentRepeatType.loopStatus
        }
        rate = interface.property("Rate", 1.0, access: .readWrite) { (requested: Double) async throws in
            guard control.isOn else { throw Self.readOnly("Rate") }
            guard requested.isFinite, requested >= 0 else {
                throw DBusError(.invalidArgs, "Rate must be a finite number of at least 0, not \(requested).")
            }
            if requested == 0 {
                // The specification: a rate of 0 acts as Pause.
                try await commands.pauseCommand.performForRemote(RemoteCommandEvent(), action: "pause")
            } else if let snapped = commands.changePlaybackRateCommand.options.nearestSupportedRate(to: requested) {
                try await commands.changePlaybackRateCommand.performForRemote(
                    ChangePlaybackRateCommandEvent(playbackRate: snapped), action: "change the rate")
            }
            return nowPlaying.nowPlayingInfo?.nominalRate ?? 1
        }
        shuffle = interface.property("Shuffle", false, access: .readWrite) { (requested: Bool) async throws in
            guard control.isOn else { throw Self.readOnly("Shuffle") }
            let command = commands.changeShuffleModeCommand
            let target: ShuffleType = requested ? (command.currentShuffleType == .off ? .items : command.currentShuffleType) : .off
            try await command.performForRemote(
                ChangeShuffleModeCommandEvent(shuffleType: target), action: "change the shuffle mode")
            return command.currentShuffleType != .off
        }
        metadata = interface.property("Metadata", Metadata.nothingLoaded)
        volume = interface.property("Volume", 1.0, access: .readWrite) { (requested: Double) async throws in
            guard control.isOn else { throw Self.readOnly("Volume") }
            guard requested.isFinite else {
                throw DBusError(.invalidArgs, "Volume must be a finite number, not \(requested).")
            }
            try await commands.changeVolumeCommand.performForRemote(
                ChangeVolumeCommandEvent(volume: max(requested, 0)), action: "change the volume")
            return nowPlaying.volume
        }
        _ = interface.computedProperty("Position", as: Int64.self, changes: .none) {
            (nowPlaying.position() ?? .zero).microseconds
        }
        minimumRate = interface.property("MinimumRate", 1.0)
        maximumRate = interface.property("MaximumRate", 1.0)
        canGoNext = interface.property("CanGoNext", false)
        canGoPrevious = interface.property("CanGoPrevious", false)
        canPlay = interface.property("CanPlay", false)
        canPause = interface.property("CanPause", false)
        canSeek = interface.property("CanSeek", false)
        canControl = interface.property("CanControl", true, changes: .const)
        seeked = interface.signal("Seeked", arguments: ["Position"], of: Int64.self)
    }

    /// `Position` as read now (µs): computed at each read, never signalled.
    var positionMicroseconds: Int64 { (nowPlaying.position() ?? .zero).microseconds }

    /// Publishes `CanControl` (constant from then on); the methods and writes follow it.
    func setCanControl(_ value: Bool) {
        control.isOn = value
        canControl.value = value
    }

    private static let notControllable = DBusError(
        .notSupported, "The player cannot be controlled (CanControl is false).")

    private static func readOnly(_ property: String) -> DBusError {
        DBusError(.propertyReadOnly, "\(property) is read-only: the player cannot be controlled (CanControl is false).")
    }

    /// Seek: forward with skipForward, backward with skipBackward, otherwise
    /// to an absolute position. Past the end acts as Next; before the start
    /// goes to the start (the specification's rules).
    private static func seek(by offset: Duration, commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter)
        async throws
    {
        guard let info = nowPlaying.nowPlayingInfo, !info.isLiveStream, offset != .zero else { return }
        let position = nowPlaying.position() ?? .zero
        let target = position + offset
        if let length = info.playbackDuration, target >= length {
            try await commands.nextTrackCommand.performForRemote(RemoteCommandEvent(), action: "go to the next track")
        } else if offset > .zero, commands.skipForwardCommand.isAvailable {
            try await commands.skipForwardCommand.performForRemote(
                SkipIntervalCommandEvent(interval: offset), action: "skip forward")
        } else if offset < .zero, commands.skipBackwardCommand.isAvailable {
            try await commands.skipBackwardCommand.performForRemote(
                SkipIntervalCommandEvent(interval: .zero - offset), action: "skip backward")
        } else {
            try await commands.changePlaybackPositionCommand.performForRemote(
                ChangePlaybackPositionCommandEvent(positionTime: max(target, .zero)), action: "change the position")
        }
    }

    /// The item whose metadata the `Metadata` property shows (its ``NowPlayingInfo/itemFields``),
    /// nil while it shows nothing loaded.
    private let metadataShown = Mutex<NowPlayingInfo?>(nil)

    /// Brings every property up to date with the command and now-playing
    /// centres, as one `PropertiesChanged` carrying what changed.
    func refresh(artURL: (MediaItemArtwork) -> URL?) {
        interface.batch {
            refreshNowPlaying(artURL: artURL)
            refreshCommands()
        }
    }

    /// Brings the properties that follow the now-playing centre up to date.
    func refreshNowPlaying(artURL: (MediaItemArtwork) -> URL?) {
        let info = nowPlaying.nowPlayingInfo
        let rates = commands.changePlaybackRateCommand.options
        interface.batch {
            playbackStatus.value = info?.playbackState.mprisStatus ?? "Stopped"
            if let changed = changedMetadata(for: info, artURL: artURL) { metadata.value = changed }
            rate.value = info?.nominalRate ?? 1
            volume.value = nowPlaying.volume
            (minimumRate.value, maximumRate.value) = rateRange(rates, info)
            canSeek.value = canSeekNow(info)
        }
    }

    /// Brings the properties that follow the command centre up to date.
    func refreshCommands() {
        let info = nowPlaying.nowPlayingInfo
        let rates = commands.changePlaybackRateCommand.options
        interface.batch {
            loopStatus.value = commands.changeRepeatModeCommand.currentRepeatType.loopStatus
            shuffle.value = commands.changeShuffleModeCommand.currentShuffleType != .off
            (minimumRate.value, maximumRate.value) = rateRange(rates, info)
            canGoNext.value = commands.nextTrackCommand.isAvailable
            canGoPrevious.value = commands.previousTrackCommand.isAvailable && !(radioModeHidesPrevious && commands.isInRadioMode)
            canPlay.value = commands.playCommand.isAvailable || commands.togglePlayPauseCommand.isAvailable
            canPause.value = commands.pauseCommand.isAvailable || commands.togglePlayPauseCommand.isAvailable
            canSeek.value = canSeekNow(info)
        }
    }

    /// `MinimumRate` and `MaximumRate`: the supported rates and the rate played; while the app
    /// cannot change the rate, only the rate played and 1.0 (the specification keeps the minimum
    /// at most 1.0 and the maximum at least 1.0), so no remote offers a rate it cannot set.
    private func rateRange(_ rates: PlaybackRateOptions, _ info: NowPlayingInfo?) -> (Double, Double) {
        let played = info?.nominalRate ?? 1
        guard commands.changePlaybackRateCommand.isAvailable else { return (min(1, played), max(1, played)) }
        return (min(rates.minimumRate, played), max(rates.maximumRate, played))
    }

    private func canSeekNow(_ info: NowPlayingInfo?) -> Bool {
        !(info?.isLiveStream ?? false)
            && (commands.changePlaybackPositionCommand.isAvailable || commands.skipForwardCommand.isAvailable
                || commands.skipBackwardCommand.isAvailable)
    }

    /// The metadata of `info` when it describes another item than the one last shown (or
    /// none), nil when it is the same: a play, pause or seek then neither builds the metadata
    /// nor encodes and compares the property's value.
    private func changedMetadata(for info: NowPlayingInfo?, artURL: (MediaItemArtwork) -> URL?) -> Metadata? {
        let item = info?.itemFields
        guard metadataShown.withLock({ $0 != item }) else { return nil }
        let metadata = info.map { Metadata($0, artURL: $0.artwork.flatMap(artURL)) } ?? .nothingLoaded
        metadataShown.withLock { $0 = item }
        return metadata
    }
}

extension RemoteCommand where Event == OpenURLCommandEvent {
    /// The URL a remote sent (to `OpenUri` or `AddTrack`), if the app can open it:
    /// `InvalidArgs` when it is not a URI, `NotSupported` when its scheme is
    /// not one of ``RemoteCommand/supportedURLSchemes``.
    func url(fromRemote uri: String) throws -> URL {
        guard let url = URL(string: uri), let scheme = url.scheme?.lowercased() else {
            throw DBusError(.invalidArgs, "'\(DBusError.excerpt(uri))' is not a URI.")
        }
        guard supportedURLSchemes.contains(scheme) else {
            throw DBusError(
                .notSupported,
                "The player cannot open '\(DBusError.excerpt(scheme))' URIs; it supports \(supportedURLSchemes.joined(separator: ", ")).")
        }
        return url
    }
}

extension NowPlayingInfo {
    /// The value with its playback fields reset: equal for two values that
    /// describe the same item, whatever the position, state or rate.
    var itemFields: NowPlayingInfo {
        var item = self
        item.playbackState = .paused
        item.elapsedPlaybackTime = .zero
        item.playbackRate = 1
        item.defaultPlaybackRate = 1
        item.playbackQueueIndex = nil
        item.playbackQueueCount = nil
        return item
    }
}

extension PlaybackState {
    var mprisStatus: String {
        switch self {
        case .playing: "Playing"
        case .paused, .interrupted: "Paused"
        case .stopped: "Stopped"
        }
    }
}

extension RepeatType {
    init?(loopStatus: String) {
        switch loopStatus {
        case "None": self = .off
        case "Track": self = .one
        case "Playlist": self = .all
        default: return nil
        }
    }

    var loopStatus: String {
        switch self {
        case .off: "None"
        case .one: "Track"
        case .all: "Playlist"
        }
    }
}

/// `CanControl` as the Player interface's methods and property writes see it.
private final class ControlSwitch: Sendable {
    private let state = Atomic<Bool>(true)

    var isOn: Bool {
        get { state.load(ordering: .relaxed) }
        set { state.store(newValue, ordering: .relaxed) }
    }
}
