/// An error a command answers with: MPD's `ACK [code@index] {command} message` line.
///
/// Every bad input answers one of these and changes nothing; the connection stays open (only
/// a line over ``MPDLimits/maximumLineBytes`` or a command list over its bound closes it, as
/// mpd does).
public struct MPDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// MPD's error codes (`enum ack` of its protocol), the number clients read.
    public enum Code: Int, Sendable, Equatable {
        case notList = 1
        case argument = 2
        case password = 3
        case permission = 4
        case unknown = 5
        case noExist = 50
        case playlistMax = 51
        case system = 52
        case playlistLoad = 53
        case updateAlready = 54
        case playerSync = 55
        case exist = 56
    }

    public var code: Code
    /// One line, said to a person; control characters are replaced when it is written.
    public var message: String
    /// The command that failed, as the client named it; set by the session.
    public var command: String
    /// The failed command's place in its command list (0 outside a list); set by the session.
    public var listIndex: Int

    public init(_ code: Code, _ message: String, command: String = "", listIndex: Int = 0) {
        self.code = code
        self.message = message
        self.command = command
        self.listIndex = listIndex
    }

    /// A wrong, missing or extra argument.
    public static func argument(_ message: String) -> MPDError { MPDError(.argument, message) }
    /// Something named that does not exist: a song, a position, a playlist, a file.
    public static func noExist(_ message: String) -> MPDError { MPDError(.noExist, message) }
    /// The command needs a permission the client has not been given.
    public static let permission = MPDError(.permission, "you don't have permission for this")

    /// The `ACK` line, with its newline. The command's name and the message are cut at 200 bytes
    /// and keep no line breaks, so an error can never be read as more than one line.
    public var line: String {
        "ACK [\(code.rawValue)@\(listIndex)] {\(Self.oneLine(command, limit: 64))} \(Self.oneLine(message, limit: 200))\n"
    }

    public var description: String { line.dropLast().description }

    static func oneLine(_ text: String, limit: Int) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            guard result.utf8.count < limit else { return result + "…" }
            result.unicodeScalars.append(scalar.properties.generalCategory == .control ? "?" : scalar)
        }
        return result
    }
}
