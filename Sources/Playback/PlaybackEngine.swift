#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A backend that plays one URL at a time and can hand over to the next one without a gap.
///
/// Requirements every implementation meets, and what a caller may rely on:
///
/// - **Threading.** Every member may be called from any thread or task. Calls that change what
///   plays (``load(_:)``, ``play()``, ``pause()``, ``stop()``, ``seek(to:)``, ``setRate(_:)``)
///   run one at a time in the order they were made; a call made while another is in progress
///   waits for it.
/// - **Returning.** A call returns when what it asked for has happened in the pipeline
///   (prerolled, playing, paused, seeked), or throws when it cannot happen. It never returns
///   early on a timer.
/// - **Errors.** A thrown ``PlaybackError`` says what failed and for which URL. Invalid
///   arguments (``PlaybackError/Kind/invalidArgument``) and calls that do not apply
///   (``PlaybackError/Kind/notLoaded``, ``PlaybackError/Kind/notSeekable``) change nothing.
///   A playback failure stops the engine; it is thrown by the call that was waiting for it, or,
///   when no call was waiting, emitted as ``PlaybackEvent/error(_:)`` — never both. The
///   failure of an item handed over by the provider is always emitted (a call waiting then
///   throws ``PlaybackError/Kind/other``, "stopped because the next item failed").
/// - **Cancellation** is how a later command supersedes a call: a call whose task is cancelled
///   (before its turn or while it waits on the pipeline) ends at once, stops the engine as
///   ``stop()`` does (the current item stays current), and throws
///   ``PlaybackError/Kind/superseded``. A start waiting on a stream that does not answer is
///   ended this way, never by a timer of the caller's.
/// - **Events** arrive on ``events`` in the order things happened in the pipeline; a call that
///   waited for something returns after the events of it were emitted.
public protocol PlaybackEngine: AnyObject, Sendable {
    /// What happens in the engine, in order, for one consumer. Never finishes while the engine
    /// lives; finishes when it is released.
    var events: AsyncStream<PlaybackEvent> { get }

    /// Stops what plays, loads `url` (`file://` or `http(s)://`) and prerolls it paused.
    ///
    /// Returns once prerolled (the first buffer reached the output), having emitted
    /// ``PlaybackEvent/streamStarted(_:)`` and ``PlaybackEvent/durationChanged(_:)``. Throws
    /// ``PlaybackError/Kind/invalidArgument`` for another scheme (nothing changes), or the
    /// failure that prevents playing it: ``PlaybackError/Kind/notFound`` (missing file, HTTP
    /// 404), ``PlaybackError/Kind/unsupported`` (corrupt file, no decoder),
    /// ``PlaybackError/Kind/network`` (unreachable host, connection lost),
    /// ``PlaybackError/Kind/outputDevice``. After a failure nothing is loaded.
    /// The current playback rate applies to the new item.
    func load(_ url: URL) async throws(PlaybackError)

    /// Starts or resumes playback of what is loaded; returns once PLAYING is reached (for a
    /// network stream, that may wait until enough is buffered). After ``stop()``, plays the
    /// item that was current again from its start; at the end of an item (after
    /// ``PlaybackEvent/endOfStream``) it changes nothing. Throws
    /// ``PlaybackError/Kind/notLoaded`` if nothing is loaded.
    func play() async throws(PlaybackError)

    /// Pauses; returns once PAUSED is reached. After ``stop()``, prerolls the item that was
    /// current, paused at its start. Throws ``PlaybackError/Kind/notLoaded`` if nothing is loaded.
    func pause() async throws(PlaybackError)

    /// Stops and releases the stream; returns once the pipeline has stopped. The current item
    /// stays current, so ``play()`` right after starts it again: stop then play (or load) in
    /// quick succession never fails.
    func stop() async

    /// A flushing, accurate seek to `position` (stream time) in the current item; returns when
    /// the seek has completed, playing or paused as before. Throws
    /// ``PlaybackError/Kind/invalidArgument`` for a negative position or one past the known
    /// duration, ``PlaybackError/Kind/notLoaded`` when stopped or empty,
    /// ``PlaybackError/Kind/notSeekable`` for a stream that cannot seek (nothing changes).
    func seek(to position: Duration) async throws(PlaybackError)

    /// Sets the playback rate (> 0; 1 is normal speed), keeping the pitch. Applies at once to
    /// what plays (returns when it has) and persists across items, gapless hand-overs included,
    /// until changed. Throws ``PlaybackError/Kind/invalidArgument`` for a rate that is not a
    /// finite number above 0, ``PlaybackError/Kind/notSeekable`` when the current stream
    /// cannot change rate (nothing changes then).
    func setRate(_ rate: Double) async throws(PlaybackError)

    /// Linear output volume: 0 is silent, 1 is unity gain. Set values are clamped to 0...10;
    /// a value that is not a number is ignored. Applies at once.
    var volume: Double { get set }

    /// Silences the output without changing ``volume``.
    var isMuted: Bool { get set }

    /// The position in the current item (stream time: 0 at its start, advancing at the rate),
    /// nil when nothing is loaded, when stopped, or when unknown.
    var position: Duration? { get }

    /// The duration of the current item; nil when unknown, stopped, or a live stream.
    var duration: Duration? { get }

    /// Sets what plays after each item without a gap, told which item it answers for; nil
    /// (the default) ends after the current item.
    ///
    /// `provider(item)` returns the URL to play after `item`, or nil to end after it. It is
    /// called on one of the engine's threads (a GStreamer streaming thread for `GStreamerEngine`),
    /// synchronously, when `item` is about to finish — possibly before `item` itself was
    /// announced, for short items — and again for the same `item` after a seek near its end. It must be quick and must not call the engine.
    /// Items are named by URL: a queue that holds the same URL more than once answers for the
    /// occurrence it is playing.
    /// A file URL that does not exist is not handed over: the current item plays to its end,
    /// then ``PlaybackEvent/error(_:)`` reports the missing file. Setting a provider replaces
    /// the one before; it does not undo a hand-over already prepared.
    func setSuccessorProvider(_ provider: (@Sendable (_ item: URL) -> URL?)?)
}

/// Something that happened in a ``PlaybackEngine``.
public enum PlaybackEvent: Sendable, Equatable {
    /// A new stream started: after ``PlaybackEngine/load(_:)``, and when a gapless hand-over
    /// to the provider's URL really happens (the new item's first sample reaches the output).
    /// The consumer advances its queue on this. A restart after `stop()` does not announce
    /// the item again.
    case streamStarted(URL)
    /// The current item's duration became known or changed; nil when unknown or live.
    case durationChanged(Duration?)
    /// Tags of the current stream changed (a radio's new song title, for example): the merged
    /// tags of the current item so far. A new item starts from empty tags.
    case tagsChanged(StreamTags)
    /// Network buffering progress, 0...100. Below 100 while PLAYING is wanted, the engine
    /// holds the pipeline paused; at 100 it resumes.
    case buffering(percent: Int)
    /// The state the pipeline reached by itself or by a call (playing, paused, stopped).
    case stateChanged(EngineState)
    /// The current item ended and no next one was handed over. The engine stays at the end
    /// (``PlaybackEngine/seek(to:)`` and ``PlaybackEngine/load(_:)`` work).
    case endOfStream
    /// Playback of `error.url` failed and no call was waiting to throw it; the engine has
    /// stopped and nothing is loaded. A handed-over item that fails reports its own URL: a
    /// missing file when the current item has ended, an unplayable one as soon as it is
    /// prepared (which stops the current item about a second early).
    case error(PlaybackError)
    /// The system took the output away for a more important stream (a call, a navigation
    /// prompt), or gave it back. At ``Interruption/began`` the engine has paused by itself;
    /// at ``Interruption/ended`` it stays paused, and the consumer resumes it with
    /// ``PlaybackEngine/play()`` unless the listener paused or stopped meanwhile. A call made
    /// during the interruption (`play()`, `pause()`, a load) ends the engine's part in it: no
    /// `ended` follows.
    case interruption(Interruption)
    /// Someone else changed the output's volume: a mixer set the linear `volume` (0 silent, 1
    /// unity) of the player's stream on the sound server. ``PlaybackEngine/volume`` reads it
    /// already; the consumer shows it as its own. The engine's own changes are not reported.
    case volumeChanged(Double)
}

/// The two ends of an interruption by a more important stream (``PlaybackEvent/interruption(_:)``).
public enum Interruption: Sendable, Equatable {
    /// The output was taken away: the engine paused.
    case began
    /// The output is free again: resuming is the consumer's choice.
    case ended
}

/// What the output is doing.
public enum EngineState: Sendable, Equatable {
    case stopped, paused, playing
}

/// The common tags of a stream. Each is nil when the stream does not carry it.
public struct StreamTags: Sendable, Equatable {
    public var title: String?
    /// All artists, joined with ", ".
    public var artist: String?
    public var album: String?
    /// The organisation that made the stream: a radio station's name.
    public var organization: String?
    public var genre: String?

    public init(
        title: String? = nil, artist: String? = nil, album: String? = nil, organization: String? = nil,
        genre: String? = nil
    ) {
        self.title = title
        self.artist = artist
        self.album = album
        self.organization = organization
        self.genre = genre
    }

    /// These tags with every tag that `newer` has replacing the old value.
    package func merging(_ newer: StreamTags) -> StreamTags {
        StreamTags(
            title: newer.title ?? title, artist: newer.artist ?? artist, album: newer.album ?? album,
            organization: newer.organization ?? organization, genre: newer.genre ?? genre)
    }
}

/// Why a ``PlaybackEngine`` call or playback failed.
public struct PlaybackError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The file or resource does not exist or cannot be opened (HTTP 404 included).
        case notFound
        /// The data cannot be played: corrupt, not audio, or no decoder installed.
        case unsupported
        /// A network stream failed: host unreachable, connection refused or lost.
        case network
        /// The audio output failed (no device, device busy).
        case outputDevice
        /// Nothing is loaded (or the engine is stopped) for a call that needs an item.
        case notLoaded
        /// The stream cannot seek or change rate.
        case notSeekable
        /// An argument is out of range or malformed; nothing changed.
        case invalidArgument
        /// The call's task was cancelled, by a later command that supersedes it: not a failure
        /// of the item. The engine stopped.
        case superseded
        /// Anything else.
        case other
    }

    public var kind: Kind
    /// The URL that failed, when the failure concerns one.
    public var url: URL?
    /// A human explanation, such as `Resource not found: No such file "/music/a.ogg"`.
    public var message: String

    public init(kind: Kind, url: URL?, message: String) {
        self.kind = kind
        self.url = url
        self.message = message
    }

    public var description: String {
        guard let url else { return message }
        return "\(message) (\(url.isFileURL ? url.path : url.absoluteString))"
    }
}
