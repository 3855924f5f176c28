import Logging
import NIOCore
import Synchronization

/// When a connection was last active, and whether it may be silent: what its session tells
/// the connection's ``SilenceTimeoutHandler``.
///
/// A client is silent when it neither sends nor reads what it is sent. It may be silent as long
/// as it likes while it waits in `idle` or for a command that runs, and for at most
/// ``MPDLimits/idleConnectionTimeout`` otherwise (mpd's `connection_timeout`).
final class ConnectionActivity: Sendable {
    private struct State {
        var lastActive = NIODeadline.now()
        var waiting = false
    }

    private let state = Mutex(State())

    /// The client did something (sent bytes, read a response, or was answered).
    func touch() {
        state.withLock { $0.lastActive = .now() }
    }

    /// Whether the client waits for the server (`idle`, a running command): it may be silent.
    /// Ending a wait counts as activity, so the client's time starts with the answer.
    func setWaiting(_ waiting: Bool) {
        state.withLock { state in
            state.waiting = waiting
            state.lastActive = .now()
        }
    }

    /// When the client becomes too silent, or nil while it waits.
    func deadline(after timeout: TimeAmount) -> NIODeadline? {
        state.withLock { $0.waiting ? nil : $0.lastActive + timeout }
    }
}

/// Closes a connection silent for longer than its timeout, unless its session says it waits.
///
/// It sits before the line decoder, so any bytes count as activity, and a client reading a
/// large response (the channel becoming writable again) does too. One timer per connection,
/// rescheduled only when it fires, so a busy connection costs no timer work per line.
final class SilenceTimeoutHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let activity: ConnectionActivity
    private let timeout: TimeAmount
    private let logger: Logger
    private var timer: Scheduled<Void>?

    init(activity: ConnectionActivity, timeout: Duration, logger: Logger) {
        self.activity = activity
        let (seconds, attoseconds) = timeout.components
        self.timeout = .nanoseconds(max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { schedule(context: context, at: .now() + timeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if timer == nil { schedule(context: context, at: .now() + timeout) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        activity.touch()
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { activity.touch() }
        context.fireChannelWritabilityChanged()
    }

    private func schedule(context: ChannelHandlerContext, at deadline: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            check(context: context)
        }
    }

    private func check(context: ChannelHandlerContext) {
        timer = nil
        guard context.channel.isActive else { return }
        let now = NIODeadline.now()
        guard let deadline = activity.deadline(after: timeout) else {
            schedule(context: context, at: now + timeout)
            return
        }
        guard deadline <= now else {
            schedule(context: context, at: deadline)
            return
        }
        logger.warning("MPD client closed: silent for longer than the connection timeout")
        context.close(promise: nil)
    }
}
