/// Why a library operation failed. Nothing in the index changes when one is thrown.
public enum MusicLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The library's root folder does not exist or cannot be listed (an unmounted disc, say):
    /// the scan stops before touching the index, so nothing is removed.
    case rootNotFound(String, reason: String)
    /// A folder for the index file could not be created.
    case cannotCreateFolder(String, reason: String)
    /// The index database failed (SQLite's message).
    case index(String)
    /// A scan is already running on this library; one at a time.
    case scanInProgress
    /// A folder named as holding tracks to resume is not inside the library.
    case folderOutsideLibrary(String)

    public var description: String {
        switch self {
        case .rootNotFound(let path, let reason): "music folder \(path) cannot be read: \(reason)"
        case .cannotCreateFolder(let path, let reason): "cannot create folder \(path): \(reason)"
        case .index(let message): "music library index: \(message)"
        case .scanInProgress: "a scan of the music library is already running"
        case .folderOutsideLibrary(let path): "\(path) is not a folder of the music library"
        }
    }
}
