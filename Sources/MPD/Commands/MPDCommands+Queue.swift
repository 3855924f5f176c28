import MediaRemote
import MusicLibrary
import Playback
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MPDCommands {
    /// The queue: the player's own, in the order entries were added (mpd's positions), which
    /// random (the player's shuffle) plays in another order without moving them.
    static let queueCommands: [(String, MPDPermissions, Command)] = [
        ("add", .add, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...2)
            let items = try await c.items(for: a[0], foldersAllowed: true)
            let count = await c.environment.player.queueSummary.count
            let destination = try a.count > 1 ? MPDCommands.destination(a[1], maximum: count) : nil
            _ = try await c.insert(items, at: destination)
            return client.response()
        }),
        ("addid", .add, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...2)
            let items = try await c.items(for: a[0], foldersAllowed: false)
            let count = await c.environment.player.queueSummary.count
            let destination = try a.count > 1 ? MPDCommands.destination(a[1], maximum: count) : nil
            let ids = try await c.insert(items, at: destination)
            var response = client.response()
            if let id = ids.first { try response.add("Id", id) }
            return response
        }),
        ("delete", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let range = try Arguments.range(a[0], count: await c.environment.player.queueSummary.count)
            guard !range.isEmpty else { return client.response() }
            try await c.edit { try await $0.removeEntries(atPositions: range) }
            return client.response()
        }),
        ("deleteid", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let id = try Arguments.unsigned(a[0])
            try await c.edit { try MPDCommands.check(await $0.removeEntry(songID: id), "delete song id \(id)") }
            return client.response()
        }),
        ("move", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let count = await c.environment.player.queueSummary.count
            let range = try Arguments.entries(a[0], count: count)
            let target = try MPDCommands.destination(a[1], maximum: count - 1)
            try await c.edit { try await $0.moveEntries(atPositions: range, to: target) }
            return client.response()
        }),
        ("moveid", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let id = try Arguments.unsigned(a[0])
            let count = await c.environment.player.queueSummary.count
            let target = try MPDCommands.destination(a[1], maximum: count - 1)
            try await c.edit { try await $0.moveEntry(songID: id, to: target) }
            return client.response()
        }),
        ("clear", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            await c.environment.player.clearQueue()
            return client.response()
        }),
        ("shuffle", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            let count = await c.environment.player.queueSummary.count
            let range = try a.first.map { text throws(MPDError) in try Arguments.range(text, count: count) }
            guard range?.isEmpty != true, count > 0 else { return client.response() }
            try await c.edit { try await $0.shuffleEntries(atPositions: range) }
            return client.response()
        }),
        ("swap", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let count = await c.environment.player.queueSummary.count
            let first = try Arguments.unsigned(a[0])
            let second = try Arguments.unsigned(a[1])
            guard first < count, second < count else { throw .argument("Bad song index") }
            try await c.swap(first, second)
            return client.response()
        }),
        ("swapid", .control, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let first = try Arguments.unsigned(a[0])
            let second = try Arguments.unsigned(a[1])
            let player = c.environment.player
            guard let x = await player.queueEntry(songID: first), let y = await player.queueEntry(songID: second) else {
                throw .noExist("No such song")
            }
            try await c.swap(x.position, y.position)
            return client.response()
        }),
        ("playlistfind", .read, { c, a, client throws(MPDError) in
            try await c.findInQueue(a, caseSensitive: true, client)
        }),
        ("playlistsearch", .read, { c, a, client throws(MPDError) in
            try await c.findInQueue(a, caseSensitive: false, client)
        }),
        // mpd's oldest listing of the queue: `POS:file: URI`.
        ("playlist", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            let count = await c.environment.player.queueSummary.count
            var response = client.response()
            for entry in await c.environment.player.queueEntries(in: 0..<count) {
                try response.add("\(entry.position):file", entry.item.catalogKey ?? entry.item.url.absoluteString)
            }
            return response
        }),
        ("playlistinfo", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            let count = await c.environment.player.queueSummary.count
            let range = try a.first.map { text throws(MPDError) in try Arguments.range(text, count: count) } ?? 0..<count
            var response = client.response()
            try await c.write(await c.environment.player.queueEntries(in: range), to: &response, client: client)
            return response
        }),
        ("playlistid", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            var response = client.response()
            if let id = a.first {
                guard let entry = await c.environment.player.queueEntry(songID: try Arguments.unsigned(id)) else {
                    throw .noExist("No such song")
                }
                try await c.write([entry], to: &response, client: client)
            } else {
                let count = await c.environment.player.queueSummary.count
                try await c.write(await c.environment.player.queueEntries(in: 0..<count), to: &response, client: client)
            }
            return response
        }),
        // The entries whose position holds another entry than at the client's version (moved,
        // added, shifted); the whole queue when that version is too old to be remembered.
        ("plchanges", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...2)
            var response = client.response()
            let entries = try await c.changedEntries(since: try Arguments.integer(a[0]), within: a.count > 1 ? a[1] : nil)
            try await c.write(entries, to: &response, client: client)
            return response
        }),
        ("plchangesposid", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...2)
            var response = client.response()
            let entries = try await c.changedEntries(since: try Arguments.integer(a[0]), within: a.count > 1 ? a[1] : nil)
            for entry in entries {
                try response.add("cpos", entry.position)
                try response.add("Id", entry.songID)
            }
            return response
        }),
    ]

    /// How many revisions of the queue `plchanges` remembers (at 50,000 entries, 400 kB each).
    static let rememberedRevisions = 8

    /// Records the queue's song ids at its current revision (see ``State/queueHistory``).
    @discardableResult
    func noteQueueRevision() async -> (revision: Int, songIDs: [Int]) {
        let now = await environment.player.queueSongIDs
        state.withLock { state in
            guard !state.queueHistory.contains(where: { $0.revision == now.revision }) else { return }
            state.queueHistory.append(now)
            state.queueHistory.sort { $0.revision < $1.revision }
            if state.queueHistory.count > Self.rememberedRevisions { state.queueHistory.removeFirst() }
        }
        return now
    }

    /// The entries changed since the client's playlist `version` (``QueueSummary/revision`` + 1),
    /// within the positions `range` names.
    func changedEntries(since version: Int, within range: String?) async throws(MPDError) -> [QueueEntry] {
        let now = await noteQueueRevision()
        let positions = try range.map { text throws(MPDError) in try Arguments.range(text, count: now.songIDs.count) }
            ?? 0..<now.songIDs.count
        guard version - 1 != now.revision else { return [] }
        let old = state.withLock { state in state.queueHistory.first { $0.revision == version - 1 }?.songIDs }
        guard let old else { return await environment.player.queueEntries(in: positions) }
        // Compared on the ids alone; entries are built only between the first and last changed.
        let changed = positions.filter { $0 >= old.count || old[$0] != now.songIDs[$0] }
        guard let first = changed.first, let last = changed.last else { return [] }
        return await environment.player.queueEntries(in: first..<last + 1).filter { entry in
            entry.position >= old.count || old[entry.position] != entry.songID
        }
    }

    /// Swaps the entries at two positions: two moves, the later entry first, so that neither
    /// move shifts the other's place.
    func swap(_ first: Int, _ second: Int) async throws(MPDError) {
        let (low, high) = (min(first, second), max(first, second))
        guard low != high else { return }
        try await edit { player in
            try await player.moveEntries(atPositions: high..<high + 1, to: low)
            try await player.moveEntries(atPositions: low + 1..<low + 2, to: high)
        }
    }

    /// `playlistfind` and `playlistsearch`: the queue's entries the filter matches, in order.
    func findInQueue(_ arguments: [String], caseSensitive: Bool, _ client: MPDClient) async throws(MPDError)
        -> MPDResponse
    {
        guard !arguments.isEmpty else { throw .argument("too few arguments") }
        let (filter, rest) = try MPDFilter.parse(arguments[...], caseSensitive: caseSensitive)
        guard rest.isEmpty else { throw .argument("Unknown argument \"\(rest.first!)\"") }
        let count = await environment.player.queueSummary.count
        var response = client.response()
        for (entry, song) in try await songs(of: await environment.player.queueEntries(in: 0..<count))
        where filter.matches(song) {
            try song.write(to: &response, client: client, extra: [("Pos", entry.position), ("Id", entry.songID)])
        }
        return response
    }

    /// The songs of queue entries, the library's tracks from the cache or read in one transaction.
    func songs(of entries: [QueueEntry]) async throws(MPDError) -> [(QueueEntry, MPDSong)] {
        let keys = entries.map { $0.item.catalogKey ?? "" }
        let tracks = try await tracks(identifiedBy: keys)
        return zip(entries, tracks).map { entry, track in
            (entry, track.map(MPDSong.init) ?? MPDSong(described: entry.item.info, url: entry.item.url))
        }
    }

    /// The entry playing now (or paused, or where a stop left it).
    func currentEntry() async -> QueueEntry? {
        // Both published by the player after each change: no wait for its actor.
        guard let id = visibleCurrent(environment.player.currentSummary)?.songID else { return nil }
        let entry = environment.player.currentEntry
        return entry?.songID == id ? entry : await environment.player.queueEntry(songID: id)
    }

    /// Writes queue entries as songs with their `Pos:` and `Id:`, reading the library's tracks
    /// in one transaction.
    func write(_ entries: [QueueEntry], to response: inout MPDResponse, client: MPDClient) async throws(MPDError) {
        for (entry, song) in try await songs(of: entries) {
            try song.write(to: &response, client: client, extra: [("Pos", entry.position), ("Id", entry.songID)])
        }
    }

    /// The queue entries `uri` names: a library song or folder (`/` or empty for the whole
    /// library), or a stream's URL.
    func items(for uri: String, foldersAllowed: Bool) async throws(MPDError) -> [QueueItem] {
        if let url = URL(string: uri), let scheme = url.scheme?.lowercased(), scheme.count > 1 {
            guard scheme != "file" else { throw MPDError(.permission, "Access denied: add files by their path in the library") }
            do {
                return [try await environment.resolveURL(url)]
            } catch {
                throw MPDError(.noExist, "cannot add \(uri): \(error)")
            }
        }
        let path = MPDCommands.libraryPath(uri)
        let ids: [Track.ID] = try await read { library in
            if !path.isEmpty, try library.track(id: path) != nil { return [path] }
            guard foldersAllowed else { throw MPDError.noExist("No such song") }
            let ids = try library.trackIDs(inFolder: path)
            guard !ids.isEmpty else { throw MPDError.noExist("No such directory") }
            return ids
        }
        return ids.map(environment.queueItem)
    }

    /// A URI as a path in the library: no leading or trailing `/`; `/` alone is the root.
    static func libraryPath(_ uri: String) -> String {
        var path = Substring(uri)
        while path.hasPrefix("/") { path = path.dropFirst() }
        while path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// A place in the queue as mpd 0.23 writes it: a position, or `+N`/`-N` relative to the
    /// current entry (`+0` right after it, `-0` right before it), resolved as the edit runs.
    /// A position over `maximum` is refused as mpd words it ("Number too large").
    static func destination(_ text: String, maximum: Int) throws(MPDError) -> QueueDestination {
        if let sign = text.first, sign == "+" || sign == "-" {
            let offset = try Arguments.unsigned(String(text.dropFirst()))
            return sign == "+" ? .afterCurrent(offset: offset) : .beforeCurrent(offset: offset)
        }
        return .position(try Arguments.unsigned(text, maximum: max(0, maximum)))
    }

    /// Inserts `items` at `destination` (the end when nil); returns their song ids.
    func insert(_ items: [QueueItem], at destination: QueueDestination?) async throws(MPDError) -> [Int] {
        switch destination {
        case .afterCurrent?, .beforeCurrent?:
            guard visibleCurrent(await environment.player.queueSummary) != nil else {
                throw MPDError(.playerSync, "No current song")
            }
        default: break
        }
        do {
            if let destination { return try await environment.player.insert(items, at: destination) }
            return try await environment.player.insert(items)
        } catch {
            throw error.mpdError
        }
    }

    /// Runs a queue edit; its error becomes the `ACK` a client reads.
    func edit(_ body: (QueuePlayer) async throws -> Void) async throws(MPDError) {
        do {
            try await body(environment.player)
        } catch let error as QueueEditError {
            throw error.mpdError
        } catch let error as MPDError {
            throw error
        } catch {
            throw MPDError(.system, "\(error)")
        }
    }
}

extension QueueEditError {
    var mpdError: MPDError {
        switch self {
        case .badPosition: MPDError(.argument, "Bad song index")
        case .noSuchSong: MPDError(.noExist, "No such song")
        case .noCurrentEntry: MPDError(.playerSync, "No current song")
        case .movesCurrentRelativeToItself: MPDError(.argument, "Cannot move current song relative to itself")
        case .queueFull(let maximum): MPDError(.playlistMax, "Playlist is too large (at most \(maximum) songs)")
        }
    }
}
