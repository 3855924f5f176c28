import Logging
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The remotes' commands and the app's queue API.
extension PlayerCore {
    mutating func perform(_ command: PlayerCommand) {
        switch command {
        case .play: play()
        case .pause: pause()
        case .togglePlayPause: state == .playing ? pause() : play()
        case .stop:
            unload()
            setPosition(.zero, state: .stopped)
            reply(.success)
        case .next:
            guard let skipped = queue.current else { return reply(.noActionableNowPlayingItem) }
            guard queue.moveToNext() else { return reply(.noSuchContent) }
            if consume(skipped) { queueChanged() }
            changedItem()
        case .previous:
            guard queue.current != nil else { return reply(.noActionableNowPlayingItem) }
            if currentPosition > configuration.restartThreshold || !queue.moveToPrevious() { return seek(to: .zero) }
            changedItem()
        case .seek(let target): seek(to: target)
        case .skip(let interval): seek(to: currentPosition + interval)
        case .setRate(let newRate): setRate(newRate)
        case .setRepeat(let mode):
            queue.repeatMode = mode
            // A remote asking to loop the queue means it: single would show (and play) one track.
            if mode == .all { queue.singleMode = .off }
            effects.append(.showModes(repeat: queue.shownRepeatMode, shuffle: nil))
            queueChanged()
            publish()
            reply(.success)
        case .setShuffle(let mode):
            queue.setShuffle(mode)
            effects.append(.showModes(repeat: nil, shuffle: mode))
            queueChanged()
            publish()
            reply(.success)
        case .setVolume(let newVolume):
            volume = newVolume.isFinite ? min(max(newVolume, 0), 10) : volume
            effects += [.setEngineVolume(volume), .showVolume(volume)]
            notifyChange()
            reply(.success)
        case .open(let url): resolve(url, .open)
        case .playItem(let identifier):
            guard queue.moveTo(identifier: identifier) else { return reply(.noSuchContent) }
            unload()
            startPlayback(resumingAt: .zero)
        case .addItem(let url, let after, let playsImmediately):
            resolve(url, .add(after: after, playsImmediately: playsImmediately))
        case .removeItem(let identifier):
            let wasCurrent = queue.current?.identifier == identifier
            guard queue.remove(identifier: identifier) else { return reply(.noSuchContent) }
            queueChanged()
            guard wasCurrent else {
                publish()
                return reply(.success)
            }
            changedItem()
        }
    }

    mutating func play() {
        guard let current = queue.current else { return reply(.noActionableNowPlayingItem) }
        if state == .playing { return reply(.success) }
        if state == .paused, hasEngine, let loaded, loaded.identifier == current.identifier, !loaded.isLiveStream {
            // Resuming what the engine holds: shown playing as the engine is asked, as a remote
            // expects of a media key (the reply still waits until it plays). Should the engine
            // fail, the start's outcome shows what became of it.
            show(position, state: .playing)
        }
        startPlayback(resumingAt: state == .stopped ? .zero : currentPosition)
    }

    mutating func pause() {
        guard queue.current != nil else { return reply(.noActionableNowPlayingItem) }
        if state == .interrupted {
            // The engine is paused already; the end of the interruption must not resume.
            setPosition(position, state: .paused)
            return reply(.success)
        }
        guard state == .playing else { return reply(.success) }
        let fallback = currentPosition
        awaiting = .pause(fallback: fallback)
        guard hasEngine else { return engineReplied(EngineReply(.done)) }
        // Nothing loaded while playing: a start was superseded, and nothing plays to pause.
        guard loaded != nil else { return effects.append(.readPosition) }
        // Shown paused as the engine is asked (the reply waits until it has paused); the
        // engine's position then replaces the estimate.
        show(fallback, state: .paused)
        effects.append(.pause)
    }

    /// After next, previous or a removal: plays the new current item if the player was playing,
    /// else rests on it at its start (paused stays paused).
    mutating func changedItem() {
        let wasPlaying = state == .playing
        unload()
        if wasPlaying { return startPlayback(resumingAt: .zero) }
        setPosition(.zero, state: state == .stopped ? .stopped : .paused)
        reply(.success)
    }

    mutating func seek(to target: Duration) {
        guard let item = queue.current else { return reply(.noActionableNowPlayingItem) }
        guard !item.isLiveStream else { return reply(.commandFailed) }
        var target = max(target, .zero)
        if let duration = item.info.playbackDuration ?? engineDuration { target = min(target, duration) }
        awaiting = .seek(item, target: target)
        guard hasEngine, loaded?.identifier == item.identifier else { return engineReplied(EngineReply(.done)) }
        effects.append(.seek(target))
    }

    mutating func setRate(_ newRate: Double) {
        guard newRate.isFinite, newRate > 0 else { return reply(.commandFailed) }
        awaiting = .rate(newRate, fallback: currentPosition)
        guard hasEngine else { return engineReplied(EngineReply(.done)) }
        effects.append(loaded != nil ? .setRate(newRate) : .readPosition)
    }

    /// Asks for `url`'s entry; ``resolved(_:)`` goes on. Refused at once when the queue is full.
    mutating func resolve(_ url: URL, _ resolution: Resolution) {
        if let full = queueIsFull { return reply(full) }
        awaiting = .resolution(url, resolution)
        effects.append(.resolve(url))
    }

    mutating func resolved(_ result: Result<QueueItem, any Error>) {
        guard case .resolution(let url, let resolution) = awaiting else { return }
        awaiting = nil
        let item: QueueItem
        switch result {
        case .success(let resolved): item = resolved
        case .failure(let error):
            switch resolution {
            case .open: log(.notice, "cannot open \(url): \(error)")
            case .add: log(.notice, "cannot add \(url): \(error)")
            }
            return reply(.notPlayable(reason: "\(error)"))
        }
        switch resolution {
        case .open:
            // Plays `url` now: it goes after the current entry and becomes current.
            let inserted: QueueItem?
            if let current = queue.current {
                inserted = queue.insert(item, after: current.identifier)
            } else {
                inserted = queue.append(item)
            }
            guard let inserted, queue.moveTo(identifier: inserted.identifier) else { return reply(.commandFailed) }
            queueChanged()
            unload()
            startPlayback(resumingAt: .zero)
        case .add(let after, let playsImmediately):
            guard let inserted = queue.insert(item, after: after) else { return reply(.noSuchContent) }
            queueChanged()
            guard playsImmediately, queue.moveTo(identifier: inserted.identifier) else {
                publish()
                return reply(.success)
            }
            unload()
            startPlayback(resumingAt: .zero)
        }
    }

    /// The refusal of one more entry when the queue holds its maximum, or nil when there is room.
    var queueIsFull: RemoteCommandHandlerStatus? {
        guard queue.count >= configuration.maximumQueueLength else { return nil }
        return .notPlayable(reason: "the queue is full (\(configuration.maximumQueueLength) entries)")
    }

    // MARK: The app's queue API

    mutating func replaceQueue(with items: [QueueItem], startingAt index: Int, play: Bool) {
        unload()
        queue.replace(with: Array(items.prefix(configuration.maximumQueueLength)), currentIndex: index)
        queueChanged()
        setPosition(.zero, state: .stopped)
        play ? self.play() : reply(.success)
    }

    mutating func enqueue(_ items: [QueueItem], at placement: QueuePlayer.QueuePlacement) {
        guard !items.isEmpty else { return reply(.success) }
        guard queue.count + items.count <= configuration.maximumQueueLength else {
            return reply(.notPlayable(reason: "the queue is full (\(configuration.maximumQueueLength) entries)"))
        }
        switch placement {
        case .next:
            var after = queue.current?.identifier
            for item in items { after = queue.insert(item, after: after)?.identifier ?? after }
        case .last:
            for item in items { queue.append(item) }
        }
        queueChanged()
        publish()
        reply(.success)
    }

    /// Restores a saved state, paused at its position (stopped when the position is 0), with
    /// `items` the entries the snapshot names, in its added order (missing ones left out).
    mutating func restore(_ snapshot: PlayerSnapshot, items: [QueueItem]) {
        unload()
        let known = Set(items.map(\.identifier))
        let kept = snapshot.addedOrder.enumerated().filter { known.contains($0.element.identifier) }.map(\.offset)
        // Entries that vanished leave holes in the saved order: renumber what is left.
        let renumbered = Dictionary(uniqueKeysWithValues: kept.enumerated().map { ($0.element, $0.offset) })
        let playOrder = snapshot.playOrder.compactMap { renumbered[$0] }
        // Song ids and revisions go on from the queue replaced: an MPD client's ids stay unique.
        var restored = queue.emptied()
        if !restored.restore(
            addedOrder: items, playOrder: playOrder.count == items.count ? playOrder : Array(items.indices),
            currentIndex: 0, repeatMode: snapshot.repeatMode.repeatType, shuffleMode: snapshot.shuffleMode.shuffleType,
            singleMode: snapshot.singleMode, consumes: snapshot.consumes)
        {
            restored.replace(with: items)
        }
        var restoredPosition = Duration.zero
        if let current = snapshot.currentIdentifier, restored.moveTo(identifier: current) {
            restoredPosition = .milliseconds(max(snapshot.positionMilliseconds, 0))
        }
        queue = restored
        // A queue of its own, whose revisions say nothing of the entries built before.
        savedEntries = nil
        queueNeedsPublishing = true
        rate = snapshot.rate.isFinite && snapshot.rate > 0 ? snapshot.rate : 1
        volume = snapshot.volume.isFinite ? min(max(snapshot.volume, 0), 10) : 1
        effects.append(.showVolume(volume))
        setPosition(restoredPosition, state: restoredPosition > .zero ? .paused : .stopped)
        effects.append(.showModes(repeat: restored.shownRepeatMode, shuffle: restored.shuffleMode))
        reply(.success)
    }
}
