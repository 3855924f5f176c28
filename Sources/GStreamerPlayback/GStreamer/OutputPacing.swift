// Output pacing: how often the streaming threads hand audio on while playing.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder.

import CGStreamer
import Synchronization

/// With GStreamer's defaults every decoded packet (23 ms of Vorbis, 26 ms of MP3) crosses
/// playsink's queue on its own, and pulsesink writes 10 ms segments into a 200 ms buffer: each a
/// wake-up of the decoding thread, the queue's thread and the sound server's client thread, a few
/// hundred a second in all, and as many requests for the sound server. These settings hand audio
/// on in larger pieces and keep as much queued at the server as a client that leaves the buffer
/// to the server (mpd) does; none delays what a listener hears on a command: a pause corks the
/// server's stream, a seek flushes it, and the volume is the stream's (`VolumePlacement`).
enum OutputPacing {
    /// The least each audio decoder gathers before it pushes (GstAudioDecoder's `min-latency`).
    static let decodedBuffer: Duration = .milliseconds(100)
    /// pulsesink's segment (`latency-time`): the server asks for this much at a time.
    static let pulseSegment: Duration = .milliseconds(250)
    /// What pulsesink keeps queued at the server (`buffer-time`, GStreamer's default 200 ms): the
    /// server's own default for a client that sets none, 2 s. The server's sink then renders
    /// larger pieces less often; what stays queued is heard late only for changes made in front
    /// of the sink (a ReplayGain mode), not for a pause, a seek or the volume (Benchmarks/README.md,
    /// "Playing on PulseAudio").
    static let pulseBuffer: Duration = .seconds(2)

    static func microseconds(_ duration: Duration) -> gint64 { gint64(nanoseconds(duration) / 1000) }
}

/// Paces an element of the pipeline as it is added: an audio decoder gathers its output, a
/// pulsesink gets its segment and buffer sizes. A value a sink description set is kept.
let paceElement: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { element, _ in
    guard let element else { return }
    if cgst_is_audio_decoder(element) != 0 {
        _ = cgst_set_int64_if_default(gpointer(element), "min-latency", gint64(nanoseconds(OutputPacing.decodedBuffer)))
    } else if let factory = cgst_factory_name(element), String(cString: factory) == "pulsesink" {
        _ = cgst_set_int64_if_default(gpointer(element), "latency-time", OutputPacing.microseconds(OutputPacing.pulseSegment))
        _ = cgst_set_int64_if_default(gpointer(element), "buffer-time", OutputPacing.microseconds(OutputPacing.pulseBuffer))
    }
}

/// playbin's `deep-element-added`: every element added at any depth is paced (each item's
/// decoder, the sink an autodetecting sink picks), and the queues between streaming threads get
/// gates: playsink's queue in front of the sink, and each multiqueue decodebin puts behind a
/// demuxer.
let pacedElementAdded: @convention(c) (
    UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstElement>?, gpointer?
) -> Void = { _, _, element, _ in
    guard let element else { return }
    paceElement(element, nil)
    guard let factory = cgst_factory_name(element) else { return }
    switch String(cString: factory) {
    case "queue":
        guard let name = gst_object_get_name(gstObject(element)) else { return }
        defer { g_free(name) }
        guard String(cString: name) == "aqueue", let input = gst_element_get_static_pad(element, "sink") else { return }
        defer { gst_object_unref(gpointer(input)) }
        guard let output = gst_element_get_static_pad(element, "src") else { return }
        defer { gst_object_unref(gpointer(output)) }
        OutputPacing.playsinkQueueGate().install(input: input, output: output)
    case "multiqueue":
        _ = cgst_connect(gpointer(element), "pad-added", unsafeBitCast(multiqueuePadAdded, to: GCallback.self), nil, nil)
    default:
        break
    }
}

// MARK: - Queue gates

/// Hysteresis for a queue between two streaming threads. A full queue wakes its producer at
/// every item its consumer takes (GstQueue and multiqueue signal each removal), so a demuxer and
/// a decoder, or a decoder and the sink, trade places once per packet. A gate holds the producer
/// in a blocking pad probe once the queue holds `high`, and lets it go once the consumer has
/// taken it down to `low`: the producer then refills in one run. The queue's own limits stay
/// above `high`, so it never blocks the producer itself.
///
/// GStreamer's blocking probes are released by a flush and by the pads' deactivation; a block
/// left from before (the queue emptied by a flush or a stop) lets the next item through and
/// removes itself, since the probe looks at the level again.
final class QueueGate: Sendable {
    enum Level: Sendable {
        /// `current-level-time` of the queue element (GstQueue), nanoseconds.
        case queueTime
        /// `current-level-buffers` of the pads (a multiqueue's pair).
        case padBuffers
    }

    private struct State {
        /// The blocking probe on the input while one is installed, else 0.
        var block: gulong = 0
        /// Items the consumer has taken: the gate engages only after `engageAfter` of them.
        var taken = 0
        var disabled = false
    }

    let level: Level
    let high: UInt64
    let low: UInt64
    /// The name of the queue's input pad, which the consumer's probe unblocks.
    let inputName: String
    let engageAfter: Int
    /// For a multiqueue: the least `max-size-buffers` it must have once the gate engages.
    let queueLimit: UInt32?
    private let state = Mutex(State())

    init(level: Level, high: UInt64, low: UInt64, inputName: String, engageAfter: Int = 0, queueLimit: UInt32? = nil) {
        self.level = level
        self.high = high
        self.low = low
        self.inputName = inputName
        self.engageAfter = engageAfter
        self.queueLimit = queueLimit
    }

    /// Hooks the gate on a queue's input and output pads.
    func install(input: UnsafeMutablePointer<GstPad>, output: UnsafeMutablePointer<GstPad>) {
        _ = gst_pad_add_probe(
            input, cgst_probe_data(), gateProducer, Unmanaged.passRetained(self).toOpaque(), releaseQueueGate)
        _ = gst_pad_add_probe(
            output, cgst_probe_data(), gateConsumer, Unmanaged.passRetained(self).toOpaque(), releaseQueueGate)
    }

    private func currentLevel(at pad: UnsafeMutablePointer<GstPad>) -> UInt64 {
        switch level {
        case .padBuffers:
            return UInt64(cgst_get_unsigned(gpointer(pad), "current-level-buffers"))
        case .queueTime:
            guard let queue = gst_pad_get_parent_element(pad) else { return 0 }
            defer { gst_object_unref(gpointer(queue)) }
            return UInt64(cgst_get_unsigned(gpointer(queue), "current-level-time"))
        }
    }

    /// On the producer's thread, before an item enters the queue.
    fileprivate func producing(at input: UnsafeMutablePointer<GstPad>) {
        guard currentLevel(at: input) >= high else { return }
        state.withLock { state in
            guard !state.disabled, state.block == 0, state.taken >= engageAfter else { return }
            state.block = gst_pad_add_probe(
                input, cgst_probe_block_data(), gateBlocked, Unmanaged.passRetained(self).toOpaque(),
                releaseQueueGate)
        }
    }

    /// In the blocking probe, on the producer's thread: whether to keep the item waiting.
    fileprivate func keepsBlocking(at input: UnsafeMutablePointer<GstPad>, probe: gulong) -> Bool {
        let level = currentLevel(at: input)
        return state.withLock { state in
            guard state.block == probe else { return false }
            if level >= high, !state.disabled { return true }
            state.block = 0
            return false
        }
    }

    /// On the consumer's thread, as an item leaves the queue.
    fileprivate func consuming(at output: UnsafeMutablePointer<GstPad>) {
        let level = currentLevel(at: output)
        let engaging = state.withLock { state -> Bool in
            state.taken += 1
            return state.taken == engageAfter
        }
        if engaging, engageAfter > 0 { engage(at: output) }
        guard level <= low else { return }
        state.withLock { state in
            guard state.block != 0, let queue = gst_pad_get_parent_element(output) else { return }
            defer { gst_object_unref(gpointer(queue)) }
            if let input = gst_element_get_static_pad(queue, inputName) {
                gst_pad_remove_probe(input, state.block)
                gst_object_unref(gpointer(input))
            }
            state.block = 0
        }
    }

    /// A multiqueue's gate engages once data flows out (decodebin has exposed its pads: before,
    /// it may wait for the multiqueue to overrun), for one audio stream only (streams that share
    /// the demuxer's thread may wait for each other), never in buffering mode (a network
    /// stream's queue fills to its own marks); its limit is raised above `high`.
    private func engage(at output: UnsafeMutablePointer<GstPad>) {
        guard let queue = gst_pad_get_parent_element(output) else { return }
        defer { gst_object_unref(gpointer(queue)) }
        let suitable =
            cgst_src_pad_count(queue) == 1 && cgst_pad_carries_audio(output) != 0
            && cgst_get_boolean(gpointer(queue), "use-buffering") == 0
        if suitable, let queueLimit {
            let limit = cgst_get_uint(gpointer(queue), "max-size-buffers")
            if limit != 0, limit < queueLimit { cgst_set_uint(gpointer(queue), "max-size-buffers", queueLimit) }
        }
        if !suitable { state.withLock { $0.disabled = true } }
    }
}

let gateProducer: GstPadProbeCallback = { pad, _, data in
    if let pad, let data { Unmanaged<QueueGate>.fromOpaque(data).takeUnretainedValue().producing(at: pad) }
    return GST_PAD_PROBE_OK
}

let gateBlocked: GstPadProbeCallback = { pad, info, data in
    guard let pad, let info, let data,
        Unmanaged<QueueGate>.fromOpaque(data).takeUnretainedValue().keepsBlocking(at: pad, probe: info.pointee.id)
    else { return GST_PAD_PROBE_REMOVE }
    return GST_PAD_PROBE_OK
}

let gateConsumer: GstPadProbeCallback = { pad, _, data in
    if let pad, let data { Unmanaged<QueueGate>.fromOpaque(data).takeUnretainedValue().consuming(at: pad) }
    return GST_PAD_PROBE_OK
}

let releaseQueueGate: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<QueueGate>.fromOpaque(data).release()
}

extension OutputPacing {
    /// playsink's queue in front of the audio sink (1 s by default): decoded audio.
    static func playsinkQueueGate() -> QueueGate {
        QueueGate(level: .queueTime, high: 500_000_000, low: 200_000_000, inputName: "sink")
    }

    /// One stream of decodebin's multiqueue behind a demuxer (5 packets while playing).
    static func demuxerQueueGate(inputName: String) -> QueueGate {
        QueueGate(level: .padBuffers, high: 32, low: 8, inputName: inputName, engageAfter: 16, queueLimit: 48)
    }
}

/// A multiqueue added a pad: once a stream has both its input (`sink_N`) and output
/// (`src_N`), it gets a gate.
let multiqueuePadAdded: @convention(c) (
    UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
) -> Void = { element, pad, _ in
    guard let element, let pad, let name = gst_object_get_name(UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GstObject.self)) else { return }
    let padName = String(cString: name)
    g_free(name)
    let isInput = padName.hasPrefix("sink_")
    guard isInput || padName.hasPrefix("src_") else { return }
    let suffix = padName.drop { $0 != "_" }
    let inputName = "sink" + suffix
    let otherName = isInput ? "src" + suffix : inputName
    guard let other = gst_element_get_static_pad(element, otherName) else { return }
    defer { gst_object_unref(gpointer(other)) }
    OutputPacing.demuxerQueueGate(inputName: inputName).install(
        input: isInput ? pad : other, output: isInput ? other : pad)
}
