import DBus
import DBusTestSupport
import Foundation
import MediaPlayer
import ProcessTestSupport
import Synchronization
import Testing

/// Every suite of this target, nested in one serialized suite: they share the process's
/// MediaPlayer objects (Apple's singletons), so no two may change them at once.
@Suite(.serialized) struct MediaPlayerTests {}

/// The private bus the process's MediaPlayer objects are published on, started by the first
/// test that needs it; its watchdog stops it when the test process ends (the objects it
/// serves live as long as the process).
enum MediaPlayerBus {
    static let playerName = "mediaplayer_tests"
    static let mprisName = "org.mpris.MediaPlayer2.\(playerName)"
    static let treeName = "org.gnome.UPnP.MediaServer2.\(playerName)"
    static let treeRoot = "/org/gnome/UPnP/MediaServer2/\(playerName)"

    private static let started = Mutex<Task<PrivateBus, any Error>?>(nil)

    /// The bus, with the configuration set before the first use of any MediaPlayer object.
    static func start() async throws -> PrivateBus {
        let task = started.withLock { started in
            if let started { return started }
            let task = Task {
                let bus = try await PrivateBus.start()
                LinuxMediaPlayer.configuration = LinuxMediaPlayer.Configuration(
                    playerName: playerName, identity: "MediaPlayer Tests", desktopEntry: "mediaplayer-tests",
                    busAddress: bus.address,
                    artworkCacheDirectory: FileManager.default.temporaryDirectory
                        .appendingPathComponent("mediaplayer-tests-artwork-\(getpid())").path)
                return bus
            }
            started = task
            return task
        }
        return try await task.value
    }
}

/// The folder of the Python clients next to this file.
func pythonScript(_ name: String) -> String {
    let file = #filePath
    return String(file[..<file.lastIndex(of: "/")!]) + "/Python/" + name
}
