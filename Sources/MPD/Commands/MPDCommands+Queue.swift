import MediaRemote
import MusicLibrary
import Playback

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
        // Every entry counts as changed when the version differs: a client asking for changes
        // since an older version receives the whole queue, which it handles as mpd's answer.
        ("plchanges", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...2)
            let version = try Arguments.integer(a[0])
            let summary = await c.environment.player.queueSummary
            var response = client.response()
            guard version != summary.revision + 1 else { return response }
            let range = try a.count > 1 ? Arguments.range(a[1], count: summary.count) : 0..<summary.count
            try await c.write(await c.environment.player.queueEntries(in: range), to: &response, client: client)
            return response
        }),
        ("plchangesposid", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...2)
            let version = try Arguments.integer(a[0])
            let summary = await c.environment.player.queueSummary
            var response = client.response()
            guard version != summary.revision + 1 else { return response }
            let range = try a.count > 1 ? Arguments.range(a[1], count: summary.count) : 0..<summary.count
            for entry in await c.environment.player.queueEntries(in: range) {
                try response.add("cpos", entry.position)
                try response.add("Id", entry.songID)
            }
            return response
        }),
    ]

    /// The entry playing now (or paused, or where a stop left it).
    func currentEntry() async -> QueueEntry? {
        guard let id = await environment.player.queueSummary.currentSongID else { return nil }
        return await environment.player.queueEntry(songID: id)
    }

    /// Writes queue entries as songs with their `Pos:` and `Id:`, reading the library's tracks
    /// in one transaction.
    func write(_ entries: [QueueEntry], to response: inout MPDResponse, client: MPDClient) async throws(MPDError) {
        let keys = entries.map { $0.item.catalogKey ?? "" }
        let tracks = try await read { library in try library.tracks(identifiedBy: keys) }
        for (entry, track) in zip(entries, tracks) {
            let song = track.map(MPDSong.init) ?? MPDSong(described: entry.item.info, url: entry.item.url)
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
