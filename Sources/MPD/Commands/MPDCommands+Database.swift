import Logging
import MusicLibrary
import Playback
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MPDCommands {
    /// Browsing and searching the library's index, and updating it.
    static let databaseCommands: [(String, MPDPermissions, Command)] = [
        ("lsinfo", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            return try await c.lsinfo(MPDCommands.libraryPath(a.first ?? ""), client)
        }),
        ("listall", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            return try await c.listAll(MPDCommands.libraryPath(a.first ?? ""), withInfo: false, client)
        }),
        ("listallinfo", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            return try await c.listAll(MPDCommands.libraryPath(a.first ?? ""), withInfo: true, client)
        }),
        ("find", .read, { c, a, client throws(MPDError) in
            try await c.find(a, caseSensitive: true, client)
        }),
        ("search", .read, { c, a, client throws(MPDError) in
            try await c.find(a, caseSensitive: false, client)
        }),
        ("findadd", .add, { c, a, client throws(MPDError) in
            try await c.findAdd(a, caseSensitive: true, client)
        }),
        ("searchadd", .add, { c, a, client throws(MPDError) in
            try await c.findAdd(a, caseSensitive: false, client)
        }),
        ("count", .read, { c, a, client throws(MPDError) in
            try await c.cachedListing("count", a, client) { () async throws(MPDError) in try await c.count(a, client) }
        }),
        ("list", .read, { c, a, client throws(MPDError) in
            try await c.cachedListing("list", a, client) { () async throws(MPDError) in try await c.list(a, client) }
        }),
        ("update", .admin, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            return try c.update(client)
        }),
        ("rescan", .admin, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...1)
            return try c.update(client)
        }),
    ]

    // MARK: Browsing

    /// As mpd: a folder's songs, then its playlist files, then its subfolders, each subfolder
    /// with the modification time of the folder itself on disk (mpd's, which a client may compare).
    func lsinfo(_ path: String, _ client: MPDClient) async throws(MPDError) -> MPDResponse {
        let root = environment.library.root
        let found: (track: Track?, listing: FolderListing?, folderTimes: [Int64?]) = try await read { library in
            if !path.isEmpty, let track = try library.track(id: path) { return (track, nil, []) }
            let listing = try library.folderListing(path)
            return (nil, listing, listing?.subfolders.map { MPDCommands.folderModified(root, $0.path) } ?? [])
        }
        var response = client.response()
        if let track = found.track {
            try MPDSong(track).write(to: &response, client: client)
            return response
        }
        guard let listing = found.listing else { throw .noExist("No such directory") }
        for track in listing.tracks { try MPDSong(track).write(to: &response, client: client) }
        for playlist in listing.playlists {
            try response.add("playlist", playlist.path)
            try response.add("Last-Modified", MPDFormat.timestamp(playlist.modified / 1_000_000_000))
        }
        for (folder, modified) in zip(listing.subfolders, found.folderTimes) {
            try response.add("directory", folder.path)
            try response.add("Last-Modified", MPDFormat.timestamp(modified ?? folder.modified / 1_000_000_000))
        }
        return response
    }

    /// The modification time of the library folder `path` on disk, in seconds since 1970; nil
    /// when it cannot be read.
    static func folderModified(_ root: String, _ path: String) -> Int64? {
        var status = stat()
        guard stat(path.isEmpty ? root : root + "/" + path, &status) == 0 else { return nil }
        return Int64(status.st_mtim.tv_sec)
    }

    /// Every folder, song and playlist below `path` in mpd's order: the asked folder itself
    /// first (unless the root), then for each folder its songs, its playlist files, then each
    /// subfolder with its contents. With `withInfo`, folders and playlists with their
    /// `Last-Modified` and songs with their tags.
    func listAll(_ path: String, withInfo: Bool, _ client: MPDClient) async throws(MPDError) -> MPDResponse {
        let root = environment.library.root
        return try await read { library throws -> MPDResponse in
            var response = client.response()
            if !path.isEmpty, let track = try library.track(id: path) {
                if withInfo { try MPDSong(track).write(to: &response, client: client) } else { try response.add("file", track.id) }
                return response
            }
            // Playlists are few: read once, by folder.
            var playlists: [Substring: [String]] = [:]
            for playlist in try library.playlists() where MPDCommands.isInside(playlist.id, path) {
                let folder = playlist.id.lastIndex(of: "/").map { playlist.id[..<$0] } ?? ""
                playlists[folder, default: []].append(playlist.id)
            }
            func announce(_ folder: Substring) throws {
                try response.add("directory", String(folder))
                if withInfo, let modified = MPDCommands.folderModified(root, String(folder)) {
                    try response.add("Last-Modified", MPDFormat.timestamp(modified))
                }
            }
            func flushPlaylists(_ folder: Substring) throws {
                for id in playlists.removeValue(forKey: folder)?.sorted() ?? [] {
                    try response.add("playlist", id)
                    if withInfo, let modified = MPDCommands.fileModified(root + "/" + id) {
                        try response.add("Last-Modified", MPDFormat.timestamp(modified))
                    }
                }
            }
            let base = Substring(path)
            if !path.isEmpty {
                guard try library.folderListing(path) != nil else { throw MPDError.noExist("No such directory") }
                try announce(base)
            }
            var entered: Set<Substring> = [base]
            var lastFolder: Substring? = nil
            try library.forEachTrack(inFolder: path.isEmpty ? nil : path) { track in
                let folder = track.id.lastIndex(of: "/").map { track.id[..<$0] } ?? ""
                if let lastFolder, lastFolder != folder { try flushPlaylists(lastFolder) }
                // The folders between the asked one and the track, entered once each; one passed
                // through has no songs left to list (a folder's songs come before its subfolders).
                var chain: [Substring] = []
                var walk = folder
                while !entered.contains(walk) {
                    chain.append(walk)
                    guard let slash = walk.lastIndex(of: "/") else { walk = ""; break }
                    walk = walk[..<slash]
                }
                if lastFolder == nil || chain.count > 0 { try flushPlaylists(walk) }
                for entry in chain.reversed() {
                    entered.insert(entry)
                    try announce(entry)
                    if entry != folder { try flushPlaylists(entry) }
                }
                lastFolder = folder
                if withInfo { try MPDSong(track).write(to: &response, client: client) } else { try response.add("file", track.id) }
                return true
            }
            if let lastFolder { try flushPlaylists(lastFolder) }
            try flushPlaylists(base)
            return response
        }
    }

    /// Whether `id` lies in the folder `folder` ("" the root) or below it.
    static func isInside(_ id: String, _ folder: String) -> Bool {
        folder.isEmpty || (id.hasPrefix(folder) && id.dropFirst(folder.count).first == "/")
    }

    /// A file's modification time, in seconds since 1970; nil when it cannot be read.
    static func fileModified(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int64(status.st_mtim.tv_sec)
    }

    // MARK: Searching

    /// What follows a filter in `find`, `search`, `findadd` and `searchadd`.
    struct SearchOptions {
        var sort: (tag: String, descending: Bool)?
        var window: Range<Int>?
        var position: String?

        init(_ rest: ArraySlice<String>, allowsPosition: Bool) throws(MPDError) {
            var rest = rest
            while let keyword = rest.popFirst() {
                guard let value = rest.popFirst() else { throw .argument("Incorrect number of filter arguments") }
                switch keyword.lowercased() {
                case "sort":
                    let descending = value.hasPrefix("-")
                    let name = descending ? String(value.dropFirst()) : value
                    guard name == "Last-Modified" || MPDTag(name: name) != nil else {
                        throw .argument("Unknown sort tag")
                    }
                    sort = (name, descending)
                case "window":
                    window = try Arguments.range(value, count: Int.max, openEndAllowed: true)
                case "position" where allowsPosition:
                    position = value
                default:
                    throw .argument("Unknown argument \"\(keyword)\"")
                }
            }
        }
    }

    /// The songs `arguments`' filter matches, sorted and windowed as asked.
    func songs(
        _ arguments: [String], caseSensitive: Bool, allowsPosition: Bool
    ) async throws(MPDError) -> (songs: [MPDSong], options: SearchOptions) {
        guard !arguments.isEmpty else { throw .argument("too few arguments") }
        let (filter, rest) = try MPDFilter.parse(arguments[...], caseSensitive: caseSensitive)
        let options = try SearchOptions(rest, allowsPosition: allowsPosition)
        let limit = MPDCommands.maximumSongsMatched
        let deadline = MPDCommands.filteredWalkDeadline()
        var songs: [MPDSong] = try await read { library in
            var songs: [MPDSong] = []
            try library.forEachTrack(inFolder: filter.basePath) { track in
                try MPDCommands.checkFilteredWalk(until: deadline)
                let song = MPDSong(track)
                if filter.matches(song) { songs.append(song) }
                guard songs.count <= limit else {
                    throw MPDError(.system, "more than \(limit) songs match; narrow the search")
                }
                return true
            }
            return songs
        }
        if let sort = options.sort { songs.sort(by: MPDCommands.order(sort.tag, descending: sort.descending)) }
        if let window = options.window { songs = Array(songs[window.clamped(to: 0..<songs.count)]) }
        return (songs, options)
    }

    /// The most songs a search collects before it answers an error: the response would be
    /// over its bound long before.
    static let maximumSongsMatched = 100_000

    /// The longest a search, count or list may walk the index. A regular expression is linear in
    /// each value, but one of a few hundred instructions (`(.?.?.?.?.?){60}x`) costs milliseconds
    /// per value: over 50,000 tracks, minutes of a reader thread (4 serve every client), and of
    /// the daemon's shutdown, which waits for the commands running.
    static let maximumFilteredWalkDuration: Duration = .seconds(10)

    /// When a filtered walk starting now must have ended.
    static func filteredWalkDeadline() -> ContinuousClock.Instant { .now + maximumFilteredWalkDuration }

    /// Ends a filtered walk, at a track, whose client's command was cancelled (the server
    /// stopping) or that ran past `deadline`.
    static func checkFilteredWalk(until deadline: ContinuousClock.Instant) throws(MPDError) {
        if Task.isCancelled { throw MPDError(.system, "cancelled: the server is stopping") }
        guard ContinuousClock.now < deadline else {
            throw MPDError(.system, "the search took longer than \(maximumFilteredWalkDuration); narrow it")
        }
    }

    func find(_ arguments: [String], caseSensitive: Bool, _ client: MPDClient) async throws(MPDError) -> MPDResponse {
        let (songs, _) = try await songs(arguments, caseSensitive: caseSensitive, allowsPosition: false)
        var response = client.response()
        for song in songs { try song.write(to: &response, client: client) }
        return response
    }

    func findAdd(_ arguments: [String], caseSensitive: Bool, _ client: MPDClient) async throws(MPDError) -> MPDResponse {
        let (songs, options) = try await songs(arguments, caseSensitive: caseSensitive, allowsPosition: true)
        let count = await environment.player.queueSummary.count
        let destination = try options.position.map { text throws(MPDError) in
            try MPDCommands.destination(text, maximum: count)
        }
        _ = try await insert(songs.map { environment.queueItem($0.uri) }, at: destination)
        return client.response()
    }

    /// How `sort` orders songs: by the tag's first value (numbers as numbers), a song without it
    /// as the empty value (first, as mpd); songs with equal values stay in the database's order
    /// (by URI) either way, as mpd's stable sort keeps them.
    static func order(_ name: String, descending: Bool) -> (MPDSong, MPDSong) -> Bool {
        let tag = MPDTag(name: name)
        return { a, b in
            let before: Bool
            let after: Bool
            if let tag {
                let x = a.values(of: tag).first ?? ""
                let y = b.values(of: tag).first ?? ""
                if x == y {
                    (before, after) = (false, false)
                } else if let i = Int(x), let j = Int(y) {
                    (before, after) = (i < j, j < i)
                } else {
                    let (i, j) = (x.lowercased(), y.lowercased())
                    (before, after) = i == j ? (x < y, y < x) : (i < j, j < i)
                }
            } else {
                let (x, y) = (a.lastModified ?? 0, b.lastModified ?? 0)
                (before, after) = (x < y, y < x)
            }
            if !before, !after { return a.uri < b.uri }
            return descending ? after : before
        }
    }

    // MARK: Counting and listing tags

    func count(_ arguments: [String], _ client: MPDClient) async throws(MPDError) -> MPDResponse {
        guard !arguments.isEmpty else { throw .argument("too few arguments") }
        var filter: MPDFilter?
        var rest = arguments[...]
        if let first = rest.first, first.lowercased() != "group" {
            (filter, rest) = try MPDFilter.parse(rest, caseSensitive: true)
        }
        var group: MPDTag?
        if let keyword = rest.popFirst() {
            guard keyword.lowercased() == "group", let name = rest.popFirst(), rest.isEmpty else {
                throw .argument("Unknown argument \"\(keyword)\"")
            }
            guard let tag = MPDTag(name: name) else { throw .argument("Unknown tag type: \(name)") }
            group = tag
        }
        let deadline = MPDCommands.filteredWalkDeadline()
        let totals: [String: (songs: Int, seconds: Double)] = try await read { [filter, group] library in
            var totals: [String: (songs: Int, seconds: Double)] = [:]
            try library.forEachTrack(inFolder: filter?.basePath) { track in
                try MPDCommands.checkFilteredWalk(until: deadline)
                let song = MPDSong(track)
                guard filter?.matches(song) ?? true else { return true }
                let keys = group.map { MPDCommands.values(of: $0, in: song) } ?? [""]
                for key in keys {
                    totals[key, default: (0, 0)].songs += 1
                    totals[key, default: (0, 0)].seconds += song.duration?.seconds ?? 0
                }
                return true
            }
            return totals
        }
        var response = client.response()
        if let group {
            for key in totals.keys.sorted() {
                try response.add(group.rawValue, key)
                try response.add("songs", totals[key]!.songs)
                try response.add("playtime", Int(totals[key]!.seconds.rounded()))
            }
        } else {
            try response.add("songs", totals[""]?.songs ?? 0)
            try response.add("playtime", Int((totals[""]?.seconds ?? 0).rounded()))
        }
        return response
    }

    /// The values `list` and `group` see of a tag: as mpd, AlbumArtist falls back to Artist and
    /// a sort tag to its tag; a song without the tag counts under the empty value.
    static func values(of tag: MPDTag, in song: MPDSong) -> [String] {
        var values = song.values(of: tag)
        if values.isEmpty, let fallback = tag.fallback { values = song.values(of: fallback) }
        if values.isEmpty, tag == .albumArtistSort { values = song.values(of: .artist) }
        return values.isEmpty ? [""] : values
    }

    /// `list TAG [FILTER] [group TAG…]`, and the old `list Album ARTIST`, as mpd 0.23: the
    /// values sorted, a song without the tag counting as the empty value (listed, as mpd does:
    /// `find TAG ""` finds those songs), groups nested with the last one named outermost.
    /// `list file` lists the songs' paths.
    func list(_ arguments: [String], _ client: MPDClient) async throws(MPDError) -> MPDResponse {
        guard let name = arguments.first else { throw .argument("too few arguments") }
        let listsFiles = name.lowercased() == "file"
        let tag = MPDTag(name: name)
        guard tag != nil || listsFiles else { throw .argument("Unknown tag type: \(name)") }
        var rest = arguments.dropFirst()
        var filter: MPDFilter?
        if rest.count == 1, let only = rest.first, !only.hasPrefix("(") {
            // mpd's old form: the albums of one artist.
            guard tag == .album else { throw .argument("should be \"Album\" for 3 arguments") }
            (filter, _) = try MPDFilter.parse(["Artist", only], caseSensitive: true)
            rest = []
        } else if let first = rest.first, first.lowercased() != "group" {
            (filter, rest) = try MPDFilter.parse(rest, caseSensitive: true)
        }
        var groups: [MPDTag] = []
        while let keyword = rest.popFirst() {
            guard keyword.lowercased() == "group", let groupName = rest.popFirst() else {
                throw .argument("Unknown argument \"\(keyword)\"")
            }
            guard let group = MPDTag(name: groupName) else { throw .argument("Unknown tag type: \(groupName)") }
            guard groups.count < 4 else { throw .argument("too many groups") }
            groups.append(group)
        }
        let deadline = MPDCommands.filteredWalkDeadline()
        // The last group named is the outermost.
        groups.reverse()
        let rows: Set<[String]> = try await read { [filter, groups, tag] library in
            var rows = Set<[String]>()
            try library.forEachTrack(inFolder: filter?.basePath) { track in
                try MPDCommands.checkFilteredWalk(until: deadline)
                let song = MPDSong(track)
                guard filter?.matches(song) ?? true else { return true }
                var combinations: [[String]] = [[]]
                for group in groups {
                    let values = MPDCommands.values(of: group, in: song)
                    combinations = combinations.flatMap { prefix in values.map { prefix + [$0] } }
                }
                for value in tag.map({ MPDCommands.values(of: $0, in: song) }) ?? [song.uri] {
                    for combination in combinations { rows.insert(combination + [value]) }
                }
                guard rows.count <= MPDCommands.maximumSongsMatched else {
                    throw MPDError(.system, "more than \(MPDCommands.maximumSongsMatched) values; narrow the filter")
                }
                return true
            }
            return rows
        }
        var response = client.response()
        var printed: [String]? = nil
        let key = tag?.rawValue ?? "file"
        for row in rows.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let groupValues = Array(row.dropLast())
            for (index, group) in groups.enumerated()
            where printed.map({ Array($0.prefix(index + 1)) }) != Array(groupValues.prefix(index + 1)) {
                try response.add(group.rawValue, groupValues[index])
            }
            printed = groupValues
            try response.add(key, row.last!)
        }
        return response
    }

    // MARK: Updating

    /// Starts a rescan (or joins the one running) and answers its job number at once; idle
    /// clients hear `update` as it starts and ends, and `database` if it changed anything.
    func update(_ client: MPDClient) throws(MPDError) -> MPDResponse {
        let (job, started) = state.withLock { state -> (Int, Bool) in
            if let job = state.updateJob { return (job, false) }
            state.lastUpdateJob += 1
            state.updateJob = state.lastUpdateJob
            return (state.lastUpdateJob, true)
        }
        if started {
            changes.post(.update)
            Task {
                do {
                    try await environment.rescan()
                } catch {
                    logger.warning("the rescan asked for over MPD failed: \(error)")
                }
                state.withLock { $0.updateJob = nil }
                changes.post(.update)
            }
        }
        var response = client.response()
        try response.add("updating_db", job)
        return response
    }
}

extension MPDTag {
    /// The tag mpd reads when a song lacks this one.
    var fallback: MPDTag? {
        switch self {
        case .albumArtist: .artist
        case .artistSort: .artist
        case .albumSort: .album
        case .albumArtistSort: .albumArtist
        default: nil
        }
    }
}
