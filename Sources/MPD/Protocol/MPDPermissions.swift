/// What a client may do, as mpd's `password "secret@read,add,control,admin"` grants it.
public struct MPDPermissions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Read the database, the queue and the status.
    public static let read = MPDPermissions(rawValue: 1 << 0)
    /// Add to the queue and to stored playlists.
    public static let add = MPDPermissions(rawValue: 1 << 1)
    /// Control playback, edit the queue, set options and outputs.
    public static let control = MPDPermissions(rawValue: 1 << 2)
    /// Update the database, stop the server's outputs' configuration.
    public static let admin = MPDPermissions(rawValue: 1 << 3)

    public static let all: MPDPermissions = [.read, .add, .control, .admin]

    /// The permissions a comma-separated list names (`read,add`); nil when a name is unknown.
    public init?(names: some StringProtocol) {
        var result: MPDPermissions = []
        for name in names.split(separator: ",") {
            switch String(name.filter { $0 != " " }) {
            case "read": result.insert(.read)
            case "add": result.insert(.add)
            case "control": result.insert(.control)
            case "admin": result.insert(.admin)
            default: return nil
            }
        }
        self = result
    }
}
