// Releasing the output of a paused item, and making it again: the engine's part in giving back
// what a paused daemon does not need (the pipeline, the sound server's stream and connection).

import Playback
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension GStreamerEngine {
    /// Releases the audio output and everything else the pipeline holds (the sound server's
    /// stream, connection and main loop, the decoders, their buffers and streaming threads)
    /// while a local file stays paused: the pipeline is torn down and the position kept.
    /// Nothing shows outside: the state stays paused, ``position`` and ``duration`` keep their
    /// values, a seek moves the kept position, and ``play()`` makes the pipeline again at the
    /// position first (a preroll and a seek: about 10 ms for a local file) and then plays.
    ///
    /// Does nothing (returns false) unless the engine is paused by a call on a seekable
    /// `file://` item: not while playing, stopped, interrupted (the sound server ends an
    /// interruption through the stream), or on a network stream (which may not come back at
    /// the same place). Runs after the calls made before it, like every call.
    @discardableResult
    public func releaseOutput() async -> Bool {
        let released = Mutex(false)
        try? await perform { () throws(PlaybackError) in
            try withControl { control throws(PlaybackError) in
                guard control.isActive, control.released == nil, control.target == .paused,
                    !control.run.isInterrupted, control.waiters.isEmpty, control.current?.isFileURL == true,
                    playbin.state == (.paused, .voidPending), playbin.isSeekable, let position = playbin.position
                else { return }
                let duration = playbin.duration
                teardown(&control)
                playbin.closeMainLoopKeeper()
                control.released = ReleasedItem(position: position, duration: duration)
                released.withLock { $0 = true }
            }
        }
        return released.withLock { $0 }
    }

    /// Makes the pipeline of a released item again, paused at its position, without
    /// announcing it or reporting the states it passes through (it was paused and stays so).
    func restore(_ url: URL, _ released: ReleasedItem) async throws(PlaybackError) {
        try withControl { control throws(PlaybackError) in control.reported.quietSeeks += 1 }
        defer { control.withLock { $0.reported.quietSeeks -= 1 } }
        try await preroll(url, announcing: false, at: released.position)
    }
}
