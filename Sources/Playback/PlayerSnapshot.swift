import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a restart keeps of a ``QueuePlayer``: the queue, the current entry
/// and its position, the volume, the rate, repeat, shuffle, single and consume. `Codable`, so
/// it can be saved as JSON; a state saved before single and consume existed reads them as off.
public struct PlayerSnapshot: Sendable, Codable, Equatable {
    /// A saved entry: the app looks its item up again by identifier or URL.
    public struct Entry: Sendable, Codable, Equatable {
        public var identifier: String
        /// The entry's URL; nil for an entry of a ``QueueItemCatalog``, found again by its
        /// identifier (a URL for each of 50,000 library entries would be most of what is saved).
        public var url: URL?
        public init(identifier: String, url: URL?) {
            self.identifier = identifier
            self.url = url
        }
    }

    /// Repeat modes as saved.
    public enum Repeat: String, Sendable, Codable {
        case off, one, all
        init(_ type: RepeatType) {
            switch type {
            case .off: self = .off
            case .one: self = .one
            case .all: self = .all
            }
        }
        var repeatType: RepeatType {
            switch self {
            case .off: .off
            case .one: .one
            case .all: .all
            }
        }
    }

    /// Shuffle modes as saved.
    public enum Shuffle: String, Sendable, Codable {
        case off, items, collections
        init(_ type: ShuffleType) {
            switch type {
            case .off: self = .off
            case .items: self = .items
            case .collections: self = .collections
            }
        }
        var shuffleType: ShuffleType {
            switch self {
            case .off: .off
            case .items: .items
            case .collections: .collections
            }
        }
    }

    /// The entries in the order they were added.
    public var addedOrder: [Entry]
    /// Indices into `addedOrder`, in play order (shuffled or not).
    public var playOrder: [Int]
    /// The current entry.
    public var currentIdentifier: String?
    /// The position in the current entry, in milliseconds.
    public var positionMilliseconds: Int64
    /// Linear volume, 0 to 10.
    public var volume: Double
    /// The playback rate.
    public var rate: Double
    public var repeatMode: Repeat
    public var shuffleMode: Shuffle
    /// MPD's single mode.
    public var singleMode: SingleMode
    /// MPD's consume mode: entries are removed once played.
    public var consumes: Bool

    public init(
        addedOrder: [Entry], playOrder: [Int], currentIdentifier: String?, positionMilliseconds: Int64,
        volume: Double, rate: Double, repeatMode: Repeat, shuffleMode: Shuffle, singleMode: SingleMode = .off,
        consumes: Bool = false
    ) {
        self.addedOrder = addedOrder
        self.playOrder = playOrder
        self.currentIdentifier = currentIdentifier
        self.positionMilliseconds = positionMilliseconds
        self.volume = volume
        self.rate = rate
        self.repeatMode = repeatMode
        self.shuffleMode = shuffleMode
        self.singleMode = singleMode
        self.consumes = consumes
    }

    /// Reads a saved state; single and consume, missing from older ones, are off.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        addedOrder = try container.decode([Entry].self, forKey: .addedOrder)
        playOrder = try container.decode([Int].self, forKey: .playOrder)
        currentIdentifier = try container.decodeIfPresent(String.self, forKey: .currentIdentifier)
        positionMilliseconds = try container.decode(Int64.self, forKey: .positionMilliseconds)
        volume = try container.decode(Double.self, forKey: .volume)
        rate = try container.decode(Double.self, forKey: .rate)
        repeatMode = try container.decode(Repeat.self, forKey: .repeatMode)
        shuffleMode = try container.decode(Shuffle.self, forKey: .shuffleMode)
        singleMode = try container.decodeIfPresent(SingleMode.self, forKey: .singleMode) ?? .off
        consumes = try container.decodeIfPresent(Bool.self, forKey: .consumes) ?? false
    }
}

/// The queue's entries and play order as a snapshot built them, at a queue revision.
struct SavedEntries: Sendable {
    var revision: Int
    var entries: [PlayerSnapshot.Entry]
    var playOrder: [Int]
}

extension PlayerCore {
    /// The state a restart should keep, as of `now`: a pure read.
    ///
    /// The queue's entries are built again only after the queue changed (each input that
    /// changes it rebuilds them once) and shared otherwise, so a saver comparing two snapshots
    /// of a long queue compares one array buffer, not 50,000 entries.
    package func snapshot(at now: ContinuousClock.Instant) -> PlayerSnapshot {
        let saved = savedEntries.flatMap { $0.revision == queue.revision ? $0 : nil } ?? Self.entries(of: queue)
        return PlayerSnapshot(
            addedOrder: saved.entries, playOrder: saved.playOrder, currentIdentifier: queue.current?.identifier,
            positionMilliseconds: Int64(playbackPosition(at: now) / .milliseconds(1)), volume: volume, rate: rate,
            repeatMode: .init(queue.repeatMode), shuffleMode: .init(queue.shuffleMode), singleMode: queue.singleMode,
            consumes: queue.consumes)
    }

    /// Builds the saved entries again when the queue changed since they were built.
    mutating func refreshSavedEntries() {
        guard savedEntries?.revision != queue.revision else { return }
        savedEntries = Self.entries(of: queue)
    }

    private static func entries(of queue: PlayQueue) -> SavedEntries {
        SavedEntries(
            revision: queue.revision,
            entries: queue.addedOrder.map { item in
                PlayerSnapshot.Entry(identifier: item.identifier, url: item.catalogKey == nil ? item.url : nil)
            },
            playOrder: queue.playOrder)
    }

    /// Tells the observers the state as it is now, when anyone observes it.
    mutating func notifyChange() {
        guard notifiesChanges else { return }
        refreshSavedEntries()
        effects.append(.notifyObservers(snapshot(at: now)))
    }
}
