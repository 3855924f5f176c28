// `DeviceMonitor`: the audio outputs GStreamer's device monitor finds (`Audio/Sink`), followed
// as they come and go on a thread of their own.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder.

import CGStreamer
import Playback
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A device GStreamer found (a sound server's sink, a sound card), kept alive by a reference.
final class DeviceReference: @unchecked Sendable {  // the pointer never changes; GstDevice is refcounted and thread-safe
    let device: UnsafeMutablePointer<GstDevice>

    /// Takes a new reference to `device`.
    init(_ device: UnsafeMutablePointer<GstDevice>) {
        _ = gst_object_ref(gpointer(device))
        self.device = device
    }

    deinit { gst_object_unref(gpointer(device)) }
}

/// An output as the monitor describes it.
struct FoundDevice: Sendable {
    /// The sound server's name for it (PulseAudio's sink name), or its display name.
    var identifier: String
    /// Its display name (PulseAudio's `device.description`).
    var name: String
    /// Marked as the system's default when the monitor found it.
    var isDefault: Bool
    var reference: DeviceReference
}

/// Follows the audio outputs with a `GstDeviceMonitor` filtered on `Audio/Sink`; a thread of
/// its own blocks on the monitor's bus (no wake-up unless an output comes or goes).
final class DeviceMonitor: @unchecked Sendable {  // the pointers never change; GstDeviceMonitor and GstBus are thread-safe
    private let monitor: UnsafeMutablePointer<GstDeviceMonitor>
    private let bus: UnsafeMutablePointer<GstBus>
    private let thread = Mutex<pthread_t?>(nil)
    private static let exitMarker: gint64 = -1

    /// Starts the monitor; `onChange` is called with every output, on the monitor's thread, each
    /// time one comes, goes or changes.
    init(onChange: @escaping @Sendable ([FoundDevice]) -> Void) throws(PlaybackError) {
        try GStreamerLibrary.initialize()
        guard let monitor = gst_device_monitor_new() else {
            throw PlaybackError(kind: .other, url: nil, message: "GStreamer cannot monitor devices")
        }
        _ = gst_device_monitor_add_filter(monitor, "Audio/Sink", nil)
        self.monitor = monitor
        bus = gst_device_monitor_get_bus(monitor)
        guard gst_device_monitor_start(monitor) != 0 else {
            // No provider could start (no sound server, say): nothing to list.
            onChange([])
            return
        }
        let context = Unmanaged.passRetained(Loop(bus: bus, monitor: self, onChange: onChange)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<Loop>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(result == 0, "cannot start the device monitor's thread: error \(result)")
        self.thread.withLock { $0 = thread }
    }

    deinit {
        stop()
        gst_object_unref(gpointer(bus))
        gst_object_unref(gpointer(monitor))
    }

    /// The outputs now.
    var devices: [FoundDevice] {
        guard let list = gst_device_monitor_get_devices(monitor) else { return [] }
        defer { g_list_free_full(list) { gst_object_unref($0) } }
        var devices: [FoundDevice] = []
        var node: UnsafeMutablePointer<GList>? = list
        while let current = node {
            if let data = current.pointee.data {
                let device = data.assumingMemoryBound(to: GstDevice.self)
                let name = takeString(gst_device_get_display_name(device)) ?? "Audio output"
                let identifier = takeString(cgst_device_string_property(device, "internal-name")) ?? name
                devices.append(FoundDevice(
                    identifier: identifier, name: name, isDefault: cgst_device_is_default(device) != 0,
                    reference: DeviceReference(device)))
            }
            node = current.pointee.next
        }
        return devices
    }

    /// Stops the monitor and its thread, and waits for the thread. Idempotent.
    func stop() {
        guard let thread = thread.withLock({ thread in defer { thread = nil }; return thread }) else { return }
        _ = cgst_post_marker(bus, Self.exitMarker)
        pthread_join(thread, nil)
        gst_device_monitor_stop(monitor)
    }

    /// The thread's side: owns a reference to the bus; reads the monitor weakly.
    private final class Loop: @unchecked Sendable {  // used by its one thread only
        let bus: UnsafeMutablePointer<GstBus>
        weak var monitor: DeviceMonitor?
        let onChange: @Sendable ([FoundDevice]) -> Void

        init(bus: UnsafeMutablePointer<GstBus>, monitor: DeviceMonitor, onChange: @escaping @Sendable ([FoundDevice]) -> Void) {
            _ = gst_object_ref(gpointer(bus))
            self.bus = bus
            self.monitor = monitor
            self.onChange = onChange
        }

        deinit { gst_object_unref(gpointer(bus)) }

        func run() {
            cgst_name_thread("gst-devices")
            let wanted = GstMessageType(
                rawValue: GST_MESSAGE_DEVICE_ADDED.rawValue | GST_MESSAGE_DEVICE_REMOVED.rawValue
                    | GST_MESSAGE_DEVICE_CHANGED.rawValue | GST_MESSAGE_APPLICATION.rawValue)
            while true {
                guard let message = gst_bus_timed_pop_filtered(bus, cgst_clock_time_none(), wanted) else { continue }
                defer { gst_message_unref(message) }
                var marker: gint64 = 0
                if cgst_message_type(message) == GST_MESSAGE_APPLICATION {
                    if cgst_marker_value(message, &marker) != 0, marker == DeviceMonitor.exitMarker { return }
                    continue
                }
                guard let monitor else { return }
                onChange(monitor.devices)
            }
        }
    }
}

/// A GLib string as a Swift one, freeing it; nil for NULL.
func takeString(_ string: UnsafeMutablePointer<gchar>?) -> String? {
    guard let string else { return nil }
    defer { g_free(string) }
    return String(cString: string)
}
