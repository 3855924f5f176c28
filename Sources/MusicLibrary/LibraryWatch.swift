import Dispatch
import Glibc
import Synchronization

/// Watches a music folder and its subfolders with inotify, and says when something a scan
/// would see has changed: an audio file, a playlist or a cover image written, moved in or
/// out, or deleted, or a folder made, moved or removed.
///
/// Changes come through ``changes(quiet:maximumDelay:)`` debounced: copying an album is one
/// change, not one per file. Folders made later are watched as they appear. Nothing polls:
/// the watch waits on the inotify descriptor, and an idle library costs nothing.
///
/// inotify needs a watch per folder (`fs.inotify.max_user_watches`, often 8,192 on older
/// systems). Past that limit, ``unwatchedFolders`` counts the folders left out; their changes
/// show at the next scan.
public final class LibraryWatch: Sendable {
    /// The music folder.
    public let root: String
    private let watcher: Watcher
    /// Behind a lock only because Dispatch's sources are not marked `Sendable`; they are thread-safe.
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Starts watching `root` and every folder below it (links are not followed: a folder
    /// linked from inside the library is watched where it lies, if that is inside too).
    ///
    /// - Throws: `LibraryWatchError` when inotify cannot be used or `root` cannot be watched.
    public init(root: String) throws(LibraryWatchError) {
        self.root = root
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw LibraryWatchError(reason: String(cString: strerror(errno))) }
        let watcher = Watcher(descriptor: descriptor)
        let queue = DispatchQueue(label: "MusicLibrary.LibraryWatch")
        guard queue.sync(execute: { watcher.addFolderTree(root) }) else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw LibraryWatchError(reason: "cannot watch \(root): \(reason)")
        }
        let readSource = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        readSource.setEventHandler { watcher.readEvents() }
        readSource.setCancelHandler { close(descriptor) }
        readSource.resume()
        self.watcher = watcher
        source = Mutex(readSource)
    }

    deinit { stop() }

    /// Folders that could not be watched (the inotify limit), whose changes wait for a scan.
    public var unwatchedFolders: Int { watcher.state.withLock { $0.unwatched } }

    /// Stops watching; ``changes(quiet:maximumDelay:)`` ends.
    public func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
        watcher.signal.finish()
    }

    /// One element per burst of changes: once no event has come for `quiet`, or `maximumDelay`
    /// after the burst's first event while events keep coming (a long copy is reported as it
    /// goes, not only at its end). Iterate it from one task.
    public func changes(quiet: Duration = .milliseconds(300), maximumDelay: Duration = .seconds(1)) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watcher = self.watcher
        let task = Task {
            for await _ in watcher.signals {
                let start = ContinuousClock.now
                // Wait for a quiet moment: each round, events that came during it extend the wait.
                while watcher.takePending() > 0, ContinuousClock.now - start < maximumDelay {
                    try? await Task.sleep(for: min(quiet, maximumDelay - (ContinuousClock.now - start)))
                }
                continuation.yield()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// The inotify side: the watches, and the events counted since the last report. Its reading
/// runs on the watch's serial queue.
private final class Watcher: Sendable {
    let descriptor: Int32
    let state = Mutex(State())
    let signal: AsyncStream<Void>.Continuation
    let signals: AsyncStream<Void>

    struct State {
        /// Watch descriptor → folder path.
        var folders: [Int32: String] = [:]
        var unwatched = 0
        /// Events seen since the last change was reported.
        var pending = 0
    }

    init(descriptor: Int32) {
        self.descriptor = descriptor
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func takePending() -> Int {
        state.withLock { state in
            defer { state.pending = 0 }
            return state.pending
        }
    }

    private static let mask = UInt32(
        IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_ATTRIB | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

    /// Watches `folder` and the folders below it; false when `folder` itself cannot be watched.
    func addFolderTree(_ folder: String) -> Bool {
        var stack = [folder]
        var first = true
        while let current = stack.popLast() {
            let watch = inotify_add_watch(descriptor, current, Self.mask)
            if watch < 0 {
                if first { return false }
                if errno == ENOSPC { state.withLock { $0.unwatched += 1 } }
                continue
            }
            first = false
            state.withLock { $0.folders[watch] = current }
            guard let directory = opendir(current) else { continue }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasPrefix(".") { continue }
                stack.append(current + "/" + name)
            }
        }
        return true
    }

    func readEvents() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var relevant = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (event, name) = buffer.withUnsafeBytes { bytes -> (inotify_event, String) in
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let start = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = bytes[start..<min(start + Int(event.len), count)]
                    return (event, String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self))
                }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
                if handle(event, name: name) { relevant += 1 }
            }
        }
        guard relevant > 0 else { return }
        state.withLock { $0.pending += relevant }
        signal.yield()
    }

    /// Keeps the watches up to date; true when the event is one a scan would see.
    private func handle(_ event: inotify_event, name: String) -> Bool {
        if event.mask & UInt32(IN_IGNORED) != 0 {
            state.withLock { _ = $0.folders.removeValue(forKey: event.wd) }
            return false
        }
        // Events were lost: anything may have changed.
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { return true }
        guard let folder = state.withLock({ $0.folders[event.wd] }) else { return false }
        if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 { return true }
        if name.hasPrefix(".") { return false }
        if event.mask & UInt32(IN_ISDIR) != 0 {
            if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 { _ = addFolderTree(folder + "/" + name) }
            return true
        }
        return FolderWalk.isRead(name: name)
    }
}

/// Why a ``LibraryWatch`` could not start.
public struct LibraryWatchError: Error, Sendable, CustomStringConvertible {
    /// The system's reason.
    public var reason: String
    public var description: String { "cannot watch the music folder: \(reason)" }
}
