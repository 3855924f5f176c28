// GStreamer's process-wide initialisation, and the small conversions every file of the binding uses.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Playback

/// GStreamer's process-wide initialisation, done once (`gst_init`), on first use.
enum GStreamerLibrary {
    /// Why GStreamer's libraries could not be loaded, nil once they are: the binary does not link
    /// them, they are loaded here, at the first use (Sources/CGStreamer/Loader.c).
    static let loadFailure: String? = {
        var message = [CChar](repeating: 0, count: 512)
        guard cgst_load(&message, message.count) == 0 else { return nil }
        return "its libraries could not be loaded ("
            + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + ")"
    }()

    private static let initialization: String? = {
        if let loadFailure { return loadFailure }
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


// MARK: - Helpers

/// The message of `error`, which is freed; nil if there is no error.
func takeMessage(_ error: UnsafeMutablePointer<GError>?) -> String? {
    guard let error else { return nil }
    defer { g_error_free(error) }
    return error.pointee.message.map { String(cString: $0) } ?? "Unknown error"
}

/// A string tag, with multiple values joined by GStreamer (", " for artists); nil if absent.
func tagString(_ list: UnsafeMutablePointer<GstTagList>, _ tag: String) -> String? {
    var value: UnsafeMutablePointer<gchar>?
    guard gst_tag_list_get_string(list, tag, &value) != 0, let value else { return nil }
    defer { g_free(value) }
    return String(cString: value)
}

func gobject(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GObject> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GObject.self)
}

func gstObject(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstObject> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstObject.self)
}

func pipelinePointer(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstPipeline> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstPipeline.self)
}

func binPointer(_ element: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstBin> {
    UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstBin.self)
}

/// `duration` in whole nanoseconds, clamped to what a GstClockTime offset can hold.
func nanoseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    guard seconds < Int64.max / 1_000_000_000 else { return Int64.max }
    guard seconds >= 0 else { return 0 }
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
}
