import Foundation
import MediaRemote
import Synchronization

/// One row a remote (a head unit) shows of the app's content: a container (an album, a
/// playlist), a playable item (a track, a radio station), or an informative row that is
/// neither, as in Apple's framework.
///
/// The data source returns these from ``MPPlayableContentDataSource/contentItem(at:)``; the
/// manager reads each one's properties when it is returned, on the main queue, and serves
/// remotes from what it read.
///
/// Differences from Apple's: a change made to an item after it was returned reaches remotes
/// when the manager reads its container again (``MPPlayableContentManager/endUpdates()`` or
/// ``MPPlayableContentManager/reloadData()``), not by itself.
open class MPContentItem: NSObject, @unchecked Sendable {  // every property is behind one lock
    private struct Fields {
        var title: String?
        var subtitle: String?
        var artwork: MPMediaItemArtwork?
        var playbackProgress: Float = -1
        var isStreamingContent = false
        var isExplicitContent = false
        var isContainer = false
        var isPlayable = false
    }

    private let fields = Mutex(Fields())

    /// The item's identifier: unique among the app's items and stable across reloads, as
    /// remotes address rows by it. Any characters.
    public let identifier: String

    @available(*, unavailable, message: "use init(identifier:)")
    public override init() { fatalError("MPContentItem() is unavailable") }

    /// An item with `identifier` (see ``identifier``); every other property at its default.
    public init(identifier: String) {
        self.identifier = identifier
        super.init()
    }

    /// The row's main text: a track's name, an episode's title.
    open var title: String? {
        get { fields.withLock { $0.title } }
        set { fields.withLock { $0.title = newValue } }
    }

    /// The row's second line: a song's artist, an album's artist.
    open var subtitle: String? {
        get { fields.withLock { $0.subtitle } }
        set { fields.withLock { $0.subtitle = newValue } }
    }

    /// Cover art shown with the row; its image is made only when a remote shows it.
    open var artwork: MPMediaItemArtwork? {
        get { fields.withLock { $0.artwork } }
        set { fields.withLock { $0.artwork = newValue } }
    }

    /// How much of the item has been played: 0 (not started) to 1 (finished); −1, the
    /// default, for no progress indicator. Shown in containers whose data source answers
    /// true to ``MPPlayableContentDataSource/childItemsDisplayPlaybackProgress(at:)``.
    /// Values past 1 are shown as 1; other negative values, NaN and infinities as none.
    open var playbackProgress: Float {
        get { fields.withLock { $0.playbackProgress } }
        set { fields.withLock { $0.playbackProgress = newValue } }
    }

    /// A live stream from the network (a radio station): no length, no seeking. Default false.
    open var isStreamingContent: Bool {
        get { fields.withLock { $0.isStreamingContent } }
        set { fields.withLock { $0.isStreamingContent = newValue } }
    }

    /// Explicit content, which a head unit may hide. Default false.
    open var isExplicitContent: Bool {
        get { fields.withLock { $0.isExplicitContent } }
        set { fields.withLock { $0.isExplicitContent = newValue } }
    }

    /// The row opens onto children (an album, a playlist, a tab). Default false.
    open var isContainer: Bool {
        get { fields.withLock { $0.isContainer } }
        set { fields.withLock { $0.isContainer = newValue } }
    }

    /// The row can be played: a track, or a container played as a whole (an album). A row
    /// neither playable nor a container is informative only. Default false.
    open var isPlayable: Bool {
        get { fields.withLock { $0.isPlayable } }
        set { fields.withLock { $0.isPlayable = newValue } }
    }

    /// The item as MediaRemote keeps it: what remotes are shown, read once.
    var contentItem: ContentItem {
        let fields = fields.withLock { $0 }
        let progress = fields.playbackProgress
        return ContentItem(
            identifier: identifier, title: fields.title, subtitle: fields.subtitle,
            artwork: fields.artwork?.mediaItemArtwork,
            // Apple's −1 is "no indicator"; MediaRemote says so with nil.
            playbackProgress: progress.isFinite && progress >= 0 ? Double(progress) : nil,
            isStreamingContent: fields.isStreamingContent, isExplicitContent: fields.isExplicitContent,
            isContainer: fields.isContainer, isPlayable: fields.isPlayable)
    }

    /// An item made from one MediaRemote holds (the rows a remote asks the delegate to queue).
    /// Its artwork is not carried over: the app's own object made it.
    convenience init(_ item: ContentItem) {
        self.init(identifier: item.identifier)
        fields.withLock { fields in
            fields.title = item.title
            fields.subtitle = item.subtitle
            fields.playbackProgress = item.playbackProgress.map { Float($0) } ?? -1
            fields.isStreamingContent = item.isStreamingContent
            fields.isExplicitContent = item.isExplicitContent
            fields.isContainer = item.isContainer
            fields.isPlayable = item.isPlayable
        }
    }
}
