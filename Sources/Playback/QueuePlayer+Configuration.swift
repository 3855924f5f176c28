#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension QueuePlayer {
    /// What the player offers remotes.
    public struct Configuration: Sendable {
        /// Rates a remote may pick; others snap to the nearest, and the rate reported is the
        /// one that plays (a remote asking for any rate must get an answer it can show).
        public var supportedRates: [Double] = [0.5, 0.75, 1, 1.25, 1.5, 2]
        /// The skip intervals remotes offer.
        public var skipIntervals: [Duration] = [.seconds(10)]
        /// Past this position, "previous" restarts the item instead of going back.
        public var restartThreshold: Duration = .seconds(3)
        /// The most entries the queue holds. A remote's "open" or "add track"
        /// past it is refused, and ``QueuePlayer/replaceQueue(with:startingAt:play:)``
        /// keeps the first this many: any client may add, and every entry costs memory.
        public var maximumQueueLength = 65_536
        /// While playing, how often observers of ``QueuePlayer/observeChanges(_:)``
        /// hear the position, so a saved state is never older than this after a
        /// crash or a power cut. Nothing wakes up while paused or stopped.
        public var positionCheckpointInterval: Duration = .seconds(15)
        /// How much of the queue remotes are shown (`NowPlayingInfoCenter.playbackQueue`,
        /// MPRIS `TrackList`): the entries this far before and after the current one, in play
        /// order. MPRIS describes the track list as the tracks recently played or about to
        /// play; a 50,000-entry list would cost every client and the player megabytes on each
        /// change. The whole queue is still what plays, and what the commands work on.
        public var shownQueueWindow = QueueWindow(before: 5, after: 50)
        /// URL schemes ``QueuePlayer`` opens; the engine must play them.
        public var supportedURLSchemes: [String] = ["file", "http", "https"]
        /// MIME types it plays, as remotes are told: the registered names and
        /// those of GStreamer's type finders, for every format a music library
        /// holds (the default fits `GStreamerEngine`; another engine states its own).
        public var supportedMIMETypes: [String] = [
            "audio/mpeg", "audio/ogg", "audio/opus", "audio/flac", "audio/x-flac", "audio/x-wav", "audio/wav",
            "audio/x-vorbis+ogg", "audio/mp4", "audio/aac", "audio/x-matroska", "audio/webm", "audio/x-aiff",
            "audio/x-wavpack", "audio/x-ape", "audio/x-musepack", "audio/x-ttafile", "audio/x-ac3", "audio/x-eac3",
            "audio/x-caf", "audio/x-dsf", "audio/x-w64", "audio/x-ms-wma", "audio/x-speex",
        ]

        /// The defaults above.
        public init() {}
    }

    /// A stretch of the queue around its current entry, in play order.
    public struct QueueWindow: Sendable, Equatable {
        /// Entries shown before the current one.
        public var before: Int
        /// Entries shown after the current one.
        public var after: Int

        public init(before: Int, after: Int) {
            self.before = max(before, 0)
            self.after = max(after, 0)
        }

        /// The play-order positions shown when the current entry is at `current` (the start of
        /// the queue when nothing is current).
        func positions(around current: Int?) -> Range<Int> {
            let center = current ?? 0
            // `Int.max` stands for "the whole queue"; no bound may overflow.
            let lower = before >= center ? 0 : center - before
            let end = after >= Int.max - center ? Int.max : center + after + 1
            return lower..<end
        }
    }
}
