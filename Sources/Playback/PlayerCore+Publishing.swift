import MediaRemote

/// What remotes are shown: the current item with its state, position and rate, the stretch of
/// the queue around it, and which transport commands they may send.
extension PlayerCore {
    mutating func publish() {
        // The window moves with the current entry as well as with the queue; the centre sends
        // nothing when what it shows is unchanged.
        let window = configuration.shownQueueWindow.positions(around: queue.currentIndex)
        if queueNeedsPublishing || window != publishedWindow {
            queueNeedsPublishing = false
            publishedWindow = window
            effects.append(.showQueue(queue.items(inPlayOrder: window).map(\.info)))
        }
        effects.append(.enableCommands(commandAvailability))
        effects.append(.showNowPlaying(nowPlayingInfo, since: since))
    }

    /// Which transport commands apply to the queue as it is.
    package var commandAvailability: CommandAvailability {
        CommandAvailability(
            hasItems: !queue.isEmpty,
            hasNext: queue.currentIndex.map { $0 + 1 < queue.count || queue.repeatMode == .all } ?? false)
    }

    /// The current item as remotes are shown it (nil when none is current): its own fields,
    /// what a live stream says it plays, the engine's duration when it has none, and the
    /// player's state, position (as of ``since``), rate and place in the queue.
    package var nowPlayingInfo: NowPlayingInfo? {
        guard let item = queue.current else { return nil }
        var info = item.info
        if let streamTags {
            info.title = streamTags.title ?? info.title
            if let artist = streamTags.artist { info.artists = [artist] }
            info.albumTitle = streamTags.album ?? streamTags.organization ?? info.albumTitle
        }
        if info.playbackDuration == nil, !info.isLiveStream { info.playbackDuration = engineDuration }
        info.playbackState = state
        info.elapsedPlaybackTime = position
        info.playbackRate = rate
        info.defaultPlaybackRate = 1
        info.playbackQueueIndex = queue.currentIndex
        info.playbackQueueCount = queue.count
        return info
    }
}
