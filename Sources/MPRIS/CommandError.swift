import DBus
import MediaRemote

/// The D-Bus errors a remote receives when an app's handler reports a failure.
///
/// Every name lies under the project's namespace, `org.mprisbridge.Error`, so
/// a client can tell "the app refused" from a bus or argument error.
public enum CommandError {
    /// `org.mprisbridge.Error.NoSuchContent`: the content asked for does not exist.
    public static let noSuchContent: ErrorName = "org.mprisbridge.Error.NoSuchContent"
    /// `org.mprisbridge.Error.NoActionableNowPlayingItem`: nothing is loaded to act on.
    public static let noActionableNowPlayingItem: ErrorName = "org.mprisbridge.Error.NoActionableNowPlayingItem"
    /// `org.mprisbridge.Error.DeviceNotFound`: the output or device is unavailable.
    public static let deviceNotFound: ErrorName = "org.mprisbridge.Error.DeviceNotFound"
    /// `org.mprisbridge.Error.CommandFailed`: the app could not carry the command out.
    public static let commandFailed: ErrorName = "org.mprisbridge.Error.CommandFailed"
    /// `org.mprisbridge.Error.NotPlayable`: the content exists but cannot be played.
    public static let notPlayable: ErrorName = "org.mprisbridge.Error.NotPlayable"

    /// The error for a handler's status, or `nil` for success (and for an
    /// unavailable command, which has no effect and is not an error).
    static func error(for status: RemoteCommandHandlerStatus?, command: String) -> DBusError? {
        switch status {
        case nil, .success?: nil
        case .noSuchContent?: DBusError(noSuchContent, "The player could not \(command): no such content.")
        case .noActionableNowPlayingItem?:
            DBusError(noActionableNowPlayingItem, "The player could not \(command): nothing is loaded.")
        case .deviceNotFound?: DBusError(deviceNotFound, "The player could not \(command): its output device is not available.")
        case .commandFailed?: DBusError(commandFailed, "The player could not \(command).")
        case .notPlayable(let reason)?: DBusError(notPlayable, "The player could not \(command): \(reason).")
        }
    }

    /// The error a remote receives when an app's call failed with `error`: the D-Bus error it
    /// is or names (``ContentError`` and ``AudioSession/RequestError`` name theirs below, an
    /// app may throw a ``DBusError`` or a ``DBusErrorConvertible``), else `CommandFailed`
    /// saying `failure` ("The player could not play the playlist 'X'") and the error.
    static func error(for error: any Error, failing failure: String) -> DBusError {
        DBusError(converting: error) ?? DBusError(commandFailed, "\(failure): \(error)")
    }
}

// The one map from the app's errors to the D-Bus errors remotes receive; every interface
// throws these as they are, and the D-Bus layer converts them.

extension ContentError: DBusErrorConvertible {
    /// The D-Bus error a remote receives for this error, with its description as the message.
    public var dbusError: DBusError {
        switch self {
        case .noSuchContent: DBusError(CommandError.noSuchContent, description)
        case .notPlayable: DBusError(CommandError.notPlayable, description)
        // The app plays nothing: no delegate to ask.
        case .noDelegate: DBusError(.notSupported, description)
        case .searchNotSupported: DBusError(.notSupported, description)
        case .invalidQuery: DBusError(.invalidArgs, description)
        case .refreshNotSupported: DBusError(.notSupported, description)
        case .actionNotAvailable: DBusError(.invalidArgs, description)
        case .sortNotSupported: DBusError(.notSupported, description)
        case .invalidSort: DBusError(.invalidArgs, description)
        }
    }
}

extension AudioSession.RequestError: DBusErrorConvertible {
    /// The D-Bus error a remote receives for this error, with its reason as the message.
    public var dbusError: DBusError {
        switch self {
        case .notSupported(let reason): DBusError(.notSupported, reason + ".")
        case .invalidArgument(let reason): DBusError(.invalidArgs, reason + ".")
        case .failed(let reason): DBusError(CommandError.commandFailed, reason + ".")
        }
    }
}

extension RemoteCommand {
    /// Performs the command as a remote's request: no effect when unavailable,
    /// and a failure status thrown as the matching ``CommandError``.
    ///
    /// An app that takes the command over in an order of its own (`TurnQueue.reserveTakingOver()`)
    /// lets the object's next call start meanwhile: a long start of playback does not hold a pause.
    func performForRemote(_ event: Event, action: String) async throws {
        let status = await perform(event)
        if let error = CommandError.error(for: status, command: action) { throw error }
    }
}
