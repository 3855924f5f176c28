import Foundation
import MediaRemote

/// What the remote browsing the app's content (a head unit) allows now, as in Apple's
/// framework: whether one is connected, and the limits it sets while the car moves.
///
/// A snapshot: ``MPPlayableContentManager/context`` makes a new one each time it is read, and
/// ``MPPlayableContentDelegate/playableContentManager(_:didUpdate:)`` is given one when a
/// remote changes the context. A head unit sets it through the media tree's root
/// (`org.mprisbridge.MediaRoot1`); every listing honours the limits without the app's help.
open class MPPlayableContentManagerContext: NSObject, @unchecked Sendable {  // immutable after init
    /// The context as MediaRemote keeps it.
    let context: PlayableContentManagerContext

    /// The context with no remote connected and no limits enforced.
    public override init() {
        self.context = PlayableContentManagerContext()
        super.init()
    }

    init(_ context: PlayableContentManagerContext) {
        self.context = context
        super.init()
    }

    /// The most rows a listing shows while limits are enforced; `Int.max` when they are not
    /// (the remote never limits the rows).
    open var enforcedContentItemsCount: Int {
        context.contentLimitsEnforced ? context.enforcedContentItemsCount : Int.max
    }

    /// The deepest level of the tree a remote opens while limits are enforced (the root's
    /// children are level 1); `Int.max` when they are not. A container at this level is
    /// listed, and playable, but shows no children.
    open var enforcedContentTreeDepth: Int {
        context.contentLimitsEnforced ? context.enforcedContentTreeDepth : Int.max
    }

    /// Whether the remote enforces the limits above now (typically: while driving).
    open var contentLimitsEnforced: Bool { context.contentLimitsEnforced }

    /// Whether the remote enforces content limits, by its name before iOS 9.
    @available(*, deprecated, renamed: "contentLimitsEnforced")
    open var contentLimitsEnabled: Bool { context.contentLimitsEnforced }

    /// Whether a remote that browses the content (a head unit) is connected.
    open var endpointAvailable: Bool { context.endpointAvailable }

    /// The values, for logs.
    open override var description: String {
        "<MPPlayableContentManagerContext endpointAvailable=\(endpointAvailable) contentLimitsEnforced=\(contentLimitsEnforced) "
            + "enforcedContentItemsCount=\(enforcedContentItemsCount) enforcedContentTreeDepth=\(enforcedContentTreeDepth)>"
    }
}
