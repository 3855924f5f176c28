// The bus thread: one thread per pipeline blocked in `gst_bus_timed_pop_filtered` without a
// timeout (no GMainLoop, no wake-up unless a message arrives), decoding each message into a
// `BusMessage`.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Playback
import Synchronization

// MARK: - The bus thread

/// Reads the bus on its own thread until the exit marker arrives. Owns references to the bus
/// and the pipeline so that both outlive the thread.
final class BusLoop: @unchecked Sendable {  // the pointers are immutable and GStreamer objects are refcounted thread-safely
    static let exitMarker: gint64 = -1
    /// Messages the engine uses; the others are dropped by `gst_bus_timed_pop_filtered`.
    private static let wanted: GstMessageType = {
        let types = [
            GST_MESSAGE_STATE_CHANGED, GST_MESSAGE_ASYNC_DONE, GST_MESSAGE_STREAM_START, GST_MESSAGE_EOS,
            GST_MESSAGE_ERROR, GST_MESSAGE_TAG, GST_MESSAGE_BUFFERING, GST_MESSAGE_DURATION_CHANGED,
            GST_MESSAGE_CLOCK_LOST, GST_MESSAGE_LATENCY, GST_MESSAGE_APPLICATION, GST_MESSAGE_REQUEST_STATE,
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
        case GST_MESSAGE_REQUEST_STATE:
            // The sound server corks or uncorks the output (an interruption: a call, navigation).
            var state = GST_STATE_VOID_PENDING
            gst_message_parse_request_state(message, &state)
            return .stateRequested(PipelineState(state))
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
