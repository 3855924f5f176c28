/// An error with a D-Bus error name and a human-readable message.
///
/// This is the one error type of the library: a reply that arrives as a D-Bus
/// error is thrown as a `DBusError` with the remote name and message, and a
/// `DBusError` thrown by a method handler goes back to the caller with the same
/// name and message. Local failures (invalid names, lost connection, timeouts)
/// use the standard `org.freedesktop.DBus.Error.*` names, so a caller needs to
/// match on one type only.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error name, such as `org.freedesktop.DBus.Error.InvalidArgs`.
    public var name: ErrorName
    /// What went wrong, for people. Never empty, and at most
    /// ``maximumMessageLength`` bytes of UTF-8.
    public var message: String

    /// The longest message an error carries, in bytes of UTF-8. A message
    /// that quotes what a client sent can be as large as the call; cut here,
    /// a reply never is (and neither is a log line of it).
    public static let maximumMessageLength = 1024

    /// An error named `name`, saying `message` (cut to ``maximumMessageLength``
    /// bytes, ending in "…"; the name itself when empty).
    public init(_ name: ErrorName, _ message: String) {
        self.name = name
        self.message =
            message.isEmpty
            ? name.rawValue : message.utf8.count > Self.maximumMessageLength
                ? Self.excerpt(message, maximumBytes: Self.maximumMessageLength) : message
    }

    /// The start of `text` for quoting in a message: at most `maximumBytes`
    /// bytes of UTF-8, cut at a character boundary and ending in "…" when cut.
    ///
    /// Quote what a client sent through this, so an error stays readable
    /// whatever the size of the input.
    public static func excerpt(_ text: some StringProtocol, maximumBytes: Int = 80) -> String {
        guard text.utf8.count > maximumBytes else { return String(text) }
        // Whole characters only, leaving room for the three bytes of "…".
        var end = text.startIndex
        var bytes = 0
        for index in text.indices {
            bytes += text[index].utf8.count
            guard bytes + 3 <= maximumBytes else { break }
            end = text.index(after: index)
        }
        return String(text[..<end]) + "…"
    }

    public var description: String { "\(name): \(message)" }
}

/// An error that knows which D-Bus error it becomes when a method handler throws it.
///
/// Conform an application's error type to choose the error name a client sees.
/// Errors that neither are a ``DBusError`` nor conform become
/// `org.freedesktop.DBus.Error.Failed` with their description as the message.
public protocol DBusErrorConvertible: Error {
    var dbusError: DBusError { get }
}

extension DBusError {
    /// The D-Bus error that `error` is, or names (``DBusErrorConvertible``); nil for any other.
    ///
    /// What a method handler throws becomes this; an error it returns nil for becomes
    /// `org.freedesktop.DBus.Error.Failed`. A layer with its own name for other failures
    /// (an app's `CommandFailed`) converts with this first, so a named error keeps its name.
    public init?(converting error: any Error) {
        switch error {
        case let error as DBusError: self = error
        case let error as any DBusErrorConvertible: self = error.dbusError
        default: return nil
        }
    }

    /// Turns any thrown error into the D-Bus error a client receives.
    static func from(_ error: any Error) -> DBusError {
        if let named = DBusError(converting: error) { return named }
        if error is CancellationError { return DBusError(.failed, "The call was cancelled") }
        return DBusError(.failed, String(describing: error))
    }

    static func invalidArgs(_ message: String) -> DBusError { DBusError(.invalidArgs, message) }
    static func disconnected() -> DBusError { DBusError(.disconnected, "The connection to the bus is closed") }
}

extension ErrorName {
    /// A generic failure.
    public static let failed: ErrorName = "org.freedesktop.DBus.Error.Failed"
    /// The arguments, a name, a path or a value were not valid.
    public static let invalidArgs: ErrorName = "org.freedesktop.DBus.Error.InvalidArgs"
    /// The object has no such method.
    public static let unknownMethod: ErrorName = "org.freedesktop.DBus.Error.UnknownMethod"
    /// No object is exported at the path.
    public static let unknownObject: ErrorName = "org.freedesktop.DBus.Error.UnknownObject"
    /// The object does not implement the interface.
    public static let unknownInterface: ErrorName = "org.freedesktop.DBus.Error.UnknownInterface"
    /// The interface has no such property.
    public static let unknownProperty: ErrorName = "org.freedesktop.DBus.Error.UnknownProperty"
    /// The property cannot be written.
    public static let propertyReadOnly: ErrorName = "org.freedesktop.DBus.Error.PropertyReadOnly"
    /// No reply arrived within the call's timeout.
    public static let noReply: ErrorName = "org.freedesktop.DBus.Error.NoReply"
    /// The connection to the bus is closed or was lost.
    public static let disconnected: ErrorName = "org.freedesktop.DBus.Error.Disconnected"
    /// Something is already exported at that object path.
    public static let objectPathInUse: ErrorName = "org.freedesktop.DBus.Error.ObjectPathInUse"
    /// The destination name has no owner and cannot be activated.
    public static let serviceUnknown: ErrorName = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The feature (such as unix file descriptors) is not supported.
    public static let notSupported: ErrorName = "org.freedesktop.DBus.Error.NotSupported"
    /// The peer is not allowed to do that.
    public static let accessDenied: ErrorName = "org.freedesktop.DBus.Error.AccessDenied"
    /// A limit (message size, nesting depth) was exceeded.
    public static let limitsExceeded: ErrorName = "org.freedesktop.DBus.Error.LimitsExceeded"
}
