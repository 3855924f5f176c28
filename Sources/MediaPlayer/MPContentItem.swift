import Dispatch
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
/// A change to an item after the data source returned it reaches remotes, as on iOS: the
/// manager reads the content again on the main queue's next turn (once for the changes made
/// until then) and remotes hear of each container that changed. Changes made while the data
/// source is being asked for the item are part of what it returns.
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
        /// Whether the manager has read the item: a change then reaches remotes.
        var isShown = false
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
        set { update(\.title, to: newValue) }
    }

    /// The row's second line: a song's artist, an album's artist.
    open var subtitle: String? {
        get { fields.withLock { $0.subtitle } }
        set { update(\.subtitle, to: newValue) }
    }

    /// Cover art shown with the row; its image is made only when a remote shows it.
    open var artwork: MPMediaItemArtwork? {
        get { fields.withLock { $0.artwork } }
        set { update(\.artwork, to: newValue) }
    }

    /// How much of the item has been played: 0 (not started) to 1 (finished); −1, the
    /// default, for no progress indicator. Shown in containers whose data source answers
    /// true to ``MPPlayableContentDataSource/childItemsDisplayPlaybackProgress(at:)``.
    /// Values past 1 are shown as 1; other negative values, NaN and infinities as none.
    open var playbackProgress: Float {
        get { fields.withLock { $0.playbackProgress } }
        set { update(\.playbackProgress, to: newValue) }
    }

    /// A live stream from the network (a radio station): no length, no seeking. Default false.
    open var isStreamingContent: Bool {
        get { fields.withLock { $0.isStreamingContent } }
        set { update(\.isStreamingContent, to: newValue) }
    }

    /// Explicit content, which a head unit may hide. Default false.
    open var isExplicitContent: Bool {
        get { fields.withLock { $0.isExplicitContent } }
        set { update(\.isExplicitContent, to: newValue) }
    }

    /// The row opens onto children (an album, a playlist, a tab). Default false.
    open var isContainer: Bool {
        get { fields.withLock { $0.isContainer } }
        set { update(\.isContainer, to: newValue) }
    }

    /// The row can be played: a track, or a container played as a whole (an album). A row
    /// neither playable nor a container is informative only. Default false.
    open var isPlayable: Bool {
        get { fields.withLock { $0.isPlayable } }
        set { update(\.isPlayable, to: newValue) }
    }

    /// Sets a property; a change to an item remotes show has the manager read the content again.
    private func update<Value: Equatable>(_ field: WritableKeyPath<Fields, Value>, to value: Value) {
        let shownChange = fields.withLock { fields -> Bool in
            guard fields[keyPath: field] != value else { return false }
            fields[keyPath: field] = value
            return fields.isShown
        }
        if shownChange { ContentItemChanges.itemChanged(identifier) }
    }

    /// The item as MediaRemote keeps it, read once for the manager's copy: later changes to
    /// this object are sent to remotes.
    var shownContentItem: ContentItem {
        fields.withLock { $0.isShown = true }
        return contentItem
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

/// Changes to items remotes show, sent to them as on iOS: the first change schedules one read
/// of the content on the main queue (a batch of updates, which announces each container that
/// changed), and the changes made until it runs go with it. The batch reads again only the
/// containers that hold the changed items, unless the app has a batch of its own open, whose
/// end reads everything it read.
enum ContentItemChanges {
    private static let scheduled = Atomic<Bool>(false)
    /// How many reads of the data source are under way on the main queue: an item changed
    /// there is being returned, and is read as it is.
    static let readsOnMainQueue = Atomic<Int>(0)
    /// The identifiers of the items changed since the batch was scheduled.
    private static let changed = Mutex<Set<String>>([])
    /// How deep the app's own batches (``MPPlayableContentManager/beginUpdates()``) are.
    private static let appBatchDepth = Mutex(0)

    static func appBatchBegan() { appBatchDepth.withLock { $0 += 1 } }
    /// An end without a beginning leaves the depth at 0, as the manager's own count does.
    static func appBatchEnded() { appBatchDepth.withLock { $0 = max(0, $0 - 1) } }
    /// The containers the batch under way reads again, for the data source adapter to name;
    /// nil outside it.
    private static let named = Mutex<Set<String>?>(nil)

    static func itemChanged(_ identifier: String) {
        if MainQueue.isCurrent, readsOnMainQueue.load(ordering: .relaxed) > 0 { return }
        changed.withLock { _ = $0.insert(identifier) }
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        DispatchQueue.main.async {
            scheduled.store(false, ordering: .relaxed)
            let identifiers = changed.withLock { changed in
                defer { changed = [] }
                return changed
            }
            let content = MediaPlayerRuntime.shared.content
            // Inside an app's batch, its end reads everything anyway.
            let containers =
                appBatchDepth.withLock { $0 } == 0 ? content.containerIdentifiers(holding: identifiers) : nil
            named.withLock { $0 = containers }
            content.beginUpdates()
            content.endUpdates()
            named.withLock { $0 = nil }
        }
    }

    /// The containers the batch under way reads again; nil when it is not this batch (the
    /// app's own, which reads everything).
    static var namedContainers: Set<String>? { named.withLock { $0 } }
}
