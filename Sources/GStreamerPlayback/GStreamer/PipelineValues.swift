// The values the binding hands the engine: pipeline states, state-change results, errors, bus
// messages and output buffers, all plain Swift.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Playback

/// The state of a pipeline, as GStreamer names it.
enum PipelineState: Sendable, Equatable {
    /// No state change is pending (only as the `pending` of a state change).
    case voidPending
    case null, ready, paused, playing

    init(_ state: GstState) {
        switch state {
        case GST_STATE_NULL: self = .null
        case GST_STATE_READY: self = .ready
        case GST_STATE_PAUSED: self = .paused
        case GST_STATE_PLAYING: self = .playing
        default: self = .voidPending
        }
    }

    var gstState: GstState {
        switch self {
        case .voidPending: GST_STATE_VOID_PENDING
        case .null: GST_STATE_NULL
        case .ready: GST_STATE_READY
        case .paused: GST_STATE_PAUSED
        case .playing: GST_STATE_PLAYING
        }
    }
}

/// What `gst_element_set_state` answered.
enum StateChangeResult: Sendable, Equatable {
    /// Done already.
    case success
    /// Under way; the pipeline posts ASYNC_DONE (or an error) when it is done.
    case async
    /// Done, but a live source cannot preroll: there will be no ASYNC_DONE.
    case noPreroll
    /// Failed; an ERROR message with the reason is normally on the bus already.
    case failure
}

/// An ERROR message, decoded.
struct PipelineError: Sendable, Equatable {
    /// Where the failure is, from GStreamer's error domain and code and the element that posted it.
    enum Category: Sendable, Equatable {
        /// The resource does not exist (no such file, HTTP 404).
        case notFound
        /// Reading the input failed: opening, reading or seeking a file or a connection.
        case input
        /// The audio output failed (a sink posted it, or a write-side resource error).
        case output
        /// The data could not be demuxed or decoded, or no plugin handles it.
        case decode
        case other
    }

    var category: Category
    /// GStreamer's human message, such as "Resource not found.".
    var message: String
    /// The last line of GStreamer's debug text, which usually names the cause, such as
    /// `No such file "/tmp/a.ogg"`; empty when there is none.
    var detail: String
    /// The URI the failing element was working on, when one is known.
    var uri: String?
}

/// A message from the pipeline's bus, decoded on the bus thread. Messages the engine does not
/// use are dropped before decoding, and so are state changes of playbin's children.
enum BusMessage: Sendable, Equatable {
    /// The pipeline itself changed state.
    case stateChanged(old: PipelineState, new: PipelineState, pending: PipelineState)
    /// The pipeline finished an asynchronous state change: prerolled after a load or a seek.
    /// `sequence` is the message's number (see ``Playbin/seek(to:rate:)``).
    case asyncDone(sequence: UInt32)
    /// A new stream reached the sink (after a load, or a gapless hand-over, or a new chain).
    case streamStarted
    case endOfStream
    case error(PipelineError)
    /// Tags that reached the audio sink, so they belong to the stream being played.
    case tags(StreamTags)
    case buffering(percent: Int)
    case durationChanged
    /// The pipeline's clock went away; it must go to PAUSED and back to PLAYING to pick another.
    case clockLost
    /// An element's latency changed; the pipeline must recalculate it.
    case latency
    /// A marker posted by ``Playbin/postMarker(_:)``.
    case marker(Int)
    /// An element asks the application to move the pipeline to a state: the audio sink does
    /// when the sound server corks its stream for a more important one (PAUSED) and uncorks it
    /// afterwards (PLAYING).
    case stateRequested(PipelineState)
}

/// A buffer that reached the audio output: what it holds, and when it plays by the pipeline
/// clock (running time, which starts at 0 when a pipeline run or a flushing seek starts, and
/// goes on without a jump across a gapless hand-over).
struct OutputBuffer: Sendable, Equatable {
    /// How many streams (items, or chains of a chained stream) reached the output before this
    /// buffer's since the observer was added: a gapless hand-over and a reload each start one.
    var stream: Int
    /// How many flushing seeks reached the output before this buffer since the observer was added.
    var flushes: Int
    /// The running time at which it starts and ends playing; at a rate other than 1 it lasts its
    /// media length divided by the rate.
    var start: Duration
    var end: Duration
    /// The position in its stream (stream time) of its first and last sample.
    var position: Duration
    var endPosition: Duration
}
