import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryContent {
    /// The root's tabs, in their order.
    public enum Tab: Int, Sendable, CaseIterable {
        case artists, albums, tracks, playlists, folders, recent

        /// The tab's identifier: `artists`, `albums`, `tracks`, `playlists`, `folders` or `recent`.
        public var identifier: String {
            switch self {
            case .artists: "artists"
            case .albums: "albums"
            case .tracks: "tracks"
            case .playlists: "playlists"
            case .folders: "folders"
            case .recent: "recent"
            }
        }

        /// The tab's title.
        public var title: String {
            switch self {
            case .artists: "Artists"
            case .albums: "Albums"
            case .tracks: "Tracks"
            case .playlists: "Playlists"
            case .folders: "Folders"
            case .recent: "Recent"
            }
        }

        /// Where the tab is in the ``Layout/full`` layout: `[rawValue]`.
        public var indexPath: IndexPath { IndexPath(index: rawValue) }
    }

    /// Which tabs the root shows, in which order.
    public enum Layout: String, Sendable, CaseIterable {
        /// Every tab: Artists, Albums, Tracks, Playlists, Folders, Recent (each at its
        /// ``Tab/indexPath``).
        case full
        /// The four tabs a car shows (Android Automotive lists at most four): Recent, Artists,
        /// Albums, Playlists. A track is reached through its album.
        case car

        /// The root's tabs, in their order.
        public var tabs: [Tab] {
            switch self {
            case .full: [.artists, .albums, .tracks, .playlists, .folders, .recent]
            case .car: [.recent, .artists, .albums, .playlists]
            }
        }

        /// Where `tab` is in this layout; nil when the layout does not show it.
        public func indexPath(of tab: Tab) -> IndexPath? { tabs.firstIndex(of: tab).map { IndexPath(index: $0) } }

        /// The containers whose children MPRIS `Playlists` lists: the Albums and Playlists tabs.
        public var playlistLocations: [IndexPath] { [.albums, .playlists].compactMap(indexPath(of:)) }
    }
}
