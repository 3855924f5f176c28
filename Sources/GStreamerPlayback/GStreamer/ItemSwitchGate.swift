// Item switches and element hooks: keeps playbin's switch to the next item apart from the
// pipeline's state changes to READY or NULL, and configures the elements playbin adds.
//
// Part of the GStreamer binding (this folder): the only code that talks to libgstreamer. The
// engine above it works with `Playbin`, `BusMessage` and Swift values; no pointer,
// `OpaquePointer` or `Unmanaged` leaves the folder. GStreamer elements are thread-safe
// for what is used here (properties, state changes, queries, seeks and posting on the bus lock
// internally), so a `Playbin` may be used from any thread.

import CGStreamer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Item switches

/// Keeps playbin's item switches and the pipeline's state changes apart.
///
/// playbin switches to the next item on the streaming thread that drained the current one:
/// uridecodebin's `drained` signal runs playbin's handler, which emits `about-to-finish`, then
/// unlinks the current item's decoder and changes the state of the next item's (GStreamer 1.22
/// does this without regard to a concurrent state change of the pipeline). Two races follow:
/// - A state change to READY or NULL at that moment deadlocks: the stopping thread holds an
///   element's state lock and waits for the streaming thread to leave, which waits for that
///   state lock; or playbin's shutdown swapped its groups and the streaming thread changes the
///   state of its own element ("Trying to join task ... from its thread would deadlock", then
///   "Failed to deactivate pad ..., very bad").
/// - playbin adds the next item's uridecodebin to the pipeline before it gives it its URI. A
///   change to PAUSED or PLAYING (play right after a load, when a short item drains while
///   prerolling) that walks the pipeline's children then starts that decoder without a URI
///   ("No URI specified to play from", the hand-over fails), or a reused one with the URI of
///   the item it played before.
///
/// So each `drained` emission is bracketed by a handler connected before playbin's and one
/// connected after it, and every state change of the pipeline first waits until no switch is
/// under way (they take milliseconds). While a change to READY or NULL runs, a `drained`
/// emission is stopped before it reaches playbin: nothing is switched, the pipeline is stopping
/// anyway. While a change to PAUSED or PLAYING runs, a `drained` emission waits for it to
/// return (it does not wait for streaming threads), then switches as usual.
final class ItemSwitchGate: @unchecked Sendable {  // the state is only touched under `lock`
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when a switch ends.
    private let switched = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Signalled when a change to PAUSED or PLAYING ends.
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Changes to READY or NULL running now.
    private var stops = 0
    /// The threads running a change to PAUSED or PLAYING now.
    private var changing: [pthread_t] = []
    /// The threads running a switch now.
    private var switching: [pthread_t] = []
    /// How long a state change waits for switches, or a switch for a state change, at most:
    /// they take milliseconds, and one whose end was never seen must not keep the other waiting.
    private static let longestWait: Duration = .seconds(2)

    init() {
        pthread_mutex_init(lock, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(switched, &attributes)
        pthread_cond_init(changed, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_cond_destroy(switched)
        pthread_mutex_destroy(lock)
        changed.deallocate()
        switched.deallocate()
        lock.deallocate()
    }

    /// At the start of a `drained` emission, on its streaming thread: false if the emission must
    /// stop here (the pipeline is going to READY or NULL). Waits while a change to PAUSED or
    /// PLAYING runs.
    func enter() -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        let me = pthread_self()
        var deadline = Self.deadline()
        // A change on this very thread cannot end first.
        while stops == 0, !changing.isEmpty, !changing.contains(where: { pthread_equal($0, me) != 0 }) {
            if pthread_cond_timedwait(changed, lock, &deadline) == ETIMEDOUT { break }
        }
        guard stops == 0 else { return false }
        switching.append(me)
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
        awaitSwitches()
        pthread_mutex_unlock(lock)
        defer {
            pthread_mutex_lock(lock)
            stops -= 1
            pthread_mutex_unlock(lock)
        }
        return change()
    }

    /// Runs `change`, a state change of the pipeline to PAUSED or PLAYING, once no switch is
    /// under way, and holds switches that start meanwhile until it returns.
    func whileChanging<Result>(_ change: () -> Result) -> Result {
        pthread_mutex_lock(lock)
        let me = pthread_self()
        changing.append(me)
        awaitSwitches()
        pthread_mutex_unlock(lock)
        defer {
            pthread_mutex_lock(lock)
            if let index = changing.firstIndex(where: { pthread_equal($0, me) != 0 }) { changing.remove(at: index) }
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(lock)
        }
        return change()
    }

    /// Waits until no switch is under way, at most `longestWait`; with `lock` held.
    private func awaitSwitches() {
        var deadline = Self.deadline()
        let me = pthread_self()
        // A switch on this very thread (the engine released by its provider) cannot end first.
        while !switching.isEmpty, !switching.contains(where: { pthread_equal($0, me) != 0 }) {
            if pthread_cond_timedwait(switched, lock, &deadline) == ETIMEDOUT { break }
        }
    }

    /// `longestWait` from now, by the monotonic clock the condition variables use.
    private static func deadline() -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += Int(longestWait.components.seconds)
        return deadline
    }
}

/// playbin made the source of a new item: a network source (souphttpsrc) gets the engine's
/// timeout for a server that stops answering. The timeout in seconds is the handler's data.
let sourceSetup: @convention(c) (
    UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstElement>?, gpointer?
) -> Void = { _, source, data in
    guard let source else { return }
    _ = cgst_set_uint_if_present(gpointer(source), "timeout", guint(UInt(bitPattern: data)))
}

/// What playbin's `element-added` handler gives the children it hooks.
final class ChildHooks: Sendable {
    let segmentRate: SegmentRate
    let switches: ItemSwitchGate

    init(segmentRate: SegmentRate, switches: ItemSwitchGate) {
        self.segmentRate = segmentRate
        self.switches = switches
    }
}

let releaseChildHooks: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<ChildHooks>.fromOpaque(data).release()
}

/// Marks a uridecodebin as hooked: playbin adds the same one again for every other item.
let hookedKey = "mpris-bridge-hooked"

/// playbin added a child: each item's uridecodebin gets the segment rate probe on its outputs
/// and the item switch brackets, once.
let elementAdded: @convention(c) (
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

let switchStarts: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { element, data in
    guard let element, let data else { return }
    if !Unmanaged<ItemSwitchGate>.fromOpaque(data).takeUnretainedValue().enter() {
        g_signal_stop_emission_by_name(gpointer(element), "drained")
    }
}

let switchEnded: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { _, data in
    guard let data else { return }
    Unmanaged<ItemSwitchGate>.fromOpaque(data).takeUnretainedValue().leave()
}

let releaseSwitchGate: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<ItemSwitchGate>.fromOpaque(data).release()
}

// MARK: - The stream's role

/// Gives an audio sink's stream the role of music, in the sound server's words: PulseAudio's
/// role corking (and PipeWire's policy) then pauses it for a call or a navigation prompt, by a
/// REQUEST_STATE message on the bus. pulsesink (PulseAudio, or PipeWire's pulse server) names
/// roles in lower case; PipeWire's own sink capitalises them.
let giveStreamRole: @convention(c) (UnsafeMutablePointer<GstElement>?, gpointer?) -> Void = { element, _ in
    guard let element else { return }
    let factory = cgst_factory_name(element).map { String(cString: $0) }
    cgst_set_stream_role(element, factory == "pipewiresink" ? "Music" : "music")
}

let releaseOutputChoice: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<OutputChoice>.fromOpaque(data).release()
}

/// An element was added inside the audio sink, at any depth: autoaudiosink adds the sink it
/// picked when it goes to READY (at each load), before the sink opens its stream. It gets the
/// stream's role, the chosen volume (a pulsesink) and the chosen output device.
let sinkElementAdded: @convention(c) (
    UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstBin>?, UnsafeMutablePointer<GstElement>?, gpointer?
) -> Void = { bin, _, element, data in
    guard let element else { return }
    giveStreamRole(element, nil)
    paceElement(element, nil)
    guard let data else { return }
    let choice = Unmanaged<OutputChoice>.fromOpaque(data).takeUnretainedValue()
    if let bin, let factory = cgst_factory_name(element), String(cString: factory) == "pulsesink" {
        choice.applyVolume(in: bin)
        choice.followStreamVolume(of: element)
    }
    guard let chosen = choice.device.withLock({ $0 }) else { return }
    cgst_reconfigure_sink(element, gpointer(chosen.device))
}
