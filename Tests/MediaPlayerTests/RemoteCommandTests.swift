import DBus
import DBusTestSupport
import Foundation
@testable import MediaPlayer
import MediaRemote
import ProcessTestSupport
import Synchronization
import Testing

extension MediaPlayerTests {
    /// Apple's remote-command API driven by real remotes: playerctl, gdbus and python3-dbus
    /// calling the process's MPRIS player. Each test leaves the shared command centre as it
    /// found it (no targets, every command enabled, the default settings).
    @Suite(.timeLimit(.minutes(1))) struct RemoteCommands {
        @Test func aTargetOffersTheCommandAndItsHandlerRunsOnTheMainQueue() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }
            let watcher = try await remote.watch()
            let seen = Seen()

            #expect(try await remote.get(Remote.player, "CanGoNext") == "false")
            let before = ProcessInfo.processInfo.systemUptime
            let token = center.nextTrackCommand.addTarget { event in
                seen.append("next mainQueue=\(DispatchQueue.getSpecific(key: mainQueueKey) == true) command=\(event.command === center.nextTrackCommand)")
                seen.timestamp = event.timestamp
                return .success
            }
            _ = try await watcher.waitForLine { $0.contains("CanGoNext=true") }
            #expect(try await remote.get(Remote.player, "CanGoNext") == "true")

            try await remote.playerctl("next")
            #expect(seen.events == ["next mainQueue=true command=true"])
            let after = ProcessInfo.processInfo.systemUptime
            #expect(seen.timestamp >= before && seen.timestamp <= after, "seconds since boot, as on iOS")

            // Disabled: withdrawn, and a remote's Next has no effect.
            center.nextTrackCommand.isEnabled = false
            _ = try await watcher.waitForLine { $0.contains("CanGoNext=false") }
            try await remote.call(Remote.player, "Next")
            #expect(seen.events.count == 1)
            center.nextTrackCommand.isEnabled = true
            _ = try await watcher.waitForLine { $0.contains("CanGoNext=true") }

            // The token removes exactly its own target; another command's token is ignored.
            let second = center.nextTrackCommand.addTarget { _ in
                seen.append("second")
                return .success
            }
            center.nextTrackCommand.removeTarget(token)
            center.previousTrackCommand.removeTarget(second)
            try await remote.playerctl("next")
            #expect(seen.events == ["next mainQueue=true command=true", "second"])
            #expect(try await remote.get(Remote.player, "CanGoNext") == "true")
            center.nextTrackCommand.removeTarget(second)
            _ = try await watcher.waitForLine { $0.contains("CanGoNext=false") }
            #expect(try await remote.get(Remote.player, "CanGoNext") == "false")

            // nil removes every target, as Apple documents.
            center.nextTrackCommand.addTarget { _ in .success }
            center.nextTrackCommand.addTarget { _ in .success }
            _ = try await watcher.waitForLine { $0.contains("CanGoNext=true") }
            center.nextTrackCommand.removeTarget(nil)
            _ = try await watcher.waitForLine { $0.contains("CanGoNext=false") }
        }

        @Test func everyPlayerctlCommandReachesItsHandlerWithTheEventsValues() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }
            let seen = Seen()
            Remote.load(NowPlayingInfo(identifier: "track-1", title: "Song", playbackDuration: .seconds(300)))

            center.playCommand.addTarget { _ in seen.append("play") }
            center.pauseCommand.addTarget { _ in seen.append("pause") }
            center.togglePlayPauseCommand.addTarget { _ in seen.append("togglePlayPause") }
            center.stopCommand.addTarget { _ in seen.append("stop") }
            center.nextTrackCommand.addTarget { _ in seen.append("next") }
            center.previousTrackCommand.addTarget { _ in seen.append("previous") }
            center.changePlaybackPositionCommand.addTarget { event in
                seen.append("position \((event as! MPChangePlaybackPositionCommandEvent).positionTime)")
            }
            center.changeRepeatModeCommand.addTarget { event in
                let event = event as! MPChangeRepeatModeCommandEvent
                center.changeRepeatModeCommand.currentRepeatType = event.repeatType
                return seen.append("repeat \(event.repeatType) preserves=\(event.preservesRepeatMode)")
            }
            center.changeShuffleModeCommand.addTarget { event in
                let event = event as! MPChangeShuffleModeCommandEvent
                center.changeShuffleModeCommand.currentShuffleType = event.shuffleType
                return seen.append("shuffle \(event.shuffleType) preserves=\(event.preservesShuffleMode)")
            }

            for arguments in [
                ["play"], ["pause"], ["play-pause"], ["stop"], ["next"], ["previous"], ["position", "30"],
                ["loop", "Track"], ["loop", "Playlist"], ["shuffle", "On"], ["shuffle", "Off"],
            ] {
                try await remote.playerctl(arguments)
            }
            #expect(
                seen.events == [
                    "play", "pause", "togglePlayPause", "stop", "next", "previous", "position 30.0",
                    "repeat one preserves=false", "repeat all preserves=false", "shuffle items preserves=false",
                    "shuffle off preserves=false",
                ])
            // What the handlers set is what remotes show.
            #expect(try await remote.playerctlOutput("loop") == "Playlist")
            #expect(try await remote.playerctlOutput("shuffle") == "Off")
        }

        @Test func seekSkipsByTheOffsetAndTheExtensionInterfaceByThePreferredInterval() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }
            let seen = Seen()
            Remote.load(NowPlayingInfo(identifier: "track-1", title: "Song", playbackDuration: .seconds(300)))

            center.skipForwardCommand.preferredIntervals = [10, 30]
            center.skipBackwardCommand.preferredIntervals = [5]
            center.skipForwardCommand.addTarget { event in
                seen.append("skipForward \((event as! MPSkipIntervalCommandEvent).interval)")
            }
            center.skipBackwardCommand.addTarget { event in
                seen.append("skipBackward \((event as! MPSkipIntervalCommandEvent).interval)")
            }
            center.seekForwardCommand.addTarget { event in
                seen.append("seekForward \((event as! MPSeekCommandEvent).type)")
            }
            center.seekBackwardCommand.addTarget { event in
                seen.append("seekBackward \((event as! MPSeekCommandEvent).type)")
            }

            #expect(try await remote.get(Remote.player, "CanSeek") == "true")
            #expect(try await remote.get(Remote.ext, "SkipForwardIntervals") == "[10.0, 30.0]")
            try await remote.call(Remote.player, "Seek", "12500000")
            try await remote.call(Remote.player, "Seek", "--", "-4000000")
            try await remote.call(Remote.ext, "SkipForward")
            try await remote.call(Remote.ext, "SkipBackward")
            for method in ["BeginSeekForward", "EndSeekForward", "BeginSeekBackward", "EndSeekBackward"] {
                try await remote.call(Remote.ext, method)
            }
            #expect(
                seen.events == [
                    "skipForward 12.5", "skipBackward 4.0", "skipForward 10.0", "skipBackward 5.0",
                    "seekForward beginSeeking", "seekForward endSeeking", "seekBackward beginSeeking",
                    "seekBackward endSeeking",
                ])
        }

        @Test func setPositionAndSeekWithoutSkipCommandsChangeThePosition() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }
            let seen = Seen()
            Remote.load(NowPlayingInfo(identifier: "track-1", title: "Song", playbackDuration: .seconds(300)))
            center.changePlaybackPositionCommand.addTarget { event in
                seen.append("position \((event as! MPChangePlaybackPositionCommandEvent).positionTime)")
            }

            // The current track's id, from `Metadata`: `{…, 'mpris:trackid': <objectpath '/…'>, …}`.
            let metadata = try await remote.get(Remote.player, "Metadata")
            let trackID = try #require(metadata.firstMatch(of: /objectpath '([^']+)'/)?.1).description
            try await remote.call(Remote.player, "SetPosition", trackID, "42000000")
            // A stale track id is ignored, as the MPRIS specification says.
            try await remote.call(Remote.player, "SetPosition", "/org/mprisbridge/Track/stale", "10000000")
            // Paused at 0 with no skip command: Seek jumps to the position it lands on.
            try await remote.call(Remote.player, "Seek", "5000000")
            #expect(seen.events == ["position 42.0", "position 5.0"])
        }

        @Test func rateFeedbackAndRatingCarryTheirValues() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }
            let seen = Seen()
            Remote.load(NowPlayingInfo(identifier: "track-1", title: "Song", playbackDuration: .seconds(300)))

            center.changePlaybackRateCommand.supportedPlaybackRates = [0.5, 1, 1.5, 2]
            center.changePlaybackRateCommand.addTarget { event in
                seen.append("rate \((event as! MPChangePlaybackRateCommandEvent).playbackRate)")
            }
            center.likeCommand.addTarget { event in
                seen.append("like negative=\((event as! MPFeedbackCommandEvent).isNegative)")
            }
            center.dislikeCommand.addTarget { event in
                seen.append("dislike negative=\((event as! MPFeedbackCommandEvent).isNegative)")
            }
            center.bookmarkCommand.addTarget { event in
                seen.append("bookmark negative=\((event as! MPFeedbackCommandEvent).isNegative)")
            }
            center.ratingCommand.minimumRating = 1
            center.ratingCommand.maximumRating = 5
            center.ratingCommand.addTarget { event in
                seen.append("rating \((event as! MPRatingCommandEvent).rating)")
            }

            #expect(try await remote.get(Remote.player, "MinimumRate") == "0.5")
            #expect(try await remote.get(Remote.player, "MaximumRate") == "2.0")
            try await remote.set(Remote.player, "Rate", "<1.4>")  // snapped to the nearest supported rate
            try await remote.call(Remote.ext, "CycleRate")  // from the rate played (1), the next faster
            #expect(try await remote.get(Remote.ext, "CanLike") == "true")
            // Radio mode: a feedback command is offered. As on iOS, where it swaps the lock screen's
            // button, the previous-track command still reaches the app from remotes.
            #expect(try await remote.get(Remote.ext, "RadioMode") == "true")
            center.previousTrackCommand.addTarget { _ in seen.append("previous") }
            #expect(try await remote.get(Remote.player, "CanGoPrevious") == "true")
            try await remote.call(Remote.player, "Previous")
            try await remote.call(Remote.ext, "Like", "true")
            try await remote.call(Remote.ext, "Like", "false")
            try await remote.call(Remote.ext, "Dislike", "true")
            try await remote.call(Remote.ext, "Bookmark", "true")
            #expect(try await remote.get(Remote.ext, "CanRate") == "true")
            #expect(try await remote.get(Remote.ext, "RatingRange") == "[1.0, 5.0]")
            try await remote.call(Remote.ext, "SetRating", "4.0")
            #expect(
                seen.events == [
                    "rate 1.5", "rate 1.5", "previous", "like negative=false", "like negative=true", "dislike negative=false",
                    "bookmark negative=false", "rating 4.0",
                ])
        }

        @Test func aFailingStatusReachesTheRemoteAsAnErrorAndBadValuesReachNoHandler() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }
            let seen = Seen()
            Remote.load(NowPlayingInfo(identifier: "track-1", title: "Song", playbackDuration: .seconds(300)))

            let statuses: [(MPRemoteCommandHandlerStatus, String)] = [
                (.noSuchContent, "NoSuchContent"), (.noActionableNowPlayingItem, "NoActionableNowPlayingItem"),
                (.deviceNotFound, "DeviceNotFound"), (.commandFailed, "CommandFailed"),
            ]
            let answer = Mutex(MPRemoteCommandHandlerStatus.success)
            center.nextTrackCommand.addTarget { _ in
                seen.append("next")
                return answer.withLock { $0 }
            }
            center.changeRepeatModeCommand.addTarget { _ in seen.append("repeat") }
            center.changePlaybackRateCommand.addTarget { _ in seen.append("rate") }
            center.ratingCommand.addTarget { _ in seen.append("rating") }

            for (status, name) in statuses {
                answer.withLock { $0 = status }
                let next = try await remote.call(Remote.player, "Next", check: false)
                #expect(next.status != 0)
                #expect(next.stderr.contains("org.mprisbridge.Error.\(name)"), "\(next.stderr)")
            }
            #expect(seen.events == ["next", "next", "next", "next"])

            // Refused before any handler: an unknown loop status, a NaN or negative rate, a
            // rating outside the range (0 to 1 by default) or not a number.
            let refusals = try await remote.bus.python(
                """
                import sys, dbus
                player = dbus.SessionBus().get_object(sys.argv[1], "/org/mpris/MediaPlayer2")
                properties = dbus.Interface(player, "org.freedesktop.DBus.Properties")
                extension = dbus.Interface(player, "org.mprisbridge.Player1")
                attempts = [
                    lambda: properties.Set("org.mpris.MediaPlayer2.Player", "LoopStatus", dbus.String("Sometimes", variant_level=1)),
                    lambda: properties.Set("org.mpris.MediaPlayer2.Player", "Rate", dbus.Double(float("nan"), variant_level=1)),
                    lambda: properties.Set("org.mpris.MediaPlayer2.Player", "Rate", dbus.Double(-2.0, variant_level=1)),
                    lambda: extension.SetRating(dbus.Double(1.5)),
                    lambda: extension.SetRating(dbus.Double(float("nan"))),
                ]
                for attempt in attempts:
                    try:
                        attempt()
                        print("ok")
                    except dbus.exceptions.DBusException as error:
                        print(error.get_dbus_name())
                """, [MediaPlayerBus.mprisName])
            #expect(
                refusals.stdout.split(separator: "\n") == Array(
                    repeating: "org.freedesktop.DBus.Error.InvalidArgs", count: 5), "\(refusals.stderr)")
            #expect(seen.events.count == 4)
        }

        @Test func settingsForwardToWhatRemotesSee() async throws {
            let remote = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }

            // Apple's defaults, or MediaRemote's where Apple documents none.
            #expect(center.playCommand.isEnabled)
            #expect(center.skipForwardCommand.preferredIntervals == [15])
            #expect(center.changePlaybackRateCommand.supportedPlaybackRates == [1])
            #expect(center.changeRepeatModeCommand.currentRepeatType == .off)
            #expect(center.changeShuffleModeCommand.currentShuffleType == .off)
            #expect(center.likeCommand.localizedTitle == "Like")
            #expect(!center.likeCommand.isActive)
            #expect(center.ratingCommand.minimumRating == 0 && center.ratingCommand.maximumRating == 1)

            center.skipBackwardCommand.preferredIntervals = [30, -1, NSNumber(value: Double.nan), 10]
            #expect(center.skipBackwardCommand.preferredIntervals == [30, 10])
            #expect(try await remote.get(Remote.ext, "SkipBackwardIntervals") == "[30.0, 10.0]")
            center.changePlaybackRateCommand.supportedPlaybackRates = [2, 1, 0.5, 1, 0]
            #expect(center.changePlaybackRateCommand.supportedPlaybackRates == [0.5, 1, 2])
            #expect(try await remote.get(Remote.ext, "SupportedRates") == "[0.5, 1.0, 2.0]")
            center.changeRepeatModeCommand.currentRepeatType = .all
            #expect(try await remote.get(Remote.player, "LoopStatus") == "'Playlist'")
            center.changeShuffleModeCommand.currentShuffleType = .collections
            #expect(center.changeShuffleModeCommand.currentShuffleType == .collections)
            #expect(try await remote.get(Remote.player, "Shuffle") == "true")
            center.likeCommand.localizedTitle = "Love this song"
            center.likeCommand.localizedShortTitle = "Love"
            center.likeCommand.isActive = true
            #expect(try await remote.get(Remote.ext, "LikeTitle") == "'Love this song'")
            #expect(try await remote.get(Remote.ext, "LikeShortTitle") == "'Love'")
            #expect(try await remote.get(Remote.ext, "LikeActive") == "true")
            center.ratingCommand.minimumRating = 0.1
            center.ratingCommand.maximumRating = 10
            #expect(try await remote.get(Remote.ext, "RatingRange") == "[0.10000000000000001, 10.0]")
            center.changePlaybackRateCommand.supportedPlaybackRates = [1, 1.1]
            #expect(try await remote.get(Remote.ext, "SupportedRates") == "[1.0, 1.1000000000000001]")
        }

        @Test func languageCommandsKeepTheirTargetsThoughNoRemoteSendsThem() async throws {
            _ = try await Remote.start()
            let center = MPRemoteCommandCenter.shared()
            defer { Remote.resetCommands() }

            let token = center.enableLanguageOptionCommand.addTarget { event in
                guard let event = event as? MPChangeLanguageOptionCommandEvent else { return .commandFailed }
                return event.languageOption.isAutomaticLegibleLanguageOption() ? .success : .noSuchContent
            }
            center.disableLanguageOptionCommand.isEnabled = false
            #expect(!center.disableLanguageOptionCommand.isEnabled)
            #expect(center.enableLanguageOptionCommand.isEnabled)
            center.enableLanguageOptionCommand.removeTarget(token)

            let english = MPNowPlayingInfoLanguageOption(
                type: .legible, languageTag: "en", characteristics: ["public.easy-to-read"], displayName: "English",
                identifier: "sub-en")
            let group = MPNowPlayingInfoLanguageOptionGroup(
                languageOptions: [english], defaultLanguageOption: english, allowEmptySelection: true)
            #expect(group.languageOptions.first?.displayName == "English")
            #expect(group.defaultLanguageOption === english)
            #expect(english.languageOptionType == .legible && english.identifier == "sub-en")
            #expect(!english.isAutomaticLegibleLanguageOption())
            // As on iOS, no option an app builds is the system's automatic one, whatever its tag.
            let automatic = MPNowPlayingInfoLanguageOption(
                type: .legible, languageTag: "auto", characteristics: nil, displayName: "Auto", identifier: "auto")
            #expect(!automatic.isAutomaticLegibleLanguageOption() && !automatic.isAutomaticAudibleLanguageOption())
        }

        @Test @MainActor func aMainActorPlayerSetsUpItsCommandsAsOnIOS() async throws {
            let remote = try await Remote.start()
            defer { Remote.resetCommands() }
            let player = AudioPlayer()
            player.setupRemoteTransportControls()

            try await remote.playerctl("play")
            #expect(player.isPlaying)
            try await remote.playerctl("position", "15+")
            #expect(player.elapsed == 15)
            try await remote.playerctl("pause")
            #expect(!player.isPlaying)
        }

        @Test func eventsMadeByTheAppCarryZeroValuesAndACommandOfNoCentre() {
            let event = MPChangePlaybackRateCommandEvent()
            #expect(event.playbackRate == 0)
            #expect(event.command !== MPRemoteCommandCenter.shared().changePlaybackRateCommand)
            #expect(event.timestamp > 0)
            #expect(MPSkipIntervalCommandEvent().interval == 0)
            #expect(MPSeekCommandEvent().type == .beginSeeking)
            #expect(MPChangeRepeatModeCommandEvent().repeatType == .off)
            #expect(MPChangeShuffleModeCommandEvent().shuffleType == .off)
            #expect(MPChangeLanguageOptionCommandEvent().setting == .none)
            #expect(!MPFeedbackCommandEvent().isNegative)
        }

        @Test func rawValuesAreApples() {
            #expect(
                [MPRemoteCommandHandlerStatus.success, .noSuchContent, .noActionableNowPlayingItem, .deviceNotFound, .commandFailed]
                    .map(\.rawValue) == [0, 100, 110, 120, 200])
            #expect([MPRepeatType.off, .one, .all].map(\.rawValue) == [0, 1, 2])
            #expect([MPShuffleType.off, .items, .collections].map(\.rawValue) == [0, 1, 2])
            #expect([MPSeekCommandEventType.beginSeeking, .endSeeking].map(\.rawValue) == [0, 1])
            #expect([MPChangeLanguageOptionSetting.none, .nowPlayingItemOnly, .permanent].map(\.rawValue) == [0, 1, 2])
            #expect([MPNowPlayingInfoLanguageOptionType.audible, .legible].map(\.rawValue) == [0, 1])
        }
    }
}

/// A player as an iOS app writes one: main-actor state, the commands set up once, handlers
/// capturing `self`.
@MainActor private final class AudioPlayer {
    private(set) var isPlaying = false
    private(set) var elapsed: TimeInterval = 0

    func setupRemoteTransportControls() {
        let commandCenter = MPRemoteCommandCenter.shared()
        commandCenter.playCommand.addTarget { [unowned self] _ in
            if isPlaying { return .commandFailed }
            isPlaying = true
            return .success
        }
        commandCenter.pauseCommand.addTarget { [unowned self] _ in
            if !isPlaying { return .commandFailed }
            isPlaying = false
            return .success
        }
        commandCenter.skipForwardCommand.preferredIntervals = [15]
        commandCenter.skipForwardCommand.addTarget { [unowned self] event in
            guard let event = event as? MPSkipIntervalCommandEvent else { return .commandFailed }
            elapsed += event.interval
            return .success
        }
        MediaPlayerRuntime.shared.nowPlaying.nowPlayingInfo = NowPlayingInfo(
            identifier: "episode-1", title: "Episode", playbackDuration: .seconds(3600))
    }
}

/// What the handlers saw, in order (they run on the main thread; the test reads from its own).
/// Marks the main queue, so a handler can tell it runs there. `Thread.isMainThread` cannot: in
/// this process (an async `main`, as Swift Testing's) the main thread calls `dispatch_main()`,
/// which on Linux ends it, and the main queue is drained by a worker thread.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

private final class Seen: Sendable {
    private let state = Mutex<(events: [String], timestamp: TimeInterval)>(([], 0))

    /// Records `event` and returns success, as a handler does.
    @discardableResult
    func append(_ event: String) -> MPRemoteCommandHandlerStatus {
        state.withLock { $0.events.append(event) }
        return .success
    }

    var events: [String] { state.withLock { $0.events } }
    var timestamp: TimeInterval {
        get { state.withLock { $0.timestamp } }
        set { state.withLock { $0.timestamp = newValue } }
    }
}

/// The remotes a user has: playerctl, gdbus and python3-dbus against the process's player.
private struct Remote {
    static let player = "org.mpris.MediaPlayer2.Player"
    static let ext = "org.mprisbridge.Player1"
    let bus: PrivateBus

    /// The private bus, with the player published.
    static func start() async throws -> Remote {
        let bus = try await MediaPlayerBus.start()
        _ = MPRemoteCommandCenter.shared()
        _ = try await LinuxMediaPlayer.playerBusName()
        return Remote(bus: bus)
    }

    /// Loads an item, as `MPNowPlayingInfoCenter` would (`Seek` and `SetPosition` act on it).
    static func load(_ item: NowPlayingInfo?) {
        MediaPlayerRuntime.shared.nowPlaying.nowPlayingInfo = item
    }

    /// Leaves the shared centre as the tests found it: no targets, enabled, default settings,
    /// nothing loaded.
    static func resetCommands() {
        let center = MPRemoteCommandCenter.shared()
        let commands: [MPRemoteCommand] = [
            center.pauseCommand, center.playCommand, center.stopCommand, center.togglePlayPauseCommand,
            center.enableLanguageOptionCommand, center.disableLanguageOptionCommand, center.changePlaybackRateCommand,
            center.changeRepeatModeCommand, center.changeShuffleModeCommand, center.nextTrackCommand,
            center.previousTrackCommand, center.skipForwardCommand, center.skipBackwardCommand,
            center.seekForwardCommand, center.seekBackwardCommand, center.changePlaybackPositionCommand,
            center.ratingCommand, center.likeCommand, center.dislikeCommand, center.bookmarkCommand,
        ]
        for command in commands {
            command.removeTarget(nil)
            command.isEnabled = true
        }
        center.skipForwardCommand.preferredIntervals = [15]
        center.skipBackwardCommand.preferredIntervals = [15]
        center.changePlaybackRateCommand.supportedPlaybackRates = [1]
        center.changeRepeatModeCommand.currentRepeatType = .off
        center.changeShuffleModeCommand.currentShuffleType = .off
        for (command, title) in [(center.likeCommand, "Like"), (center.dislikeCommand, "Dislike"), (center.bookmarkCommand, "Bookmark")] {
            command.localizedTitle = title
            command.localizedShortTitle = title
            command.isActive = false
        }
        center.ratingCommand.minimumRating = 0
        center.ratingCommand.maximumRating = 1
        load(nil)
    }

    /// Starts the MPRIS tests' `Tests/MPRISTests/Python/watch_player.py` (a line per signal of the
    /// player object) and returns once it is subscribed.
    func watch() async throws -> ChildProcess {
        let watcher = try bus.spawn(
            PrivateBus.systemPython,
            ["-u", repositoryRoot + "/Tests/MPRISTests/Python/watch_player.py", MediaPlayerBus.mprisName])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }

    /// Runs `playerctl ARGUMENTS` against the player; it must succeed.
    func playerctl(_ arguments: String...) async throws { try await playerctl(arguments) }

    func playerctl(_ arguments: [String]) async throws {
        let output = try await bus.run("playerctl", ["--player=\(MediaPlayerBus.playerName)"] + arguments)
        #expect(output.status == 0, "playerctl \(arguments): \(output.stderr)")
    }

    /// What `playerctl ARGUMENTS` prints, without the final newline.
    func playerctlOutput(_ arguments: String...) async throws -> String {
        let output = try await bus.run("playerctl", ["--player=\(MediaPlayerBus.playerName)"] + arguments)
        return String(output.stdout.dropLast())
    }

    /// Calls a method with gdbus; by default it must succeed.
    @discardableResult
    func call(_ interface: String, _ method: String, _ arguments: String..., check: Bool = true) async throws
        -> ProcessOutput
    {
        let output = try await bus.run(
            "gdbus",
            ["call", "--session", "--dest", MediaPlayerBus.mprisName, "--object-path", "/org/mpris/MediaPlayer2",
             "--method", "\(interface).\(method)"] + arguments)
        if check { #expect(output.status == 0, "\(method) \(arguments): \(output.stderr)") }
        return output
    }

    /// A property's value as gdbus prints it inside its variant (`true`, `1.5`, `'Track'`, `[1.0, 2.0]`).
    func get(_ interface: String, _ property: String) async throws -> String {
        let output = try await call("org.freedesktop.DBus.Properties", "Get", interface, property)
        let text = output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // `(<VALUE>,)`
        guard text.hasPrefix("(<"), text.hasSuffix(">,)") else { return text }
        return String(text.dropFirst(2).dropLast(3))
    }

    /// Writes a property with gdbus (`value` in GVariant text, such as `<1.5>`).
    func set(_ interface: String, _ property: String, _ value: String) async throws {
        try await call("org.freedesktop.DBus.Properties", "Set", interface, property, value)
    }
}
