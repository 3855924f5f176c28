/// What answers the commands a session does not answer itself.
///
/// The session (``MPDServer``'s per-connection state) answers the connection's own commands:
/// `close`, `password`, `ping`, `idle`, `noidle`, `command_list_begin`/`_ok_begin`/`_end`,
/// `commands`, `notcommands`, `tagtypes` and `binarylimit`. Every other command goes to the
/// handler, after the session checked that the client has the permission it needs.
public protocol MPDCommandHandler: Sendable {
    /// The commands ``handle(_:client:)`` answers, each with the permission it needs; `commands`
    /// lists exactly these (and the session's own), so a client never sees one that answers
    /// "unknown command".
    var commands: [String: MPDPermissions] { get }

    /// Answers `request` (whose name is a key of ``commands``), or throws the error the client
    /// is sent as `ACK`. A command that fails changes nothing.
    ///
    /// It runs on the session's task and, called from the server's session, starts on the
    /// connection's event loop (the MPD target is built with `NonisolatedNonsendingByDefault`):
    /// work that blocks or takes long goes elsewhere (the library's reads executor); it may
    /// wait for the player or read the library.
    func handle(_ request: MPDRequest, client: MPDClient) async throws(MPDError) -> MPDResponse

    /// The subsystems that changed since `idle` last returned are told to every session
    /// through this stream: the session subscribes when it connects.
    var changes: MPDChanges { get }
}

/// What a command may know of the client that sent it.
public struct MPDClient: Sendable {
    /// The tags its responses carry (`tagtypes`).
    public var tags: MPDTagSet
    /// The largest binary chunk `albumart`/`readpicture` may send it (`binarylimit`, 8 KiB by default).
    public var binaryLimit: Int
    /// The bound of one response.
    public var responseLimit: Int
    /// Whether it came over the Unix socket (a local user) rather than TCP.
    public var isLocal: Bool

    public init(tags: MPDTagSet = .all, binaryLimit: Int = 8192, responseLimit: Int = MPDLimits().maximumResponseBytes, isLocal: Bool = false) {
        self.tags = tags
        self.binaryLimit = binaryLimit
        self.responseLimit = responseLimit
        self.isLocal = isLocal
    }

    /// An empty response bounded for this client.
    public func response() -> MPDResponse { MPDResponse(limit: responseLimit) }
}
