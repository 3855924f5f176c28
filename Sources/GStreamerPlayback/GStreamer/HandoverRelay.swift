// The `about-to-finish` relay: where playbin asks, on a streaming thread, what plays next.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Synchronization

// MARK: - about-to-finish

/// What the `about-to-finish` handler calls; retained by the signal connection.
final class HandoverRelay: Sendable {
    let nextURI: @Sendable (Int) -> String?
    let flushes: FlushCounter

    init(nextURI: @escaping @Sendable (Int) -> String?, flushes: FlushCounter) {
        self.nextURI = nextURI
        self.flushes = flushes
    }
}

/// Runs on a streaming thread. Setting `uri` inside the signal is what makes playbin prepare the
/// next item and switch to it without a gap.
let aboutToFinish: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = {
    playbin, data in
    guard let playbin, let data else { return }
    let relay = Unmanaged<HandoverRelay>.fromOpaque(data).takeUnretainedValue()
    if let uri = relay.nextURI(relay.flushes.count.load(ordering: .acquiring)) { cgst_set_string(playbin, "uri", uri) }
}

let releaseRelay: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<HandoverRelay>.fromOpaque(data).release()
}
