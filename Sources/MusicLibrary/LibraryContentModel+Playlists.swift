import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryContentModel {
    /// A playlist's node, its entries in the file's order; those not in the library left out.
    static func playlistDraft(_ playlist: Playlist, trackByID: [String: Int], texts: inout FoldedTextTable)
        -> PlaylistNode
    {
        var entries: [PlaylistItem] = []
        var seen: Set<String> = []
        for entry in playlist.entries {
            let kind: PlaylistItem.Kind
            let identifier: String
            switch entry {
            case .track(let id):
                guard let track = trackByID[id] else { continue }
                kind = .track(track)
                identifier = trackIdentifier(id)
            case .stream(let url, let title):
                kind = .stream(url, title: title, text: texts.append(title ?? url.absoluteString))
                identifier = streamIdentifier(url)
            case .missing:
                continue
            }
            var unique = identifier
            var occurrence = 1
            while !seen.insert(unique).inserted {
                occurrence += 1
                unique = identifier + occurrenceSeparator + String(occurrence)
            }
            entries.append(PlaylistItem(kind: kind, identifier: unique))
        }
        return PlaylistNode(
            id: playlist.id, name: playlist.name, identifier: playlistIdentifier(playlist.id),
            text: texts.append(playlist.name), modified: modificationDate(of: playlist.url), entries: entries)
    }

    /// The file's modification time, for a `file:` URL whose status can be read; one `stat`.
    private static func modificationDate(of url: URL) -> Date? {
        guard url.isFileURL else { return nil }
        var status = stat()
        guard stat(url.path(percentEncoded: false), &status) == 0 else { return nil }
        return Date(
            timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1_000_000_000)
    }
}
