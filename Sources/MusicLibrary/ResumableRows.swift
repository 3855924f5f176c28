/// The tracks of a tree that remember where they were left (``ResumePolicy``), and the
/// containers whose rows show progress because they list one: found once per build, in
/// O(tracks), so that a listing asks a bit per row and a set per container.
struct ResumableRows: Sendable {
    /// A bit per track.
    private let bits: [UInt64]
    let albums: Set<Int>
    let folders: Set<Int>
    let playlists: Set<Int>
    /// Whether the Tracks tab lists any.
    let inTracksTab: Bool

    init(
        tracks: [some TrackOutlining], policy: ResumePolicy, albums: [LibraryContentModel.AlbumNode],
        folders: [LibraryContentModel.FolderNode], playlists: [LibraryContentModel.PlaylistNode]
    ) {
        guard !policy.isNone else {
            (bits, self.albums, self.folders, self.playlists, inTracksTab) = ([], [], [], [], false)
            return
        }
        var bits = [UInt64](repeating: 0, count: (tracks.count + 63) / 64)
        var any = false
        for index in tracks.indices
        where policy.remembersPosition(path: tracks[index].id, duration: tracks[index].duration, genres: tracks[index].genres)
        {
            bits[index / 64] |= 1 << UInt64(index % 64)
            any = true
        }
        func has(_ index: Int) -> Bool { bits[index / 64] & (1 << UInt64(index % 64)) != 0 }
        self.bits = any ? bits : []
        inTracksTab = any
        self.albums = any ? Set(albums.indices.filter { albums[$0].tracks.contains(where: has) }) : []
        self.folders = any ? Set(folders.indices.filter { folders[$0].tracks.contains(where: has) }) : []
        self.playlists =
            any
            ? Set(
                playlists.indices.filter { index in
                    playlists[index].entries.contains { if case .track(let track) = $0.kind { has(track) } else { false } }
                }) : []
    }

    /// Whether track `index` remembers where it was left.
    func contains(_ index: Int) -> Bool {
        index / 64 < bits.count && bits[index / 64] & (1 << UInt64(index % 64)) != 0
    }
}
