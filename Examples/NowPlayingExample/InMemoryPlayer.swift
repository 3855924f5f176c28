import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One item of the example's queue.
struct Track: Sendable {
    var id: String
    var title: String
    var artists: [String]
    var album: String?
    var duration: Duration?
    var url: URL
    var trackNumber: Int
    var artwork: MediaItemArtwork?
    var isLiveStream = false
}

/// A player with no audio: it keeps a queue, a position that advances with
/// the clock, a rate, repeat and shuffle modes and a volume, and publishes
/// every change to a `NowPlayingInfoCenter` (the current item and the queue),
/// as a real app's player would. Remotes may pick, add and remove queue items.
///
/// State changes are sequenced by the actor, so a stop followed at once by a
/// play is handled in order. The end of an item is awaited with one sleeping
/// task (no polling) that moves to the next item.
actor InMemoryPlayer {
    private let nowPlaying: NowPlayingInfoCenter
    private let commands: RemoteCommandCenter
    private var queue: [Track]
    private var index = 0
    private var state: PlaybackState = .stopped
    /// Position at `since`; it advances at `rate` while playing.
    private var position: Duration = .zero
    private var since = ContinuousClock.now
    private var rate = 1.0
    private var liked: Set<String> = []
    private var endOfItem: Task<Void, Never>?

    init(queue: [Track], commands: RemoteCommandCenter, nowPlaying: NowPlayingInfoCenter) {
        self.queue = queue
        self.commands = commands
        self.nowPlaying = nowPlaying
    }

    /// The position now.
    private var currentPosition: Duration {
        guard state == .playing else { return position }
        let elapsed = position + (ContinuousClock.now - since) * rate
        if let duration = queue[index].duration { return min(elapsed, duration) }
        return elapsed
    }

    func play() -> RemoteCommandHandlerStatus {
        guard !queue.isEmpty else { return .noActionableNowPlayingItem }
        if state == .stopped { position = .zero }
        move(to: currentPosition, state: .playing)
        return .success
    }

    func pause() -> RemoteCommandHandlerStatus {
        guard !queue.isEmpty else { return .noActionableNowPlayingItem }
        if state == .playing { move(to: currentPosition, state: .paused) }
        return .success
    }

    func togglePlayPause() -> RemoteCommandHandlerStatus {
        state == .playing ? pause() : play()
    }

    func stop() -> RemoteCommandHandlerStatus {
        move(to: .zero, state: .stopped)
        return .success
    }

    func next() -> RemoteCommandHandlerStatus {
        guard !queue.isEmpty else { return .noActionableNowPlayingItem }
        if index + 1 < queue.count {
            index += 1
        } else if commands.changeRepeatModeCommand.currentRepeatType == .all {
            index = 0
        } else {
            return .noSuchContent
        }
        move(to: .zero, state: state == .stopped ? .paused : state)
        return .success
    }

    func previous() -> RemoteCommandHandlerStatus {
        guard !queue.isEmpty else { return .noActionableNowPlayingItem }
        // Like most players: past the first seconds, "previous" restarts the item.
        if currentPosition < .seconds(3), index > 0 { index -= 1 }
        move(to: .zero, state: state == .stopped ? .paused : state)
        return .success
    }

    func seek(to target: Duration) -> RemoteCommandHandlerStatus {
        guard !queue.isEmpty else { return .noActionableNowPlayingItem }
        guard !queue[index].isLiveStream else { return .commandFailed }
        let end = queue[index].duration ?? target
        move(to: min(max(target, .zero), end), state: state)
        return .success
    }

    func skip(by offset: Duration) -> RemoteCommandHandlerStatus {
        seek(to: currentPosition + offset)
    }

    func setRate(_ newRate: Double) -> RemoteCommandHandlerStatus {
        let now = currentPosition
        rate = newRate
        move(to: now, state: state)
        return .success
    }

    func setVolume(_ volume: Double) -> RemoteCommandHandlerStatus {
        nowPlaying.volume = volume
        return .success
    }

    func setRepeat(_ mode: RepeatType) -> RemoteCommandHandlerStatus {
        commands.changeRepeatModeCommand.currentRepeatType = mode
        return .success
    }

    func setShuffle(_ mode: ShuffleType) -> RemoteCommandHandlerStatus {
        commands.changeShuffleModeCommand.currentShuffleType = mode
        return .success
    }

    func setLiked(_ isLiked: Bool) -> RemoteCommandHandlerStatus {
        guard !queue.isEmpty else { return .noActionableNowPlayingItem }
        if isLiked { liked.insert(queue[index].id) } else { liked.remove(queue[index].id) }
        commands.likeCommand.isActive = isLiked
        return .success
    }

    /// Appends what `url` points at and plays it.
    func open(_ url: URL) -> RemoteCommandHandlerStatus {
        queue.append(track(for: url))
        index = queue.count - 1
        move(to: .zero, state: .playing)
        return .success
    }

    /// Plays the queue item with that identifier from its start.
    func playItem(identifier: String) -> RemoteCommandHandlerStatus {
        guard let position = queue.firstIndex(where: { $0.id == identifier }) else { return .noSuchContent }
        index = position
        move(to: .zero, state: .playing)
        return .success
    }

    /// Inserts what `url` points at after the item `afterIdentifier` (`nil`: at the start),
    /// and plays it if asked; otherwise what plays goes on playing.
    func addItem(_ url: URL, after afterIdentifier: String?, playsImmediately: Bool) -> RemoteCommandHandlerStatus {
        var insertion = 0
        if let afterIdentifier {
            guard let after = queue.firstIndex(where: { $0.id == afterIdentifier }) else { return .noSuchContent }
            insertion = after + 1
        }
        let wasEmpty = queue.isEmpty
        queue.insert(track(for: url), at: insertion)
        if playsImmediately {
            index = insertion
            move(to: .zero, state: .playing)
        } else {
            if !wasEmpty, insertion <= index { index += 1 }
            publish()
        }
        return .success
    }

    /// Removes the queue item with that identifier. Removing the current item
    /// moves to the next one (the first, when repeating the queue), keeping
    /// playing or paused; past the end of the queue, playback stops.
    func removeItem(identifier: String) -> RemoteCommandHandlerStatus {
        guard let removed = queue.firstIndex(where: { $0.id == identifier }) else { return .noSuchContent }
        queue.remove(at: removed)
        if removed < index {
            index -= 1
            publish()
        } else if removed > index {
            publish()
        } else if queue.isEmpty {
            index = 0
            move(to: .zero, state: .stopped)
        } else if removed < queue.count {
            move(to: .zero, state: state == .stopped ? .paused : state)  // the next item took its place
        } else if commands.changeRepeatModeCommand.currentRepeatType == .all {
            index = 0
            move(to: .zero, state: state == .stopped ? .paused : state)
        } else {
            index = queue.count - 1
            move(to: .zero, state: .stopped)
        }
        return .success
    }

    /// A queue item for what `url` points at; its identifier is the URL, made unique in the queue.
    private func track(for url: URL) -> Track {
        let isStream = url.scheme != "file"
        let name = url.lastPathComponent.isEmpty ? url.absoluteString : url.lastPathComponent
        var id = url.absoluteString
        var copy = 1
        while queue.contains(where: { $0.id == id }) {
            copy += 1
            id = "\(url.absoluteString)#\(copy)"
        }
        return Track(
            id: id, title: name, artists: [], album: nil, duration: isStream ? nil : .seconds(60), url: url,
            trackNumber: queue.count + 1, isLiveStream: isStream)
    }

    /// Applies a new position and state, publishes them, and schedules the end of the item.
    private func move(to newPosition: Duration, state newState: PlaybackState) {
        position = newPosition
        since = .now
        state = newState
        endOfItem?.cancel()
        endOfItem = nil
        if !queue.isEmpty, newState == .playing, let duration = queue[index].duration {
            let remaining = (duration - newPosition) / rate
            endOfItem = Task { [weak self] in
                try? await Task.sleep(for: remaining)
                guard !Task.isCancelled else { return }
                await self?.itemEnded()
            }
        }
        commands.likeCommand.isActive = !queue.isEmpty && liked.contains(queue[index].id)
        publish()
    }

    private func itemEnded() {
        switch commands.changeRepeatModeCommand.currentRepeatType {
        case .one: move(to: .zero, state: .playing)
        case .all: _ = next()  // wraps to the first item
        case .off: if next() != .success { move(to: .zero, state: .stopped) }
        }
    }

    /// Publishes the queue (the centre ignores an unchanged one) and the current item.
    private func publish() {
        nowPlaying.playbackQueue = queue.map(item)
        guard !queue.isEmpty else {
            nowPlaying.nowPlayingInfo = nil
            return
        }
        var info = item(queue[index])
        info.playbackState = state
        info.elapsedPlaybackTime = position
        info.playbackRate = state == .playing ? rate : 0
        info.defaultPlaybackRate = rate
        info.playbackQueueIndex = index
        info.playbackQueueCount = queue.count
        nowPlaying.publish(info, at: since)
    }

    /// What remotes show of a track, without playback fields. Nothing in it
    /// depends on the queue's length or order, so inserting one item changes
    /// no other entry (remotes then hear of one insertion, not a new list).
    private func item(_ track: Track) -> NowPlayingInfo {
        NowPlayingInfo(
            identifier: track.id, title: track.title, artists: track.artists, albumTitle: track.album,
            albumArtists: track.artists, genres: track.album == nil ? [] : ["Test Tones"], playbackDuration: track.duration,
            artwork: track.artwork, trackNumber: track.trackNumber, discNumber: 1,
            releaseDate: Date(timeIntervalSince1970: 1_700_000_000), assetURL: track.url,
            isLiveStream: track.isLiveStream)
    }

    /// Publishes the initial state.
    func start() { publish() }
}
