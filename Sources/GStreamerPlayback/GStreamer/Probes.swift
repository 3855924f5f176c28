// Pad probes: the segment rate applied to each new stream, the output observer (what reaches the
// sink, and when), and the count of flushes a seek causes.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Synchronization

// MARK: - Segment rate probe

final class SegmentRate: Sendable {
    let bits = Atomic<UInt64>(1.0.bitPattern)
}

let padAdded: @convention(c) (
    UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, gpointer?
) -> Void = { _, pad, data in
    guard let pad, let data else { return }
    _ = gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, applySegmentRate,
        Unmanaged<SegmentRate>.fromOpaque(data).retain().toOpaque(), releaseSegmentRate)
}

let releaseSegmentRateClosure: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<SegmentRate>.fromOpaque(data).release()
}

let applySegmentRate: GstPadProbeCallback = { _, info, data in
    if let info, let data {
        let rate = Double(bitPattern: Unmanaged<SegmentRate>.fromOpaque(data).takeUnretainedValue().bits.load(ordering: .acquiring))
        cgst_probe_set_segment_rate(info, rate)
    }
    return GST_PAD_PROBE_OK
}

let releaseSegmentRate: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<SegmentRate>.fromOpaque(data).release()
}

// MARK: - Output observer

/// The state of an output observer's probe, on the output's streaming thread.
final class OutputObserver: Sendable {
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

let observeBuffer: GstPadProbeCallback = { _, info, data in
    if let info, let data { Unmanaged<OutputObserver>.fromOpaque(data).takeUnretainedValue().handle(info) }
    return GST_PAD_PROBE_OK
}

let releaseOutputObserver: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<OutputObserver>.fromOpaque(data).release()
}

// MARK: - Flush probe

final class FlushCounter: Sendable {
    let count = Atomic<Int>(0)
}

let countFlushStop: GstPadProbeCallback = { _, info, data in
    if let info, let data, cgst_probe_is_flush_stop(info) != 0 {
        Unmanaged<FlushCounter>.fromOpaque(data).takeUnretainedValue().count.add(1, ordering: .releasing)
    }
    return GST_PAD_PROBE_OK
}

let releaseFlushCounter: GDestroyNotify = { data in
    guard let data else { return }
    Unmanaged<FlushCounter>.fromOpaque(data).release()
}
