// The only file of the playback engine that talks to libgstreamer. Everything above it works
// with `Playbin`, `BusMessage` and Swift values; no pointer, `OpaquePointer` or `Unmanaged`
// leaves this file.
//
// Threading: GStreamer elements are thread-safe for what is used here (properties, state
// changes, queries, seeks and posting on the bus lock internally), so a `Playbin` may be used
// from any thread. Its bus is read by one thread of its own, blocked in
// `gst_bus_timed_pop_filtered` without a timeout: no GMainLoop, and no wake-up unless a
// message arrives.

import CGStreamer
import Playback
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// GStreamer's process-wide initialisation, done once (`gst_init`), on first use.
enum GStreamerLibrary {
    private static let initialization: String? = {
        var error: UnsafeMutablePointer<GError>?
        if gst_init_check(nil, nil, &error) != 0 { return nil }
        return takeMessage(error) ?? "gst_init failed"
    }()

    /// Initialises GStreamer unless done already; throws with GStreamer's reason if it cannot.
    static func initialize() throws(PlaybackError) {
        if let failure = initialization {
            throw PlaybackError(kind: .other, url: nil, message: "Cannot initialise GStreamer: \(failure)")
        }
    }
}

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

/// A `playbin` pipeline with an audio-only configuration, its bus thread and its
/// `about-to-finish` hook.
final class Playbin: @unchecked Sendable {  // GstElement calls used here are thread-safe; mutable state is in Mutex/Atomic
    private let element: UnsafeMutablePointer<GstElement>
    private let bus: UnsafeMutablePointer<GstBus>
    /// The audio output's input pad.
    private let output: UnsafeMutablePointer<GstPad>
    /// The volume element in front of the output (see `init`).
    private let volumeElement: UnsafeMutablePointer<GstElement>
    private let started = Mutex<Started?>(nil)
    private let isShutDown = Atomic<Bool>(false)
    private let flushes = FlushCounter()
    private let segmentRate = SegmentRate()
    private let switches = ItemSwitchGate()

    private struct Started {
        var loop: BusLoop
        var thread: pthread_t
        var handlerID: gulong
    }

    /// Creates `playbin` with `audioSink` (a gst-launch description) as its audio sink,
    /// `scaletempo` as its audio filter (rate changes keep the pitch), and video, subtitles and
    /// visualisations turned off.
    ///
    /// Throws ``PlaybackError/Kind/invalidArgument`` with GStreamer's reason when the
    /// description does not parse or has no input; ``PlaybackError/Kind/other`` when GStreamer
    /// or playbin is unavailable.
    ///
    /// `networkTimeout` is how long a network source may wait for the server (to answer, or
    /// to send more) before it fails with a network error: a stalled stream is reported and
    /// left, never waited for.
    init(audioSink description: String, networkTimeout: Duration) throws(PlaybackError) {
        try GStreamerLibrary.initialize()
        var parseError: UnsafeMutablePointer<GError>?
        // Volume is an element of the output's own, not playbin's soft volume: GStreamer 1.22's
        // playsink leaks the volume element it makes for every item loaded (a GstVolume and its
        // two pads, about 4 KB a track), which a queue played for days would pile up.
        let parsed = gst_parse_bin_from_description("volume name=\(Self.volumeName) ! " + description, 1, &parseError)
        // Owned here until playbin takes its own reference.
        if let parsed { _ = gst_object_ref_sink(gpointer(parsed)) }
        defer { if let parsed { gst_object_unref(gpointer(parsed)) } }
        // A description can parse with a recoverable error (an unknown property): refused too.
        if let reason = takeMessage(parseError) {
            throw PlaybackError(
                kind: .invalidArgument, url: nil, message: "Invalid audio sink \"\(description)\": \(reason)")
        }
        guard let sink = parsed else {
            throw PlaybackError(kind: .invalidArgument, url: nil, message: "Invalid audio sink \"\(description)\"")
        }
        guard let input = gst_element_get_static_pad(sink, "sink"),
            let volumeElement = gst_bin_get_by_name(binPointer(sink), Self.volumeName)
        else {
            throw PlaybackError(
                kind: .invalidArgument, url: nil, message: "Invalid audio sink \"\(description)\": it takes no input")
        }
        self.volumeElement = volumeElement
        // Every flushing seek's FLUSH_STOP passes the output's input pad synchronously, before
        // the data that follows the seek: the engine orders `about-to-finish` against it.
        _ = gst_pad_add_probe(
            input, GST_PAD_PROBE_TYPE_EVENT_FLUSH, countFlushStop, Unmanaged.passRetained(flushes).toOpaque(),
            releaseFlushCounter)

        guard let element = gst_element_factory_make("playbin", nil) else {
            gst_object_unref(gpointer(input))
            gst_object_unref(gpointer(volumeElement))
            throw PlaybackError(
                kind: .other, url: nil, message: "GStreamer has no playbin element (install gstreamer1.0-plugins-base)")
        }
        _ = gst_object_ref_sink(gpointer(element))
        cgst_set_object(element, "audio-sink", sink)
        // scaletempo keeps the pitch at other rates (plugins-good; without it the pitch changes).
        Self.setFreshTempoFilter(on: element)
        // Every new stream (a load, a gapless hand-over) starts with a segment at rate 1. A
        // probe on each decoded output of each item gives it the engine's rate, as a seek would
        // have, before playsink's stream synchronizer (which keeps the running time continuous
        // across a hand-over, computed from the rate) and scaletempo see it.
        // The same hook brackets each item switch playbin makes on a streaming thread, which a
        // state change must not overlap (see ItemSwitchGate).
        _ = cgst_connect(
            gpointer(element), "element-added", unsafeBitCast(elementAdded, to: GCallback.self),
            Unmanaged.passRetained(ChildHooks(segmentRate: segmentRate, switches: switches)).toOpaque(),
            releaseChildHooks)
        let timeoutSeconds = guint(clamping: max(networkTimeout.components.seconds, 1))
        _ = cgst_connect(
            gpointer(element), "source-setup", unsafeBitCast(sourceSetup, to: GCallback.self),
            gpointer(bitPattern: UInt(timeoutSeconds)), nil)
        // GstPlayFlags (playbin's private header): audio and software volume only. Keeps
        // buffering and download flags as they are.
        let video: guint = 0x1, audio: guint = 0x2, text: guint = 0x4, visualisation: guint = 0x8
        let softVolume: guint = 0x10
        let flags = cgst_get_uint(element, "flags")
        cgst_set_uint(element, "flags", (flags | audio) & ~(video | text | visualisation | softVolume))
        // Otherwise going to NULL empties the bus, markers included: the engine orders
        // messages against its own markers instead.
        gst_pipeline_set_auto_flush_bus(pipelinePointer(element), 0)
        self.element = element
        bus = gst_element_get_bus(element)
        output = input
    }

    deinit {
        shutdown()
        gst_object_unref(gpointer(output))
        gst_object_unref(gpointer(volumeElement))
        gst_object_unref(gpointer(bus))
        gst_object_unref(gpointer(element))
    }

    /// Starts the bus thread, which calls `onMessage` for each message in bus order, and hooks
    /// `about-to-finish`: `nextURI` is called on a streaming thread when the current item is
    /// about to end, with the ``flushCount`` at that moment, and the URI it returns (if any) is
    /// played next without a gap. Call once.
    func start(
        onMessage: @escaping @Sendable (BusMessage) -> Void,
        nextURI: @escaping @Sendable (_ flushCount: Int) -> String?
    ) {
        started.withLock { started in
            precondition(started == nil, "Playbin.start called twice")
            let loop = BusLoop(bus: bus, pipeline: element, onMessage: onMessage)
            var thread = pthread_t()
            let context = Unmanaged.passRetained(loop).toOpaque()
            let result = pthread_create(&thread, nil, { context in
                Unmanaged<BusLoop>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
            precondition(result == 0, "cannot start the GStreamer bus thread: error \(result)")
            let relay = Unmanaged.passRetained(HandoverRelay(nextURI: nextURI, flushes: flushes)).toOpaque()
            let handlerID = cgst_connect_about_to_finish(element, aboutToFinish, relay, releaseRelay)
            started = Started(loop: loop, thread: thread, handlerID: handlerID)
        }
    }

    /// Stops the pipeline (NULL), unhooks `about-to-finish` and ends the bus thread: waits for
    /// it, unless called on it (then it ends after the current message). Idempotent.
    func shutdown() {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switches.whileStopping { _ = gst_element_set_state(element, GST_STATE_NULL) }
        guard let started = started.withLock({ $0 }) else { return }
        g_signal_handler_disconnect(gpointer(element), started.handlerID)
        _ = cgst_post_marker(bus, BusLoop.exitMarker)
        if pthread_equal(pthread_self(), started.thread) != 0 {
            pthread_detach(started.thread)
        } else {
            pthread_join(started.thread, nil)
        }
    }

    /// Calls `observer` for each buffer that reaches the audio output, on the streaming thread
    /// that carries it, in stream order. For tests that measure what plays against the pipeline
    /// clock rather than the wall clock: a busy machine delays both the streaming threads and
    /// the test, but not the timestamps. Costs a pad probe per buffer; call before loading.
    func observeOutput(_ observer: @escaping @Sendable (OutputBuffer) -> Void) {
        // Flush events are not part of EVENT_DOWNSTREAM unless asked for.
        let types = [GST_PAD_PROBE_TYPE_BUFFER, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, GST_PAD_PROBE_TYPE_EVENT_FLUSH]
        _ = gst_pad_add_probe(
            output, GstPadProbeType(types.reduce(0) { $0 | $1.rawValue }), observeBuffer,
            Unmanaged.passRetained(OutputObserver(observer)).toOpaque(), releaseOutputObserver)
    }

    /// The kernel thread id of the bus thread, once it runs (for tests that watch it).
    var busThreadID: Int32? {
        started.withLock { $0?.loop.threadID.load(ordering: .acquiring) }.flatMap { $0 == 0 ? nil : $0 }
    }

    /// How many FLUSH_STOP events reached the audio output so far: it grows when a flushing
    /// seek has flushed, before any data from the new position flows. Any thread.
    var flushCount: Int { flushes.count.load(ordering: .acquiring) }

    /// The rate every new segment is given (see the probe in `init`); a flushing seek at the
    /// same rate is still needed to change the rate of what plays. Any thread.
    var rate: Double {
        get { Double(bitPattern: segmentRate.bits.load(ordering: .acquiring)) }
        set { segmentRate.bits.store(newValue.bitPattern, ordering: .releasing) }
    }

    // MARK: Controls

    /// Gives playbin a new `scaletempo` as its audio filter. Call in the NULL state.
    ///
    /// GStreamer 1.22's scaletempo frees its buffers when it stops but keeps their fill level,
    /// so a restart at another rate can copy from a freed buffer (a crash found by fuzzing:
    /// rate changes across track changes). A fresh element per run has no such past.
    func renewTempoFilter() { Self.setFreshTempoFilter(on: element) }

    private static func setFreshTempoFilter(on element: UnsafeMutablePointer<GstElement>) {
        guard let tempo = gst_element_factory_make("scaletempo", nil) else { return }
        cgst_set_object(element, "audio-filter", tempo)
    }

    /// Sets the URI playbin opens on its next start from READY or NULL.
    func setURI(_ uri: String) {
        cgst_set_string(element, "uri", uri)
    }

    /// Asks for `state`; see ``StateChangeResult``. Going to NULL or READY first waits for an
    /// item switch under way on a streaming thread to finish (milliseconds), keeps new ones from
    /// starting (see `ItemSwitchGate`), and returns once the streaming threads have stopped.
    /// Not on a streaming thread of this pipeline.
    @discardableResult
    func setState(_ state: PipelineState) -> StateChangeResult {
        let change = { gst_element_set_state(self.element, state.gstState) }
        let result = state == .ready || state == .null ? switches.whileStopping(change) : change()
        return switch result {
        case GST_STATE_CHANGE_SUCCESS: .success
        case GST_STATE_CHANGE_ASYNC: .async
        case GST_STATE_CHANGE_NO_PREROLL: .noPreroll
        default: .failure
        }
    }

    /// The current state and the one a pending asynchronous change is heading for; does not wait.
    var state: (current: PipelineState, pending: PipelineState) {
        var current = GST_STATE_VOID_PENDING
        var pending = GST_STATE_VOID_PENDING
        gst_element_get_state(element, &current, &pending, 0)
        return (PipelineState(current), PipelineState(pending))
    }

    /// A flushing, accurate seek to `position` (stream time) at `rate`: the seek event's
    /// sequence number, or nil if the pipeline refused it (a stream that cannot seek, or
    /// nothing prerolled). GStreamer numbers events and messages from one counter, so the
    /// ASYNC_DONE that ends this seek is numbered after it, and one posted before it is not.
    func seek(to position: Duration, rate: Double) -> UInt32? {
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        guard let event = gst_event_new_seek(
            rate, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET, gint64(nanoseconds(position)), GST_SEEK_TYPE_NONE, -1)
        else { return nil }
        let sequence = gst_event_get_seqnum(event)
        // The element takes the event.
        return gst_element_send_event(element, event) != 0 ? sequence : nil
    }

    /// The position in the current stream (stream time), nil if unknown.
    var position: Duration? {
        var value: gint64 = -1
        guard gst_element_query_position(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return .nanoseconds(Int64(value))
    }

    /// The duration of the current stream, nil if unknown (or a live stream).
    var duration: Duration? {
        var value: gint64 = -1
        guard gst_element_query_duration(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return .nanoseconds(Int64(value))
    }

    /// Whether the current stream can seek in time.
    var isSeekable: Bool {
        guard let query = gst_query_new_seeking(GST_FORMAT_TIME) else { return false }
        defer { gst_query_unref(query) }
        guard gst_element_query(element, query) != 0 else { return false }
        var seekable: gboolean = 0
        gst_query_parse_seeking(query, nil, &seekable, nil, nil)
        return seekable != 0
    }

    /// playbin's linear volume (0 silent, 1 unity, up to 10).
    static let volumeName = "mprisbridge-volume"

    var volume: Double {
        get { cgst_get_double(volumeElement, "volume") }
        set { cgst_set_double(volumeElement, "volume", newValue) }
    }

    var isMuted: Bool {
        get { cgst_get_boolean(volumeElement, "mute") != 0 }
        set { cgst_set_boolean(volumeElement, "mute", newValue ? 1 : 0) }
    }

    /// Posts ``BusMessage/marker(_:)`` with `value` (≥ 0) behind every message already posted.
    func postMarker(_ value: Int) {
        precondition(value >= 0, "negative markers are reserved")
        _ = cgst_post_marker(bus, gint64(value))
    }

    /// Redistributes latency after a ``BusMessage/latency`` message.
    func recalculateLatency() {
        _ = gst_bin_recalculate_latency(binPointer(element))
    }
}

// MARK: - The bus thread

/// Reads the bus on its own thread until the exit marker arrives. Owns references to the bus
/// and the pipeline so that both outlive the thread.
private final class BusLoop: @unchecked Sendable {  // the pointers are immutable and GStreamer objects are refcounted thread-safely
    static let exitMarker: gint64 = -1
    /// Messages the engine uses; the others are dropped by `gst_bus_timed_pop_filtered`.
    private static let wanted: GstMessageType = {
        let types = [
            GST_MESSAGE_STATE_CHANGED, GST_MESSAGE_ASYNC_DONE, GST_MESSAGE_STREAM_START, GST_MESSAGE_EOS,
            GST_MESSAGE_ERROR, GST_MESSAGE_TAG, GST_MESSAGE_BUFFERING, GST_MESSAGE_DURATION_CHANGED,
            GST_MESSAGE_CLOCK_LOST, GST_MESSAGE_LATENCY, GST_MESSAGE_APPLICATION,
        ]
        return GstMessageType(rawValue: types.reduce(0) { $0 | $1.rawValue })
    }()

    let threadID = Atomic<Int32>(0)
    private let bus: UnsafeMutablePointer<GstBus>
    private let pipeline: UnsafeMutablePointer<GstElement>
    private let onMessage: @Sendable (BusMessage) -> Void

    init(bus: UnsafeMutablePointer<GstBus>, pipeline: UnsafeMutablePointer<GstElement>,
         onMessage: @escaping @Sendable (BusMessage) -> Void) {
        _ = gst_object_ref(gpointer(bus))
        _ = gst_object_ref(gpointer(pipeline))
        self.bus = bus
        self.pipeline = pipeline
        self.onMessage = onMessage
    }

    deinit {
        gst_object_unref(gpointer(bus))
        gst_object_unref(gpointer(pipeline))
    }

    func run() {
        threadID.store(cgst_thread_id(), ordering: .releasing)
        cgst_name_thread("gst-bus")
        while true {
            guard let message = gst_bus_timed_pop_filtered(bus, cgst_clock_time_none(), Self.wanted) else {
                continue
            }
            defer { gst_message_unref(message) }
            var marker: gint64 = 0
            if cgst_message_type(message) == GST_MESSAGE_APPLICATION {
                guard cgst_marker_value(message, &marker) != 0 else { continue }
                if marker == Self.exitMarker { return }
                onMessage(.marker(Int(marker)))
            } else if let decoded = decode(message) {
                onMessage(decoded)
            }
        }
    }

    private func decode(_ message: UnsafeMutablePointer<GstMessage>) -> BusMessage? {
        let source = cgst_message_source(message)
        let fromPipeline = UnsafeMutableRawPointer(source) == UnsafeMutableRawPointer(pipeline)
        switch cgst_message_type(message) {
        case GST_MESSAGE_STATE_CHANGED:
            guard fromPipeline else { return nil }
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            return .stateChanged(old: PipelineState(old), new: PipelineState(new), pending: PipelineState(pending))
        case GST_MESSAGE_ASYNC_DONE:
            return fromPipeline ? .asyncDone(sequence: gst_message_get_seqnum(message)) : nil
        case GST_MESSAGE_STREAM_START:
            return fromPipeline ? .streamStarted : nil
        case GST_MESSAGE_EOS:
            return fromPipeline ? .endOfStream : nil
        case GST_MESSAGE_ERROR:
            return .error(decodeError(message, source: source))
        case GST_MESSAGE_TAG:
            // Sinks post the tags that reached them, in stream order; demuxers of a next item
            // may post theirs before it plays.
            guard cgst_is_sink(source) != 0 else { return nil }
            var list: UnsafeMutablePointer<GstTagList>?
            gst_message_parse_tag(message, &list)
            guard let list else { return nil }
            defer { gst_tag_list_unref(list) }
            return .tags(StreamTags(
                title: tagString(list, "title"), artist: tagString(list, "artist"), album: tagString(list, "album"),
                organization: tagString(list, "organization"), genre: tagString(list, "genre")))
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 100
            gst_message_parse_buffering(message, &percent)
            return .buffering(percent: Int(percent))
        case GST_MESSAGE_DURATION_CHANGED:
            return .durationChanged
        case GST_MESSAGE_CLOCK_LOST:
            return .clockLost
        case GST_MESSAGE_LATENCY:
            return .latency
        default:
            return nil
        }
    }

    private func decodeError(_ message: UnsafeMutablePointer<GstMessage>, source: UnsafeMutablePointer<GstObject>?)
        -> PipelineError
    {
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &error, &debug)
        defer { g_free(debug) }
        let domain = error?.pointee.domain ?? 0
        let code = error?.pointee.code ?? 0
        let text = takeMessage(error) ?? "Unknown error"
        // The first line of the debug text is the source location; the rest says why.
        let debugLines = debug.map { String(cString: $0) }?.split(separator: "\n") ?? []
        let detail = debugLines.dropFirst().joined(separator: " ")
        var uri: String?
        if let found = cgst_uri_of(source, gstObject(pipeline)) {
            uri = String(cString: found)
            g_free(found)
        }
        let category: PipelineError.Category
        if domain == gst_resource_error_quark() {
            if cgst_is_sink(source) != 0 {
                category = .output
            } else {
                switch GstResourceError(rawValue: .init(code)) {
                case GST_RESOURCE_ERROR_NOT_FOUND: category = .notFound
                case GST_RESOURCE_ERROR_OPEN_WRITE, GST_RESOURCE_ERROR_WRITE, GST_RESOURCE_ERROR_NO_SPACE_LEFT:
                    category = .output
                default: category = .input
                }
            }
        } else if domain == gst_stream_error_quark() && cgst_is_source(source) != 0
            && GstStreamError(rawValue: .init(code)) == GST_STREAM_ERROR_FAILED
        {
            // A source element's flow failing is a read failure, not a decoding one: with libsoup 3,
            // souphttpsrc reports a refused or dropped connection only this way.
            category = .input
        } else if domain == gst_stream_error_quark() {
            category = .decode
        } else if domain == gst_core_error_quark()
            && GstCoreError(rawValue: .init(code)) == GST_CORE_ERROR_MISSING_PLUGIN
        {
            category = .decode
        } else {
            category = cgst_is_sink(source) != 0 ? .output : .other
        }
        return PipelineError(category: category, message: text, detail: detail, uri: uri)
    }
}

// MARK: - about-to-finish

/// What the `about-to-finish` handler calls; retained by the signal connection.
private final class HandoverRelay: Sendable {
    let nextURI: @Sendable (Int) -> String?
    let flushes: FlushCounter

    init(nextURI: @escaping @Sendable (Int) -> String?, flushes: FlushCounter) {
        self.nextURI = nextURI
        self.flushes = flushes
    }
}

/// Runs on a streaming thread. Setting `uri` inside the signal is what makes playbin prepare the
/// next item and switch to it without a gap.
private let aboutToFinish: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = {
    playbin, data in
    guard let playbin, let data else { return }
    let relay = Unmanaged<HandoverRelay>.fromOpaque(data).takeUnretainedValue()
    if let uri = relay.nextURI(relay.flushes.count.load(ordering: .acquiring)) { cgst_set_string(playbin, "uri", uri) }
}

private let releaseRelay: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<HandoverRelay>.fromOpaque(data).release()
}

// MARK: - Item switches

/// Keeps playbin's item switches and the pipeline's state changes to READY or NULL apart.
///
/// playbin switches to the next item on the streaming thread that drained the current one:
/// uridecodebin's `drained` signal runs playbin's handler, which emits `about-to-finish`, then
/// unlinks the current item's decoder and changes the state of the next item's (GStreamer 1.22
/// does this without regard to a concurrent shutdown). A state change of the pipeline to READY
/// or NULL at that moment deadlocks: the stopping thread holds an element's state lock and waits
/// for the streaming thread to leave, which waits for that state lock; or playbin's shutdown
/// swapped its groups and the streaming thread changes the state of its own element ("Trying to
/// join task ... from its thread would deadlock", then "Failed to deactivate pad ..., very bad").
///
/// So each `drained` emission is bracketed by a handler connected before playbin's and one
/// connected after it. A change to READY or NULL waits until no switch is under way (they take
/// milliseconds), and while it runs, a `drained` emission is stopped before it reaches playbin:
/// nothing is switched, the pipeline is stopping anyway.
private final class ItemSwitchGate: @unchecked Sendable {  // the state is only touched under `lock`
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let switched = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Changes to READY or NULL running now.
    private var stops = 0
    /// The threads running a switch now.
    private var switching: [pthread_t] = []
    /// How long a stop waits for switches at most: they take milliseconds, and a switch whose
    /// end was never seen must not keep the engine from stopping.
    private static let longestWait: Duration = .seconds(2)

    init() {
        pthread_mutex_init(lock, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(switched, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(switched)
        pthread_mutex_destroy(lock)
        switched.deallocate()
        lock.deallocate()
    }

    /// At the start of a `drained` emission, on its streaming thread: false if the emission must
    /// stop here (the pipeline is going to READY or NULL).
    func enter() -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard stops == 0 else { return false }
        switching.append(pthread_self())
        return true
    }

    /// At the end of a `drained` emission that `enter()` let through, on the same thread.
    func leave() {
        pthread_mutex_lock(lock)
        let me = pthread_self()
        if let index = switching.firstIndex(where: { pthread_equal($0, me) != 0 }) { switching.remove(at: index) }
        pthread_cond_broadcast(switched)
        pthread_mutex_unlock(lock)
    }

    /// Runs `change`, a state change of the pipeline to READY or NULL, once no switch is under
    /// way, and keeps switches from starting until it returns.
    func whileStopping<Result>(_ change: () -> Result) -> Result {
        pthread_mutex_lock(lock)
        stops += 1
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += Int(Self.longestWait.components.seconds)
        let me = pthread_self()
        // A switch on this very thread (the engine released by its provider) cannot end first.
        while !switching.isEmpty, !switching.contains(where: { pthread_equal($0, me) != 0 }) {
            if pthread_cond_timedwait(switched, lock, &deadline) == ETIMEDOUT { break }
        }
        pthread_mutex_unlock(lock)
        defer {
            pthread_mutex_lock(lock)
            stops -= 1
            pthread_mutex_unlock(lock)
        }
        return change()
    }
}

/// playbin made the source of a new item: a network source (souphttpsrc) gets the engine's
/// timeout for a server that stops answering. The timeout in seconds is the handler's data.
private let sourceSetup: @convention(c) (
    UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstElement>?, gpointer?
) -> Void = { _, source, data in
    guard let source else { return }
    _ = cgst_set_uint_if_present(gpointer(source), "timeout", guint(UInt(bitPattern: data)))
}

/// What playbin's `element-added` handler gives the children it hooks.
private final class ChildHooks: Sendable {
    let segmentRate: SegmentRate
    let switches: ItemSwitchGate

    init(segmentRate: SegmentRate, switches: ItemSwitchGate) {
        self.segmentRate = segmentRate
        self.switches = switches
    }
}

private let releaseChildHooks: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<ChildHooks>.fromOpaque(data).release()
}

/// Marks a uridecodebin as hooked: playbin adds the same one again for every other item.
private let hookedKey = "mpris-bridge-hooked"

/// playbin added a child: each item's uridecodebin gets the segment rate probe on its outputs
/// and the item switch brackets, once.
private let elementAdded: @convention(c) (
    UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstElement>?, gpointer?
) -> Void = { _, element, data in
    guard let element, let data, let name = cgst_factory_name(element),
        String(cString: name) == "uridecodebin", g_object_get_data(gobject(element), hookedKey) == nil
    else { return }
    g_object_set_data(gobject(element), hookedKey, gpointer(bitPattern: 1))
    let hooks = Unmanaged<ChildHooks>.fromOpaque(data).takeUnretainedValue()
    _ = cgst_connect(
        gpointer(element), "pad-added", unsafeBitCast(padAdded, to: GCallback.self),
        Unmanaged.passRetained(hooks.segmentRate).toOpaque(), releaseSegmentRateClosure)
    // Before playbin's own handler: playbin connects it after adding the element (and again each
    // time it reuses it), and handlers run in the order they were connected.
    _ = cgst_connect(
        gpointer(element), "drained", unsafeBitCast(switchStarts, to: GCallback.self),
        Unmanaged.passRetained(hooks.switches).toOpaque(), releaseSwitchGate)
    _ = g_signal_connect_data(
        gpointer(element), "drained", unsafeBitCast(switchEnded, to: GCallback.self),
        Unmanaged.passRetained(hooks.switches).toOpaque(), releaseSwitchGate, G_CONNECT_AFTER)
}

private let switchStarts: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { element, data in
    guard let element, let data else { return }
    if !Unmanaged<ItemSwitchGate>.fromOpaque(data).takeUnretainedValue().enter() {
        g_signal_stop_emission_by_name(gpointer(element), "drained")
    }
}

private let switchEnded: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, data in
    guard let data else { return }
    Unmanaged<ItemSwitchGate>.fromOpaque(data).takeUnretainedValue().leave()
}

private let releaseSwitchGate: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<ItemSwitchGate>.fromOpaque(data).release()
}

// MARK: - Segment rate probe

private final class SegmentRate: Sendable {
    let bits = Atomic<UInt64>(1.0.bitPattern)
}

private let padAdded: @convention(c) (
    UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
) -> Void = { _, pad, data in
    guard let pad, let data else { return }
    _ = gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, applySegmentRate,
        Unmanaged<SegmentRate>.fromOpaque(data).retain().toOpaque(), releaseSegmentRate)
}

private let releaseSegmentRateClosure: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<SegmentRate>.fromOpaque(data).release()
}

private let applySegmentRate: GstPadProbeCallback = { _, info, data in
    if let info, let data {
        let rate = Double(bitPattern: Unmanaged<SegmentRate>.fromOpaque(data).takeUnretainedValue().bits.load(ordering: .acquiring))
        cgst_probe_set_segment_rate(info, rate)
    }
    return GST_PAD_PROBE_OK
}

private let releaseSegmentRate: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<SegmentRate>.fromOpaque(data).release()
}

// MARK: - Output observer

/// The state of an output observer's probe, on the output's streaming thread.
private final class OutputObserver: Sendable {
    private struct State {
        var segment: TimeSegment?
        var stream = -1
        var flushes = 0
    }

    /// A copy of a TIME segment.
    private struct TimeSegment: @unchecked Sendable {  // a plain value; its only pointers are unused reserved fields
        var segment: GstSegment
    }

    private let state = Mutex(State())
    private let observer: @Sendable (OutputBuffer) -> Void

    init(_ observer: @escaping @Sendable (OutputBuffer) -> Void) { self.observer = observer }

    func handle(_ info: UnsafeMutablePointer<GstPadProbeInfo>) {
        guard let data = info.pointee.data else { return }
        if info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
            let buffer = data.assumingMemoryBound(to: GstBuffer.self).pointee
            let observed = state.withLock { state -> OutputBuffer? in
                guard var segment = state.segment?.segment, buffer.pts != cgst_clock_time_none() else { return nil }
                let duration = buffer.duration == cgst_clock_time_none() ? 0 : buffer.duration
                let times = [
                    gst_segment_to_running_time(&segment, GST_FORMAT_TIME, buffer.pts),
                    gst_segment_to_running_time(&segment, GST_FORMAT_TIME, buffer.pts + duration),
                    gst_segment_to_stream_time(&segment, GST_FORMAT_TIME, buffer.pts),
                    gst_segment_to_stream_time(&segment, GST_FORMAT_TIME, buffer.pts + duration),
                ]
                // Outside the segment (clipped): it does not play.
                guard !times.contains(cgst_clock_time_none()) else { return nil }
                let (start, end, position, endPosition) = (times[0], times[1], times[2], times[3])
                return OutputBuffer(
                    stream: state.stream, flushes: state.flushes, start: .nanoseconds(Int64(start)),
                    end: .nanoseconds(Int64(end)), position: .nanoseconds(Int64(position)),
                    endPosition: .nanoseconds(Int64(endPosition)))
            }
            if let observed { observer(observed) }
            return
        }
        let event = data.assumingMemoryBound(to: GstEvent.self)
        switch event.pointee.type {
        case GST_EVENT_STREAM_START:
            state.withLock { $0.stream += 1 }
        case GST_EVENT_FLUSH_STOP:
            state.withLock { $0.flushes += 1 }
        case GST_EVENT_SEGMENT:
            var segment: UnsafePointer<GstSegment>?
            gst_event_parse_segment(event, &segment)
            let copy = segment.flatMap { $0.pointee.format == GST_FORMAT_TIME ? TimeSegment(segment: $0.pointee) : nil }
            state.withLock { $0.segment = copy }
        default:
            break
        }
    }
}

private let observeBuffer: GstPadProbeCallback = { _, info, data in
    if let info, let data { Unmanaged<OutputObserver>.fromOpaque(data).takeUnretainedValue().handle(info) }
    return GST_PAD_PROBE_OK
}

private let releaseOutputObserver: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<OutputObserver>.fromOpaque(data).release()
}

// MARK: - Flush probe

private final class FlushCounter: Sendable {
    let count = Atomic<Int>(0)
}

private let countFlushStop: GstPadProbeCallback = { _, info, data in
    if let info, let data, cgst_probe_is_flush_stop(info) != 0 {
        Unmanaged<FlushCounter>.fromOpaque(data).takeUnretainedValue().count.add(1, ordering: .releasing)
    }
    return GST_PAD_PROBE_OK
}

private let releaseFlushCounter: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<FlushCounter>.fromOpaque(data).release()
}

// MARK: - Helpers

/// The message of `error`, which is freed; nil if there is no error.
private func takeMessage(_ error: UnsafeMutablePointer<GError>?) -> String? {
    guard let error else { return nil }
    defer { g_error_free(error) }
    return error.pointee.message.map { String(cString: $0) } ?? "Unknown error"
}

/// A string tag, with multiple values joined by GStreamer (", " for artists); nil if absent.
private func tagString(_ list: UnsafeMutablePointer<GstTagList>, _ tag: String) -> String? {
    var value: UnsafeMutablePointer<gchar>?
    guard gst_tag_list_get_string(list, tag, &value) != 0, let value else { return nil }
    defer { g_free(value) }
    return String(cString: value)
}

private func gobject(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GObject> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GObject.self)
}

private func gstObject(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstObject> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstObject.self)
}

private func pipelinePointer(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstPipeline> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstPipeline.self)
}

private func binPointer(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstBin> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstBin.self)
}

/// `duration` in whole nanoseconds, clamped to what a GstClockTime offset can hold.
func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    guard seconds < Int64.max / 1_000_000_000 else { return Int64.max }
    guard seconds >= 0 else { return 0 }
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
}
