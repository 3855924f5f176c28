#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the root lists: the layout's tabs, then the informative row when shown; and the
/// Recent tab's rows, found in the current model.
struct RootRows {
    let tabs: [LibraryContent.Tab]
    let informative: Bool
    let recent: [Location]
}

/// A row of the tree, as the model numbers it.
enum Location: Equatable {
    case root
    /// The root's informative row, after the tabs.
    case informative
    case tab(LibraryContent.Tab)
    case artist(Int)
    /// An album, in the Artists or the Albums tab.
    case album(Int)
    case albumTrack(album: Int, position: Int)
    case tracksTabTrack(Int)
    case playlist(Int)
    case playlistEntry(Int, Int)
    /// A folder; folder 0 is the root folder, listed as the Folders tab.
    case folder(Int)
    case folderTrack(folder: Int, position: Int)

    /// The row at `indexPath`, or nil when there is none.
    init?(_ indexPath: IndexPath, in model: LibraryContentModel, root: RootRows) {
        var location = Location.root
        for index in indexPath {
            guard let child = location.child(index, in: model, root: root) else { return nil }
            location = child
        }
        self = location
    }

    func child(_ index: Int, in model: LibraryContentModel, root: RootRows) -> Location? {
        guard index >= 0, index < childCount(in: model, root: root) else { return nil }
        switch self {
        case .root:
            return index < root.tabs.count ? .tab(root.tabs[index]) : .informative
        case .tab(let tab):
            switch tab {
            case .artists: return .artist(index)
            case .albums: return .album(index)
            case .tracks: return .tracksTabTrack(index)
            case .playlists: return .playlist(index)
            case .folders: return Location.folder(0).child(index, in: model, root: root)
            case .recent: return root.recent[index]
            }
        case .artist(let artist): return .album(model.artists[artist].albums[index])
        case .album(let album): return .albumTrack(album: album, position: index)
        case .playlist(let playlist): return .playlistEntry(playlist, index)
        case .folder(let folder):
            let subfolders = model.folders[folder].subfolders
            return index < subfolders.count
                ? .folder(subfolders[index]) : .folderTrack(folder: folder, position: index - subfolders.count)
        case .informative, .albumTrack, .tracksTabTrack, .playlistEntry, .folderTrack: return nil
        }
    }

    func childCount(in model: LibraryContentModel, root: RootRows) -> Int {
        switch self {
        case .root: return root.tabs.count + (root.informative ? 1 : 0)
        case .tab(let tab):
            switch tab {
            case .artists: return model.artists.count
            case .albums: return model.albums.count
            case .tracks: return model.tracksByTitle.count
            case .playlists: return model.playlists.count
            case .folders: return Location.folder(0).childCount(in: model, root: root)
            case .recent: return root.recent.count
            }
        case .artist(let artist): return model.artists[artist].albums.count
        case .album(let album): return model.albums[album].tracks.count
        case .playlist(let playlist): return model.playlists[playlist].entries.count
        case .folder(let folder): return model.folders[folder].subfolders.count + model.folders[folder].tracks.count
        case .informative, .albumTrack, .tracksTabTrack, .playlistEntry, .folderTrack: return 0
        }
    }
}
