import Foundation
import MediaRemote
import Synchronization

/// What the app is playing, as remotes show it: Apple's now-playing centre.
///
/// Set ``nowPlayingInfo`` whenever something remotes show changes (a new item, play, pause,
/// a seek, a new rate), never while time merely passes: remotes extrapolate the position from
/// ``MPNowPlayingInfoPropertyElapsedPlaybackTime`` and ``MPNowPlayingInfoPropertyPlaybackRate``
/// from the moment the dictionary was set. A new elapsed time away from the extrapolated one
/// is announced as a seek (MPRIS `Seeked`).
///
/// ```swift
/// MPNowPlayingInfoCenter.default().nowPlayingInfo = [
///     MPMediaItemPropertyTitle: "Blue in Green",
///     MPMediaItemPropertyArtist: "Miles Davis",
///     MPMediaItemPropertyPlaybackDuration: 337.0,
///     MPNowPlayingInfoPropertyElapsedPlaybackTime: player.currentTime,
///     MPNowPlayingInfoPropertyPlaybackRate: 1.0,
/// ]
/// ```
///
/// Whether the item plays follows iOS's rule: the playback rate says it (0 is paused, any
/// other rate playing, an absent rate is 1), unless ``playbackState`` is set to something
/// other than `.unknown`, which then wins. No dictionary at all is stopped.
///
/// On MPRIS: title, artist, album, album artist, composer, genre, track and disc number,
/// duration, artwork, asset URL and release date are the `Metadata`; the item's identifier
/// (``MPNowPlayingInfoPropertyExternalContentIdentifier``, else
/// ``MPMediaItemPropertyPersistentID``) makes its `mpris:trackid`; the rate is `Rate` (the
/// default rate while paused); a live stream has no length and cannot be sought. Kept, not
/// shown: chapter number and count, language options, current playback date, service,
/// external user profile and collection identifiers, media types, playback progress; the
/// track, disc and queue counts and the queue index are carried to MediaRemote's value but
/// MPRIS has no field for them.
///
/// Differences from Apple's:
/// - A value of the wrong type or out of range (a string where a number belongs, a NaN or
///   negative duration, a negative or non-finite rate, a negative track number) is ignored as
///   if the key were absent, where iOS's behaviour is undocumented; NUL characters are removed
///   from strings, since D-Bus cannot carry them.
/// - `playbackState` alone, with no dictionary, shows nothing: MPRIS says `Stopped`.
/// - `.interrupted` shows as `Paused` (MPRIS has no such status).
/// - Language options are kept as given, not shown: MPRIS has none.
/// - ``MPMediaItemArtwork`` images are ``ArtworkImage``s, not `UIImage`s.
/// - The first use of ``default()`` publishes the player on D-Bus (see ``LinuxMediaPlayer``).
/// - When two threads set the centre at once, the one publishing also publishes the other's
///   change, so the other's setter may return an instant before its change is shown.
open class MPNowPlayingInfoCenter: NSObject, @unchecked Sendable {  // its only state, the app's dictionary, is behind a Mutex
    private static let shared = MPNowPlayingInfoCenter(center: MediaPlayerRuntime.shared.nowPlaying)

    /// What the app set, as it set it. A `[String: Any]` is not `Sendable`: it is only ever
    /// read or replaced under the mutex, and handed out as a copy (a value type).
    private struct State: @unchecked Sendable {
        var info: [String: Any]?
        var playbackState: MPNowPlayingPlaybackState = .unknown
        /// Whether a change is waiting to be published.
        var isDirty = false
        /// Whether a thread is publishing now; it publishes every change made meanwhile too.
        var isPublishing = false
    }

    private let state = Mutex(State())
    private let center: NowPlayingInfoCenter

    private init(center: NowPlayingInfoCenter) {
        self.center = center
        super.init()
    }

    @available(*, unavailable, message: "use MPNowPlayingInfoCenter.default()")
    public override init() { fatalError("MPNowPlayingInfoCenter() is unavailable") }

    /// The app's one now-playing centre. The first call publishes the player on D-Bus, after
    /// the main queue's current turn.
    open class func `default`() -> MPNowPlayingInfoCenter {
        MediaPlayerRuntime.shared.publishPlayer()
        return shared
    }

    /// What is playing, keyed by the `MPMediaItemProperty…` and `MPNowPlayingInfoProperty…`
    /// constants; nil when nothing is. Setting it publishes it to remotes at that moment;
    /// reading it returns what was set, keys remotes do not show included.
    open var nowPlayingInfo: [String: Any]? {
        get { state.withLock { $0.info } }
        set { publish { $0.info = newValue } }
    }

    /// Whether the app is playing; `.unknown` (the default) lets the playback rate say it.
    /// Setting it publishes the now-playing information again.
    open var playbackState: MPNowPlayingPlaybackState {
        get { state.withLock { $0.playbackState } }
        set { publish { $0.playbackState = newValue } }
    }

    /// Applies `change` and publishes the result to MediaRemote, in the order of the changes.
    ///
    /// No lock is held while publishing: it may run the app's artwork handler (on this thread
    /// when it is the main one, else waiting for the main queue), which may use this centre.
    /// So one thread publishes at a time and, before it returns, also publishes what other
    /// threads changed meanwhile; those return at once, their change published an instant later.
    private func publish(_ change: (inout State) -> Void) {
        let isPublisher = state.withLock { state in
            change(&state)
            state.isDirty = true
            guard !state.isPublishing else { return false }
            state.isPublishing = true
            return true
        }
        guard isPublisher else { return }
        while true {
            let snapshot = state.withLock { state -> State? in
                guard state.isDirty else {
                    state.isPublishing = false
                    return nil
                }
                state.isDirty = false
                return state
            }
            guard let snapshot else { return }
            center.publish(
                snapshot.info.map { NowPlayingInfoConversion.nowPlayingInfo($0, playbackState: snapshot.playbackState) })
        }
    }
}
