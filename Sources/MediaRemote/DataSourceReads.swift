import AsyncSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the manager's async work runs while it calls the data source.
///
/// A data source answers synchronously (``PlayableContentDataSource/contentItem(at:)`` and
/// the rest), and may wait on a disk to do so: listings, searches, loads and reloads run on
/// this executor, never on the threads Swift's tasks share, so a listing stuck on a slow read
/// holds nothing but itself.
enum DataSourceReads {
    /// Shared by every manager. Its width is how many reads may wait on the disk at once
    /// before the next one queues behind them: as many as a media tree serves calls at once
    /// (32), so a listing stuck on a slow read never holds up another; a queue's thread exists
    /// only while it has work.
    static let shared = BlockingExecutor(
        label: "mediaremote.data-source-reads", width: max(32, 2 * ProcessInfo.processInfo.activeProcessorCount))
}
