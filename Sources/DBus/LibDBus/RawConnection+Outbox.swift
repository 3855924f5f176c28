// Messages written whole by this side (nearly all: `OutgoingMessage`) go to the socket
// directly. libdbus has no public way to send bytes it has not read again: handing it a 110 KB
// reply made it validate every row, as much processor time as the bus spends on the same
// message, and a signal built through its iterators cost more than writing it. The stream stays
// one sequence of whole messages because every libdbus call and every write is made on the
// connection's thread, and this side writes only when libdbus holds nothing to write; while a
// written message is not wholly on the socket, the messages sent after it wait here, in order,
// and go to libdbus once it is.

import CDBus
import Glibc

extension RawConnection {
    /// The messages waiting behind one written by this side, in the order they were sent.
    struct Outbox {
        enum Entry {
            /// A libdbus message, its serial already given.
            case libdbus(OutgoingMessage, OpaquePointer)
            /// A whole message in wire format, its serial written, `sent` bytes of it on the socket.
            case written([UInt8], sent: Int)
        }

        private var entries: [Entry] = []
        private var head = 0
        /// The serials this side gives: from 2³¹ up, never one libdbus gives (it counts from 1).
        private var lastSerial: UInt32 = 1 << 31
        /// The loop's watch for the socket turning writable, made when first needed.
        var writableWatch: Int?
        var writableWatchEnabled = false

        var isEmpty: Bool { head == entries.count }
        var first: Entry? { isEmpty ? nil : entries[head] }

        mutating func append(_ entry: Entry) { entries.append(entry) }

        mutating func replaceFirst(with entry: Entry) { entries[head] = entry }

        mutating func removeFirst() {
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: entries.count <= 64)
                head = 0
            }
        }

        mutating func removeAll() {
            entries = []
            head = 0
        }

        mutating func nextSerial() -> UInt32 {
            lastSerial = lastSerial == .max ? 1 << 31 : lastSerial + 1
            return lastSerial
        }
    }

    /// Sends a message written whole (its serial field 0): at once if nothing waits before it,
    /// else after what does. Returns the serial written into it.
    func sendWritten(_ message: consuming [UInt8]) throws -> UInt32 {
        guard socketDescriptor != nil else {
            // Not on a socket: libdbus reads it after all.
            guard let pointer = OutgoingMessage.libdbusMessage(reading: message) else {
                throw DBusError(.failed, "libdbus refused a written message")
            }
            defer { dbus_message_unref(pointer) }
            return try sendThroughLibdbus(pointer)
        }
        let serial = outbox.nextSerial()
        message.withUnsafeMutableBytes {
            $0.storeBytes(of: serial.littleEndian, toByteOffset: OutgoingMessage.serialOffset, as: UInt32.self)
        }
        outbox.append(.written(message, sent: 0))
        sendOutbox()
        return serial
    }

    /// Queues a libdbus message behind a written one, with a serial of this side's.
    func queueBehindWritten(_ message: OutgoingMessage, _ pointer: OpaquePointer) -> UInt32 {
        let serial = outbox.nextSerial()
        dbus_message_set_serial(pointer, serial)
        outbox.append(.libdbus(message, pointer))
        return serial
    }

    /// Sends what waits, in order, until a written message must wait for the socket or for
    /// libdbus to write what it holds. Called after each send and each time either may have
    /// made room.
    func sendOutbox() {
        while let entry = outbox.first {
            switch entry {
            case .libdbus(let message, let pointer):
                outbox.removeFirst()
                _ = try? withExtendedLifetime(message) { try sendThroughLibdbus(pointer) }
            case .written(let bytes, let sent):
                // libdbus's messages sent before this one go first; its own watch calls back.
                guard !libdbusHasMessagesToSend else { return watchWritable(false) }
                switch write(bytes, from: sent) {
                case .all:
                    outbox.removeFirst()
                case .some(let now):
                    outbox.replaceFirst(with: .written(bytes, sent: now))
                    return watchWritable(true)
                case .failed:
                    // As libdbus does when its own write fails: the connection is closed, so
                    // that every caller learns it (a message lost silently would leave its
                    // caller waiting for a reply). libdbus then dispatches `Disconnected`.
                    outbox.removeAll()
                    closeAfterFailedWrite()
                }
            }
        }
        watchWritable(false)
    }

    /// Forgets what waits and the watch (the connection is closing).
    func dropOutbox() {
        outbox.removeAll()
        if let watch = outbox.writableWatch { loop.removeWatch(watch) }
        outbox.writableWatch = nil
    }

    private enum WriteResult {
        case all
        case some(Int)
        case failed
    }

    /// Writes `bytes` from `offset` without blocking: all of it, up to where the socket was full,
    /// or nothing because it failed.
    private func write(_ bytes: [UInt8], from offset: Int) -> WriteResult {
        guard let socket = socketDescriptor else { return .failed }
        var sent = offset
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.send(socket, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if count > 0 {
                sent += count
                continue
            }
            let failure = errno
            if count < 0, failure == EINTR { continue }
            if count < 0, failure == EAGAIN || failure == EWOULDBLOCK { return .some(sent) }
            return .failed
        }
        return .all
    }

    private func watchWritable(_ enabled: Bool) {
        guard enabled != outbox.writableWatchEnabled else { return }
        if let watch = outbox.writableWatch {
            loop.setWatch(watch, enabled: enabled)
        } else if let socket = socketDescriptor {
            outbox.writableWatch = loop.addWatch(descriptor: socket, events: Int16(POLLOUT), enabled: enabled) {
                [unowned self] _ in sendOutbox()
            }
        } else {
            return
        }
        outbox.writableWatchEnabled = enabled
    }
}
