import Logging
import MediaRemote

/// The engine's events.
extension PlayerCore {
    mutating func handle(_ event: PlaybackEvent, _ context: EngineEventContext) {
        switch event {
        case .streamStarted:
            // A stream the player loaded itself was handled by its start; only a hand-over
            // (the shell took it out of the book) moves the queue.
            guard let handedOver = context.handedOver, queue.moveTo(identifier: handedOver.identifier) else { return }
            // The item before it played to its end.
            if let finished = loaded {
                rememberFinished(finished)
                if consume(finished) { queueNeedsPublishing = true }
            }
            endOneshot()
            loaded = handedOver
            streamTags = nil
            engineDuration = context.duration
            effects.append(.updateHandover(handoverSuccessors()))
            // Saved before it is shown: whoever sees the item playing finds its point saved.
            rememberPosition(of: handedOver, at: .zero, finishing: false)
            setPosition(.zero, state: state == .stopped ? .playing : state)
        case .durationChanged(let duration):
            guard duration != engineDuration else { return }
            engineDuration = duration
            if queue.current?.info.playbackDuration == nil { publish() }
        case .volumeChanged(let newVolume):
            // Already the engine's: only shown, and kept as the player's own.
            guard newVolume.isFinite else { return }
            volume = min(max(newVolume, 0), 10)
            effects.append(.showVolume(volume))
            notifyChange()
        case .tagsChanged(let tags):
            guard queue.current?.isLiveStream == true, tags != streamTags else { return }
            streamTags = tags
            publish()
        case .endOfStream:
            guard let finished = loaded, state == .playing, isNearTheEnd else { return }
            unload(remembering: false)
            rememberFinished(finished)
            // An item that was not handed over (one to resume, or the next one under single,
            // which pauses there) is loaded now; at the end of the queue, the player rests
            // stopped at its first entry.
            let pauses = queue.pausesAfterCurrent
            let advanced = queue.advanceAfterEnd()
            endOneshot()
            if consume(finished, evenIfCurrent: !advanced) || advanced { queueChanged() }
            if advanced, !queue.isEmpty {
                return pauses ? setPosition(.zero, state: .paused) : startPlayback(resumingAt: .zero)
            }
            _ = queue.moveTo(index: 0)
            setPosition(.zero, state: .stopped)
        case .error(let error):
            let failed: QueueItem? = if error.url == nil || error.url == loaded?.url { loaded } else { context.handedOver }
            // An error about an item since replaced is stale.
            guard let failed else { return }
            let wasPlaying = state == .playing
            guard error.kind != .outputDevice else {
                // No item's fault: stay on it, stopped, rather than fail through the queue.
                log(.warning, "the audio output failed: \(error.message)")
                unload(remembering: false)
                _ = queue.moveTo(identifier: failed.identifier)
                return setPosition(.zero, state: .stopped)
            }
            log(.warning, "playback of \(failed.url) failed: \(error.message)")
            unload(remembering: false)
            _ = queue.moveTo(identifier: failed.identifier)
            guard wasPlaying, queue.moveToNext(), queue.current?.identifier != failed.identifier else {
                return setPosition(.zero, state: .stopped)
            }
            startPlayback(resumingAt: .zero)
        case .interruption(.began):
            // Paused by the system, not by the listener: shown as interrupted, and resumed at the end.
            guard state == .playing else { return }
            log(.info, "interrupted by a more important stream: paused until it ends")
            awaiting = .interruption(fallback: currentPosition)
            guard hasEngine else { return engineReplied(EngineReply(.done)) }
            effects.append(.readPosition)
        case .interruption(.ended):
            // A pause, stop or new item chosen meanwhile was the listener's word; it stands.
            guard state == .interrupted else { return }
            log(.info, "the interruption ended: resuming")
            startPlayback(resumingAt: position)
        case .buffering, .stateChanged:
            break
        }
    }

    /// Whether the loaded item has (nearly) played to its end: an end-of-stream left over from
    /// an item since replaced must not move the queue.
    private var isNearTheEnd: Bool {
        guard let duration = engineDuration ?? queue.current?.info.playbackDuration else { return true }
        return currentPosition >= duration - .seconds(1)
    }
}
