#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Serves the app's browsable content tree to the ``PlayableContentManager``,
/// in the shape of Apple's `MPPlayableContentDataSource`.
///
/// The tree is addressed by index paths: `[]` is the root, `[0]` its first
/// child (the first tab), `[0, 3]` that tab's fourth child, and so on.
///
/// The manager calls ``beginLoadingChildItems(at:)`` before it reads a
/// container's children, then reads them once with
/// ``numberOfChildItems(at:)`` and ``contentItem(at:)`` and serves every
/// listing from its own copy. It reads them again only after
/// ``PlayableContentManager/reloadData()`` or a batch of updates.
///
/// The synchronous methods are called from any thread and must answer from
/// memory, quickly: slow work (network, disk) belongs in
/// ``beginLoadingChildItems(at:)``. Before loading has finished they answer
/// with what is loaded so far.
public protocol PlayableContentDataSource: Sendable {
    /// Loads the children of the container at `indexPath`; returns when they
    /// can be read. The manager calls it before reading a container, and to
    /// prefetch the containers a remote is about to open. Throwing leaves the
    /// container with what it has. Default: returns at once.
    func beginLoadingChildItems(at indexPath: IndexPath) async throws

    /// Whether the children of the container at `indexPath` show their
    /// ``ContentItem/playbackProgress`` (episodes, audiobook chapters). Default: false.
    func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool

    /// The number of children of the container at `indexPath` (`[]` for the root tabs).
    func numberOfChildItems(at indexPath: IndexPath) -> Int

    /// The item at `indexPath`, or `nil` when there is none (yet).
    func contentItem(at indexPath: IndexPath) -> ContentItem?

    /// The item with `identifier`, wherever it is in the tree (for remotes
    /// that remember identifiers). Default: `nil`.
    func contentItem(forIdentifier identifier: String) async throws -> ContentItem?

    /// Whether ``searchContent(matching:in:)`` is implemented. Default: false.
    var supportsSearch: Bool { get }

    /// The index paths of the items below the container at `indexPath` that
    /// match `query`, in the order to show them. Items may be at any depth
    /// below the container. Default: throws ``ContentError/searchNotSupported``.
    func searchContent(matching query: ContentQuery, in indexPath: IndexPath) async throws -> [IndexPath]

    /// The identifiers of the containers whose children changed (added, removed, moved, or
    /// showing anything else) since the manager last asked; `""` stands for the root. Nil
    /// when the data source cannot tell. The manager asks when a batch of updates ends, and
    /// then reads again only the containers named, rather than every container remotes have
    /// read (after a head unit walked a large library, every container there is).
    /// Default: nil.
    func changedContainerIdentifiers() -> Set<String>?

    /// Whether ``beginLoadingChildItems(at:)`` has nothing to wait for: every container can be
    /// read as soon as it is reached (the data source answers from memory or a local index).
    /// The manager then reads a container when it is first reached, with no loading task and
    /// no prefetching. Default: false.
    var loadsChildItemsAtOnce: Bool { get }

    /// What every child of the container at `indexPath` is, when they are all alike and none
    /// is informative; nil otherwise. A manager serves such a container, when it is large,
    /// page by page from the data source instead of copying it (see
    /// ``PlayableContentManager/pagedContainerThreshold``); a data source that answers should
    /// also answer ``indexOfChild(withIdentifier:inContainerAt:)``. Default: nil.
    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind?

    /// Whether the children of the container at `indexPath` are read from memory alone:
    /// ``numberOfChildItems(at:)`` and ``contentItem(at:)`` wait on no disk, network or
    /// long-held lock for any of them. A listing of the container in its natural order then
    /// reads them on the caller's thread, rather than on the manager's own threads and back
    /// (two thread switches a listing): the container first reached, its count hints, a page
    /// of it when it is served page by page (``uniformChildKind(at:)``). A container of items
    /// alone (``UniformChildKind/items``) read from memory is served page by page whatever its
    /// size, never copied: a walk of the tree would otherwise copy each album's rows, hash them
    /// and forget them again. Its rows not being kept to compare, a batch of updates announces
    /// it whenever ``changedContainerIdentifiers()`` names it, or after every batch when that
    /// answers nil: a data source that says this should name its changed containers.
    /// Default: false.
    func readsChildItemsFromMemory(at indexPath: IndexPath) -> Bool

    /// Where the child with `identifier` is in the container at `indexPath`, or nil when it
    /// is not there; asked to find a row of a container served page by page, so it must be
    /// quick (an index, not a scan: any client may ask for a key it made up). Default: nil, so
    /// a data source that pages containers (``uniformChildKind(at:)``) must answer it.
    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int?

    /// The children of the container at `indexPath` in the order `sort` gives (see
    /// ``ContentSort`` for what every implementation keeps): the indexes, as
    /// ``contentItem(at:)`` numbers them, of the children at the sorted positions `range`
    /// (within `0..<numberOfChildItems(at:)`; the manager passes valid ranges). Nil when the
    /// data source cannot order this container.
    ///
    /// A remote pages through a sorted listing one call per page, so this must answer from
    /// the data source's indexes (or an order it computed once and kept, bounded), never by
    /// reading every child per call. The manager asks it for a container served page by page
    /// (``uniformChildKind(at:)``), where a nil answer makes the sorted listing fail with
    /// ``ContentError/sortNotSupported(_:)`` (but for a container paged only for being read
    /// from memory, no larger than ``PlayableContentManager/pagedContainerThreshold``, whose
    /// rows the manager then sorts itself), and for a copied container, where a nil answer makes
    /// the manager sort its copy. Default: nil.
    func sortedChildIndexes(at indexPath: IndexPath, by sort: ContentSort, in range: Range<Int>) -> [Int]?

    /// `indexPaths` (rows of the tree, such as a search's results) in the order `sort` gives,
    /// or nil when the data source cannot order them. Nil makes the manager order them itself
    /// by reading their items, which it does for at most
    /// ``PlayableContentManager/maximumRowsSortedInMemory`` rows. Default: nil.
    func sortedIndexPaths(_ indexPaths: [IndexPath], by sort: ContentSort) -> [IndexPath]?
}

/// What every child of a container is (``PlayableContentDataSource/uniformChildKind(at:)``).
public enum UniformChildKind: Sendable, Equatable {
    /// Items: playable rows that are not containers (tracks, streams).
    case items
    /// Containers (albums, artists, folders).
    case containers
}

extension PlayableContentDataSource {
    public func beginLoadingChildItems(at indexPath: IndexPath) async throws {}
    public func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool { false }
    public func contentItem(forIdentifier identifier: String) async throws -> ContentItem? { nil }
    public var supportsSearch: Bool { false }
    public func changedContainerIdentifiers() -> Set<String>? { nil }
    public var loadsChildItemsAtOnce: Bool { false }
    public func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? { nil }
    public func readsChildItemsFromMemory(at indexPath: IndexPath) -> Bool { false }
    public func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? { nil }
    public func sortedChildIndexes(at indexPath: IndexPath, by sort: ContentSort, in range: Range<Int>) -> [Int]? {
        nil
    }
    public func sortedIndexPaths(_ indexPaths: [IndexPath], by sort: ContentSort) -> [IndexPath]? { nil }
    public func searchContent(matching query: ContentQuery, in indexPath: IndexPath) async throws -> [IndexPath] {
        throw ContentError.searchNotSupported
    }
}

/// Acts on the content tree for remotes, in the shape of Apple's
/// `MPPlayableContentDelegate`.
public protocol PlayableContentDelegate: Sendable {
    /// Starts playback of the item at `indexPath` (a track, or a playable
    /// container played as a whole).
    ///
    /// Return only once playback has really started (the audio is playing),
    /// or throw: a head unit opens its now-playing screen when this returns,
    /// and closes it again if nothing plays. Set
    /// ``PlayableContentManager/nowPlayingIdentifiers`` before returning.
    func playableContentManager(
        _ manager: PlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath) async throws

    /// Prepares a play queue without starting it, so that playback can start
    /// at once later (a head unit asks when it connects). `items` are the
    /// items the remote suggests, or `nil` for the app's choice (what played
    /// last). Default: does nothing.
    func playableContentManager(
        _ manager: PlayableContentManager, initializePlaybackQueueWithContentItems items: [ContentItem]?) async throws

    /// Tells the app that the context changed: a head unit connected or
    /// disconnected, or its content limits changed. Default: does nothing.
    func playableContentManager(_ manager: PlayableContentManager, didUpdate context: PlayableContentManagerContext)

    /// A remote asks for the content to be read again from where the app keeps it (a
    /// music folder rescanned, say). Return once the data source shows what was found,
    /// after the manager's updates announced the changes. Default: throws
    /// ``ContentError/refreshNotSupported``.
    func playableContentManagerRefreshContent(_ manager: PlayableContentManager) async throws

    /// Carries out the custom action `action` (one of ``PlayableContentManager/customActions``
    /// that the row offers) on the row at `indexPath`; return once done. Default: throws
    /// ``ContentError/actionNotAvailable(_:)``.
    func playableContentManager(
        _ manager: PlayableContentManager, performAction action: String, onContentItemAt indexPath: IndexPath) async throws
}

extension PlayableContentDelegate {
    public func playableContentManager(
        _ manager: PlayableContentManager, initializePlaybackQueueWithContentItems items: [ContentItem]?
    ) async throws {}
    public func playableContentManager(_ manager: PlayableContentManager, didUpdate context: PlayableContentManagerContext) {}
    public func playableContentManagerRefreshContent(_ manager: PlayableContentManager) async throws {
        throw ContentError.refreshNotSupported
    }
    public func playableContentManager(
        _ manager: PlayableContentManager, performAction action: String, onContentItemAt indexPath: IndexPath
    ) async throws {
        throw ContentError.actionNotAvailable(action)
    }
}

/// What the remote browsing the tree allows, in the shape of Apple's
/// `MPPlayableContentManagerContext`. A head unit sets limits while the car is moving.
///
/// Two limits go beyond Apple's, for cars whose browse screens are stricter
/// (Android Automotive's: at most 4 tabs; while driving, 21 rows and strings of 120
/// characters): ``maximumTabCount`` and ``enforcedTextLength``.
public struct PlayableContentManagerContext: Sendable, Equatable {
    /// Whether a remote that browses the tree (a head unit) is connected.
    public var endpointAvailable: Bool
    /// Whether the limits below are in force (typically: while driving).
    public var contentLimitsEnforced: Bool
    /// The most rows a listing may show while limits are enforced.
    public var enforcedContentItemsCount: Int
    /// The deepest level a remote may open while limits are enforced: the
    /// root's children are level 1, theirs level 2. A container at this level
    /// is still listed (and playable) but shows no children.
    public var enforcedContentTreeDepth: Int
    /// The most containers (tabs) the root lists, whether or not limits are enforced; 0 for
    /// no limit. Informative rows are listed besides them; the tabs after the limit are not
    /// listed (they can still be reached by their paths).
    public var maximumTabCount: Int
    /// The most characters (grapheme clusters) of a row's text while limits are enforced; 0
    /// for no limit. A longer text is cut to this length, its last character an ellipsis.
    public var enforcedTextLength: Int
    /// The most custom actions a row offers (a car sets how many buttons it shows); 0 for no
    /// limit. The first ones of ``ContentItem/actions`` are kept.
    public var maximumActionCount: Int

    /// Describes a context. Counts below zero are taken as zero.
    public init(
        endpointAvailable: Bool = false, contentLimitsEnforced: Bool = false,
        enforcedContentItemsCount: Int = 100, enforcedContentTreeDepth: Int = 5,
        maximumTabCount: Int = 0, enforcedTextLength: Int = 0, maximumActionCount: Int = 0
    ) {
        self.endpointAvailable = endpointAvailable
        self.contentLimitsEnforced = contentLimitsEnforced
        self.enforcedContentItemsCount = max(0, enforcedContentItemsCount)
        self.enforcedContentTreeDepth = max(0, enforcedContentTreeDepth)
        self.maximumTabCount = max(0, maximumTabCount)
        self.enforcedTextLength = max(0, enforcedTextLength)
        self.maximumActionCount = max(0, maximumActionCount)
    }

    /// The most rows a listing shows now: the enforced count, or unlimited.
    public var itemLimit: Int? { contentLimitsEnforced ? enforcedContentItemsCount : nil }
    /// The deepest level that may be opened now, or unlimited.
    public var depthLimit: Int? { contentLimitsEnforced ? enforcedContentTreeDepth : nil }
    /// The most tabs the root lists, or unlimited.
    public var tabLimit: Int? { maximumTabCount > 0 ? maximumTabCount : nil }
    /// The most custom actions a row offers, or unlimited.
    public var actionLimit: Int? { maximumActionCount > 0 ? maximumActionCount : nil }
    /// The most characters of a row's text now, or unlimited.
    public var textLimit: Int? { contentLimitsEnforced && enforcedTextLength > 0 ? enforcedTextLength : nil }

    /// `text` as a remote may show it now: cut to ``textLimit`` characters, the last one “…”.
    public func fitted(_ text: String) -> String {
        guard let limit = textLimit, text.count > limit else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }
}

/// Why the content tree could not do what was asked.
public enum ContentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing is at that place in the tree (any more).
    case noSuchContent(String)
    /// The item cannot be played.
    case notPlayable(String)
    /// The app set no delegate, so nothing can be played.
    case noDelegate
    /// The data source does not search.
    case searchNotSupported
    /// The query could not be understood.
    case invalidQuery(String)
    /// The app cannot read its content again on a remote's request.
    case refreshNotSupported
    /// The row does not offer that action (or the limit a remote set hides it).
    case actionNotAvailable(String)
    /// The rows cannot be put in the order asked: the data source cannot sort a container it
    /// serves page by page, or a search found more rows than the manager sorts in memory.
    case sortNotSupported(String)
    /// The sort order could not be understood.
    case invalidSort(String)

    public var description: String {
        switch self {
        case .noSuchContent(let what): "No such content: \(what)"
        case .notPlayable(let what): "Not playable: \(what)"
        case .noDelegate: "The app has no content delegate to start playback"
        case .searchNotSupported: "This content cannot be searched"
        case .invalidQuery(let reason): "Invalid search query: \(reason)"
        case .refreshNotSupported: "This content cannot be read again on request"
        case .actionNotAvailable(let what): "No such action on this row: \(what)"
        case .sortNotSupported(let reason): "Cannot sort: \(reason)"
        case .invalidSort(let reason): "Invalid sort order: \(reason)"
        }
    }
}
