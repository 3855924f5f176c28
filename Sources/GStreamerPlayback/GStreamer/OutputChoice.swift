// The output's chosen device and volume (`OutputChoice`), and where the volume is applied
// (`VolumePlacement`): on a pulsesink's stream, followed when a mixer changes it, else on the
// volume element in front of the output.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder.

import CGStreamer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The output device and the volume chosen for the audio sink, shared with the handler that
/// configures the sinks an autodetecting sink adds.
final class OutputChoice: Sendable {
    let device = Mutex<DeviceReference?>(nil)
    /// The volume and mute asked for, or last set on the stream by someone else (a mixer). Held
    /// while it is applied, so that a sink being added and a change being made never leave the
    /// volume applied twice (on the element and the stream).
    let volume = Mutex(ChosenVolume())
    /// The thread applying the chosen volume, 0 when none: setting a pulsesink's volume notifies
    /// at once on that thread, which is the player's own change, not a mixer's.
    private let applyingThread = Atomic<UInt>(0)
    /// Told the linear volume a mixer gave the stream (see `followStreamVolume`).
    let onVolumeChangedOutside = Mutex<(@Sendable (Double) -> Void)?>(nil)

    /// Applies the chosen volume, changed by `change`, in `sink` (the audio sink bin).
    func applyVolume(in sink: UnsafeMutablePointer<GstBin>, _ change: (inout ChosenVolume) -> Void = { _ in }) {
        volume.withLock { chosen in
            change(&chosen)
            applyingThread.store(UInt(pthread_self()), ordering: .releasing)
            defer { applyingThread.store(0, ordering: .releasing) }
            VolumePlacement.apply(chosen, in: sink)
        }
    }

    /// Whether the calling thread is applying the chosen volume.
    fileprivate var isApplyingOnThisThread: Bool {
        applyingThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Follows the volume and mute of `element`'s stream when it is a pulsesink, so that a change
    /// made in a mixer (the desktop's per-application volume) becomes the chosen one: shown to
    /// remotes, and kept for the next stream instead of being undone at the next track.
    func followStreamVolume(of element: UnsafeMutablePointer<GstElement>) {
        guard let factory = cgst_factory_name(element), String(cString: factory) == "pulsesink" else { return }
        for property in ["notify::volume", "notify::mute"] {
            _ = cgst_connect(
                gpointer(element), property, unsafeBitCast(pulseVolumeNotified, to: GCallback.self),
                Unmanaged.passRetained(self).toOpaque(), releaseOutputChoice)
        }
    }

    /// The stream's volume changed on the server (pulsesink notifies on its streaming thread after
    /// a change by anyone, the player's own included; reading the property asks the server). It
    /// is read under the lock, after any change already applied: an echo of a change superseded
    /// since then reads the latest one, which is the chosen one, not a mixer's.
    fileprivate func streamVolumeNotified(by element: gpointer) {
        guard !isApplyingOnThisThread else { return }
        let changedLevel = volume.withLock { chosen -> Double? in
            let level = cgst_get_double(element, "volume")
            guard level.isFinite else { return nil }
            chosen.isMuted = cgst_get_boolean(element, "mute") != 0
            // More than the server's rounding (it keeps a volume in steps of 1/65536 of a cube root).
            guard abs(chosen.level - level) > 0.001 else { return nil }
            chosen.level = level
            return level
        }
        if let changedLevel, let report = onVolumeChangedOutside.withLock({ $0 }) { report(changedLevel) }
    }
}

/// `notify::volume` and `notify::mute` of a pulsesink (`data`: its `OutputChoice`).
private let pulseVolumeNotified: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { element, _, data in
    guard let element, let data else { return }
    Unmanaged<OutputChoice>.fromOpaque(data).takeUnretainedValue().streamVolumeNotified(by: element)
}

/// The linear volume (0 silent, 1 unity, up to 10) and mute of the output.
struct ChosenVolume: Sendable {
    var level = 1.0
    var isMuted = false
}

/// Where the volume is applied. A pulsesink takes it as its stream's volume on the sound server,
/// as mpd and VLC set it: a change is heard at once, while audio already queued at the server
/// (up to `OutputPacing.pulseBuffer`) would keep the old level if an element in front of the sink
/// applied it. Any other output gets it from the volume element in front of it.
enum VolumePlacement {
    /// Applies `chosen` inside `sink` (the audio sink bin): on every pulsesink's stream, with the
    /// volume element at unity, or, with no pulsesink in the bin, on the volume element.
    static func apply(_ chosen: ChosenVolume, in sink: UnsafeMutablePointer<GstBin>) {
        guard let volumeElement = gst_bin_get_by_name(sink, Playbin.volumeName) else { return }
        defer { gst_object_unref(gpointer(volumeElement)) }
        var placing = StreamVolumePlacing(chosen: chosen)
        cgst_for_each_element(sink, applyStreamVolume, &placing)
        let onElement = placing.onStream ? ChosenVolume() : chosen
        cgst_set_double(gpointer(volumeElement), "volume", onElement.level)
        cgst_set_boolean(gpointer(volumeElement), "mute", onElement.isMuted ? 1 : 0)
    }
}

/// The volume `applyStreamVolume` gives each pulsesink, and whether it found one.
private struct StreamVolumePlacing {
    let chosen: ChosenVolume
    var onStream = false
}

/// Follows the stream volume of a pulsesink of the description (`data`: the `OutputChoice`).
let followStreamVolume: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { element, data in
    guard let element, let data else { return }
    Unmanaged<OutputChoice>.fromOpaque(data).takeUnretainedValue().followStreamVolume(of: element)
}

/// Gives a pulsesink the chosen volume (`data`: a `StreamVolumePlacing`, told it found one). Set
/// before its stream opens, it is the stream's volume from the first sample (and the sound
/// server's stream-restore does not replace it).
private let applyStreamVolume: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { element, data in
    guard let element, let data, let factory = cgst_factory_name(element), String(cString: factory) == "pulsesink"
    else { return }
    let placing = data.assumingMemoryBound(to: StreamVolumePlacing.self)
    placing.pointee.onStream = true
    cgst_set_double(gpointer(element), "volume", placing.pointee.chosen.level)
    cgst_set_boolean(gpointer(element), "mute", placing.pointee.chosen.isMuted ? 1 : 0)
}
