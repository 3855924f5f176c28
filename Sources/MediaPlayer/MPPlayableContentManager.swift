import Foundation
import MediaRemote

/// Serves the app's browsable content to remotes (a head unit, a media server) and relays
/// their requests to play it, as in Apple's framework.
///
/// ```swift
/// let content = MPPlayableContentManager.shared()
/// content.dataSource = library          // tabs → albums → tracks, as MPContentItems
/// content.delegate = player             // plays what a remote picks
/// content.nowPlayingIdentifiers = [album.identifier, track.identifier]
/// content.beginUpdates()                // …change the library…
/// content.endUpdates()                  // remotes hear once per changed container
/// ```
///
/// Setting ``dataSource`` publishes the content on D-Bus as a media tree
/// (`org.gnome.UPnP.MediaServer2.<playerName>`, see ``LinuxMediaPlayer``), after the main
/// queue's current turn. A head unit browses it with MediaServer2's `ListChildren`, plays a
/// row with `org.mprisbridge.MediaNode1.Play`, and sets its limits on the root
/// (`org.mprisbridge.MediaRoot1`). The data source and the delegate are called on the main
/// queue; the manager reads a container once and answers remotes from what it read, and a
/// listing waits at most half a second for ``MPPlayableContentDataSource/beginLoadingChildItems(at:completionHandler:)``.
///
/// Every instance, the shared one or one made with `init()`, is a view of the same content:
/// the process has one tree, as an iOS app has one endpoint.
///
/// Differences from Apple's:
/// - ``dataSource`` and ``delegate`` are held weakly but are not declared `weak` (they are
///   read back from the tree's adapters); the protocols refine `AnyObject`, not
///   `NSObjectProtocol`; their optional methods have defaults in protocol extensions (there
///   is no `@objc optional`), and a class's method must match the requirement's signature
///   exactly, and be declared by the class that conforms (not added by a subclass), to be
///   called instead of the default. Completion handlers are `@Sendable`, as in Apple's current
///   SDK; a method with iOS 13's spelling implements the requirement too.
/// - A completion handler not called within 30 seconds is given up: a play request then fails,
///   a loading container shows what it has.
/// - An error the delegate passes when playback cannot start reaches the remote as a D-Bus
///   error (see ``MPPlayableContentDelegate/playableContentManager(_:initiatePlaybackOfContentItemAt:completionHandler:)``).
/// - A data source's `nil` answer to ``MPPlayableContentDataSource/contentItem(forIdentifier:completionHandler:)``
///   means “no such item”; only a data source that does not implement it has the manager look
///   among the rows it has read.
/// - “The main queue” is the main dispatch queue (the main actor). In a process whose main thread
///   is parked in `dispatchMain()` (an `async` `@main`, the test runner), libdispatch drains that
///   queue on other threads, where `Thread.isMainThread` is false: code that checks it should
///   check `MainActor` isolation or `dispatchPrecondition(condition: .onQueue(.main))` instead.
///   A process that runs `RunLoop.main` drains it on the main thread, as iOS does.
/// - The content items a remote asks the delegate to queue are new ``MPContentItem``s made from
///   the rows the manager read, without artwork, not the app's own objects.
open class MPPlayableContentManager: NSObject, @unchecked Sendable {  // no state of its own: it forwards to MediaRemote's manager, which is thread-safe
    private static let sharedManager = MPPlayableContentManager()

    /// The app's content manager.
    open class func shared() -> MPPlayableContentManager { sharedManager }

    /// A manager serving the app's one tree, as ``shared()`` does.
    public override init() { super.init() }

    private var content: PlayableContentManager { MediaPlayerRuntime.shared.content }

    /// The app's content, held weakly: keep the object. Setting it has the manager read the
    /// new content (remotes are told the whole tree changed) and publishes the tree on D-Bus
    /// on first use; nil empties the tree.
    open var dataSource: (any MPPlayableContentDataSource)? {
        get { (content.dataSource as? DataSourceAdapter)?.app }
        set {
            content.dataSource = newValue.map { DataSourceAdapter($0) }
            if newValue != nil { MediaPlayerRuntime.shared.publishTree() }
        }
    }

    /// What plays the content remotes pick, held weakly: keep the object. With none (or one
    /// that does not implement `initiatePlayback…`), a remote's request to play is refused.
    open var delegate: (any MPPlayableContentDelegate)? {
        get { (content.delegate as? DelegateAdapter)?.app }
        set { content.delegate = newValue.map { DelegateAdapter($0, manager: self) } }
    }

    /// What the connected remote allows now (read when asked: a new snapshot each time).
    open var context: MPPlayableContentManagerContext { MPPlayableContentManagerContext(content.context) }

    /// The identifiers of what plays: the item and the containers it was started from
    /// (`[album.identifier, track.identifier]`). Remotes mark those rows as playing
    /// (`org.mprisbridge.MediaNode1.NowPlaying`).
    open var nowPlayingIdentifiers: [String] {
        get { content.nowPlayingIdentifiers }
        set { content.nowPlayingIdentifiers = newValue }
    }

    /// The data source's content changed: the manager reads again every container it has read
    /// (calling ``MPPlayableContentDataSource/beginLoadingChildItems(at:completionHandler:)``
    /// again), and remotes hear of each that changed. Inside a batch of updates, it happens when
    /// the batch ends.
    open func reloadData() {
        content.reloadData()
    }

    /// Begins a batch of changes to the data source; batches nest. Until the outermost one
    /// ends, the manager reads nothing from the data source for remotes.
    open func beginUpdates() {
        ContentItemChanges.appBatchBegan()
        content.beginUpdates()
    }

    /// Ends a batch: when it is the outermost, the manager reads again the containers it has
    /// read (on this thread, calling the data source on the main queue) and remotes hear once
    /// of each container that changed (`org.gnome.UPnP.MediaContainer2.Updated`).
    open func endUpdates() {
        content.endUpdates()
        ContentItemChanges.appBatchEnded()
    }
}
