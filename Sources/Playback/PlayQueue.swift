import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where queue entries that carry only a key get their URL and now-playing information: an
/// app's library, which would otherwise hold a full description per entry (50,000 entries of
/// a queued library are 50,000 URLs and now-playing values; as keys they are a few strings).
///
/// The player asks for the current entry, the ones it hands over to and the ones remotes are
/// shown (``QueuePlayer/Configuration/shownQueueWindow``), from its own task, and again after
/// ``QueuePlayer/refreshItemDescriptions()``. Answers must be quick (keep the last few
/// hundred): they are asked for on each publish.
public protocol QueueItemCatalog: AnyObject, Sendable {
    /// Where the media of the entry `key` is; called whenever the entry is loaded or handed over.
    func url(ofItem key: String) -> URL
    /// The item fields remotes show for the entry `key` (title, artists, duration, artwork…),
    /// or nil when the catalog no longer has it; then the entry is shown by its file name.
    func info(ofItem key: String) -> NowPlayingInfo?
}

/// One entry of a ``PlayQueue``: what to play and what remotes show about it.
///
/// Either described in full (``init(identifier:url:info:)``: streams, opened files) or a key
/// into a ``QueueItemCatalog`` (``init(identifier:catalog:key:)``: an app's library), which the
/// player asks when it needs the entry's URL or information.
public struct QueueItem: Sendable, Equatable {
    /// Unique within its queue; ``PlayQueue`` makes it so when an item is added twice.
    public var identifier: String
    private var source: Source

    private enum Source: Sendable {
        case described(Description)
        /// An entry of a catalog found there by its identifier: one word more than the
        /// identifier, as a queue of 50,000 library tracks holds 50,000 of these.
        case catalogued(any QueueItemCatalog)
        /// An entry of a catalog under another key (a second copy of it in a queue).
        case cataloguedAs(CatalogKey)
    }

    /// A catalog and a key that differs from the entry's identifier.
    private final class CatalogKey: Sendable {
        let catalog: any QueueItemCatalog
        let key: String
        init(_ catalog: any QueueItemCatalog, _ key: String) {
            self.catalog = catalog
            self.key = key
        }
    }

    /// The catalog and key of a catalogued entry.
    private var catalogued: (catalog: any QueueItemCatalog, key: String)? {
        switch source {
        case .described: nil
        case .catalogued(let catalog): (catalog, identifier)
        case .cataloguedAs(let entry): (entry.catalog, entry.key)
        }
    }

    /// A full description, shared by every copy of the entry.
    private final class Description: Sendable {
        let url: URL
        let info: NowPlayingInfo
        init(url: URL, info: NowPlayingInfo) {
            self.url = url
            self.info = info
        }
    }

    /// Describes an entry; `info.identifier` is set to `identifier`.
    public init(identifier: String, url: URL, info: NowPlayingInfo) {
        self.identifier = identifier
        var info = info
        info.identifier = identifier
        info.assetURL = info.assetURL ?? url
        source = .described(Description(url: url, info: info))
    }

    /// An entry of `catalog`, found there by `key` (by default its identifier); what it plays
    /// and shows is asked for when needed.
    public init(identifier: String, catalog: any QueueItemCatalog, key: String? = nil) {
        self.identifier = identifier
        if let key, key != identifier {
            source = .cataloguedAs(CatalogKey(catalog, key))
        } else {
            source = .catalogued(catalog)
        }
    }

    /// The same entry under another identifier (a second copy of it in a queue).
    func renamed(_ newIdentifier: String) -> QueueItem {
        if case .described(let description) = source {
            return QueueItem(identifier: newIdentifier, url: description.url, info: description.info)
        }
        let (catalog, key) = catalogued!
        return QueueItem(identifier: newIdentifier, catalog: catalog, key: key)
    }

    /// The key a catalogued entry is found by in its catalog; nil for a described entry.
    public var catalogKey: String? { catalogued?.key }

    /// Where the media is: a `file://` URL or an `http(s)://` stream.
    public var url: URL {
        if case .described(let description) = source { return description.url }
        let (catalog, key) = catalogued!
        return catalog.url(ofItem: key)
    }

    /// The item fields remotes show (title, artists, duration, artwork…), with
    /// `NowPlayingInfo.identifier` the entry's; the playback fields are unset.
    public var info: NowPlayingInfo {
        if case .described(let description) = source {
            var info = description.info
            info.identifier = identifier
            return info
        }
        let (catalog, key) = catalogued!
        if var info = catalog.info(ofItem: key) {
            info.identifier = identifier
            return info
        }
        let url = catalog.url(ofItem: key)
        return NowPlayingInfo(identifier: identifier, title: url.deletingPathExtension().lastPathComponent, assetURL: url)
    }

    /// A live stream has no length and cannot be sought.
    public var isLiveStream: Bool {
        guard case .described(let description) = source else { return false }
        return description.info.isLiveStream
    }

    /// Equal identifiers and descriptions; catalogued entries are equal when they are the same
    /// key of the same catalog.
    public static func == (lhs: QueueItem, rhs: QueueItem) -> Bool {
        guard lhs.identifier == rhs.identifier else { return false }
        switch (lhs.source, rhs.source) {
        case (.described(let a), .described(let b)):
            return a === b || (a.url == b.url && a.info == b.info)
        case (.described, _), (_, .described):
            return false
        default:
            let (a, b) = (lhs.catalogued!, rhs.catalogued!)
            return a.catalog === b.catalog && a.key == b.key
        }
    }
}

/// The order things play in: the items, which one is current, and what
/// repeat and shuffle make of "next" and "previous".
///
/// A value type with no I/O, so every rule is testable on its own:
/// - Repeat is a target state, never toggled: a car sets it on connecting,
///   and a toggle would flip what the listener chose. Repeat one
///   replays the current item when it ends on its own; a listener's "next"
///   still moves on. Repeat all wraps at both ends.
/// - Shuffle draws a new random order that keeps the current item first, so
///   turning it on never interrupts what plays; turning it off restores the
///   order the items were added in, still at the current item.
/// - ``items`` are in play order: the order remotes show.
/// - ``addedOrder`` is the queue's own order (MPD's positions): with shuffle off the play order
///   is the same, so an entry put "after" another goes there in both.
/// - Each entry has a song id (``songIDs``): a positive number unique for the life of the
///   process, given when the entry enters the queue and kept as it moves (MPD's `Id`).
/// - Single and consume (MPD's modes, ``singleMode``, ``consumes``) change what follows an
///   entry that ends: see ``indexAfterCurrentEnds`` and ``pausesAfterCurrent``.
public struct PlayQueue: Sendable, Equatable {
    /// The items in the order they were added (the unshuffled order), which a move changes.
    public internal(set) var addedOrder: [QueueItem] = [] {
        didSet {
            revision &+= 1
            entriesRevision &+= 1
        }
    }
    /// The song id of each entry of ``addedOrder``, at the same index: positive, unique for the
    /// life of the process, never reused (an Int per entry, so a lookup is a scan of an array).
    public internal(set) var songIDs: [Int] = []
    /// The next song id to give; carried over when a queue is replaced or restored.
    var nextSongID = 1
    /// Indices into ``addedOrder``, in play order; the identity while shuffle is off.
    var order: [Int] = [] {
        didSet { revision &+= 1 }
    }
    /// Changes with every change of the items or their order, never with a move to another
    /// item: what was built from ``addedOrder`` and ``playOrder`` at one revision still holds
    /// while it is the same (a saved state, say, rebuilt only when it would differ).
    public private(set) var revision = 0
    /// Changes with every change of the entries in ``addedOrder`` (added, removed, moved,
    /// replaced), not with the play order alone (shuffle turned on draws a new one): MPD's
    /// playlist version.
    public private(set) var entriesRevision = 0
    /// The current item's place in `order`; `nil` only when the queue is empty.
    public internal(set) var currentIndex: Int?
    /// What happens at the ends of the queue and of an item.
    public var repeatMode: RepeatType = .off
    /// Whether the play order is shuffled; set it with ``setShuffle(_:using:)``.
    public private(set) var shuffleMode: ShuffleType = .off
    /// MPD's single mode: on, an entry that ends is followed by the next one paused at its
    /// start, or replayed under repeat; `oneshot` does so once and turns itself off.
    public var singleMode: SingleMode = .off
    /// MPD's consume mode: an entry is removed once it finished playing or was skipped by "next".
    public var consumes = false
    /// Every queued identifier, so adding stays O(1).
    var identifiers: Set<String> = []

    /// An empty queue.
    public init() {}

    /// Equal items in the same order, at the same place, in the same modes; the revisions and
    /// song ids are not compared.
    public static func == (lhs: PlayQueue, rhs: PlayQueue) -> Bool {
        lhs.addedOrder == rhs.addedOrder && lhs.order == rhs.order && lhs.currentIndex == rhs.currentIndex
            && lhs.repeatMode == rhs.repeatMode && lhs.shuffleMode == rhs.shuffleMode
            && lhs.singleMode == rhs.singleMode && lhs.consumes == rhs.consumes
    }

    /// The items in play order.
    public var items: [QueueItem] { order.map { addedOrder[$0] } }
    /// The number of items.
    public var count: Int { addedOrder.count }
    /// Whether there is nothing to play.
    public var isEmpty: Bool { addedOrder.isEmpty }
    /// The item that plays now (or would, on play); `nil` when the queue is empty.
    public var current: QueueItem? { currentIndex.map { addedOrder[order[$0]] } }

    /// The items at `positions` in play order (clamped to the queue).
    public func items(inPlayOrder positions: Range<Int>) -> [QueueItem] {
        positions.clamped(to: order.indices).map { addedOrder[order[$0]] }
    }

    /// The item at `index` in play order.
    public func item(at index: Int) -> QueueItem? {
        order.indices.contains(index) ? addedOrder[order[index]] : nil
    }

    /// The place of the item with `identifier` in play order.
    public func index(of identifier: String) -> Int? {
        order.firstIndex { addedOrder[$0].identifier == identifier }
    }

    // MARK: Moving

    /// The item that follows when the current one ends on its own, without
    /// moving (see ``indexAfterCurrentEnds``). This is what a gapless hand-over prepares,
    /// unless ``pausesAfterCurrent``.
    public var itemAfterCurrentEnds: QueueItem? {
        indexAfterCurrentEnds.map { addedOrder[order[$0]] }
    }

    /// The play-order place of what follows when the current item ends on its own: the same
    /// item under repeat one (or single with repeat on), the first after the last under repeat
    /// all, `nil` at the end otherwise. Under consume nothing plays twice: the current item
    /// is never its own successor (as MPD's).
    public var indexAfterCurrentEnds: Int? {
        guard let currentIndex else { return nil }
        if shownRepeatMode == .one, !consumes { return currentIndex }
        guard let next = followingIndex(after: currentIndex), !(consumes && next == currentIndex) else { return nil }
        return next
    }

    /// Whether playback pauses when the current item ends (single on, repeat off): the item
    /// that follows becomes current, paused at its start, as MPD 0.23 does.
    public var pausesAfterCurrent: Bool { singleMode != .off && repeatMode == .off }

    /// The repeat mode as remotes show it: single with repeat on replays the current item.
    public var shownRepeatMode: RepeatType { singleMode != .off && repeatMode != .off ? .one : repeatMode }

    /// Moves to what follows when the current item ends on its own (see
    /// ``itemAfterCurrentEnds``). Returns `false`, without moving, at the end.
    public mutating func advanceAfterEnd() -> Bool {
        guard let next = indexAfterCurrentEnds else { return false }
        currentIndex = next
        return true
    }

    /// Moves to the next item as a listener's "next" does: repeat one does
    /// not hold it back. Returns `false`, without moving, at the end.
    public mutating func moveToNext() -> Bool {
        guard let currentIndex, let next = followingIndex(after: currentIndex) else { return false }
        self.currentIndex = next
        return true
    }

    /// Moves to the previous item; at the first it wraps under repeat all.
    /// Returns `false`, without moving, when there is none.
    public mutating func moveToPrevious() -> Bool {
        guard let currentIndex else { return false }
        if currentIndex > 0 {
            self.currentIndex = currentIndex - 1
        } else if repeatMode == .all, order.count > 1 {
            self.currentIndex = order.count - 1
        } else {
            return false
        }
        return true
    }

    /// Makes the item with `identifier` current. Returns `false` if it is not queued.
    public mutating func moveTo(identifier: String) -> Bool {
        guard let index = index(of: identifier) else { return false }
        currentIndex = index
        return true
    }

    /// Makes the item at `index` (play order) current. Returns `false` if out of range.
    public mutating func moveTo(index: Int) -> Bool {
        guard order.indices.contains(index) else { return false }
        currentIndex = index
        return true
    }

    func followingIndex(after index: Int) -> Int? {
        if index + 1 < order.count { return index + 1 }
        return repeatMode == .all ? 0 : nil
    }

    // MARK: Editing

    /// Replaces everything with `items`, in this order, and makes the item at
    /// `currentIndex` current (clamped). Shuffle, if on, draws a new order
    /// that starts with it.
    public mutating func replace<G: RandomNumberGenerator>(
        with items: [QueueItem], currentIndex: Int = 0, using generator: inout G
    ) {
        addedOrder = []
        identifiers = []
        addedOrder.reserveCapacity(items.count)
        for item in items { addedOrder.append(uniqued(item)) }
        songIDs = newSongIDs(addedOrder.count)
        order = Array(addedOrder.indices)
        self.currentIndex = addedOrder.isEmpty ? nil : min(max(currentIndex, 0), addedOrder.count - 1)
        if shuffleMode != .off { reshuffle(using: &generator) }
    }

    /// Replaces everything with `items`, using the system's random numbers for shuffle.
    public mutating func replace(with items: [QueueItem], currentIndex: Int = 0) {
        var generator = SystemRandomNumberGenerator()
        replace(with: items, currentIndex: currentIndex, using: &generator)
    }

    /// Inserts `item` after the item with identifier `after`, or first when `after` is `nil`,
    /// in play order and in the added order (so with shuffle off the two stay the same). An
    /// identifier already queued gets a suffix (`#2`, `#3`…) so entries stay distinct. Returns
    /// the inserted item, or `nil` (and changes nothing) when `after` is not queued.
    @discardableResult
    public mutating func insert(_ item: QueueItem, after: String?) -> QueueItem? {
        let position: Int
        let addedPosition: Int
        if let after {
            guard let index = index(of: after) else { return nil }
            position = index + 1
            addedPosition = order[index] + 1
        } else {
            position = 0
            addedPosition = 0
        }
        let item = uniqued(item)
        addedOrder.insert(item, at: addedPosition)
        songIDs.insert(contentsOf: newSongIDs(1), at: addedPosition)
        var order = self.order.map { $0 >= addedPosition ? $0 + 1 : $0 }
        order.insert(addedPosition, at: position)
        self.order = order
        if let currentIndex {
            if position <= currentIndex { self.currentIndex = currentIndex + 1 }
        } else {
            currentIndex = 0
        }
        return item
    }

    /// Appends `item` at the end of the play order; see ``insert(_:after:)``.
    @discardableResult
    public mutating func append(_ item: QueueItem) -> QueueItem {
        let item = uniqued(item)
        addedOrder.append(item)
        songIDs += newSongIDs(1)
        order.append(addedOrder.count - 1)
        if currentIndex == nil { currentIndex = 0 }
        return item
    }

    /// Removes the item with `identifier`. When it was current, the item that
    /// followed it becomes current (or the one before, if it was last).
    /// Returns `false` if it is not queued.
    @discardableResult
    public mutating func remove(identifier: String) -> Bool {
        guard let position = index(of: identifier) else { return false }
        let removed = order.remove(at: position)
        identifiers.remove(addedOrder.remove(at: removed).identifier)
        songIDs.remove(at: removed)
        order = order.map { $0 > removed ? $0 - 1 : $0 }
        if order.isEmpty {
            currentIndex = nil
        } else if let currentIndex, position < currentIndex || currentIndex == order.count {
            self.currentIndex = currentIndex - 1
        }
        return true
    }

    /// Replaces each item for which `update` returns a new one (a file's tags changed, say),
    /// keeping its place and identifier. Returns whether any item changed.
    @discardableResult
    public mutating func updateItems(_ update: (QueueItem) -> QueueItem?) -> Bool {
        var changed = false
        for index in addedOrder.indices {
            guard let updated = update(addedOrder[index]) else { continue }
            let item =
                updated.identifier == addedOrder[index].identifier
                ? updated : updated.renamed(addedOrder[index].identifier)
            if item != addedOrder[index] {
                addedOrder[index] = item
                changed = true
            }
        }
        return changed
    }

    // MARK: Shuffle

    /// Turns shuffle on or off. On (items or collections; a queue has no
    /// collections, so both shuffle items) draws a random order that starts
    /// with the current item; off restores the added order at the current item.
    public mutating func setShuffle<G: RandomNumberGenerator>(_ mode: ShuffleType, using generator: inout G) {
        let wasShuffled = shuffleMode != .off
        shuffleMode = mode
        if mode == .off {
            guard wasShuffled else { return }
            let current = currentIndex.map { order[$0] }
            order = Array(addedOrder.indices)
            currentIndex = current
        } else if !wasShuffled {
            reshuffle(using: &generator)
        }
    }

    /// Turns shuffle on or off with the system's random numbers.
    public mutating func setShuffle(_ mode: ShuffleType) {
        var generator = SystemRandomNumberGenerator()
        setShuffle(mode, using: &generator)
    }

    private mutating func reshuffle<G: RandomNumberGenerator>(using generator: inout G) {
        guard let currentIndex else {
            order.shuffle(using: &generator)
            return
        }
        let current = order[currentIndex]
        var rest = order.filter { $0 != current }
        rest.shuffle(using: &generator)
        order = [current] + rest
        self.currentIndex = 0
    }

    // MARK: Saving

    /// The play order as indices into ``addedOrder``, for saving a shuffled queue.
    public var playOrder: [Int] { order }

    /// Restores a saved queue exactly: the items in added order, the play
    /// order, the current place and the modes. Returns `false`, changing
    /// nothing, when `playOrder` is not a permutation of the items' indices.
    ///
    /// The entries get new song ids, after the ones this queue gave. Unshuffled, the saved play
    /// order becomes the added order too (a state saved before the two were kept the same).
    public mutating func restore(
        addedOrder items: [QueueItem], playOrder: [Int], currentIndex: Int?, repeatMode: RepeatType,
        shuffleMode: ShuffleType, singleMode: SingleMode = .off, consumes: Bool = false
    ) -> Bool {
        guard playOrder.sorted() == Array(items.indices) else { return false }
        var restored = emptied()
        if shuffleMode == .off {
            for index in playOrder { restored.addedOrder.append(restored.uniqued(items[index])) }
            restored.order = Array(items.indices)
        } else {
            for item in items { restored.addedOrder.append(restored.uniqued(item)) }
            restored.order = playOrder
        }
        restored.songIDs = restored.newSongIDs(items.count)
        restored.currentIndex = items.isEmpty ? nil : min(max(currentIndex ?? 0, 0), items.count - 1)
        restored.repeatMode = repeatMode
        restored.shuffleMode = shuffleMode
        restored.singleMode = singleMode
        restored.consumes = consumes
        self = restored
        return true
    }

    /// An empty queue that goes on from this one: its song ids and revisions continue.
    func emptied() -> PlayQueue {
        var queue = PlayQueue()
        queue.nextSongID = nextSongID
        queue.revision = revision &+ 1
        queue.entriesRevision = entriesRevision &+ 1
        return queue
    }

    /// `count` song ids not given before.
    mutating func newSongIDs(_ count: Int) -> [Int] {
        defer { nextSongID += count }
        return Array(nextSongID..<nextSongID + count)
    }

    /// `item`, with a suffix on its identifier if that one is already queued;
    /// the identifier is recorded as taken.
    mutating func uniqued(_ item: QueueItem) -> QueueItem {
        guard identifiers.contains(item.identifier) else {
            identifiers.insert(item.identifier)
            return item
        }
        var number = 2
        while identifiers.contains("\(item.identifier)#\(number)") { number += 1 }
        let identifier = "\(item.identifier)#\(number)"
        identifiers.insert(identifier)
        return item.renamed(identifier)
    }
}
