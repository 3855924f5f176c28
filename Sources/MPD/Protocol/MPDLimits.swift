/// The bounds of what one client may send and be sent, and of how many may connect: what a
/// hostile or broken program on the machine can cost the daemon (SECURITY.md lists them).
public struct MPDLimits: Sendable, Equatable {
    /// The longest request line, newline included; a longer one closes the connection (mpd: 4 KiB,
    /// plus room for a filter expression of a few dozen terms).
    public var maximumLineBytes = 8 * 1024
    /// The most commands in one command list; one more closes the connection.
    public var maximumCommandListLength = 4_096
    /// The most bytes of one command list's lines; more closes the connection.
    public var maximumCommandListBytes = 2 * 1024 * 1024
    /// The most arguments of one command.
    public var maximumArguments = 64
    /// The largest response a command builds (a `listallinfo` of a large library stops there
    /// with an error, as mpd's `max_output_buffer_size` does).
    public var maximumResponseBytes = 8 * 1024 * 1024
    /// The most clients connected at once; one more is closed at once (mpd: `max_connections` 100).
    public var maximumClients = 256
    /// The largest chunk of `albumart`/`readpicture` a client may ask for with `binarylimit`.
    public var maximumBinaryChunk = 1024 * 1024
    /// How long a client may stay silent outside `idle` before it is disconnected (mpd: 60 s).
    public var idleConnectionTimeout: Duration = .seconds(60)

    public init() {}
}
