import MediaRemote

/// MPD's view of the queue: entries at positions in the queue's own order (``PlayQueue/addedOrder``),
/// each with a song id, edited by position range or by id. Every edit checks its arguments
/// first and changes nothing when they are out of range.
extension PlayQueue {
    /// The position (in ``addedOrder``) of the current entry.
    public var currentPosition: Int? { currentIndex.map { order[$0] } }

    /// The position of the entry with song id `songID`: a scan of an array of Int.
    public func position(ofSongID songID: Int) -> Int? {
        songIDs.firstIndex(of: songID)
    }

    /// The play-order place of the entry at `position`: the position itself while shuffle is off.
    func playIndex(ofPosition position: Int) -> Int? {
        guard addedOrder.indices.contains(position) else { return nil }
        return shuffleMode == .off ? position : order.firstIndex(of: position)
    }

    /// Whether `positions` lies within `0...count` (an empty range at the end included).
    func contains(_ positions: Range<Int>) -> Bool {
        positions.lowerBound >= 0 && positions.upperBound <= addedOrder.count
    }

    /// The position `destination` names for the entries at `positions` once moved (an empty
    /// range for an insertion), or why it names none. `positions` must be within the queue.
    func resolve(_ destination: QueueDestination, moving positions: Range<Int>) -> Result<Int, QueueEditError> {
        let room = addedOrder.count - positions.count
        switch destination {
        case .position(let position):
            return (0...room).contains(position) ? .success(position) : .failure(.badPosition)
        case .afterCurrent(let offset), .beforeCurrent(let offset):
            guard let current = currentPosition else { return .failure(.noCurrentEntry) }
            guard !positions.contains(current) else { return .failure(.movesCurrentRelativeToItself) }
            guard (0...room).contains(offset) else { return .failure(.badPosition) }
            // The current entry's place once the moved entries are out.
            let rest = current >= positions.upperBound ? current - positions.count : current
            let position = if case .afterCurrent = destination { rest + 1 + offset } else { rest - offset }
            return (0...room).contains(position) ? .success(position) : .failure(.badPosition)
        }
    }

    /// Makes the entry at `position` current. Returns `false` if there is none.
    public mutating func moveTo(position: Int) -> Bool {
        guard let index = playIndex(ofPosition: position) else { return false }
        currentIndex = index
        return true
    }

    /// Inserts `items` at `position` (``addedOrder``; `count` appends), in their order, and
    /// returns their song ids; `nil`, changing nothing, when `position` is outside `0...count`.
    ///
    /// Shuffle off, they play in that order there. Shuffle on, each goes to a random place in
    /// the play order after the entry that follows the current one (MPD puts them after the
    /// song it queued next): the successor the engine may already hold stays next. Identifiers
    /// already queued get a suffix, as ``insert(_:after:)`` says.
    public mutating func insert<G: RandomNumberGenerator>(
        _ items: [QueueItem], atPosition position: Int, using generator: inout G
    ) -> [Int]? {
        guard (0...addedOrder.count).contains(position) else { return nil }
        guard !items.isEmpty else { return [] }
        let added = items.map { uniqued($0) }
        let ids = newSongIDs(added.count)
        addedOrder.insert(contentsOf: added, at: position)
        songIDs.insert(contentsOf: ids, at: position)
        let inserted = position..<position + added.count
        var order = self.order.map { $0 >= position ? $0 + added.count : $0 }
        var current = currentIndex
        if shuffleMode == .off {
            order.insert(contentsOf: inserted, at: position)
            if let index = current, position <= index { current = index + added.count }
        } else {
            // After the current entry's successor; after the current entry when none follows it.
            let first = current.map { min($0 + 2, order.count) } ?? 0
            for index in inserted {
                order.insert(index, at: Int.random(in: first...order.count, using: &generator))
            }
        }
        self.order = order
        currentIndex = current ?? 0
        return ids
    }

    /// Inserts `items` at `position` with the system's random numbers for shuffle.
    public mutating func insert(_ items: [QueueItem], atPosition position: Int) -> [Int]? {
        var generator = SystemRandomNumberGenerator()
        return insert(items, atPosition: position, using: &generator)
    }

    /// What became of the current entry in a removal.
    public enum Removal: Sendable, Equatable {
        /// The current entry stayed (or the queue had none).
        case keptCurrent
        /// It was removed; `followed`: an entry after it in play order stayed and is current
        /// now (under repeat all, the first when none did). Otherwise the last entry is current.
        case removedCurrent(followed: Bool)
    }

    /// Removes the entries at `positions`; see ``Removal`` for what becomes current. Returns
    /// `nil`, changing nothing, when `positions` is not within the queue.
    public mutating func removeEntries(atPositions positions: Range<Int>) -> Removal? {
        guard contains(positions) else { return nil }
        guard !positions.isEmpty else { return .keptCurrent }
        let oldCurrent = currentIndex
        let removedCurrent = currentPosition.map(positions.contains) ?? false
        // The current entry's new place: the survivors before it in play order.
        var survivorsBefore = 0
        var order: [Int] = []
        order.reserveCapacity(self.order.count - positions.count)
        for (index, entry) in self.order.enumerated() where !positions.contains(entry) {
            if let oldCurrent, index < oldCurrent { survivorsBefore += 1 }
            order.append(entry >= positions.upperBound ? entry - positions.count : entry)
        }
        for item in addedOrder[positions] { identifiers.remove(item.identifier) }
        addedOrder.removeSubrange(positions)
        songIDs.removeSubrange(positions)
        self.order = order
        guard !order.isEmpty else {
            currentIndex = nil
            return removedCurrent ? .removedCurrent(followed: false) : .keptCurrent
        }
        guard removedCurrent else {
            currentIndex = survivorsBefore
            return .keptCurrent
        }
        if survivorsBefore < order.count {
            currentIndex = survivorsBefore
            return .removedCurrent(followed: true)
        }
        currentIndex = repeatMode == .all ? 0 : order.count - 1
        return .removedCurrent(followed: repeatMode == .all)
    }

    /// Moves the entries at `positions` so that the first is at `destination`, the others
    /// after it in their order (MPD's `move START:END TO`). Shuffle off, the play order follows;
    /// shuffle on, the play order keeps its sequence. The current entry stays current. Returns
    /// `false`, changing nothing, when `positions` is not within the queue or `destination` is
    /// not within `0...count - positions.count`.
    public mutating func moveEntries(atPositions positions: Range<Int>, to destination: Int) -> Bool {
        guard contains(positions), (0...addedOrder.count - positions.count).contains(destination) else { return false }
        guard !positions.isEmpty, destination != positions.lowerBound else { return true }
        let current = currentPosition
        // Entries between the range and the destination shift by the range's length; the
        // range by the distance to the destination. Moving slices copies no entry one by one.
        let shift = destination - positions.lowerBound
        let passed = shift > 0 ? positions.upperBound..<positions.upperBound + shift : destination..<positions.lowerBound
        let passedShift = shift > 0 ? -positions.count : positions.count
        func newPosition(_ old: Int) -> Int {
            if positions.contains(old) { return old + shift }
            return passed.contains(old) ? old + passedShift : old
        }
        let movedItems = Array(addedOrder[positions])
        let movedIDs = Array(songIDs[positions])
        addedOrder.removeSubrange(positions)
        addedOrder.insert(contentsOf: movedItems, at: destination)
        songIDs.removeSubrange(positions)
        songIDs.insert(contentsOf: movedIDs, at: destination)
        if shuffleMode == .off {
            order = Array(addedOrder.indices)
            currentIndex = current.map(newPosition)
        } else {
            order = order.map(newPosition)
        }
        return true
    }

    /// Draws a random order for the entries at `positions` (all when nil): MPD's `shuffle`,
    /// which reorders the queue itself (not the play order of shuffle mode). With
    /// `keepingCurrent` and the current entry among them, it goes first in the range, so
    /// what plays next is random too. Returns `false`, changing nothing, when `positions` is
    /// not within the queue.
    public mutating func shuffleEntries<G: RandomNumberGenerator>(
        atPositions positions: Range<Int>?, keepingCurrent: Bool, using generator: inout G
    ) -> Bool {
        let positions = positions ?? addedOrder.indices
        guard contains(positions) else { return false }
        var drawn = Array(positions)
        if keepingCurrent, let current = currentPosition, positions.contains(current) {
            drawn.removeAll { $0 == current }
            drawn.shuffle(using: &generator)
            drawn.insert(current, at: 0)
        } else {
            drawn.shuffle(using: &generator)
        }
        var newOrder = Array(addedOrder.indices)
        newOrder.replaceSubrange(positions, with: drawn)
        reorder(newOrder)
        return true
    }

    /// Shuffles the entries at `positions` with the system's random numbers.
    public mutating func shuffleEntries(atPositions positions: Range<Int>?, keepingCurrent: Bool) -> Bool {
        var generator = SystemRandomNumberGenerator()
        return shuffleEntries(atPositions: positions, keepingCurrent: keepingCurrent, using: &generator)
    }

    /// Puts the entries in a new added order: `newOrder[i]` is the old position of the entry
    /// that goes to position `i`. Ids move with their entries; the current entry stays current.
    private mutating func reorder(_ newOrder: [Int]) {
        var newPosition = [Int](repeating: 0, count: newOrder.count)
        for (position, old) in newOrder.enumerated() { newPosition[old] = position }
        let current = currentPosition
        addedOrder = newOrder.map { addedOrder[$0] }
        songIDs = newOrder.map { songIDs[$0] }
        if shuffleMode == .off {
            order = Array(addedOrder.indices)
            currentIndex = current.map { newPosition[$0] }
        } else {
            order = order.map { newPosition[$0] }
        }
    }
}

/// MPD's single mode (see ``PlayQueue/singleMode``).
public enum SingleMode: String, Sendable, Codable, CaseIterable {
    /// Entries follow one another as repeat says.
    case off
    /// Repeat off: when the current entry ends, the next one becomes current, paused at its
    /// start (MPD 0.23); repeat on: the current entry plays again.
    case on
    /// As `on` for the entry playing, then off (MPD's `single oneshot`). Unlike MPD, which
    /// keeps replaying under repeat and never turns it off, here it turns off once that entry
    /// ended and was replayed, so repeat goes on through the queue.
    case oneshot
}
