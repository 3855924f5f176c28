/// The subsystems `idle` reports: what kind of change happened.
public struct MPDSubsystems: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The song database changed (after a rescan that changed anything).
    public static let database = MPDSubsystems(rawValue: 1 << 0)
    /// A database update started or finished.
    public static let update = MPDSubsystems(rawValue: 1 << 1)
    /// A stored playlist changed.
    public static let storedPlaylist = MPDSubsystems(rawValue: 1 << 2)
    /// The queue changed.
    public static let playlist = MPDSubsystems(rawValue: 1 << 3)
    /// Started, stopped, paused, sought, another song.
    public static let player = MPDSubsystems(rawValue: 1 << 4)
    /// The volume changed.
    public static let mixer = MPDSubsystems(rawValue: 1 << 5)
    /// An output was enabled or disabled.
    public static let output = MPDSubsystems(rawValue: 1 << 6)
    /// repeat, random, single, consume, crossfade or ReplayGain changed.
    public static let options = MPDSubsystems(rawValue: 1 << 7)
    /// A partition was added, removed or changed.
    public static let partition = MPDSubsystems(rawValue: 1 << 8)
    /// The sticker database changed.
    public static let sticker = MPDSubsystems(rawValue: 1 << 9)
    /// A client subscribed to or unsubscribed from a channel.
    public static let subscription = MPDSubsystems(rawValue: 1 << 10)
    /// A message arrived on a channel the client subscribed to.
    public static let message = MPDSubsystems(rawValue: 1 << 11)
    /// A neighbor was found or lost.
    public static let neighbor = MPDSubsystems(rawValue: 1 << 12)
    /// The mount list changed.
    public static let mount = MPDSubsystems(rawValue: 1 << 13)

    /// Every subsystem, by the name `idle` takes and prints, in mpd's order.
    public static let names: [(String, MPDSubsystems)] = [
        ("database", .database), ("update", .update), ("stored_playlist", .storedPlaylist),
        ("playlist", .playlist), ("player", .player), ("mixer", .mixer), ("output", .output),
        ("options", .options), ("partition", .partition), ("sticker", .sticker),
        ("subscription", .subscription), ("message", .message), ("neighbor", .neighbor), ("mount", .mount),
    ]

    /// Every subsystem: what a bare `idle` waits for.
    public static let all = MPDSubsystems(rawValue: (1 << 14) - 1)

    /// The subsystem a name names (case-insensitively, as mpd reads them), or nil.
    public init?(name: String) {
        guard let found = Self.names.first(where: { $0.0.caseInsensitiveCompare(name) }) else { return nil }
        self = found.1
    }

    /// The names of the subsystems in this set, in mpd's order.
    public var names: [String] { Self.names.filter { contains($0.1) }.map(\.0) }
}

extension String {
    fileprivate func caseInsensitiveCompare(_ other: String) -> Bool {
        lowercased() == other.lowercased()
    }
}
