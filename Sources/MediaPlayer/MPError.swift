import DBus
import Foundation
import MPRIS

/// The domain of MediaPlayer's errors, ``MPError``'s `errorDomain`.
public let MPErrorDomain: String = "MPErrorDomain"

/// A MediaPlayer error, as an app passes one to a completion handler (`MPError(.notFound)`, or
/// an `NSError` of ``MPErrorDomain`` with a ``Code`` raw value).
///
/// A head unit receives it as a typed D-Bus error: ``Code/notFound`` as
/// `org.mprisbridge.Error.NoSuchContent`, ``Code/notSupported`` as
/// `org.freedesktop.DBus.Error.NotSupported`, ``Code/permissionDenied`` as
/// `org.freedesktop.DBus.Error.AccessDenied`, ``Code/networkConnectionFailed`` as
/// `org.mprisbridge.Error.DeviceNotFound`, any other as `org.mprisbridge.Error.CommandFailed`;
/// the message is the error's localized description when the app gave one.
public struct MPError: CustomNSError, Hashable, Sendable {
    /// What went wrong, with Apple's raw values.
    public enum Code: Int, Sendable, Hashable {
        // Apple's codes, with their raw values.
        case unknown = 0
        case permissionDenied = 1
        case cloudServiceCapabilityMissing = 2
        case networkConnectionFailed = 3
        case notFound = 4
        case notSupported = 5
        case cancelled = 6
        case requestTimedOut = 7
    }

    /// The error's code.
    public let code: Code
    /// The `NSLocalizedDescriptionKey` of the user info given, the only entry kept.
    private let message: String?

    /// An error with `code`; of `userInfo`, the localized description is kept.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        message = userInfo[NSLocalizedDescriptionKey] as? String
    }

    /// ``MPErrorDomain``, the domain of the `NSError` this error bridges to.
    public static var errorDomain: String { MPErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// The localized description the error was made with, if any.
    public var errorUserInfo: [String: Any] { message.map { [NSLocalizedDescriptionKey: $0] } ?? [:] }

    // The codes as members of the error type, as Apple's bridged error structs spell them.
    public static var unknown: Code { .unknown }
    public static var permissionDenied: Code { .permissionDenied }
    public static var cloudServiceCapabilityMissing: Code { .cloudServiceCapabilityMissing }
    public static var networkConnectionFailed: Code { .networkConnectionFailed }
    public static var notFound: Code { .notFound }
    public static var notSupported: Code { .notSupported }
    public static var cancelled: Code { .cancelled }
    public static var requestTimedOut: Code { .requestTimedOut }

    /// The error an `NSError` of ``MPErrorDomain`` stands for; nil for another domain or code.
    init?(_ error: NSError) {
        guard error.domain == MPErrorDomain, let code = Code(rawValue: error.code) else { return nil }
        self.code = code
        message = error.userInfo[NSLocalizedDescriptionKey] as? String
    }
}

extension MPError: DBusErrorConvertible {
    /// The D-Bus error a remote receives for this error (see ``MPError``).
    public var dbusError: DBusError {
        let (name, reason): (ErrorName, String) =
            switch code {
            case .notFound: (CommandError.noSuchContent, "not found")
            case .notSupported: (.notSupported, "not supported")
            case .permissionDenied: (.accessDenied, "permission denied")
            case .networkConnectionFailed: (CommandError.deviceNotFound, "the network connection failed")
            case .requestTimedOut: (CommandError.commandFailed, "the request timed out")
            case .cancelled: (CommandError.commandFailed, "cancelled")
            case .cloudServiceCapabilityMissing: (CommandError.commandFailed, "a cloud service capability is missing")
            case .unknown: (CommandError.commandFailed, "an unknown error")
            }
        return DBusError(name, "The app answered: \(message ?? reason).")
    }
}
