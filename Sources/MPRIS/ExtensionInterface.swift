import DBus
import MediaRemote

/// `org.mprisbridge.Player1`, next to the MPRIS interfaces on
/// `/org/mpris/MediaPlayer2`: what Apple's command centre has and MPRIS lacks.
///
/// - Feedback: like, dislike and bookmark, each with `Can…` (available),
///   `…Active` (the current item has it), `…Title` and `…ShortTitle`
///   (localized button labels), and a method taking the state to set.
///   `RadioMode` is true while any of them is available; the Player's
///   `CanGoPrevious` is then false.
/// - Scanning: `Begin/EndSeekForward`, `Begin/EndSeekBackward` (fast-forward
///   and rewind while a button is held), with `CanSeekForward/Backward`.
/// - Skipping by the app's preferred intervals (seconds), for skip buttons.
/// - Rating: `SetRating` rates the current item within `RatingRange` (minimum, maximum), with
///   `CanRate`; a rating outside the range, or not a number, is `InvalidArgs`.
/// - Rates: `SupportedRates`, and `CycleRate`, which moves to the next
///   faster supported rate and wraps from the fastest to the slowest.
///
/// - The audio session: `OutputRoutes` (identifier and name of each output a listener can
///   choose), `OutputRoute` (the one in use; empty for the system's default) and
///   `SelectOutputRoute`, with `CanSelectOutputRoute`; `ReplayGain` (`off`, `track` or
///   `album`, written to choose), with `CanSetReplayGain`.
/// - Interruptions: `Interrupted` is true while the player is paused because the system
///   gave the output to a more important stream (a call, a navigation prompt); the Player's
///   `PlaybackStatus` says `Paused` meanwhile, as MPRIS has no other word for it.
///
/// Changes are signalled with `PropertiesChanged`, like the MPRIS interfaces.
final class ExtensionInterface: Sendable {
    static let name: InterfaceName = "org.mprisbridge.Player1"

    let interface = Interface(ExtensionInterface.name)
    private let commands: RemoteCommandCenter
    private let nowPlaying: NowPlayingInfoCenter
    private let audioSession: AudioSession?
    private let feedback: [(RemoteCommand<FeedbackCommandEvent>, FeedbackProperties)]
    let radioMode: Property<Bool>
    let canSeekForward: Property<Bool>
    let canSeekBackward: Property<Bool>
    let canSkipForward: Property<Bool>
    let canSkipBackward: Property<Bool>
    let skipForwardIntervals: Property<[Double]>
    let skipBackwardIntervals: Property<[Double]>
    let supportedRates: Property<[Double]>
    let canRate: Property<Bool>
    let ratingRange: Property<[Double]>
    let interrupted: Property<Bool>
    let outputRoutes: Property<[RouteEntry]>
    let outputRoute: Property<String>
    let canSelectOutputRoute: Property<Bool>
    let replayGain: Property<String>
    let canSetReplayGain: Property<Bool>

    /// An output as `OutputRoutes` lists it: `(identifier, name)`.
    struct RouteEntry: DBusRepresentable, Equatable {
        var identifier: String
        var name: String

        static var dbusType: DBusType { .structure([.string, .string]) }
        var dbusValue: DBusValue { .structure([identifier.dbusValue, name.dbusValue]) }
        init(identifier: String, name: String) {
            self.identifier = identifier
            self.name = name
        }
        init(dbusValue: DBusValue) throws {
            let fields = try dbusValue.structureFields(count: 2)
            (identifier, name) = (try String(dbusValue: fields[0]), try String(dbusValue: fields[1]))
        }
    }

    struct FeedbackProperties: Sendable {
        let available: Property<Bool>
        let active: Property<Bool>
        let title: Property<String>
        let shortTitle: Property<String>
    }

    init(commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter, audioSession: AudioSession?) {
        self.commands = commands
        self.nowPlaying = nowPlaying
        self.audioSession = audioSession
        let interface = self.interface

        func declareFeedback(
            _ command: RemoteCommand<FeedbackCommandEvent>, method: MemberName, verb: String,
            _ can: MemberName, _ active: MemberName, _ title: MemberName, _ shortTitle: MemberName
        ) -> (RemoteCommand<FeedbackCommandEvent>, FeedbackProperties) {
            interface.method(method, arguments: ["Active"]) { (active: Bool) async throws in
                try await command.performForRemote(
                    FeedbackCommandEvent(isNegative: !active), action: active ? verb : "undo \(verb)")
            }
            return (
                command,
                FeedbackProperties(
                    available: interface.property(can, false),
                    active: interface.property(active, false),
                    title: interface.property(title, command.localizedTitle),
                    shortTitle: interface.property(shortTitle, command.localizedShortTitle))
            )
        }
        feedback = [
            declareFeedback(
                commands.likeCommand, method: "Like", verb: "like the item",
                "CanLike", "LikeActive", "LikeTitle", "LikeShortTitle"),
            declareFeedback(
                commands.dislikeCommand, method: "Dislike", verb: "dislike the item",
                "CanDislike", "DislikeActive", "DislikeTitle", "DislikeShortTitle"),
            declareFeedback(
                commands.bookmarkCommand, method: "Bookmark", verb: "bookmark the item",
                "CanBookmark", "BookmarkActive", "BookmarkTitle", "BookmarkShortTitle"),
        ]
        radioMode = interface.property("RadioMode", false)

        interface.method("BeginSeekForward") { () async throws in
            try await commands.seekForwardCommand.performForRemote(.init(.beginSeeking), action: "scan forward")
        }
        interface.method("EndSeekForward") { () async throws in
            try await commands.seekForwardCommand.performForRemote(.init(.endSeeking), action: "end scanning")
        }
        interface.method("BeginSeekBackward") { () async throws in
            try await commands.seekBackwardCommand.performForRemote(.init(.beginSeeking), action: "scan backward")
        }
        interface.method("EndSeekBackward") { () async throws in
            try await commands.seekBackwardCommand.performForRemote(.init(.endSeeking), action: "end scanning")
        }
        canSeekForward = interface.property("CanSeekForward", false)
        canSeekBackward = interface.property("CanSeekBackward", false)

        interface.method("SkipForward") { () async throws in
            let command = commands.skipForwardCommand
            guard let interval = command.preferredIntervals.first else { return }
            try await command.performForRemote(SkipIntervalCommandEvent(interval: interval), action: "skip forward")
        }
        interface.method("SkipBackward") { () async throws in
            let command = commands.skipBackwardCommand
            guard let interval = command.preferredIntervals.first else { return }
            try await command.performForRemote(SkipIntervalCommandEvent(interval: interval), action: "skip backward")
        }
        canSkipForward = interface.property("CanSkipForward", false)
        canSkipBackward = interface.property("CanSkipBackward", false)
        skipForwardIntervals = interface.property("SkipForwardIntervals", [Double]())
        skipBackwardIntervals = interface.property("SkipBackwardIntervals", [Double]())

        interface.method("CycleRate", results: ["Rate"]) { () async throws -> Double in
            let command = commands.changePlaybackRateCommand
            let current = nowPlaying.nowPlayingInfo?.nominalRate ?? 1
            guard command.isAvailable else { return current }
            let next = command.options.supportedRate(after: current)
            try await command.performForRemote(ChangePlaybackRateCommandEvent(playbackRate: next), action: "change the rate")
            return nowPlaying.nowPlayingInfo?.nominalRate ?? 1
        }
        supportedRates = interface.property("SupportedRates", [1.0])

        interface.method("SetRating", arguments: ["Rating"]) { (rating: Double) async throws in
            let command = commands.ratingCommand
            let range = command.options
            guard range.accepts(rating) else {
                throw DBusError(
                    .invalidArgs,
                    "Rating must be between \(range.minimumRating) and \(range.maximumRating) (RatingRange), not \(rating).")
            }
            try await command.performForRemote(RatingCommandEvent(rating: rating), action: "rate the item")
        }
        canRate = interface.property("CanRate", false)
        ratingRange = interface.property("RatingRange", [0.0, 1.0])
        interrupted = interface.property("Interrupted", false)

        interface.method("SelectOutputRoute", arguments: ["Identifier"]) { (identifier: String) async throws in
            guard let audioSession else { throw DBusError(.notSupported, "The player cannot choose its audio output.") }
            do throws(AudioSession.RequestError) {
                try await audioSession.selectOutputRoute(identifier)
            } catch .invalidArgument(let reason) {
                // The session knows no D-Bus: the interface says where its outputs are listed.
                throw DBusError(.invalidArgs, reason + "; OutputRoutes lists the outputs.")
            }
        }
        outputRoutes = interface.property("OutputRoutes", [RouteEntry]())
        outputRoute = interface.property("OutputRoute", "")
        canSelectOutputRoute = interface.property("CanSelectOutputRoute", false)
        replayGain = interface.property("ReplayGain", "off", access: .readWrite) { (requested: String) async throws in
            guard let audioSession else { throw DBusError(.notSupported, "The player has no ReplayGain.") }
            try await audioSession.setReplayGain(Self.replayGainMode(requested, of: audioSession))
            return audioSession.replayGain.rawValue
        }
        canSetReplayGain = interface.property("CanSetReplayGain", false)
    }

    /// The mode a remote wrote to `ReplayGain`: its D-Bus name (`off`, `track` or `album`),
    /// parsed here since the session knows no D-Bus. Another name is an invalid argument; to a
    /// player without ReplayGain any name goes on, for the session to refuse as unsupported.
    private static func replayGainMode(
        _ name: String, of audioSession: AudioSession
    ) throws(AudioSession.RequestError) -> AudioSession.ReplayGainMode {
        if let mode = AudioSession.ReplayGainMode(rawValue: name) { return mode }
        guard audioSession.canSetReplayGain else { return .off }
        throw .invalidArgument("Invalid ReplayGain mode \"\(name.prefix(200))\": off, track or album")
    }

    /// Follows the audio session: outputs, the one in use, ReplayGain.
    func refreshAudioSession() {
        guard let audioSession else { return }
        interface.batch {
            outputRoutes.value = audioSession.outputRoutes.map { RouteEntry(identifier: $0.identifier, name: $0.name) }
            outputRoute.value = audioSession.currentOutputRoute ?? ""
            canSelectOutputRoute.value = audioSession.canSelectOutputRoute
            replayGain.value = audioSession.replayGain.rawValue
            canSetReplayGain.value = audioSession.canSetReplayGain
        }
    }

    /// Follows the now-playing state: whether playback is interrupted.
    func refreshNowPlaying() {
        interrupted.value = nowPlaying.nowPlayingInfo?.playbackState == .interrupted
    }

    func refresh() {
        interface.batch {
            for (command, properties) in feedback {
                let options = command.options
                properties.available.value = command.isAvailable
                properties.active.value = options.isActive
                properties.title.value = options.localizedTitle
                properties.shortTitle.value = options.localizedShortTitle
            }
            radioMode.value = commands.isInRadioMode
            canSeekForward.value = commands.seekForwardCommand.isAvailable
            canSeekBackward.value = commands.seekBackwardCommand.isAvailable
            canSkipForward.value = commands.skipForwardCommand.isAvailable
            canSkipBackward.value = commands.skipBackwardCommand.isAvailable
            skipForwardIntervals.value = commands.skipForwardCommand.preferredIntervals.map(\.seconds)
            skipBackwardIntervals.value = commands.skipBackwardCommand.preferredIntervals.map(\.seconds)
            supportedRates.value = commands.changePlaybackRateCommand.supportedPlaybackRates
            canRate.value = commands.ratingCommand.isAvailable
            ratingRange.value = [commands.ratingCommand.minimumRating, commands.ratingCommand.maximumRating]
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
