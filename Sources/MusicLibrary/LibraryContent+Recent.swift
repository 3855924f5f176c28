import Synchronization

extension LibraryContent {
    // MARK: Recently played

    /// The Recent tab's rows' identifiers, the latest first.
    public var recentlyPlayed: [String] { state.withLock { $0.recent } }

    /// Shows `identifiers` (the latest first) in the Recent tab, as saved from an earlier run;
    /// identifiers the tree does not have are kept, and shown once a rescan brings them.
    public func setRecentlyPlayed(_ identifiers: [String]) {
        state.withLock { state in
            let kept = Array(identifiers.prefix(Self.recentLimit))
            if kept != state.recent { state.changedContainers.insert(Tab.recent.identifier) }
            state.recent = kept
            state.recentRows = Self.recentRows(kept, in: state.model)
        }
    }

    /// Puts what played first in the Recent tab: the container it was started from, else the
    /// album of the track. `nowPlaying` is what the tree marks as playing (the playing row and
    /// the containers it was started from, outermost first); rows of neither kind are ignored.
    /// Call it between the manager's ``PlayableContentManager/beginUpdates()`` and
    /// ``PlayableContentManager/endUpdates()``. Returns the Recent tab's identifiers when they
    /// changed (to be saved), else nil.
    @discardableResult
    public func notePlayed(_ nowPlaying: [String]) -> [String]? {
        state.withLock { state -> [String]? in
            let model = state.model
            var played = nowPlaying.first { Self.recentRow($0, in: model) != nil }
            if played == nil, let row = nowPlaying.last, row.hasPrefix("track:"),
                let track = model.rows.index(ofID: String(row.dropFirst("track:".count)))
            {
                played = model.albums[model.places[track].albumIndex].identifier
            }
            guard let played, state.recent.first != played else { return nil }
            state.recent.removeAll { $0 == played }
            state.recent.insert(played, at: 0)
            if state.recent.count > Self.recentLimit { state.recent.removeLast(state.recent.count - Self.recentLimit) }
            state.recentRows = Self.recentRows(state.recent, in: model)
            state.changedContainers.insert(Tab.recent.identifier)
            return state.recent
        }
    }

    /// The Recent tab's identifiers found in `model`, as rows of it.
    static func recentRows(_ recent: [String], in model: LibraryContentModel) -> [Location] {
        recent.compactMap { recentRow($0, in: model) }
    }

    /// The row `identifier` names when it is a container the Recent tab can list (an album, a
    /// playlist, an artist, a folder below the library's), else nil.
    static func recentRow(_ identifier: String, in model: LibraryContentModel) -> Location? {
        if let album = model.albumByIdentifier[identifier] { return .album(album) }
        if let playlist = model.playlistByIdentifier[identifier] { return .playlist(playlist) }
        if let artist = model.artistByIdentifier[identifier] { return .artist(artist) }
        if let folder = model.folderByIdentifier[identifier], folder != 0 { return .folder(folder) }
        return nil
    }
}
