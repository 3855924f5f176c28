import BenchmarkSupport

/// The goals, from `Thresholds/PeerBenchmark.json`: each a limit on the daemon's figure, most as
/// a multiple of one peer's figure in the same run.
enum Goals {
    static let file = ThresholdFile(benchmark: "PeerBenchmark")
    /// exec -> bus name, median: at most this many times VLC's.
    static let execToNameOverVLC = file["execToNameOverVLC"]
    /// GetAll(Player) p50 / Peer.Ping p50 to the same process, at most.
    static let getAllOverPing = file["getAllOverPing"]
    /// PlayPause -> PropertiesChanged(PlaybackStatus) p50: at most this many times VLC's.
    static let playPauseToSignalOverVLC = file["playPauseToSignalOverVLC"]
    /// RSS paused: at most this many times VLC's.
    static let rssPausedOverVLC = file["rssPausedOverVLC"]
    /// CPU while playing to PulseAudio: at most this many times mpd's.
    static let playingCPUOverMPD = file["playingCPUOverMPD"]
    /// Context switches per second while playing, at most (absolute)...
    static let switchesPerSecondMax = file["switchesPerSecondMax"]
    /// ...and at most this many times mpd's.
    static let switchesPerSecondOverMPD = file["switchesPerSecondOverMPD"]
    /// The sound server's CPU while the player plays: at most this many times its CPU while mpd plays.
    static let soundServerCPUOverMPD = file["soundServerCPUOverMPD"]
    /// Errors among the replies of two PlayPause sent at once by one client, at most.
    static let doubleTapErrors = file["doubleTapErrors"]
    /// Errors among the replies of one PlayPause from each of many clients at once, at most.
    static let burstErrors = file["burstErrors"]
}

/// One figure of every player: its label, unit, how to read it, and whether lower is better.
struct Figure: Sendable {
    let key: String
    let label: String
    let digits: Int
    /// Taken while, or after, the player played: meaningless for a player that did not play (a
    /// peer whose output never started holds less, or more, and does no work).
    var needsPlayback = false
    let value: @Sendable (PlayerFigures) -> Double?
}

/// One goal: the daemon's figure against a limit, absolute or a multiple of a peer's figure.
struct Goal: Sendable {
    let figure: Figure
    let factor: Double
    /// The peer whose figure the factor multiplies; nil for an absolute limit.
    let reference: PlayerKind?
}

struct PeerReport {
    let options: Options
    let results: [PlayerFigures]
    let serverBaseline: ActivityWindow?
    let totalSeconds: Double

    static let figures: [Figure] = [
        Figure(key: "execToNameMilliseconds", label: "exec -> bus name, ms (median)", digits: 1) { $0.execToNameMilliseconds },
        Figure(key: "getAllP50Microseconds", label: "GetAll(Player) p50, µs", digits: 0) { $0.getAll?.p50 },
        Figure(key: "pingP50Microseconds", label: "Peer.Ping p50, µs", digits: 0) { $0.ping?.p50 },
        Figure(key: "getAllOverPing", label: "GetAll / Ping", digits: 2) { $0.getAllOverPing },
        Figure(key: "playPauseToWatcherP50Microseconds", label: "PlayPause -> signal, watcher p50, µs", digits: 0) {
            $0.toggleWatched?.p50
        },
        Figure(key: "playPauseToSignalP50Microseconds", label: "PlayPause -> signal, caller p50, µs", digits: 0) {
            $0.toggleSignal?.p50
        },
        Figure(key: "playPauseToShellCallerP50Microseconds", label: "PlayPause -> signal, GDBus p50, µs", digits: 0) {
            $0.toggleShellCaller?.p50
        },
        Figure(key: "playPauseReplyP50Microseconds", label: "PlayPause -> reply p50, µs", digits: 0) { $0.toggleReply?.p50 },
        Figure(key: "signalsBeforeReply", label: "  toggles signalled before reply", digits: 0) {
            $0.toggleSignal == nil ? nil : Double($0.signalsBeforeReply)
        },
        Figure(key: "rssPausedMegabytes", label: "RSS paused 8 s, MB", digits: 1, needsPlayback: true) { $0.rssPaused.map { Double($0) / 1024 } },
        Figure(key: "rssPausedEarlyMegabytes", label: "RSS paused 2 s, MB", digits: 1, needsPlayback: true) { $0.rssPausedEarly.map { Double($0) / 1024 } },
        Figure(key: "rssPlayingMegabytes", label: "RSS playing, MB", digits: 1, needsPlayback: true) { $0.rssPlaying.map { Double($0) / 1024 } },
        Figure(key: "rssPeakMegabytes", label: "RSS peak (VmHWM), MB", digits: 1, needsPlayback: true) { $0.rssPeak.map { Double($0) / 1024 } },
        Figure(key: "playingAdvancedSeconds", label: "playing: Position advanced, s", digits: 1) { $0.advancedSeconds },
        Figure(key: "playingCPUPercent", label: "playing: CPU %", digits: 2, needsPlayback: true) { cpuPercent($0.playing) },
        Figure(key: "playingSwitchesPerSecond", label: "playing: switches/s", digits: 0, needsPlayback: true) { switchesPerSecond($0.playing) },
        Figure(key: "playingVoluntarySwitchesPerSecond", label: "  of them voluntary", digits: 0, needsPlayback: true) {
            $0.playing.map { Double($0.voluntarySwitches) / $0.seconds }
        },
        Figure(key: "playingThreads", label: "playing: threads", digits: 0, needsPlayback: true) { $0.playing.map { Double($0.threadCount) } },
        Figure(key: "soundServerCPUPercent", label: "playing: sound server CPU %", digits: 2, needsPlayback: true) { cpuPercent($0.server) },
        Figure(key: "soundServerSwitchesPerSecond", label: "playing: sound server switches/s", digits: 0, needsPlayback: true) {
            switchesPerSecond($0.server)
        },
        Figure(key: "mprisProcessRSSPausedMegabytes", label: "MPRIS process apart: RSS MB", digits: 1) {
            $0.mprisRSSPaused.map { Double($0) / 1024 }
        },
        Figure(key: "mprisProcessPlayingCPUPercent", label: "MPRIS process apart: CPU %", digits: 2) {
            cpuPercent($0.mprisPlaying)
        },
        Figure(key: "mprisProcessPlayingSwitchesPerSecond", label: "MPRIS process apart: switches/s", digits: 0) {
            switchesPerSecond($0.mprisPlaying)
        },
        Figure(key: "doubleTapErrors", label: "double tap: errors", digits: 0) {
            $0.doubleTapCalls == 0 ? nil : Double($0.doubleTapErrors)
        },
        Figure(key: "burstErrors", label: "many clients at once: errors", digits: 0) {
            $0.burstCalls == 0 ? nil : Double($0.burstErrors)
        },
    ]

    private static func figure(_ key: String) -> Figure { figures.first { $0.key == key }! }

    static let goals: [Goal] = [
        Goal(figure: figure("execToNameMilliseconds"), factor: Goals.execToNameOverVLC, reference: .vlc),
        Goal(figure: figure("getAllOverPing"), factor: Goals.getAllOverPing, reference: nil),
        Goal(figure: figure("playPauseToSignalP50Microseconds"), factor: Goals.playPauseToSignalOverVLC, reference: .vlc),
        Goal(figure: figure("rssPausedMegabytes"), factor: Goals.rssPausedOverVLC, reference: .vlc),
        Goal(figure: figure("playingCPUPercent"), factor: Goals.playingCPUOverMPD, reference: .mpd),
        Goal(figure: figure("playingSwitchesPerSecond"), factor: Goals.switchesPerSecondMax, reference: nil),
        Goal(figure: figure("playingSwitchesPerSecond"), factor: Goals.switchesPerSecondOverMPD, reference: .mpd),
        Goal(figure: figure("soundServerCPUPercent"), factor: Goals.soundServerCPUOverMPD, reference: .mpd),
        Goal(figure: figure("doubleTapErrors"), factor: Goals.doubleTapErrors, reference: nil),
        Goal(figure: figure("burstErrors"), factor: Goals.burstErrors, reference: nil),
    ]

    private func result(_ kind: PlayerKind) -> PlayerFigures? { results.first { $0.kind == kind && $0.missing == nil } }

    /// Whether `player` played through the window: its Position advanced at least 80 % of it.
    private func played(_ player: PlayerFigures) -> Bool {
        (player.advancedSeconds ?? 0) >= 0.8 * Double(options.window)
    }

    /// `player`'s `figure`, unless the figure needs playback and the player did not play.
    private func comparable(_ figure: Figure, of player: PlayerFigures) -> Double? {
        guard !figure.needsPlayback || played(player) else { return nil }
        return figure.value(player)
    }

    /// The outcome of one goal: the limit (nil when the reference peer is missing) and whether it is met.
    private func judge(_ goal: Goal) -> (daemon: Double?, limit: Double?, met: Bool?) {
        let daemon = result(.daemon).flatMap(goal.figure.value)
        let limit: Double? =
            goal.reference.map { reference in
                result(reference).flatMap { comparable(goal.figure, of: $0) }.map { $0 * goal.factor }
            }
            ?? goal.factor
        guard let daemon, let limit else { return (daemon, limit, nil) }
        return (daemon, limit, daemon <= limit)
    }

    /// The best (lowest) peer's figure and its name.
    private func best(_ figure: Figure) -> (value: Double, name: String)? {
        results.filter { $0.kind != .daemon && $0.missing == nil }
            .compactMap { peer in comparable(figure, of: peer).map { ($0, peer.kind.label) } }
            .min { $0.0 < $1.0 }
    }

    /// Prints the tables, writes the JSON; returns the exit status.
    func print() -> Int32 {
        let width = 36
        let column = 14
        Swift.print(
            "PeerBenchmark: \(options.starts) starts, \(options.iterations) round trips of each kind, \(options.toggles) toggles, "
                + "a \(options.window) s playing window, \(options.doubleTaps) double taps, \(options.clients) clients at once; "
                + "one private bus, one private PulseAudio (null sink), players one at a time")
        Swift.print(pad("", width, right: false) + results.map { pad($0.kind.label, column) }.joined())
        for figure in Self.figures {
            let values = results.map { $0.missing == nil ? figure.value($0) : nil }
            // A row empty for every player (the MPRIS process apart, with no such peer) is left out.
            guard values.contains(where: { $0 != nil }) else { continue }
            let cells = zip(results, values).map { result, value in
                pad(result.missing != nil ? "-" : value.map { fixed($0, figure.digits) } ?? "", column)
            }
            Swift.print(pad(figure.label, width, right: false) + cells.joined())
        }
        let calls = results.first { $0.missing == nil }
        if let calls {
            Swift.print(
                "  (errors of \(calls.doubleTapCalls) double-tap replies and of \(calls.burstCalls) replies to "
                    + "\(options.clients) clients at once)")
        }
        if let serverBaseline {
            Swift.print(
                "  sound server alone (null sink, no stream): CPU \(fixed(cpuPercent(serverBaseline) ?? 0, 2)) %, "
                    + "\(fixed(switchesPerSecond(serverBaseline) ?? 0, 0)) switches/s")
        }
        for result in results {
            if let missing = result.missing { Swift.print("  \(result.kind.label): missing: \(missing)") }
            if result.missing == nil, let advanced = result.advancedSeconds, advanced < 0.8 * Double(options.window) {
                Swift.print(
                    "  \(result.kind.label): its Position advanced \(fixed(advanced, 1)) s in the \(options.window) s playing window: "
                        + "its memory and playing figures are not compared")
            }
            if result.missing == nil && result.streamsWhilePlaying == 0 {
                Swift.print("  \(result.kind.label): the sound server listed no stream while it played")
            }
            for note in result.notes { Swift.print("  \(result.kind.label): \(note)") }
        }

        Swift.print("")
        Swift.print(
            pad("goal (mpris-bridge)", width, right: false) + pad("daemon", 10) + pad("best peer", 10) + "  "
                + pad("", 12, right: false) + pad("ratio", 7) + "  " + pad("goal", 36, right: false) + "  met")
        var missed: [String] = []
        var checks: [JSON] = []
        for goal in Self.goals {
            let (daemon, limit, met) = judge(goal)
            let bestPeer = best(goal.figure)
            let ratio = daemon.flatMap { daemon in bestPeer.flatMap { $0.value > 0 ? daemon / $0.value : nil } }
            let limitText = limit.map { " = \(fixed($0, goal.figure.digits))" } ?? " (missing, or did not play)"
            let goalText =
                goal.reference.map { "<= \(fixed(goal.factor, 2)) x \($0.label)" + limitText }
                ?? "<= \(fixed(goal.factor, goal.figure.digits))"
            let mark = met.map { $0 ? "yes" : "NO" } ?? "n/a"
            Swift.print(
                pad(goal.figure.label, width, right: false) + pad(daemon.map { fixed($0, goal.figure.digits) } ?? "-", 10)
                    + pad(bestPeer.map { fixed($0.value, goal.figure.digits) } ?? "-", 10) + "  "
                    + pad(bestPeer?.name ?? "", 12, right: false) + pad(ratio.map { fixed($0, 2) } ?? "-", 7) + "  "
                    + pad(goalText, 36, right: false) + "  " + mark)
            if met == false { missed.append(goal.figure.label + " " + goalText) }
            checks.append(
                .object([
                    ("figure", .string(goal.figure.key)), ("factor", .number(goal.factor)),
                    ("reference", goal.reference.map { .string($0.rawValue) } ?? .null),
                    ("limit", limit.map(JSON.number) ?? .null), ("daemon", daemon.map(JSON.number) ?? .null),
                    ("bestPeer", bestPeer.map { .string($0.name) } ?? .null),
                    ("bestPeerValue", bestPeer.map { .number($0.value) } ?? .null),
                    ("met", met.map(JSON.bool) ?? .null),
                ]))
        }
        for goal in missed { Swift.print("GOAL MISSED: \(goal)") }
        Swift.print("total \(fixed(totalSeconds, 1)) s")

        if let path = options.jsonPath {
            let players = results.map { result -> JSON in
                var fields: [(String, JSON)] = [("player", .string(result.kind.rawValue)), ("label", .string(result.kind.label))]
                fields.append(("missing", result.missing.map(JSON.string) ?? .null))
                for figure in Self.figures { fields.append((figure.key, figure.value(result).map(JSON.number) ?? .null)) }
                fields.append(("execToNameMillisecondsEach", .array(result.execToName.map { .number(Double($0) / 1e6) })))
                if let getAll = result.getAll { fields.append(("getAll", getAll.json)) }
                if let ping = result.ping { fields.append(("ping", ping.json)) }
                if let watched = result.toggleWatched { fields.append(("playPauseToWatcher", watched.json)) }
                if let signal = result.toggleSignal { fields.append(("playPauseToSignal", signal.json)) }
                if let shell = result.toggleShellCaller { fields.append(("playPauseToShellCaller", shell.json)) }
                if let reply = result.toggleReply { fields.append(("playPauseReply", reply.json)) }
                if let playing = result.playing { fields.append(("playingWindow", playing.json)) }
                if let playing = result.mprisPlaying { fields.append(("mprisProcessPlayingWindow", playing.json)) }
                if let server = result.server { fields.append(("soundServerWindow", server.json)) }
                fields.append(("doubleTapCalls", .integer(result.doubleTapCalls)))
                fields.append(("burstCalls", .integer(result.burstCalls)))
                fields.append(("streamsWhilePlaying", .integer(result.streamsWhilePlaying)))
                fields.append(("notes", .array(result.notes.map(JSON.string))))
                return .object(fields)
            }
            let json = JSON.object([
                (
                    "configuration",
                    .object([
                        ("starts", .integer(options.starts)), ("iterations", .integer(options.iterations)),
                        ("toggles", .integer(options.toggles)), ("windowSeconds", .integer(options.window)),
                        ("doubleTaps", .integer(options.doubleTaps)), ("clients", .integer(options.clients)),
                    ])
                ),
                ("players", .array(players)),
                ("soundServerBaseline", serverBaseline?.json ?? .null),
                ("goals", .array(checks)),
                ("passed", .bool(missed.isEmpty)),
                ("totalSeconds", .number(totalSeconds)),
            ])
            do { try json.write(to: path) } catch {
                writeError("PeerBenchmark: cannot write \(path): \(error)\n")
                return 2
            }
        }
        return missed.isEmpty ? 0 : 1
    }
}
