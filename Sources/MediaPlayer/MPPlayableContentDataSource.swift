import Foundation

/// The app's browsable content, as in Apple's framework: a tree of ``MPContentItem``s
/// addressed by index paths. `[]` is the root, `[0]` its first child (the first tab), `[0, 3]`
/// that tab's fourth child.
///
/// Set an object of the app's as ``MPPlayableContentManager/dataSource`` (the manager holds it
/// weakly: keep it). Every method is called on the main queue. The manager reads a container
/// once, when a remote first opens it (after ``beginLoadingChildItems(at:completionHandler:)``),
/// and serves remotes from what it read until ``MPPlayableContentManager/reloadData()`` or
/// ``MPPlayableContentManager/endUpdates()`` has it read again.
///
/// The optional methods of Apple's protocol have defaults here (Linux has no `@objc optional`);
/// each default behaves as iOS does when the method is not implemented.
///
/// Completion handlers are `@Sendable`, as in Apple's current SDK: they may be called from any
/// thread. A method written with the iOS 13 spelling (`@escaping (Error?) -> Void`) implements
/// the requirement as well.
///
/// A `@MainActor` class conforms with an isolated conformance
/// (`final class Library: @MainActor MPPlayableContentDataSource`) or `@preconcurrency`: the
/// manager calls it on the main actor only.
///
/// Differences from Apple's: the protocol refines `AnyObject` rather than `NSObjectProtocol`
/// (any class may conform, an `NSObject` subclass as on iOS included).
public protocol MPPlayableContentDataSource: AnyObject {
    /// Loads the children of the item at `indexPath`, so that they can be read; call
    /// `completionHandler` once they are loaded (with an error if they could not be), from any
    /// thread. Only the first call counts.
    ///
    /// A remote waits a moment for it (half a second), then shows what
    /// ``numberOfChildItems(at:)`` and ``contentItem(at:)`` give so far and a “loading” row,
    /// and is told when the completion handler is called. A handler not called within 30
    /// seconds is given up. Default: loaded at once.
    func beginLoadingChildItems(at indexPath: IndexPath, completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// Whether the children of the item at `indexPath` show their
    /// ``MPContentItem/playbackProgress`` (podcast episodes, audiobook chapters). Default: false.
    func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool

    /// Finds the item with `identifier` anywhere in the tree, for remotes that remember
    /// identifiers: call `completionHandler` with it, with nil when there is no such item, or
    /// with an error, from any thread. Only the first call counts; one not made within 30
    /// seconds is given up. Default: the manager finds the item among those it has read.
    func contentItem(
        forIdentifier identifier: String, completionHandler: @escaping @Sendable (MPContentItem?, (any Error)?) -> Void)

    /// The number of children of the item at `indexPath` (`[]`: the number of tabs). A
    /// negative number is taken as none.
    func numberOfChildItems(at indexPath: IndexPath) -> Int

    /// The item at `indexPath`, or nil when there is none (yet): a nil row is not shown.
    func contentItem(at indexPath: IndexPath) -> MPContentItem?
}

/// Tells the app what remotes ask of its content, as in Apple's framework: play an item,
/// prepare a queue, and that the context (a head unit's limits) changed.
///
/// Set an object of the app's as ``MPPlayableContentManager/delegate`` (held weakly). Every
/// method is called on the main queue; every method has a default (Linux has no `@objc
/// optional`), which behaves as iOS does when the method is not implemented. Completion handlers
/// are `@Sendable` (either spelling of a handler's type implements the requirement). A `@MainActor`
/// class conforms as to ``MPPlayableContentDataSource``.
///
/// Differences from Apple's: the protocol refines `AnyObject` rather than `NSObjectProtocol`.
public protocol MPPlayableContentDelegate: AnyObject {
    /// A remote asks to play the item at `indexPath` (a track, or a playable container as a
    /// whole): start playback, then call `completionHandler` (from any thread) with nil once
    /// it has started, or with the error that kept it from starting. Only the first call
    /// counts.
    ///
    /// The remote is answered when the handler is called: an error that is a `DBusError` or
    /// conforms to `DBusErrorConvertible` reaches it under its own name, any other as
    /// `org.mprisbridge.Error.CommandFailed` with its description. A handler not called
    /// within 30 seconds fails the request. Default: the remote is told that the app does not
    /// start playback (`org.freedesktop.DBus.Error.NotSupported`).
    func playableContentManager(
        _ contentManager: MPPlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// A remote asks for a play queue to be prepared, without starting playback; call
    /// `completionHandler` once it is ready. Called only when
    /// ``playableContentManager(_:initializePlaybackQueueWithContentItems:completionHandler:)``
    /// is not implemented. Default: nothing is prepared.
    @available(*, deprecated, message: "Use Intents framework for initiating playback queues.")
    func playableContentManager(
        _ contentManager: MPPlayableContentManager,
        initializePlaybackQueueWithCompletionHandler completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// A remote asks for a play queue of `contentItems` (``MPContentItem``s; nil: the app's
    /// choice, such as what played last) to be prepared, without starting playback; call
    /// `completionHandler` once it is ready. Default: calls
    /// ``playableContentManager(_:initializePlaybackQueueWithCompletionHandler:)``.
    @available(*, deprecated, message: "Use Intents framework for initiating playback queues.")
    func playableContentManager(
        _ contentManager: MPPlayableContentManager, initializePlaybackQueueWithContentItems contentItems: [Any]?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The context changed: a head unit connected or disconnected, or changed its content
    /// limits. `context` holds the new values (as ``MPPlayableContentManager/context`` does
    /// now). Default: nothing.
    func playableContentManager(
        _ contentManager: MPPlayableContentManager, didUpdate context: MPPlayableContentManagerContext)
}

/// What a default of an optional method answers its completion handler with: the app does not
/// implement the method. Only the manager's adapters see it, and they do as iOS does for an
/// unimplemented method (see each default); it never reaches a remote.
struct OptionalMethodNotImplemented: Error {}

extension MPPlayableContentDataSource {
    public func beginLoadingChildItems(at indexPath: IndexPath, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }

    public func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool { false }

    public func contentItem(
        forIdentifier identifier: String, completionHandler: @escaping @Sendable (MPContentItem?, (any Error)?) -> Void
    ) {
        completionHandler(nil, OptionalMethodNotImplemented())
    }
}

extension MPPlayableContentDelegate {
    public func playableContentManager(
        _ contentManager: MPPlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        completionHandler(OptionalMethodNotImplemented())
    }

    @available(*, deprecated, message: "Use Intents framework for initiating playback queues.")
    public func playableContentManager(
        _ contentManager: MPPlayableContentManager,
        initializePlaybackQueueWithCompletionHandler completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        completionHandler(OptionalMethodNotImplemented())
    }

    @available(*, deprecated, message: "Use Intents framework for initiating playback queues.")
    public func playableContentManager(
        _ contentManager: MPPlayableContentManager, initializePlaybackQueueWithContentItems contentItems: [Any]?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        playableContentManager(contentManager, initializePlaybackQueueWithCompletionHandler: completionHandler)
    }

    public func playableContentManager(
        _ contentManager: MPPlayableContentManager, didUpdate context: MPPlayableContentManagerContext
    ) {}
}
