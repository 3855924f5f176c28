#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Playback
import Synchronization

/// The hand-over state, shared by the engine and the `about-to-finish` handler.
final class HandoverState: Sendable {
    private let state = Mutex(Handover())

    func withLock<Result: Sendable>(_ body: (inout Handover) -> Result) -> Result {
        state.withLock { body(&$0) }
    }

    /// The URI to hand over now, if any. On a GStreamer streaming thread, at `about-to-finish`;
    /// `flushCount` is the output's FLUSH_STOP count at that moment.
    func nextURI(flushCount: Int) -> String? {
        withLock { handover in
            if let awaited = handover.flushAwaited {
                guard flushCount > awaited else {
                    // Drained before the seek's flush: the seek restarts the data, which drains again.
                    handover.missedDrain = true
                    return nil
                }
                handover.flushAwaited = nil
            }
            // The item about to finish: a short item prepared as next can finish reading before
            // it starts playing.
            guard let finishing = handover.pending.last ?? handover.current else { return nil }
            guard let next = handover.provider?(finishing) else { return nil }
            // A missing file would fail as soon as it is prepared, cutting the current item
            // short: refuse it here, and report it when the current item has ended.
            if next.isFileURL && !FileManager.default.isReadableFile(atPath: next.path) {
                let reason = FileManager.default.fileExists(atPath: next.path) ? "Cannot read the file" : "No such file"
                handover.refused = PlaybackError(
                    kind: .notFound, url: next, message: "Resource not found: \(reason) \"\(next.path)\"")
                return nil
            }
            handover.pending.append(next)
            return next.absoluteString
        }
    }
}

/// What the engine and the `about-to-finish` handler share, under `HandoverState`.
struct Handover: Sendable {
    /// What plays after an item, told which one (``PlaybackEngine/setSuccessorProvider(_:)``).
    var provider: (@Sendable (URL) -> URL?)?
    /// The current item (as in `Control`).
    var current: URL?
    /// A next item refused at `about-to-finish` (a missing file): reported when the current one ends.
    var refused: PlaybackError?
    /// URLs given to playbin at `about-to-finish` whose STREAM_START has not come yet, in order.
    var pending: [URL] = []
    /// While set (a seek is being issued), a drain hands nothing over until the flush count
    /// exceeds this: playbin would lose a seek issued after it prepared the next item.
    var flushAwaited: Int?
    /// A drain came while a flush was awaited.
    var missedDrain = false
}
