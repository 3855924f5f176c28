import MusicLibrary
import Synchronization

/// Library tracks by path, kept while the library does not change (``MPDChanges/libraryGeneration``),
/// so that `currentsong` and `playlistinfo`, which clients send again and again, read the index
/// only for songs not asked for since the last rescan that changed something. At most
/// ``capacity`` tracks; full, it starts again empty.
final class TrackCache: Sendable {
    /// The most tracks kept (a few kB each): a queue of this many is listed from memory.
    let capacity = 4096

    private let state = Mutex<(generation: Int, tracks: [Track.ID: Track])>((0, [:]))

    /// The tracks kept for `ids` (nil for those not kept), read at library generation `generation`.
    func tracks(_ ids: [Track.ID], generation: Int) -> [Track?] {
        state.withLock { state in
            if state.generation != generation { state = (generation, [:]) }
            return ids.map { state.tracks[$0] }
        }
    }

    /// Keeps `tracks`, read at library generation `generation` (dropped if it changed meanwhile).
    func keep(_ tracks: [Track], generation: Int) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.tracks.count + tracks.count > capacity { state.tracks = [:] }
            for track in tracks.prefix(capacity) { state.tracks[track.id] = track }
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
