import MediaRemote

/// What a command's handler reports back to the remote that sent the command.
///
/// `success` reaches the remote as a plain reply; every other status as a D-Bus error under
/// `org.mprisbridge.Error` (`NoSuchContent`, `NoActionableNowPlayingItem`, `DeviceNotFound`,
/// `CommandFailed`) with a message saying which command failed.
public enum MPRemoteCommandHandlerStatus: Int, Sendable {
    /// The command was carried out.
    case success = 0
    /// The content the command asked for does not exist.
    case noSuchContent = 100
    /// Nothing is loaded that the command could act on.
    case noActionableNowPlayingItem = 110
    /// The device that should carry out the command is unavailable.
    case deviceNotFound = 120
    /// The command could not be carried out for another reason.
    case commandFailed = 200

    /// The status as MediaRemote hands it to the remote.
    var remoteStatus: RemoteCommandHandlerStatus {
        switch self {
        case .success: .success
        case .noSuchContent: .noSuchContent
        case .noActionableNowPlayingItem: .noActionableNowPlayingItem
        case .deviceNotFound: .deviceNotFound
        case .commandFailed: .commandFailed
        }
    }
}

/// What repeats when the end of an item or of the queue is reached (MPRIS `LoopStatus`
/// `None`, `Track`, `Playlist`).
public enum MPRepeatType: Int, Sendable {
    /// Nothing repeats.
    case off = 0
    /// The current item repeats indefinitely.
    case one = 1
    /// The current container or playlist repeats indefinitely.
    case all = 2

    init(_ type: RepeatType) {
        switch type {
        case .off: self = .off
        case .one: self = .one
        case .all: self = .all
        }
    }

    var repeatType: RepeatType {
        switch self {
        case .off: .off
        case .one: .one
        case .all: .all
        }
    }
}

/// How the queue is ordered during playback (MPRIS `Shuffle` is true for `items` and
/// `collections`).
public enum MPShuffleType: Int, Sendable {
    /// Nothing is shuffled.
    case off = 0
    /// Items are played in random order.
    case items = 1
    /// Collections (albums) are played in random order, the items of each in order.
    case collections = 2

    init(_ type: ShuffleType) {
        switch type {
        case .off: self = .off
        case .items: self = .items
        case .collections: self = .collections
        }
    }

    var shuffleType: ShuffleType {
        switch self {
        case .off: .off
        case .items: .items
        case .collections: .collections
        }
    }
}

/// Whether a remote began or ended seeking (scanning while a button is held).
public enum MPSeekCommandEventType: UInt, Sendable {
    /// The button was pressed: start scanning.
    case beginSeeking = 0
    /// The button was released: stop scanning.
    case endSeeking = 1

    init(_ phase: SeekCommandEvent.Phase) {
        switch phase {
        case .beginSeeking: self = .beginSeeking
        case .endSeeking: self = .endSeeking
        }
    }
}
