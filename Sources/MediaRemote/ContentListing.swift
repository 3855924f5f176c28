#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which children a listing shows.
public enum ContentListingKind: Sendable {
    /// Every child.
    case all
    /// Playable children that are not containers (tracks, streams).
    case items
    /// Children that open as containers to a media server: containers, and
    /// the informative and loading rows, which open onto nothing.
    case containers
}

/// A row as remotes see it: the item, where it is, and what the manager knows about it.
public struct ContentEntry: Sendable, Equatable {
    /// How many children a container shows, with content limits applied.
    public struct ChildCounts: Sendable, Equatable {
        public var childCount: Int
        /// Playable rows that are not containers; `nil` until the container has been read.
        public var itemCount: Int?
        /// Containers, informative and loading rows; `nil` until the container has been read.
        public var containerCount: Int?
        /// Whether the data source had finished loading the container when it was read.
        public var isComplete: Bool
    }

    public var item: ContentItem
    /// The keys from the root to the row; `[]` is the root.
    public var path: [String]
    /// Where the data source has the row; `nil` for the loading row.
    public var indexPath: IndexPath?
    /// The row's identifier is among ``PlayableContentManager/nowPlayingIdentifiers``.
    public var isNowPlaying: Bool
    /// The row stands for children still loading.
    public var isLoadingPlaceholder: Bool
    /// The row's container shows playback progress.
    public var displaysPlaybackProgress: Bool
    /// For a container: its children as listings show them.
    public var children: ChildCounts?
    /// 0 for the root, 1 for its children…
    public var depth: Int
}

/// A page of a container's children.
public struct ContentListing: Sendable, Equatable {
    public var entries: [ContentEntry]
    /// The number of rows in the whole listing (not only this page), limits applied.
    public var totalCount: Int
    /// False while the data source is still loading the container.
    public var isComplete: Bool

    /// The rows of a page from `offset`, at most `maximum` (nil: to the end), of a listing of
    /// `total` rows: clamped to them, empty past the end.
    static func window(offset: Int, maximum: Int?, of total: Int) -> Range<Int> {
        let start = min(max(offset, 0), total)
        return start..<(maximum.map { min(total, start + max($0, 0)) } ?? total)
    }
}

/// A page of a search's results and how many there are.
public struct ContentSearchResult: Sendable, Equatable {
    /// The rows of the page asked for.
    public var entries: [ContentEntry]
    /// The number of matches in all (not only this page) a remote may reach: within the depth
    /// limit, and at most the item limit while content limits are enforced.
    public var totalCount: Int
}

/// What remotes showing the tree must hear.
public enum ContentChange: Sendable, Equatable {
    /// The rows of these containers changed (or a container's own row):
    /// list them again. Each appears once per batch.
    case containersUpdated([[String]])
    /// These rows were marked or unmarked as playing.
    case nowPlayingChanged([[String]])
    /// The remote's context changed.
    case contextChanged(PlayableContentManagerContext)
}

/// The declared custom actions and the limit on how many a row offers, as they were when read
/// (see ``PlayableContentManager/actionOffer``).
public struct ContentActionOffer: Sendable {
    let declared: Set<String>
    let limit: Int?

    /// The actions offered on `item`: those of its ``ContentItem/actions`` that are declared,
    /// at most the limit.
    public func actions(of item: ContentItem) -> [String] {
        guard !item.actions.isEmpty else { return [] }
        let offered = item.actions.filter(declared.contains)
        return limit.map { Array(offered.prefix($0)) } ?? offered
    }
}
