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
    /// `org.mprisbridge.Error.NotPlayable`: the content asked for cannot be played (an informative row).
    public static let notPlayable: ErrorName = "org.mprisbridge.Error.NotPlayable"
    /// `org.mprisbridge.Error.CommandFailed`: the app could not carry the command out.
    public static let commandFailed: ErrorName = "org.mprisbridge.Error.CommandFailed"

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
        }
    }
}

extension RemoteCommand {
    /// Performs the command as a remote's request: no effect when unavailable,
    /// and a failure status thrown as the matching ``CommandError``.
    func performForRemote(_ event: Event, action: String) async throws {
        if let error = CommandError.error(for: await perform(event), command: action) { throw error }
    }
}
