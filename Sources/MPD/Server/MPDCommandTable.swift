/// Every command a client can run and the permission each needs: the session's own and the
/// handler's, read once when the server starts, so `commands` and each permission check cost
/// a lookup.
struct MPDCommandTable: Sendable {
    /// The session's own commands that are listed by `commands` (mpd lists neither `noidle` nor
    /// the `command_list_*` lines, which are not commands in its table either).
    static let sessionCommands: [String: MPDPermissions] = [
        "binarylimit": [], "close": [], "commands": [], "notcommands": [], "password": [], "ping": [],
        "tagtypes": [], "idle": .read,
    ]

    /// Every command by name, sorted, with the permission it needs.
    let sorted: [(name: String, permission: MPDPermissions)]
    private let permissions: [String: MPDPermissions]

    /// The session's commands and `handlerCommands`; a handler command named as one of the
    /// session's is the session's.
    init(handlerCommands: [String: MPDPermissions]) {
        permissions = handlerCommands.merging(Self.sessionCommands) { _, session in session }
        sorted = permissions.sorted { $0.key < $1.key }.map { (name: $0.key, permission: $0.value) }
    }

    /// The permission `name` needs, or nil for no such command.
    func permission(of name: String) -> MPDPermissions? { permissions[name] }

    /// Whether `name` is answered by the session rather than the handler.
    static func isSessionCommand(_ name: String) -> Bool { sessionCommands[name] != nil }
}
