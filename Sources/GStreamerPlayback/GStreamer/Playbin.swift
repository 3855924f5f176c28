// `Playbin`: the pipeline (playbin with the volume and tempo elements in front of the output) and its
// controls: state changes, queries, seeks, rate, volume.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Playback
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
    /// The audio sink bin (the volume element and the description's elements).
    private let sink: UnsafeMutablePointer<GstElement>
    private let outputChoice = OutputChoice()
    /// Whether ``selectOutput(_:)`` can point the sink at a device.
    let canSelectOutput: Bool
    /// A pulsesink kept open (READY, no stream) while this playbin lives, when the output is the
    /// sound server's. pulsesink shares one PulseAudio main loop among its instances and frees it
    /// when the last one closes, yet handles a tag event from a streaming thread by locking that
    /// loop before it looks at its own stream: a tag arriving while the only sink closes (a seek
    /// that reloads, a stop) then aborts the process. This sink keeps the loop alive.
    private let mainLoopKeeper: UnsafeMutablePointer<GstElement>?
    /// The named pipe a filesink output writes to, held open across loads (see `FIFOKeeper`).
    private let fifoKeeper: FIFOKeeper?

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
        // two pads, about 4 KB a track), which a queue played for days would pile up. A pulsesink
        // takes the volume on its stream instead (`VolumePlacement`).
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
        // The sinks in the description have their role now; one an autodetecting sink picks
        // later gets it as it is added.
        cgst_for_each_element(binPointer(sink), giveStreamRole, nil)
        cgst_for_each_element(binPointer(sink), paceElement, nil)
        outputChoice.applyVolume(in: binPointer(sink))
        cgst_for_each_element(binPointer(sink), followStreamVolume, Unmanaged.passUnretained(outputChoice).toOpaque())
        _ = cgst_connect(
            gpointer(sink), "deep-element-added", unsafeBitCast(sinkElementAdded, to: GCallback.self),
            Unmanaged.passRetained(outputChoice).toOpaque(), releaseOutputChoice)
        // The outputs a device monitor finds are sound-server sinks: an autodetecting sink or a
        // pulsesink can be pointed at one; another description fixes the output.
        canSelectOutput = Self.canSelectOutput(sink)
        mainLoopKeeper = canSelectOutput ? Self.openPulseSink() : nil
        fifoKeeper = cgst_filesink_location(binPointer(sink)).map { location in
            defer { g_free(location) }
            return FIFOKeeper(path: String(cString: location))
        }
        self.sink = sink
        _ = gst_object_ref(gpointer(sink))
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
        Self.setFreshAudioFilter(on: element, replayGain: .off)
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
        // Decoders and the sink an autodetecting sink picks hand audio on in larger pieces.
        _ = cgst_connect(
            gpointer(element), "deep-element-added", unsafeBitCast(pacedElementAdded, to: GCallback.self), nil, nil)
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
        if let mainLoopKeeper {
            _ = gst_element_set_state(mainLoopKeeper, GST_STATE_NULL)
            gst_object_unref(gpointer(mainLoopKeeper))
        }
        gst_object_unref(gpointer(sink))
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

    /// Gives playbin a new audio filter: `scaletempo`, after ReplayGain's `rgvolume` and
    /// `rglimiter` unless `replayGain` is off. Call in the NULL state. Without the ReplayGain
    /// elements the filter is `scaletempo` alone (``hasReplayGain`` says so beforehand).
    ///
    /// GStreamer 1.22's scaletempo frees its buffers when it stops but keeps their fill level,
    /// so a restart at another rate can copy from a freed buffer (a crash found by fuzzing:
    /// rate changes across track changes). A fresh element per run has no such past.
    /// rgvolume has no switch to turn it off, so "off" is a filter without it.
    func renewAudioFilter(replayGain: ReplayGainMode) {
        Self.setFreshAudioFilter(on: element, replayGain: replayGain)
    }

    private static func setFreshAudioFilter(
        on element: UnsafeMutablePointer<GstElement>, replayGain: ReplayGainMode
    ) {
        if replayGain != .off {
            // The limiter keeps a gain above 0 dB from clipping (a quiet track brought up).
            let description =
                "audioconvert ! rgvolume name=\(replayGainName) album-mode=\(replayGain == .album) ! rglimiter"
                + " ! audioconvert ! scaletempo"
            var error: UnsafeMutablePointer<GError>?
            let filter = gst_parse_bin_from_description(description, 1, &error)
            if takeMessage(error) == nil, let filter {
                cgst_set_object(element, "audio-filter", filter)
                return
            }
            if let filter { gst_object_unref(gpointer(filter)) }
        }
        guard let tempo = gst_element_factory_make("scaletempo", nil) else { return }
        cgst_set_object(element, "audio-filter", tempo)
    }

    static let replayGainName = "mprisbridge-replaygain"

    /// Whether a sink bin plays through the sound server's sinks a device monitor finds: an
    /// autodetecting sink or a pulsesink can be pointed at one; another fixes the output.
    private static func canSelectOutput(_ sink: UnsafeMutablePointer<GstElement>) -> Bool {
        let routable: [String] = ["autoaudiosink", "pulsesink"]
        return routable.contains { factory in cgst_bin_has_factory(binPointer(sink), factory) != 0 }
    }

    /// A pulsesink in READY (connected to the sound server, no stream), or nil when there is no
    /// pulsesink or no server to connect to.
    private static func openPulseSink() -> UnsafeMutablePointer<GstElement>? {
        guard let keeper = gst_element_factory_make("pulsesink", nil) else { return nil }
        _ = gst_object_ref_sink(gpointer(keeper))
        guard gst_element_set_state(keeper, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE else {
            _ = gst_element_set_state(keeper, GST_STATE_NULL)
            gst_object_unref(gpointer(keeper))
            return nil
        }
        return keeper
    }

    /// Closes the kept pulsesink (see `mainLoopKeeper`): with no pulsesink open, PulseAudio's
    /// shared main loop, its thread and the connection to the server (with its shared memory)
    /// go too. Only while the pipeline is stopped (NULL): no streaming thread then sends the
    /// tag that needs the loop.
    func closeMainLoopKeeper() {
        if let mainLoopKeeper { _ = gst_element_set_state(mainLoopKeeper, GST_STATE_NULL) }
    }

    /// Opens the kept pulsesink again (READY) before the pipeline runs; nothing if it is open.
    func openMainLoopKeeper() {
        if let mainLoopKeeper { _ = gst_element_set_state(mainLoopKeeper, GST_STATE_READY) }
    }

    /// ``canSelectOutput`` of a Playbin made with `description`, without making one.
    static func canSelectOutput(audioSink description: String) -> Bool {
        // Without either name it cannot; GStreamer is not even loaded to say so.
        guard description.contains("autoaudiosink") || description.contains("pulsesink"),
            (try? GStreamerLibrary.initialize()) != nil
        else { return false }
        var error: UnsafeMutablePointer<GError>?
        let parsed = gst_parse_bin_from_description(description, 1, &error)
        guard takeMessage(error) == nil, let parsed else {
            if let parsed { gst_object_unref(gpointer(parsed)) }
            return false
        }
        _ = gst_object_ref_sink(gpointer(parsed))
        defer { gst_object_unref(gpointer(parsed)) }
        return canSelectOutput(parsed)
    }

    /// Points the output at `device` (nil: the system's default, for sinks made from now on).
    /// A running sink that can move its stream (pulsesink) moves it at once, without stopping
    /// the pipeline; a sink made later is pointed there as it is added.
    func selectOutput(_ device: DeviceReference?) {
        outputChoice.device.withLock { $0 = device }
        if let device {
            cgst_reconfigure_sinks(binPointer(sink), device.device)
        } else {
            cgst_reset_sink_devices(binPointer(sink))
        }
    }

    /// Whether the ReplayGain elements are installed.
    static let hasReplayGain: Bool = {
        guard (try? GStreamerLibrary.initialize()) != nil else { return false }
        return ["rgvolume", "rglimiter"].allSatisfy { name in
            guard let factory = gst_element_factory_find(name) else { return false }
            gst_object_unref(gpointer(factory))
            return true
        }
    }()

    /// Switches the ReplayGain of the current filter between track and album gains, at once (what
    /// is already queued for the output, up to 2 s on PulseAudio, plays at the old gain). False when the
    /// filter has no ReplayGain (it was made with ReplayGain off).
    func setReplayGainAlbumMode(_ album: Bool) -> Bool {
        guard let filter = cgst_get_object(gpointer(element), "audio-filter") else { return false }
        defer { gst_object_unref(filter) }
        guard cgst_is_bin(filter) != 0,
            let replayGain = gst_bin_get_by_name(UnsafeMutableRawPointer(filter).assumingMemoryBound(to: GstBin.self), Self.replayGainName)
        else { return false }
        defer { gst_object_unref(gpointer(replayGain)) }
        cgst_set_boolean(gpointer(replayGain), "album-mode", album ? 1 : 0)
        return true
    }

    /// Sets the URI playbin opens on its next start from READY or NULL.
    func setURI(_ uri: String) {
        fifoKeeper?.holdOpen()
        cgst_set_string(element, "uri", uri)
    }

    /// Asks for `state`; see ``StateChangeResult``. First waits for an item switch under way on
    /// a streaming thread to finish (milliseconds). Going to NULL or READY keeps new ones from
    /// starting and returns once the streaming threads have stopped; going to PAUSED or PLAYING
    /// holds new ones until it returns (see `ItemSwitchGate`). Not on a streaming thread of this
    /// pipeline.
    @discardableResult
    func setState(_ state: PipelineState) -> StateChangeResult {
        let change = { gst_element_set_state(self.element, state.gstState) }
        let result = state == .ready || state == .null ? switches.whileStopping(change) : switches.whileChanging(change)
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
        get { outputChoice.volume.withLock { $0.level } }
        set { changeVolume { $0.level = newValue } }
    }

    var isMuted: Bool {
        get { outputChoice.volume.withLock { $0.isMuted } }
        set { changeVolume { $0.isMuted = newValue } }
    }

    /// Called on a streaming thread with the linear volume a mixer gave the output's stream
    /// (the sound server's per-application volume); ``volume`` already reads it.
    func onVolumeChangedOutside(_ report: @escaping @Sendable (Double) -> Void) {
        outputChoice.onVolumeChangedOutside.withLock { $0 = report }
    }

    /// Changes the chosen volume and applies it where it belongs (`VolumePlacement`).
    private func changeVolume(_ change: (inout ChosenVolume) -> Void) {
        outputChoice.applyVolume(in: binPointer(sink), change)
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
