import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryContent {
    // MARK: Rows

    /// Whether the root shows the informative row: no tracks, and not ready (or ready with
    /// nothing at all to show).
    static func showsInformative(_ model: LibraryContentModel, _ status: Status) -> Bool {
        guard model.rows.isEmpty else { return false }
        return status != .ready || model.playlists.isEmpty
    }

    func item(at location: Location, in model: LibraryContentModel, status: Status) -> ContentItem? {
        switch location {
        case .root:
            return nil
        case .informative:
            switch status {
            case .indexing:
                return .informative(
                    identifier: Self.statusIdentifier, title: "Indexing your music…", subtitle: libraryName,
                    problem: ContentProblem(.notReady))
            case .unavailable(let reason):
                return .informative(
                    identifier: Self.statusIdentifier, title: reason, subtitle: libraryName,
                    problem: ContentProblem(.contentUnavailable, resolution: Self.rescan))
            case .ready:
                return .informative(
                    identifier: Self.statusIdentifier, title: "No music found in \(libraryName)",
                    problem: ContentProblem(.noContent, resolution: Self.rescan))
            }
        case .tab(let tab):
            let (browsable, playable): (ContentStyle?, ContentStyle?) =
                switch tab {
                case .artists, .playlists: (.list, nil)
                case .albums, .recent: (.grid, nil)
                case .tracks: (nil, .list)
                case .folders: (.list, .list)
                }
            return ContentItem(
                identifier: tab.identifier, title: tab.title, isContainer: true, isPlayable: false,
                browsableChildrenStyle: browsable, playableChildrenStyle: playable)
        case .artist(let index):
            let artist = model.artists[index]
            return ContentItem(
                identifier: artist.identifier, title: artist.name,
                subtitle: Self.count(artist.albums.count, "album", "albums"),
                artwork: artwork(model, artist.representative), isContainer: true, isPlayable: true,
                media: ContentMedia(artist: artist.name), browsableChildrenStyle: .grid)
        case .album(let index):
            let album = model.albums[index]
            let artist = model.artists[album.artist].name
            return ContentItem(
                identifier: album.identifier, title: album.title, subtitle: artist,
                artwork: artwork(model, album.representative), isContainer: true, isPlayable: true,
                media: ContentMedia(artist: artist, album: album.title, date: album.date), playableChildrenStyle: .list)
        case .albumTrack(let album, let position):
            prefetch(model, model.albums[album].tracks, from: position)
            return trackItem(model, model.albums[album].tracks[position])
        case .tracksTabTrack(let position):
            prefetch(model, model.tracksByTitle, from: position)
            return trackItem(model, model.tracksByTitle[position])
        case .folderTrack(let folder, let position):
            prefetch(model, model.folders[folder].tracks, from: position)
            return trackItem(model, model.folders[folder].tracks[position])
        case .playlist(let index):
            let playlist = model.playlists[index]
            let allTracks = playlist.entries.allSatisfy { if case .track = $0.kind { true } else { false } }
            return ContentItem(
                identifier: playlist.identifier, title: playlist.name,
                subtitle: allTracks
                    ? Self.count(playlist.entries.count, "track", "tracks")
                    : Self.count(playlist.entries.count, "item", "items"),
                isContainer: true, isPlayable: true, media: ContentMedia(modificationDate: playlist.modified),
                playableChildrenStyle: .list)
        case .playlistEntry(let playlist, let position):
            let entries = model.playlists[playlist].entries
            let entry = entries[position]
            switch entry.kind {
            case .track(let track):
                // The entries after it in the playlist, read with it.
                let following = entries[position..<min(entries.count, position + Self.rowsReadTogether)]
                prefetchTracks(
                    model, [track] + following.compactMap { if case .track(let index) = $0.kind { index } else { nil } })
                return trackItem(model, track, identifier: entry.identifier)
            case .stream(let url, let title, _):
                return ContentItem(
                    identifier: entry.identifier, title: title ?? url.absoluteString, isStreamingContent: true,
                    isPlayable: true, media: ContentMedia(url: url))
            }
        case .folder(let index):
            let folder = model.folders[index]
            guard index != 0 else { return item(at: .tab(.folders), in: model, status: status) }
            return ContentItem(
                identifier: folder.identifier, title: folder.name, isContainer: true, isPlayable: true,
                browsableChildrenStyle: .list, playableChildrenStyle: .list)
        }
    }

    /// Track `index`'s item; nil when the index no longer has the track (a rescan removed it,
    /// and the tree listing it is about to be replaced).
    func trackItem(_ model: LibraryContentModel, _ index: Int, identifier: String? = nil) -> ContentItem? {
        // A row whose progress shows is made from its track: the progress is the track's.
        if let coverArtworkOf, let columns = model.rows.columns, columns.has(index), !model.resumable.contains(index) {
            return trackItem(model, index, columns.row(index), urls: columns.urls, identifier: identifier, coverArtworkOf)
        }
        guard let track = model.rows.track(index) else { return nil }
        let progress = model.resumable.contains(index) ? progressOf(track) : nil
        let artist = LibraryContentModel.line(track.artists)
        let album = LibraryContentModel.albumText(track.album)
        return ContentItem(
            identifier: identifier ?? LibraryContentModel.trackIdentifier(track.id), title: track.title,
            subtitle: Self.trackSubtitle(artist, album), artwork: artworkOf(track), playbackProgress: progress, isPlayable: true,
            media: ContentMedia(
                url: track.url, mimeType: track.mimeType, duration: track.duration,
                size: track.fileSize > 0 ? Int64(track.fileSize) : nil, artist: artist, album: album,
                genre: LibraryContentModel.line(track.genres), trackNumber: track.trackNumber,
                date: LibraryContentModel.albumText(track.releaseDate),
                modificationDate: Self.modificationDate(track.modified)))
    }

    /// Track `index`'s item from its fields kept in columns: what ``trackItem(_:_:identifier:)``
    /// makes from its track, with no ``Track`` and nothing read from the index.
    private func trackItem(
        _ model: LibraryContentModel, _ index: Int, _ row: TrackColumns.Row, urls: LibraryPath.FileURLWriter,
        identifier: String?,
        _ coverArtworkOf: @Sendable (TrackArtwork) -> MediaItemArtwork?
    ) -> ContentItem {
        let id = model.rows.id(index)
        var media = ContentMedia(
            mimeType: row.mimeType, duration: row.duration, size: row.size > 0 ? row.size : nil, artist: row.artist,
            album: row.album, genre: row.genre, trackNumber: row.trackNumber, date: row.date,
            modificationDate: Self.modificationDate(row.modified))
        // The URL's text, as the track's `url` writes it, without making the `URL`.
        media.urlString = urls.string(id)
        return ContentItem(
            identifier: identifier ?? LibraryContentModel.trackIdentifier(id), title: row.title,
            subtitle: Self.trackSubtitle(row.artist, row.album), artwork: row.artwork.flatMap(coverArtworkOf),
            playbackProgress: nil, isPlayable: true, media: media)
    }

    /// A track row's subtitle: its artists' line and its album, as far as it has them.
    private static func trackSubtitle(_ artist: String?, _ album: String?) -> String? {
        switch (artist, album) {
        case (let artist?, let album?): artist + " — " + album
        case (let artist?, nil): artist
        case (nil, let album?): album
        case (nil, nil): nil
        }
    }

    /// A file's modification time, kept in nanoseconds since 1970 (0: unknown), as a row shows it.
    private static func modificationDate(_ nanoseconds: Int64) -> Date? {
        nanoseconds > 0 ? Date(timeIntervalSince1970: Double(nanoseconds) / 1e9) : nil
    }

    /// Reads the tracks of rows `indexes` in one go, but for those made from columns: a
    /// listing's page, read before its rows are made one by one.
    func prefetchTracks(_ model: LibraryContentModel, _ indexes: some Collection<Int>) {
        guard coverArtworkOf != nil, let columns = model.rows.columns else {
            model.rows.prefetch(indexes)
            return
        }
        func needsTrack(_ index: Int) -> Bool { !columns.has(index) || model.resumable.contains(index) }
        // A listing asks for its rows one after another: the first one made from columns needs
        // nothing read, and one that needs its track reads those of the rows after it too.
        guard let first = indexes.first, needsTrack(first) else { return }
        let needed = indexes.filter(needsTrack)
        if !needed.isEmpty { model.rows.prefetch(needed) }
    }

    /// What an informative row offers when scanning again may help: `Rescan` is the media
    /// tree's method that asks the delegate to read the content again.
    static let rescan = ContentProblem.Resolution(action: "Rescan", label: "Scan again")

    /// A folder's subfolders and tracks are listed under two headings, when it has both.
    static func groupTitle(of location: Location, in model: LibraryContentModel) -> String? {
        switch location {
        case .folder(let folder):
            guard let parent = model.folders[folder].parent else { return nil }
            return model.folders[parent].tracks.isEmpty ? nil : "Folders"
        case .folderTrack(let folder, _):
            return model.folders[folder].subfolders.isEmpty ? nil : "Tracks"
        default:
            return nil
        }
    }

    /// How many rows after the one asked for are read with it: a listing's page.
    static let rowsReadTogether = 100

    /// Reads the tracks of `container` from `position` on (a page) in one go, if the first is
    /// not kept yet: a listing asks for them one after another.
    private func prefetch(_ model: LibraryContentModel, _ container: [Int], from position: Int) {
        prefetchTracks(model, container[position..<min(container.count, position + Self.rowsReadTogether)])
    }

    /// The cover of track `index`.
    private func artwork(_ model: LibraryContentModel, _ index: Int) -> MediaItemArtwork? {
        if let coverArtworkOf, let columns = model.rows.columns, columns.has(index) {
            return columns.artwork(index).flatMap(coverArtworkOf)
        }
        return model.rows.track(index).flatMap(artworkOf)
    }

    private static func count(_ count: Int, _ singular: String, _ plural: String) -> String {
        "\(count) \(count == 1 ? singular : plural)"
    }
}
