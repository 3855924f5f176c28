import MediaRemote
import MusicLibrary
import Playback
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MPDCommands {
    /// `status`, `currentsong`, `stats`, `urlhandlers`, `config`.
    static let statusCommands: [(String, MPDPermissions, Command)] = [
        ("status", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            return try await c.status(client)
        }),
        ("currentsong", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            var response = client.response()
            guard let entry = await c.currentEntry() else { return response }
            try await c.write([entry], to: &response, client: client)
            return response
        }),
        ("stats", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            return try await c.stats(client)
        }),
        ("urlhandlers", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            var response = client.response()
            for scheme in ["http://", "https://"] { try response.add("handler", scheme) }
            return response
        }),
        // Where the music is, for a local client that reads covers from the folders itself
        // (mpd answers it only over its local socket, as here).
        ("config", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            guard client.isLocal else { throw .permission }
            var response = client.response()
            try response.add("music_directory", c.environment.library.root)
            return response
        }),
    ]

    /// Playback, volume, modes and ReplayGain.
    static let playbackCommands: [(String, MPDPermissions, Command)] = [
        ("play", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            if let position = a.first {
                let position = try Arguments.integer(position)
                // `play -1` is mpd's "play, resuming the current song".
                if position >= 0 { return try await c.play(position: position) }
            }
            // As mpd, playing an empty queue does nothing.
            guard await c.environment.player.queueSummary.count > 0 else { return client.response() }
            try await c.perform(c.environment.commands.playCommand, RemoteCommandEvent(), "play")
            await c.noteActiveEntry()
            return client.response()
        }),
        ("playid", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            if let id = a.first {
                let id = try Arguments.integer(id)
                if id >= 0 { return try await c.play(songID: id) }
            }
            guard await c.environment.player.queueSummary.count > 0 else { return client.response() }
            try await c.perform(c.environment.commands.playCommand, RemoteCommandEvent(), "play")
            await c.noteActiveEntry()
            return client.response()
        }),
        ("pause", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            let commands = c.environment.commands
            let pause = try a.first.map(Arguments.boolean)
            // As mpd, pausing (or toggling) when stopped does nothing: it does not start playback.
            guard await c.environment.player.queueSummary.state != .stopped else { return client.response() }
            switch pause {
            case nil: try await c.perform(commands.togglePlayPauseCommand, RemoteCommandEvent(), "pause")
            case true?: try await c.perform(commands.pauseCommand, RemoteCommandEvent(), "pause")
            case false?:
                // mpd's `pause 0` resumes a paused song and does nothing when stopped.
                if c.environment.nowPlaying.nowPlayingInfo?.playbackState == .paused {
                    try await c.perform(commands.playCommand, RemoteCommandEvent(), "resume")
                }
            }
            return client.response()
        }),
        ("stop", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            try await c.perform(c.environment.commands.stopCommand, RemoteCommandEvent(), "stop")
            return client.response()
        }),
        ("next", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            try await c.requirePlaying()
            try await c.perform(c.environment.commands.nextTrackCommand, RemoteCommandEvent(), "go to the next song")
            return client.response()
        }),
        ("previous", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            try await c.requirePlaying()
            try await c.perform(
                c.environment.commands.previousTrackCommand, RemoteCommandEvent(), "go to the previous song")
            return client.response()
        }),
        ("seek", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let position = try Arguments.unsigned(a[0])
            let time = try Arguments.seconds(a[1])
            return try await c.seek(to: time, position: position, client)
        }),
        ("seekid", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let id = try Arguments.unsigned(a[0])
            let time = try Arguments.seconds(a[1])
            return try await c.seek(to: time, songID: id, client)
        }),
        ("seekcur", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let text = a[0]
            let relative = text.hasPrefix("+") || text.hasPrefix("-")
            let value = try Arguments.seconds(text, signed: relative)
            guard let info = c.environment.nowPlaying.nowPlayingInfo, info.playbackState != .stopped else {
                throw MPDError(.playerSync, "Not playing")
            }
            let now = (c.environment.nowPlaying.position() ?? .zero).seconds
            let target = max(0, relative ? now + value : value)
            try await c.perform(
                c.environment.commands.changePlaybackPositionCommand,
                ChangePlaybackPositionCommandEvent(positionTime: .milliseconds(Int64(target * 1000))), "seek")
            return client.response()
        }),
        ("setvol", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let volume = try Arguments.unsigned(a[0], maximum: 100)
            try await c.setVolume(volume)
            return client.response()
        }),
        ("volume", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let change = try Arguments.integer(a[0])
            guard (-100...100).contains(change) else { throw .argument("Number too large: \(a[0])") }
            try await c.setVolume(min(100, max(0, c.volumePercent + change)))
            return client.response()
        }),
        ("getvol", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            var response = client.response()
            try response.add("volume", c.volumePercent)
            return response
        }),
        ("repeat", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            try await c.setRepeat(try Arguments.boolean(a[0]))
            return client.response()
        }),
        ("random", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let on = try Arguments.boolean(a[0])
            // mpd forgets the current song when random changes while stopped (its play order
            // is drawn anew); playing, it keeps it.
            if await c.environment.player.queueSummary.state == .stopped {
                c.state.withLock { $0.lastActiveSongID = nil }
            }
            try await c.perform(
                c.environment.commands.changeShuffleModeCommand,
                ChangeShuffleModeCommandEvent(shuffleType: on ? .items : .off), "change the random mode")
            return client.response()
        }),
        ("single", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let mode: SingleMode
            switch a[0] {
            case "0": mode = .off
            case "1": mode = .on
            case "oneshot": mode = .oneshot
            default: throw .argument("Unrecognized single mode, expected 0, 1, or oneshot")
            }
            try await c.setSingle(mode)
            return client.response()
        }),
        ("consume", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            await c.environment.player.setConsume(try Arguments.boolean(a[0]))
            return client.response()
        }),
        // Tracks follow each other gapless; there is no crossfade to set, and 0 is what is.
        ("crossfade", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let seconds = try Arguments.unsigned(a[0])
            guard seconds == 0 else {
                throw MPDError(.argument, "crossfade is not supported: songs follow each other gapless")
            }
            return client.response()
        }),
        ("replay_gain_mode", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            // mpd's `auto` is album gain when the queue plays an album in order, else track gain:
            // here the player's album mode already falls back to track gain per track.
            let name = a[0] == "auto" ? "album" : a[0]
            guard let mode = AudioSession.ReplayGainMode(rawValue: name) else {
                throw .argument("Unrecognized replay gain mode")
            }
            do {
                try await c.environment.audioSession.setReplayGain(mode)
            } catch {
                throw MPDError(.system, "cannot set the ReplayGain mode: \(error)")
            }
            c.state.withLock { $0.replayGainAuto = a[0] == "auto" }
            return client.response()
        }),
        ("replay_gain_status", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            var response = client.response()
            let mode = c.environment.audioSession.replayGain
            // `auto` reads back as the client set it, unless the mode changed since (from MPRIS).
            let auto = mode == .album && c.state.withLock { $0.replayGainAuto }
            try response.add("replay_gain_mode", auto ? "auto" : mode.rawValue)
            return response
        }),
    ]

    // MARK: Status

    var volumePercent: Int { Int((environment.nowPlaying.volume * 100).rounded()) }

    /// How long the player has played since the daemon started (`stats`' `playtime`).
    var playedTime: Duration {
        state.withLock { state in state.played + (state.playingSince.map { .now - $0 } ?? .zero) }
    }

    func status(_ client: MPDClient) async throws(MPDError) -> MPDResponse {
        // Published by the player after each change: no wait for its actor.
        let summary = environment.player.currentSummary
        // The version a client reads here is one it may ask `plchanges` about (noted once: the
        // wait for the player is only for a revision not noted yet).
        if !state.withLock({ $0.queueHistory.contains { $0.revision == summary.revision } }) {
            await noteQueueRevision()
        }
        var response = client.response()
        try response.add("volume", Int((summary.volume * 100).rounded()))
        try response.add("repeat", summary.repeatMode == .off ? 0 : 1)
        try response.add("random", summary.shuffleMode == .off ? 0 : 1)
        try response.add("single", summary.singleMode.mpdName(repeatOne: summary.repeatMode == .one))
        try response.add("consume", summary.consumes ? 1 : 0)
        try response.add("partition", "default")
        try response.add("playlist", summary.revision + 1)
        try response.add("playlistlength", summary.count)
        try response.add("mixrampdb", 0)
        let state = summary.state
        try response.add("state", state == .playing ? "play" : state == .stopped ? "stop" : "pause")
        let current = visibleCurrent(summary)
        if let current {
            try response.add("song", current.position)
            try response.add("songid", current.songID)
        }
        if state != .stopped, current != nil {
            let elapsed = summary.elapsed
            try response.add("time", "\(Int(elapsed.seconds.rounded())):\(Int((summary.duration?.seconds ?? 0).rounded()))")
            try response.add("elapsed", MPDFormat.seconds(elapsed))
            if let duration = summary.duration { try response.add("duration", MPDFormat.seconds(duration)) }
            try response.add("bitrate", 0)
        }
        if current != nil, let position = summary.nextPosition, let id = summary.nextSongID {
            try response.add("nextsong", position)
            try response.add("nextsongid", id)
        }
        if let job = self.state.withLock({ $0.updateJob }) { try response.add("updating_db", job) }
        return response
    }

    func stats(_ client: MPDClient) async throws(MPDError) -> MPDResponse {
        let statistics = try await read { try $0.statistics() }
        var response = client.response()
        try response.add("uptime", Int((ContinuousClock.now - environment.startedAt).seconds))
        try response.add("playtime", Int(playedTime.seconds))
        try response.add("artists", statistics.artists)
        try response.add("albums", statistics.albums)
        try response.add("songs", statistics.tracks)
        try response.add("db_playtime", Int(statistics.totalDuration.seconds))
        if let updated = statistics.lastScan { try response.add("db_update", updated) }
        return response
    }

    // MARK: Acting

    /// mpd's `next` and `previous` move only a playing (or paused) queue; stopped, they answer
    /// ACK 55 (its clients rely on it to know nothing happened).
    func requirePlaying() async throws(MPDError) {
        guard await environment.player.queueSummary.state != .stopped else {
            throw MPDError(.playerSync, "Not playing")
        }
    }

    /// Performs a command of the command centre as MPRIS does; a refusal becomes an `ACK`.
    func perform<Event: Sendable>(_ command: RemoteCommand<Event>, _ event: Event, _ action: String) async throws(MPDError) {
        guard let status = await command.perform(event) else {
            throw MPDError(.system, "cannot \(action) now: the player does not offer it")
        }
        try MPDCommands.check(status, action)
    }

    /// An `ACK` for a handler's status, or nothing for success.
    static func check(_ status: RemoteCommandHandlerStatus, _ action: String) throws(MPDError) {
        switch status {
        case .success: return
        case .noSuchContent: throw MPDError(.noExist, "cannot \(action): no such song")
        case .noActionableNowPlayingItem: throw MPDError(.playerSync, "cannot \(action): nothing is loaded")
        case .deviceNotFound: throw MPDError(.system, "cannot \(action): the output device is not available")
        case .commandFailed: throw MPDError(.system, "cannot \(action)")
        case .notPlayable(let reason): throw MPDError(.system, "cannot \(action): \(reason)")
        }
    }

    func setVolume(_ percent: Int) async throws(MPDError) {
        try await perform(
            environment.commands.changeVolumeCommand, ChangeVolumeCommandEvent(volume: Double(percent) / 100),
            "change the volume")
    }

    /// mpd's repeat flag; with single on it is the player's repeat-one, as mpd's repeat + single.
    func setRepeat(_ on: Bool) async throws(MPDError) {
        await environment.player.setRepeat(on)
    }

    func setSingle(_ mode: SingleMode) async throws(MPDError) {
        await environment.player.setSingle(mode)
    }

    func play(position: Int) async throws(MPDError) -> MPDResponse {
        let status: RemoteCommandHandlerStatus
        do {
            status = try await environment.player.play(position: position)
        } catch {
            throw error.mpdError
        }
        try MPDCommands.check(status, "play song \(position)")
        await noteActiveEntry()
        return MPDResponse()
    }

    func play(songID: Int) async throws(MPDError) -> MPDResponse {
        let status: RemoteCommandHandlerStatus
        do {
            status = try await environment.player.play(songID: songID)
        } catch {
            throw error.mpdError
        }
        try MPDCommands.check(status, "play song id \(songID)")
        await noteActiveEntry()
        return MPDResponse()
    }

    /// Seeks to `time` in the entry at `position` or with `songID`: at once if it is current and
    /// loaded, else after starting it.
    func seek(
        to time: Double, position: Int? = nil, songID: Int? = nil, _ client: MPDClient
    ) async throws(MPDError) -> MPDResponse {
        let summary = await environment.player.queueSummary
        let isCurrent = position.map { $0 == summary.currentPosition } ?? songID.map { $0 == summary.currentSongID } ?? false
        if !isCurrent || summary.state == .stopped {
            if let position { _ = try await play(position: position) }
            if let songID { _ = try await play(songID: songID) }
        }
        try await perform(
            environment.commands.changePlaybackPositionCommand,
            ChangePlaybackPositionCommandEvent(positionTime: .milliseconds(Int64(time * 1000))), "seek")
        return client.response()
    }
}

extension SingleMode {
    /// How `status` shows it. Under repeat-one the player repeats the song, which mpd calls single.
    func mpdName(repeatOne: Bool) -> String {
        switch self {
        case .off: repeatOne ? "1" : "0"
        case .on: "1"
        case .oneshot: "oneshot"
        }
    }
}
