import AsyncSupport
import CMalloc
import MediaRemote
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Gives back the resident memory a quiet daemon does not use: once it is ready, after each
/// rescan, and whenever playback has stopped or paused for ``quietDelay``.
///
/// Most of a paused daemon's resident set is not its heap but pages of its executable and of
/// the libraries it maps (the Swift runtime, FoundationEssentials, SQLite, GStreamer and its
/// plugins): the kernel maps the 64 KB around each page touched, and starting, scanning and
/// playing touch code that a paused daemon never runs. ``trim()`` unmaps those pages, which
/// stay in the system's page cache: the code that runs next maps its own again, at a minor
/// fault per 64 KB.
///
/// Thread safety: every member may be used from any thread or task.
final class ResidentMemory: Sendable {
    /// How long playback must have stayed stopped or paused before the trim: a pause followed
    /// at once by play (a double press, a remote toggling) trims nothing.
    static let quietDelay = Duration.milliseconds(500)

    private let nowPlaying: NowPlayingInfoCenter
    /// The trim waiting for its delay, if any.
    private let pending = Mutex<Task<Void, Never>?>(nil)

    init(nowPlaying: NowPlayingInfoCenter) {
        self.nowPlaying = nowPlaying
    }

    /// Trims after ``quietDelay``, unless playing then; a trim already waiting waits anew.
    func trimWhenQuiet() {
        let task = Task { [nowPlaying] in
            try? await Task.sleep(for: Self.quietDelay)
            guard !Task.isCancelled, nowPlaying.nowPlayingInfo?.playbackState != .playing else { return }
            Self.trim()
        }
        pending.withLock { $0?.cancel(); $0 = task }
    }

    /// Forgets a trim waiting for its delay (playback started).
    func cancelTrim() {
        pending.withLock { $0?.cancel(); $0 = nil }
    }

    /// Follows playback: a trim once it has stopped or paused for ``quietDelay``. Kept while
    /// the observation is.
    func followPlayback() -> Observation {
        nowPlaying.observe { [self] update in
            if update.current?.playbackState == .playing { cancelTrim() } else { trimWhenQuiet() }
        }
    }

    /// Returns the heap's free pages (`malloc_trim`) and unmaps the pages of the read-only file
    /// mappings that hold nothing but the file's contents.
    ///
    /// A mapping keeps its pages when it is writable or holds a page of its own
    /// (`Anonymous` in `/proc/self/smaps`: data the dynamic loader relocated, made read-only
    /// after), since unmapping would lose it; any other page reads back the same from the
    /// file. About 2 ms for the daemon's 170 mappings.
    static func trim() {
        _ = malloc_trim(0)
        guard let smaps = readProcFile("/proc/self/smaps") else { return }
        var mapping: (start: UInt, end: UInt)?
        for line in smaps.split(separator: UInt8(ascii: "\n")) {
            if let header = MappingHeader(line) {
                mapping = header.isReadOnlyFile ? (header.start, header.end) : nil
            } else if let (start, end) = mapping, line.starts(with: "Anonymous:".utf8) {
                if line.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) { continue }
                _ = madvise(UnsafeMutableRawPointer(bitPattern: start), Int(end - start), MADV_DONTNEED)
                mapping = nil
            }
        }
    }

    /// The whole of a file of /proc (whose size `stat` does not tell), or nil.
    private static func readProcFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 * 1024)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

/// A mapping's line in `/proc/self/smaps`: `start-end perms offset dev inode [path]`.
private struct MappingHeader {
    let start: UInt
    let end: UInt
    /// Readable, not writable, and a file's (a path, not `[heap]`, `[stack]` or a device).
    let isReadOnlyFile: Bool

    /// Nil for a field line (`Rss:   12 kB`), whose name starts with a capital letter.
    init?(_ line: ArraySlice<UInt8>) {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5, let range = fields.first, let dash = range.firstIndex(of: UInt8(ascii: "-")),
            let start = UInt(String(decoding: range[..<dash], as: UTF8.self), radix: 16),
            let end = UInt(String(decoding: range[(dash + 1)...], as: UTF8.self), radix: 16), end > start
        else { return nil }
        self.start = start
        self.end = end
        let perms = Array(fields[1])
        let path = fields.count > 5 ? fields[5].drop { $0 == UInt8(ascii: " ") } : []
        isReadOnlyFile =
            perms.count == 4 && perms[0] == UInt8(ascii: "r") && perms[1] == UInt8(ascii: "-")
            && fields[4].elementsEqual("0".utf8) == false && path.first == UInt8(ascii: "/")
            && !path.starts(with: "/dev/".utf8)
    }
}
