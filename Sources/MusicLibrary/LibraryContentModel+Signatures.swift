extension LibraryContentModel {
    /// Every container's identifier (`""` for the root) with a hash of what it lists: its
    /// children's identifiers and everything their rows show. Two trees' containers with
    /// equal hashes list the same rows.
    func containerSignatures(showingInformative informative: Bool, status: LibraryContent.Status) -> [String: Int] {
        var signatures: [String: Int] = [:]
        signatures.reserveCapacity(artists.count + albums.count + playlists.count + folders.count + 6)
        func sign(_ identifier: String, _ body: (inout Hasher) -> Void) {
            var hasher = Hasher()
            body(&hasher)
            signatures[identifier] = hasher.finalize()
        }
        func artistRow(_ index: Int, _ hasher: inout Hasher) {
            let artist = artists[index]
            hasher.combine(artist.identifier)
            hasher.combine(artist.albums.count)
            hasher.combine(rows.fingerprints[artist.representative])
        }
        func albumRow(_ index: Int, _ hasher: inout Hasher) {
            let album = albums[index]
            hasher.combine(album.identifier)
            hasher.combine(artists[album.artist].name)
            hasher.combine(album.date)
            hasher.combine(rows.fingerprints[album.representative])
        }
        func trackRows(_ tracks: [Int], _ hasher: inout Hasher) {
            hasher.combine(tracks.count)
            for track in tracks { hasher.combine(rows.fingerprints[track]) }
        }
        func folderRows(_ index: Int, _ hasher: inout Hasher) {
            for subfolder in folders[index].subfolders { hasher.combine(folders[subfolder].identifier) }
            trackRows(folders[index].tracks, &hasher)
        }
        sign("") { hasher in
            hasher.combine(informative)
            if informative { hasher.combine(status) }
        }
        sign(LibraryContent.Tab.artists.identifier) { hasher in for index in artists.indices { artistRow(index, &hasher) } }
        sign(LibraryContent.Tab.albums.identifier) { hasher in for index in albums.indices { albumRow(index, &hasher) } }
        sign(LibraryContent.Tab.tracks.identifier) { hasher in trackRows(tracksByTitle, &hasher) }
        sign(LibraryContent.Tab.playlists.identifier) { hasher in
            for playlist in playlists {
                hasher.combine(playlist.identifier)
                hasher.combine(playlist.name)
                hasher.combine(playlist.modified)
                hasher.combine(playlist.entries.count)
                for entry in playlist.entries { if case .stream = entry.kind { hasher.combine(entry.identifier) } }
            }
        }
        sign(LibraryContent.Tab.folders.identifier) { hasher in folderRows(0, &hasher) }
        for artist in artists {
            sign(artist.identifier) { hasher in for album in artist.albums { albumRow(album, &hasher) } }
        }
        for album in albums { sign(album.identifier) { hasher in trackRows(album.tracks, &hasher) } }
        for playlist in playlists {
            sign(playlist.identifier) { hasher in
                for entry in playlist.entries {
                    hasher.combine(entry.identifier)
                    switch entry.kind {
                    case .track(let track): hasher.combine(rows.fingerprints[track])
                    case .stream(let url, let title, _):
                        hasher.combine(url)
                        hasher.combine(title)
                    }
                }
            }
        }
        for index in folders.indices.dropFirst() { sign(folders[index].identifier) { hasher in folderRows(index, &hasher) } }
        return signatures
    }
}
