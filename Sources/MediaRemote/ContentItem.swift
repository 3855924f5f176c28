#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One row of the browsable content tree: a container (an artist, an album,
/// a playlist, a folder), a playable item (a track, a radio station), or an
/// informative row that is neither (“Sign in to see your music”).
///
/// A value: the ``PlayableContentManager`` keeps the items the data source
/// gave it and serves listings from them, so changing an item means giving the
/// manager a new one (see ``PlayableContentManager/endUpdates()``).
public struct ContentItem: Sendable, Hashable, Identifiable {
    /// Stable and unique among its siblings; any characters. Remotes address
    /// the item by the identifiers on its way from the root, so keep them
    /// stable across reloads.
    public var identifier: String
    /// The row's main text.
    public var title: String?
    /// The row's second line (an album's artist, a track's album).
    public var subtitle: String?
    /// Cover art shown with the row.
    public var artwork: MediaItemArtwork?
    /// How much of the item has been played, from 0 (not started) to 1
    /// (finished); `nil` when unknown or not meaningful. Shown only in
    /// containers whose data source says ``PlayableContentDataSource/childItemsDisplayPlaybackProgress(at:)``.
    public var playbackProgress: Double? {
        didSet { playbackProgress = Self.clamped(playbackProgress) }
    }
    /// A live stream: no length, no seeking.
    public var isStreamingContent: Bool
    /// Explicit lyrics or content; head units may hide it.
    public var isExplicitContent: Bool
    /// The row opens onto children.
    public var isContainer: Bool
    /// The row can be played (a track, or a container played as a whole).
    public var isPlayable: Bool
    /// What a media server shows about a playable item (file, type, tags).
    public var media: ContentMedia?
    /// For a container: how a remote should show its children that are containers
    /// (an artist's albums as a grid of covers); `nil` leaves it to the remote.
    public var browsableChildrenStyle: ContentStyle?
    /// For a container: how a remote should show its playable children that are not
    /// containers (an album's tracks as a list); `nil` leaves it to the remote.
    public var playableChildrenStyle: ContentStyle?
    /// The heading of the group the row belongs to in its listing (“Folders”, “Tracks”).
    /// Remotes that group rows put consecutive rows with the same title under one heading;
    /// `nil` for no group.
    public var groupTitle: String?
    /// For an informative row: what went wrong, typed, and how the user can set it right.
    public var problem: ContentProblem?
    /// The identifiers of the ``ContentAction``s a remote may offer on the row, the most
    /// useful first; those the manager does not declare in
    /// ``PlayableContentManager/customActions`` are not offered.
    public var actions: [String]

    /// `id` of `Identifiable`: the ``identifier``.
    public var id: String { identifier }

    /// Whether the row is informative only: neither playable nor a container.
    /// Such rows are always listed first in their container.
    public var isInformative: Bool { !isContainer && !isPlayable }

    /// Whether a media server shows the row as a container: a container, or an
    /// informative row (which opens onto nothing).
    var opensAsContainer: Bool { isContainer || !isPlayable }

    /// Describes a row; everything but the identifier is optional.
    public init(
        identifier: String, title: String? = nil, subtitle: String? = nil, artwork: MediaItemArtwork? = nil,
        playbackProgress: Double? = nil, isStreamingContent: Bool = false, isExplicitContent: Bool = false,
        isContainer: Bool = false, isPlayable: Bool = false, media: ContentMedia? = nil,
        browsableChildrenStyle: ContentStyle? = nil, playableChildrenStyle: ContentStyle? = nil,
        groupTitle: String? = nil, problem: ContentProblem? = nil, actions: [String] = []
    ) {
        self.identifier = identifier
        self.title = title
        self.subtitle = subtitle
        self.artwork = artwork
        self.playbackProgress = Self.clamped(playbackProgress)
        self.isStreamingContent = isStreamingContent
        self.isExplicitContent = isExplicitContent
        self.isContainer = isContainer
        self.isPlayable = isPlayable
        self.media = media
        self.browsableChildrenStyle = browsableChildrenStyle
        self.playableChildrenStyle = playableChildrenStyle
        self.groupTitle = groupTitle
        self.problem = problem
        self.actions = actions
    }

    /// A progress within 0…1; none for NaN or an infinity.
    private static func clamped(_ progress: Double?) -> Double? {
        progress.flatMap { $0.isFinite ? min(max($0, 0), 1) : nil }
    }

    /// The informative row an app shows first when it cannot serve content
    /// (offline, not signed in, still indexing): neither playable nor a container.
    public static func informative(
        identifier: String, title: String, subtitle: String? = nil, problem: ContentProblem? = nil
    ) -> ContentItem {
        ContentItem(identifier: identifier, title: title, subtitle: subtitle, problem: problem)
    }
}

/// The media details of a playable item, for remotes that stream or tag it
/// (a MediaServer2 consumer such as Rygel). Every field is optional.
public struct ContentMedia: Sendable, Hashable {
    /// Where the media is (`file:` or `http(s):`).
    ///
    /// Kept as its text (``urlString``): a `URL` value costs several times its text, and a
    /// manager's copy holds tens of thousands of rows.
    public var url: URL? {
        get { urlString.flatMap { URL(string: $0) } }
        set { urlString = newValue?.absoluteString }
    }
    /// ``url``'s absolute text, as remotes are given it.
    ///
    /// Set by the package's own data sources that keep a URL as its text (a tree's rows).
    public package(set) var urlString: String?
    /// The MIME type of the stream (`audio/ogg`).
    public var mimeType: String?
    /// Its length; `nil` for a live stream or when unknown.
    public var duration: Duration?
    /// Size in bytes.
    public var size: Int64?
    public var artist: String?
    public var album: String?
    public var genre: String?
    /// Position on its disc, from 1.
    public var trackNumber: Int?
    /// Release date, ISO 8601 (`2019`, `2019-04-01`).
    public var date: String?
    /// When the item (or playlist) was created, where known.
    public var creationDate: Date?
    /// When the item (or playlist) was last changed, where known.
    public var modificationDate: Date?

    public init(
        url: URL? = nil, mimeType: String? = nil, duration: Duration? = nil, size: Int64? = nil,
        artist: String? = nil, album: String? = nil, genre: String? = nil, trackNumber: Int? = nil,
        date: String? = nil, creationDate: Date? = nil, modificationDate: Date? = nil
    ) {
        self.urlString = url?.absoluteString
        self.mimeType = mimeType
        self.duration = duration
        self.size = size
        self.artist = artist
        self.album = album
        self.genre = genre
        self.trackNumber = trackNumber
        self.date = date
        self.creationDate = creationDate
        self.modificationDate = modificationDate
    }
}

/// How a remote lays out a container's children, in the terms of car browse screens
/// (Android Automotive's content-style hints).
public enum ContentStyle: String, Sendable, Hashable, CaseIterable {
    /// One row per child: title, subtitle, a small cover.
    case list
    /// Large covers in a grid, titles under them.
    case grid
    /// One row per child with a small icon standing for a category (genres, moods).
    case categoryList = "category-list"
    /// A grid of category icons.
    case categoryGrid = "category-grid"
}

/// What keeps an app from serving its content, typed so that a remote can show its own
/// message and offer the way out, in the terms of car media apps' error states.
public struct ContentProblem: Sendable, Hashable {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The content cannot be read now (a folder missing, a disk unreadable).
        case contentUnavailable = "content-unavailable"
        /// There is nothing to show (an empty library).
        case noContent = "no-content"
        /// The content is still being prepared (a first index).
        case notReady = "not-ready"
        /// The user must sign in, or sign in again.
        case authenticationRequired = "authentication-required"
        /// The account does not allow it (a premium feature).
        case accountRestricted = "account-restricted"
        /// Parental controls forbid it.
        case parentalControlRestricted = "parental-control-restricted"
        /// Not available where the user is.
        case notAvailableInRegion = "not-available-in-region"
        /// Anything else; the row's title says what.
        case other
    }

    /// A way for the user to set the problem right: an action the app performs when asked
    /// (see ``PlayableContentDelegate``) and the label a remote puts on its button.
    public struct Resolution: Sendable, Hashable {
        /// What to do, as the app names it (`rescan`).
        public var action: String
        /// The button's text (“Scan again”).
        public var label: String

        public init(action: String, label: String) {
            self.action = action
            self.label = label
        }
    }

    public var code: Code
    /// How to set it right, when the user can.
    public var resolution: Resolution?

    public init(_ code: Code, resolution: Resolution? = nil) {
        self.code = code
        self.resolution = resolution
    }
}

/// Something a remote can do with a row besides playing it (“Play next”, “Add to queue”), in
/// the terms of car browse screens' custom actions: declared once with
/// ``PlayableContentManager/customActions``, offered per row by ``ContentItem/actions``, and
/// carried out by ``PlayableContentDelegate/playableContentManager(_:performAction:onContentItemAt:)``.
public struct ContentAction: Sendable, Hashable {
    /// Unique among the app's actions; any characters.
    public var identifier: String
    /// The button's text.
    public var title: String
    /// An icon for the button (`file:` or `http(s):`), when the app has one.
    public var icon: URL?

    public init(identifier: String, title: String, icon: URL? = nil) {
        self.identifier = identifier
        self.title = title
        self.icon = icon
    }
}
