import MusicLibrary

/// The music library as the daemon serves it, once opened (``TreeService``): its index, and the
/// factory of its queue entries.
struct ServedLibrary: Sendable {
    let library: MusicLibrary
    let items: QueueItems
}

extension Milestone where Value == ServedLibrary {
    struct NotYetOpen: Error, CustomStringConvertible {
        var description: String { "the music library is still being opened" }
    }

    /// The queue entries' factory; until the library is open a URL cannot be resolved.
    func items() throws -> QueueItems {
        guard let served = reached else { throw NotYetOpen() }
        return served.items
    }
}
