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

    /// The error for a failed request to play content (``PlayableContentManager/initiatePlayback(at:)``):
    /// a ``ContentError`` by its case, a ``DBusError`` (or ``DBusErrorConvertible``)
    /// the app threw as it is, anything else `CommandFailed` with the error's description.
    static func error(forPlaybackFailure error: any Error, of what: String) -> DBusError {
        let prefix = "The player could not play \(what)"
        switch error {
        case let error as ContentError:
            switch error {
            case .noSuchContent: return DBusError(noSuchContent, "\(prefix): it is no longer there.")
            case .notPlayable: return DBusError(notPlayable, "\(prefix): it cannot be played.")
            case .noDelegate: return DBusError(commandFailed, "\(prefix): the app has no content delegate to start playback.")
            case .searchNotSupported, .invalidQuery, .refreshNotSupported, .actionNotAvailable, .sortNotSupported,
                .invalidSort:
                return DBusError(commandFailed, "\(prefix): \(error).")
            }
        case let error as DBusError: return error
        case let error as any DBusErrorConvertible: return error.dbusError
        case is CancellationError: return DBusError(commandFailed, "\(prefix): playback was cancelled.")
        default: return DBusError(commandFailed, "\(prefix): \(error)")
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
