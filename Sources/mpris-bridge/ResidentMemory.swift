import AsyncSupport
import CMalloc
import Dispatch
import MediaRemote
import Synchronization

/// Gives back the resident memory a quiet daemon does not use: once it is ready, after each
/// rescan, and whenever playback has stopped or paused for ``quietDelay``; paused for
/// ``outputReleaseDelay``, the audio output too.
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

    /// How long playback must have stayed paused before the audio output is released (the
    /// engine's pipeline torn down, the position kept): the sound server's stream and
    /// connection, the decoders, their buffers and streaming threads, about 0.8 MB and four
    /// threads. Playing again then makes the pipeline anew at the position: the sound comes
    /// about 13 ms later than from a corked stream (see Benchmarks/README.md, "Memory while
    /// paused"). A shorter pause costs nothing.
    static let outputReleaseDelay = Duration.seconds(1)
    /// How long after releasing the output the trim waits: GLib's thread pool keeps each
    /// streaming thread the pipeline stopped for half a second before it exits, and an exiting
    /// thread maps code again (about 1 MB).
    static let releaseSettleDelay = Duration.milliseconds(600)
    /// How long after that trim the last one waits: libdispatch ends a worker thread idle for
    /// 5 s, and the workers that paused and released the output map code again as they end
    /// (the destructors of their GLib, PulseAudio and glibc thread-local data), 1.6 MB of a
    /// paused daemon's 11.4 on PulseAudio; those of the pause end 5 s after it, those of the
    /// release, 5 s after the release (see Benchmarks/README.md, "the connection's own thread").
    static let idleWorkersEndDelay = Duration.milliseconds(5_500)

    private let nowPlaying: NowPlayingInfoCenter
    /// Releases the engine's output if it is paused; true if it did.
    private let releaseOutput: @Sendable () async -> Bool
    /// The trim waiting: its number (a later call supersedes it) and, once ``quietDelay`` has
    /// passed, its task.
    private let pending = Mutex<(number: Int, task: Task<Void, Never>?)>((0, nil))

    init(nowPlaying: NowPlayingInfoCenter, releaseOutput: @escaping @Sendable () async -> Bool = { false }) {
        self.nowPlaying = nowPlaying
        self.releaseOutput = releaseOutput
    }

    /// Trims after ``quietDelay``, unless playing then; still paused after
    /// ``outputReleaseDelay``, releases the output and trims again ``releaseSettleDelay``
    /// later, and a last time ``idleWorkersEndDelay`` after that. A trim already waiting waits
    /// anew.
    func trimWhenQuiet() {
        let number = pending.withLock { pending in
            pending.task?.cancel()
            pending.task = nil
            pending.number += 1
            return pending.number
        }
        // The quiet delay on a Dispatch timer, not in a task: a task started now would wake one
        // of Swift's threads as the pause's signal is carried, and a play pressed within the
        // delay (a remote toggling) then costs no thread at all.
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.quietDelay.dispatchInterval) { [self] in
            pending.withLock { pending in
                guard pending.number == number else { return }
                pending.task = Task { [self, nowPlaying, releaseOutput] in
                    guard !Task.isCancelled, nowPlaying.nowPlayingInfo?.playbackState != .playing else { return }
                    Self.trim()
                    guard nowPlaying.nowPlayingInfo?.playbackState == .paused else { return }
                    try? await Task.sleep(for: Self.outputReleaseDelay - Self.quietDelay)
                    guard !Task.isCancelled, nowPlaying.nowPlayingInfo?.playbackState == .paused else { return }
                    // A task of its own, never cancelled: an engine call cancelled midway stops the engine.
                    guard await Task(operation: releaseOutput).value else { return }
                    // The last trim's timer armed before the next trim: arming it after would map
                    // the code of a sleep again (1 MB), kept until the last trim.
                    trimLast(after: Self.releaseSettleDelay + Self.idleWorkersEndDelay, unlessSuperseding: number)
                    try? await Task.sleep(for: Self.releaseSettleDelay)
                    guard !Task.isCancelled else { return }
                    Self.trim()
                }
            }
        }
    }

    /// Trims after `delay` while still paused, unless trim `number` was superseded meanwhile.
    private func trimLast(after delay: Duration, unlessSuperseding number: Int) {
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval) { [self] in
            guard pending.withLock({ $0.number }) == number, nowPlaying.nowPlayingInfo?.playbackState == .paused else {
                return
            }
            Self.trim()
        }
    }

    /// Forgets a trim waiting for its delay (playback started).
    func cancelTrim() {
        pending.withLock { pending in
            pending.number += 1
            pending.task?.cancel()
            pending.task = nil
        }
    }

    /// Follows playback: a trim once it has stopped or paused for ``quietDelay``. Kept while
    /// the observation is.
    func followPlayback() -> Observation {
        nowPlaying.observe { [self] update in
            if update.current?.playbackState == .playing { cancelTrim() } else { trimWhenQuiet() }
        }
    }

    /// Returns the heap's free pages (`malloc_trim`) and unmaps the pages of the executable's
    /// and libraries' segments that are never written (code, read-only data): the dynamic
    /// loader's list of objects says where they are, and a page the loader relocated is in a
    /// writable segment, which stays; so do written pages of the constant data in one
    /// (``constantData``). These are pages the kernel may drop itself under memory pressure;
    /// this drops them now.
    static func trim() {
        _ = threadTeardownBound
        _ = malloc_trim(0)
        _ = cmalloc_release_code_pages()
        _ = cmalloc_release_unwritten_pages(constantData)
    }

    /// The executable's `.rodata` when the linker put it in a writable segment, as it does for
    /// Swift's object files, which mark theirs writable: 2 MB of constant data, of which a
    /// paused daemon held 1.2 MB that ``trim()`` left alone (written pages are kept; see
    /// `cmalloc_release_unwritten_pages`). Read once from the executable's section headers.
    private static let constantData = cmalloc_writable_constant_data()

    /// glibc's first release of a thread's TLS, done before the first trim: done later (a worker
    /// that played ending while paused), its symbol lookup maps 64 KB of every library again.
    private static let threadTeardownBound = cmalloc_bind_thread_teardown()
}
