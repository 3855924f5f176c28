// libdbus's watches (file descriptors) and timeouts, as the connection thread's poll set and timers.

import CDBus
import Dispatch
import Glibc

extension RawConnection {
    // MARK: Watches: descriptors in the loop's poll set

    /// The loop's identifier of a watch, kept as the watch's data.
    fileprivate final class Registration {
        let identifier: Int
        init(_ identifier: Int) { self.identifier = identifier }
    }

    func addWatch(_ watch: OpaquePointer) -> Bool {
        let descriptor = dbus_watch_get_unix_fd(watch)
        guard descriptor >= 0 else { return false }
        let flags = dbus_watch_get_flags(watch)
        var events: Int16 = 0
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
        // The loop polls a watch only while it is registered, and looks it up again before each
        // handler: one removed by an earlier handler (the connection closed) is never handled,
        // and a number libdbus closed and the system reused is not polled for it.
        let identifier = loop.addWatch(descriptor: descriptor, events: events, enabled: dbus_watch_get_enabled(watch) != 0) {
            [unowned self] revents in
            var condition: UInt32 = 0
            if revents & Int16(POLLIN) != 0 { condition |= DBUS_WATCH_READABLE.rawValue }
            if revents & Int16(POLLOUT) != 0 { condition |= DBUS_WATCH_WRITABLE.rawValue }
            if revents & Int16(POLLHUP) != 0 { condition |= DBUS_WATCH_HANGUP.rawValue }
            if revents & Int16(POLLERR | POLLNVAL) != 0 { condition |= DBUS_WATCH_ERROR.rawValue }
            _ = dbus_watch_handle(watch, condition)
            // libdbus may have written the last of its messages that a written one waits behind.
            if !outbox.isEmpty { sendOutbox() }
            drain()
        }
        dbus_watch_set_data(watch, Unmanaged.passRetained(Registration(identifier)).toOpaque(), releaseRegistration)
        return true
    }

    func toggleWatch(_ watch: OpaquePointer) {
        guard let data = dbus_watch_get_data(watch) else { return }
        let registration = Unmanaged<Registration>.fromOpaque(data).takeUnretainedValue()
        loop.setWatch(registration.identifier, enabled: dbus_watch_get_enabled(watch) != 0)
    }

    func removeWatch(_ watch: OpaquePointer) {
        guard let data = dbus_watch_get_data(watch) else { return }
        loop.removeWatch(Unmanaged<Registration>.fromOpaque(data).takeUnretainedValue().identifier)
    }

    // MARK: Timeouts as the loop's timers (repeating intervals libdbus asks for; none while idle)

    func addTimeout(_ timeout: OpaquePointer) -> Bool {
        let interval = Self.interval(of: timeout)
        let identifier = loop.addTimer(
            deadline: DispatchTime.now().uptimeNanoseconds + interval, interval: interval,
            enabled: dbus_timeout_get_enabled(timeout) != 0
        ) { [unowned self] in
            _ = dbus_timeout_handle(timeout)
            drain()
        }
        dbus_timeout_set_data(timeout, Unmanaged.passRetained(Registration(identifier)).toOpaque(), releaseRegistration)
        return true
    }

    func toggleTimeout(_ timeout: OpaquePointer) {
        guard let data = dbus_timeout_get_data(timeout) else { return }
        let registration = Unmanaged<Registration>.fromOpaque(data).takeUnretainedValue()
        let enabled = dbus_timeout_get_enabled(timeout) != 0
        // Enabled again, the interval starts from now, as libdbus expects.
        let deadline = enabled ? DispatchTime.now().uptimeNanoseconds + Self.interval(of: timeout) : nil
        loop.setTimer(registration.identifier, deadline: deadline, enabled: enabled)
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        guard let data = dbus_timeout_get_data(timeout) else { return }
        loop.removeTimer(Unmanaged<Registration>.fromOpaque(data).takeUnretainedValue().identifier)
    }

    private static func interval(of timeout: OpaquePointer) -> UInt64 {
        UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1_000_000
    }
}

private func releaseRegistration(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<RawConnection.Registration>.fromOpaque(data).release()
}
