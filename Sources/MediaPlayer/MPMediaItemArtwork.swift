import Foundation
import MediaRemote
import Synchronization

/// An item's cover art, as in Apple's framework: a size and a handler that makes the image
/// when a remote shows it.
///
/// The handler gets the size asked for and returns an ``ArtworkImage`` (where iOS has a
/// `UIImage`); it runs on the main queue when a remote asks, and on the caller's thread from
/// ``image(at:)``. It is called only when a remote shows the image, so an app may describe
/// thousands of items without reading their images.
///
/// Differences from Apple's: the handler's image type is ``ArtworkImage``; images are passed
/// on in the encoding the app gives, not scaled to the size asked for.
open class MPMediaItemArtwork: NSObject, @unchecked Sendable {  // the handler is called on the main queue only, or by the app itself; the rest is immutable or behind a lock
    private let handler: MainQueueBound<(CGSize) -> ArtworkImage>
    private let boundsSize: CGSize
    /// Names this artwork's image for the caches remotes read through: one per object, as
    /// nothing else tells two handlers' images apart.
    let identifier: String
    private static let nextIdentifier = Atomic<UInt64>(0)
    private let deprecatedCropRect = Mutex(CGRect.zero)

    @available(*, unavailable, message: "use init(boundsSize:requestHandler:)")
    public override init() { fatalError("MPMediaItemArtwork() is unavailable") }

    /// Artwork whose image `requestHandler` makes at the size asked for (at most `boundsSize`).
    ///
    /// - Parameters:
    ///   - boundsSize: the image's largest size, in pixels.
    ///   - requestHandler: returns the image for a size; called on the main queue.
    public init(boundsSize: CGSize, requestHandler: @escaping (CGSize) -> ArtworkImage) {
        self.handler = MainQueueBound(requestHandler)
        self.boundsSize = boundsSize
        self.identifier = "mediaplayer-artwork-\(Self.nextIdentifier.add(1, ordering: .relaxed).newValue)"
        super.init()
    }

    /// Artwork of one image, as before iOS 10.
    @available(*, deprecated, message: "use init(boundsSize:requestHandler:)")
    public convenience init(image: ArtworkImage) {
        self.init(boundsSize: image.size) { _ in image }
    }

    /// The image's bounds: its origin is zero, its size the `boundsSize` it was made with.
    open var bounds: CGRect { CGRect(origin: .zero, size: boundsSize) }

    /// The image for `size` (clamped to ``bounds``), made by the request handler on this
    /// thread; nil for a size with no area.
    open func image(at size: CGSize) -> ArtworkImage? {
        guard size.width > 0, size.height > 0 else { return nil }
        let asked = CGSize(width: min(size.width, max(boundsSize.width, 1)), height: min(size.height, max(boundsSize.height, 1)))
        return handler.value(asked)
    }

    /// The part of the image to show, as before iOS 10: kept, not applied.
    @available(*, deprecated, message: "no longer supported")
    open var imageCropRect: CGRect { deprecatedCropRect.withLock { $0 } }

    /// The artwork as MediaRemote carries it: read on the main queue when a remote shows it.
    var mediaItemArtwork: MediaItemArtwork {
        let size = boundsSize
        let handler = self.handler
        return .requested(
            identifier: identifier,
            load: ArtworkLoader {
                MainQueue.sync {
                    let asked = CGSize(width: max(size.width, 1), height: max(size.height, 1))
                    return handler.value(asked).data
                }
            })
    }
}
