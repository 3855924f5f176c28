import Logging
import MusicLibrary
import ServiceLifecycle

/// Keeps the served library up to date: once the daemon is ready, a rescan (unless
/// `--no-scan`), then the music folder followed (unless `--no-watch`), a rescan after each
/// burst of changes. Stopping, it stops the rescan running (the child scanner with it).
struct LibraryRefreshService: Service, CustomStringConvertible {
    let settings: ServeSettings
    let logger: Logger
    let refresh: LibraryRefresh
    let library: Milestone<ServedLibrary>
    /// Waited for: the rescan comes after everything is served.
    let ready: Milestone<Void>

    var description: String { "library refresh" }

    func run() async throws {
        // Not a child task: starting to follow the folder (an inotify watch on each of its
        // thousands of folders) cannot be interrupted, and a daemon stopped just after it is
        // ready need not wait for it. Cancelled, it stops at its next step.
        let following = Task { [self] in
            guard (try? await ready.value()) != nil, let library = try? await library.value().library else { return }
            if settings.scansAtStart && !library.isReadOnly, await !rescan() { return }
            // Then the folder is followed: what is added, changed, moved or removed shows.
            if settings.watchesLibrary && !library.isReadOnly { await watchLibrary() }
        }
        try? await gracefulShutdown()
        following.cancel()
        await refresh.stop()
    }

    /// Rescans after each burst of changes in the music folder, until cancelled.
    private func watchLibrary() async {
        let watch: LibraryWatch
        do {
            watch = try LibraryWatch(root: settings.library)
        } catch {
            logger.warning("\(error); changes show after a restart or a Rescan")
            return
        }
        defer { watch.stop() }
        if watch.unwatchedFolders > 0 {
            logger.warning(
                "\(watch.unwatchedFolders) folders of the library are past the system's inotify limit (fs.inotify.max_user_watches): their changes show after a Rescan")
        }
        logger.info("following changes in \(settings.library)")
        for await _ in watch.changes() {
            guard await rescan() else { return }
        }
    }

    /// Rescans, logging a failure; false once the daemon is stopping.
    private func rescan() async -> Bool {
        do {
            try await refresh.rescan()
        } catch is CancellationError {
            return false
        } catch {
            logger.error("\(error)")
        }
        return true
    }
}
