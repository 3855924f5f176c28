import MediaRemote

/// An edit of the queue by position (in its own order, ``PlayQueue/addedOrder``) or song id,
/// or of MPD's modes: what the MPD face asks of the player.
package enum QueueEdit: Sendable {
    /// New entries at a place (nil: the end); refused whole when they would not fit.
    case insert([QueueItem], at: QueueDestination?)
    case remove(positions: Range<Int>)
    case removeSong(id: Int)
    /// The entries at `positions` moved so that the first is at `to`.
    case move(positions: Range<Int>, to: QueueDestination)
    case moveSong(id: Int, to: QueueDestination)
    /// Stops and empties the queue.
    case clear
    /// Reorders the entries at `positions` (all when nil) at random.
    case shuffle(positions: Range<Int>?)
    case play(position: Int)
    case playSong(id: Int)
    case setSingle(SingleMode)
    case setConsume(Bool)
    /// MPD's repeat flag: on loops the queue (repeat one, set by another remote, stays), off is off.
    case setRepeat(Bool)
}

extension PlayerCore {
    mutating func edit(_ edit: QueueEdit) {
        switch edit {
        case .insert(let items, let destination):
            let position: Int
            switch queue.resolve(destination ?? .position(queue.count), moving: 0..<0) {
            case .success(let resolved): position = resolved
            case .failure(let error): return refuse(error)
            }
            guard queue.count + items.count <= configuration.maximumQueueLength else {
                return refuse(.queueFull(maximum: configuration.maximumQueueLength))
            }
            guard let ids = queue.insert(items, atPosition: position) else { return refuse(.badPosition) }
            queueChanged()
            publish()
            succeed(addingSongs: ids)
        case .remove(let positions):
            guard let removal = queue.removeEntries(atPositions: positions) else { return refuse(.badPosition) }
            removed(removal)
        case .removeSong(let id):
            guard let position = queue.position(ofSongID: id) else { return refuse(.noSuchSong(id)) }
            removed(queue.removeEntries(atPositions: position..<position + 1) ?? .keptCurrent)
        case .move(let positions, let destination):
            guard queue.contains(positions) else { return refuse(.badPosition) }
            move(positions, to: destination)
        case .moveSong(let id, let destination):
            guard let position = queue.position(ofSongID: id) else { return refuse(.noSuchSong(id)) }
            move(position..<position + 1, to: destination)
        case .clear:
            unload()
            queue.replace(with: [])
            queueChanged()
            setPosition(.zero, state: .stopped)
            succeed()
        case .shuffle(let positions):
            // Stopped, the current entry is shuffled like the others: "play" then starts anywhere.
            guard queue.shuffleEntries(atPositions: positions, keepingCurrent: state != .stopped) else {
                return refuse(.badPosition)
            }
            reordered()
        case .play(let position):
            guard queue.moveTo(position: position) else { return refuse(.badPosition) }
            playCurrentAfresh()
        case .playSong(let id):
            guard let position = queue.position(ofSongID: id), queue.moveTo(position: position) else {
                return refuse(.noSuchSong(id))
            }
            playCurrentAfresh()
        case .setSingle(let mode):
            queue.singleMode = mode
            modesChanged()
        case .setConsume(let on):
            queue.consumes = on
            modesChanged()
        case .setRepeat(let on):
            queue.repeatMode = on ? (queue.repeatMode == .off ? .all : queue.repeatMode) : .off
            modesChanged()
        }
    }

    /// Removes `item` from the queue under consume, unless it is the current entry (replayed)
    /// and `evenIfCurrent` is false (the end of the queue: nothing replays it). Returns whether
    /// it was removed.
    mutating func consume(_ item: QueueItem, evenIfCurrent: Bool = false) -> Bool {
        guard queue.consumes, evenIfCurrent || queue.current?.identifier != item.identifier else { return false }
        return queue.remove(identifier: item.identifier)
    }

    /// An entry played under single oneshot ended: single turns off.
    mutating func endOneshot() {
        guard queue.singleMode == .oneshot else { return }
        queue.singleMode = .off
        effects.append(.showModes(repeat: queue.shownRepeatMode, shuffle: nil))
    }

    /// After a removal: the current entry removed while playing is followed by the next one,
    /// which plays (paused stays paused, stopped stopped); with none after it, playback stops
    /// at the first entry, as at the end of the queue (MPD stops too).
    private mutating func removed(_ removal: PlayQueue.Removal) {
        queueChanged()
        switch removal {
        case .keptCurrent:
            publish()
            succeed()
        case .removedCurrent(let followed) where followed && !queue.isEmpty:
            effects.append(.edited(.success([])))
            changedItem()
        case .removedCurrent:
            unload()
            _ = queue.moveTo(index: 0)
            setPosition(.zero, state: .stopped)
            succeed()
        }
    }

    private mutating func move(_ positions: Range<Int>, to destination: QueueDestination) {
        switch queue.resolve(destination, moving: positions) {
        case .success(let position):
            guard queue.moveEntries(atPositions: positions, to: position) else { return refuse(.badPosition) }
            reordered()
        case .failure(let error):
            refuse(error)
        }
    }

    private mutating func reordered() {
        queueChanged()
        publish()
        succeed()
    }

    private mutating func modesChanged() {
        effects.append(.showModes(repeat: queue.shownRepeatMode, shuffle: nil))
        // Single and consume change what follows the current entry: the hand-over is planned anew.
        queueChanged()
        publish()
        succeed()
    }

    private mutating func playCurrentAfresh() {
        effects.append(.edited(.success([])))
        unload()
        startPlayback(resumingAt: .zero)
    }

    private mutating func succeed(addingSongs ids: [Int] = []) {
        effects.append(.edited(.success(ids)))
        reply(.success)
    }

    private mutating func refuse(_ error: QueueEditError) {
        effects.append(.edited(.failure(error)))
        reply(.noSuchContent)
    }
}

/// MPD's reads: the summary and the entries by position or song id.
extension PlayerCore {
    /// The player and queue at `now`, without building any entry.
    package func queueSummary(at now: ContinuousClock.Instant) -> QueueSummary {
        queueSummaryClock.summary(at: now)
    }

    /// The summary as it stands, with what it takes to tell its elapsed time at a later instant:
    /// what ``QueuePlayer`` publishes after each input, for ``QueuePlayer/currentSummary``.
    package var queueSummaryClock: QueueSummaryClock {
        let current = queue.currentPosition
        let next = queue.indexAfterCurrentEnds.map { queue.order[$0] }
        // Asked of the catalog once: a catalogued entry's description is a lookup.
        let currentInfo = queue.current?.info
        let duration: Duration? =
            if let currentInfo, !currentInfo.isLiveStream { currentInfo.playbackDuration ?? engineDuration } else { nil }
        let summary = QueueSummary(
            count: queue.count, revision: queue.entriesRevision, currentPosition: current,
            currentSongID: current.map { queue.songIDs[$0] }, nextPosition: next, nextSongID: next.map { queue.songIDs[$0] },
            state: state, repeatMode: queue.repeatMode, shuffleMode: queue.shuffleMode, singleMode: queue.singleMode,
            consumes: queue.consumes, volume: volume, elapsed: position, duration: duration, rate: rate)
        // As `playbackPosition(at:)` counts: only while playing something loaded.
        let advancing = state == .playing && loaded != nil
        return QueueSummaryClock(
            summary: summary, advancingSince: advancing ? since : nil,
            elapsedLimit: currentInfo?.playbackDuration ?? engineDuration,
            currentEntry: current.map { QueueEntry(position: $0, songID: queue.songIDs[$0], item: queue.addedOrder[$0]) })
    }

    /// The entries at `positions` (clamped to the queue), in their own order.
    package func queueEntries(in positions: Range<Int>) -> [QueueEntry] {
        let positions = positions.clamped(to: queue.addedOrder.indices)
        return positions.map { QueueEntry(position: $0, songID: queue.songIDs[$0], item: queue.addedOrder[$0]) }
    }

    /// The entry with song id `songID`, if queued.
    package func queueEntry(songID: Int) -> QueueEntry? {
        queue.position(ofSongID: songID).map { QueueEntry(position: $0, songID: songID, item: queue.addedOrder[$0]) }
    }
}
