// libdbus's watches (file descriptors) and timeouts, as Dispatch sources on the connection's queue.

import CDBus
import Dispatch
import Glibc

extension RawConnection {
    // MARK: Watches: file descriptors as Dispatch sources

    fileprivate final class WatchSources {
        var sources: [any DispatchSourceProtocol] = []
        var running = false
    }

    func addWatch(_ watch: OpaquePointer) -> Bool {
        let fd = dbus_watch_get_unix_fd(watch)
        guard fd >= 0 else { return false }
        let flags = dbus_watch_get_flags(watch)
        let box = WatchSources()
        // Each source watches a duplicate of the socket, closed by its cancel handler: a source's
        // descriptor must stay open until then, and libdbus closes its own as soon as the
        // connection closes, while a cancelled source leaves Dispatch's event loop only later. A
        // number reused meanwhile (a file, another connection) confused that loop.
        func duplicate() -> Int32? {
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            return copy >= 0 ? copy : nil
        }
        if flags & DBUS_WATCH_READABLE.rawValue != 0 {
            guard let copy = duplicate() else { return false }
            let source = DispatchSource.makeReadSource(fileDescriptor: copy, queue: queue)
            source.setEventHandler { [unowned self] in
                _ = dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
                drain()
            }
            source.setCancelHandler { Glibc.close(copy) }
            box.sources.append(source)
        }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 {
            guard let copy = duplicate() else {
                cancel(box)
                return false
            }
            let source = DispatchSource.makeWriteSource(fileDescriptor: copy, queue: queue)
            source.setEventHandler { [unowned self] in
                _ = dbus_watch_handle(watch, DBUS_WATCH_WRITABLE.rawValue)
                drain()
            }
            source.setCancelHandler { Glibc.close(copy) }
            box.sources.append(source)
        }
        dbus_watch_set_data(watch, Unmanaged.passRetained(box).toOpaque(), releaseWatchSources)
        setRunning(box, dbus_watch_get_enabled(watch) != 0)
        return true
    }

    func toggleWatch(_ watch: OpaquePointer) {
        guard let data = dbus_watch_get_data(watch) else { return }
        setRunning(Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue(), dbus_watch_get_enabled(watch) != 0)
    }

    func removeWatch(_ watch: OpaquePointer) {
        guard let data = dbus_watch_get_data(watch) else { return }
        cancel(Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue())
    }

    private func cancel(_ box: WatchSources) {
        for source in box.sources { source.cancel() }
        // A suspended source must be resumed once to be released; it is cancelled, so it never fires.
        if !box.running { for source in box.sources { source.resume() } }
        box.running = true
        box.sources = []
    }

    private func setRunning(_ box: WatchSources, _ running: Bool) {
        guard box.running != running else { return }
        box.running = running
        for source in box.sources {
            if running { source.resume() } else { source.suspend() }
        }
    }

    // MARK: Timeouts as Dispatch timers (one-shot intervals libdbus asks for; none while idle)

    func addTimeout(_ timeout: OpaquePointer) -> Bool {
        let box = WatchSources()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [unowned self] in
            _ = dbus_timeout_handle(timeout)
            drain()
        }
        box.sources = [timer]
        dbus_timeout_set_data(timeout, Unmanaged.passRetained(box).toOpaque(), releaseWatchSources)
        toggleTimeout(timeout)
        return true
    }

    func toggleTimeout(_ timeout: OpaquePointer) {
        guard let data = dbus_timeout_get_data(timeout) else { return }
        let box = Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue()
        let enabled = dbus_timeout_get_enabled(timeout) != 0
        if enabled, let timer = box.sources.first as? any DispatchSourceTimer {
            let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(1))
        }
        setRunning(box, enabled)
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        guard let data = dbus_timeout_get_data(timeout) else { return }
        cancel(Unmanaged<WatchSources>.fromOpaque(data).takeUnretainedValue())
    }
}

private func releaseWatchSources(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<RawConnection.WatchSources>.fromOpaque(data).release()
}
