import MusicLibrary
import Synchronization

/// Library tracks by path, kept while the library does not change (``MPDChanges/libraryGeneration``),
/// so that `currentsong` and `playlistinfo`, which clients send again and again, read the index
/// only for songs not asked for lately since the last rescan that changed something. At most
/// 4,096 tracks, in the two generations of ``RecentValues``.
final class TrackCache: Sendable {
    private let state = Mutex<(generation: Int, tracks: RecentValues<Track.ID, Track>)>(
        (0, RecentValues(capacity: TrackCache.generationCapacity)))
    /// A generation's tracks (a few hundred bytes each): a queue of twice this many is listed from memory.
    static let generationCapacity = 2048

    /// The tracks kept for `ids` (nil for those not kept), read at library generation `generation`.
    func tracks(_ ids: [Track.ID], generation: Int) -> [Track?] {
        state.withLock { state in
            if state.generation != generation { state = (generation, RecentValues(capacity: Self.generationCapacity)) }
            return ids.map { state.tracks.value(for: $0) }
        }
    }

    /// Keeps `tracks`, read at library generation `generation` (dropped if it changed meanwhile).
    func keep(_ tracks: [Track], generation: Int) {
        state.withLock { state in
            guard state.generation == generation else { return }
            for track in tracks { state.tracks.insert(track, for: track.id) }
        }
    }
}

extension MPDCommands {
    /// The library's tracks at `ids` (nil for a path not in the library, or empty), from the
    /// cache, reading only the others from the index, in one transaction.
    func tracks(identifiedBy ids: [Track.ID]) async throws(MPDError) -> [Track?] {
        let generation = changes.libraryGeneration
        var tracks = trackCache.tracks(ids, generation: generation)
        let missing = tracks.indices.filter { tracks[$0] == nil && !ids[$0].isEmpty }
        guard !missing.isEmpty else { return tracks }
        let keys = missing.map { ids[$0] }
        let read = try await read { library in try library.tracks(identifiedBy: keys) }
        for (index, track) in zip(missing, read) { tracks[index] = track }
        trackCache.keep(read.compactMap { $0 }, generation: generation)
        return tracks
    }
}

/// The last answers to `list` and `count` by their arguments, kept while the library does not
/// change (``MPDChanges/libraryGeneration``): phone apps send the same `list album group
/// albumartist` on every screen, which the index answers in milliseconds and this in
/// microseconds. At most ``capacity`` answers and ``maximumBytes`` in all; the oldest goes first.
final class ListingCache: Sendable {
    /// The most answers kept.
    let capacity = 8
    /// The most bytes kept, all answers together; a larger answer is not kept.
    let maximumBytes = 4 * 1024 * 1024

    private struct Key: Hashable {
        var command: String
        var arguments: [String]
        /// Answers are bounded per client; clients with another bound are answered anew.
        var responseLimit: Int
    }

    private let state = Mutex<(generation: Int, answers: [(key: Key, response: MPDResponse)])>((0, []))

    fileprivate func answer(_ command: String, _ arguments: [String], limit: Int, generation: Int) -> MPDResponse? {
        let key = Key(command: command, arguments: arguments, responseLimit: limit)
        return state.withLock { state in
            if state.generation != generation { state = (generation, []) }
            return state.answers.first { $0.key == key }?.response
        }
    }

    fileprivate func keep(
        _ response: MPDResponse, _ command: String, _ arguments: [String], limit: Int, generation: Int
    ) {
        guard response.bytes.count <= maximumBytes else { return }
        let key = Key(command: command, arguments: arguments, responseLimit: limit)
        state.withLock { state in
            guard state.generation == generation else { return }
            state.answers.removeAll { $0.key == key }
            state.answers.append((key, response))
            while state.answers.count > capacity
                || state.answers.reduce(0, { $0 + $1.response.bytes.count }) > maximumBytes
            {
                state.answers.removeFirst()
            }
        }
    }
}

extension MPDCommands {
    /// The answer to `command` with `arguments`: kept from the last time while the library has
    /// not changed since, else `compute`'s (kept for the next time). An error is never kept.
    func cachedListing(
        _ command: String, _ arguments: [String], _ client: MPDClient,
        _ compute: () async throws(MPDError) -> MPDResponse
    ) async throws(MPDError) -> MPDResponse {
        let generation = changes.libraryGeneration
        if let kept = listingCache.answer(command, arguments, limit: client.responseLimit, generation: generation) {
            return kept
        }
        let response = try await compute()
        listingCache.keep(response, command, arguments, limit: client.responseLimit, generation: generation)
        return response
    }
}
