import DBus
import Foundation
import Synchronization

/// Linux only: how an app's MediaPlayer objects appear on D-Bus. Apple's framework has no
/// such type, and nothing here is needed to appear: an app that never names it is published
/// under its executable's name.
///
/// The first use of ``MPRemoteCommandCenter/shared()`` or ``MPNowPlayingInfoCenter/default()``
/// publishes the player on the session bus as `org.mpris.MediaPlayer2.<playerName>`, after the
/// main queue's current turn (so the commands an app sets up in the same turn, as
/// `application(_:didFinishLaunchingWithOptions:)` does, are offered from the first moment).
/// Setting ``MPPlayableContentManager/dataSource`` publishes the browsable tree as
/// `org.gnome.UPnP.MediaServer2.<playerName>`. Set ``configuration`` before that first use:
///
/// ```swift
/// #if os(Linux)
/// LinuxMediaPlayer.configuration.identity = "Podcasts"
/// #endif
/// ```
public enum LinuxMediaPlayer {
    /// Names and the bus the MediaPlayer objects are published with.
    public struct Configuration: Sendable, Equatable {
        /// The last element of the bus names, `org.mpris.MediaPlayer2.<playerName>`: letters,
        /// digits and `_`, not starting with a digit. Default: the executable's name, made valid
        /// (`my-app` becomes `my_app`).
        public var playerName: String
        /// MPRIS `Identity`, the name people see in a desktop's media controls and the tree's
        /// `DisplayName`. Default: the executable's name.
        public var identity: String
        /// MPRIS `DesktopEntry`: the desktop file's name without `.desktop`, so shells show the
        /// app's icon. Default: none.
        public var desktopEntry: String?
        /// A D-Bus address (`unix:path=…`) to publish on instead of the session bus. Default:
        /// nil, the session bus (`DBUS_SESSION_BUS_ADDRESS`).
        public var busAddress: String?
        /// Where artwork is written for remotes to read (`mpris:artUrl`). Default: nil, the
        /// user's cache folder (`$XDG_CACHE_HOME/mpris-bridge/artwork`).
        public var artworkCacheDirectory: String?

        /// Describes a configuration; see each property for its meaning.
        public init(
            playerName: String, identity: String, desktopEntry: String? = nil, busAddress: String? = nil,
            artworkCacheDirectory: String? = nil
        ) {
            self.playerName = playerName
            self.identity = identity
            self.desktopEntry = desktopEntry
            self.busAddress = busAddress
            self.artworkCacheDirectory = artworkCacheDirectory
        }

        /// The executable's name as player name and identity, on the session bus.
        public static var standard: Configuration {
            let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "app").lastPathComponent
            return Configuration(playerName: busNameElement(executable), identity: executable)
        }
    }

    private static let settings = Mutex<(configuration: Configuration, frozen: Bool)>((.standard, false))

    /// The configuration used when the MediaPlayer objects are first used. Changes made after
    /// that are ignored (the bus names are taken by then).
    public static var configuration: Configuration {
        get { settings.withLock { $0.configuration } }
        set { settings.withLock { if !$0.frozen { $0.configuration = newValue } } }
    }

    /// Fixes the configuration for the life of the process; the runtime reads it once.
    static func freezeConfiguration() -> Configuration {
        settings.withLock { settings in
            settings.frozen = true
            return settings.configuration
        }
    }

    /// The bus name the player is published under, once it is: waits for the publication the
    /// first use of the command or now-playing centre started (starting it if none did).
    /// - Throws: why it could not be published (no session bus, an invalid ``Configuration/playerName``).
    public static func playerBusName() async throws -> BusName {
        try await MediaPlayerRuntime.shared.publishPlayer().value
    }

    /// The bus name the browsable tree is published under, once it is: waits for the
    /// publication setting ``MPPlayableContentManager/dataSource`` started (starting it if none did).
    public static func mediaTreeBusName() async throws -> BusName {
        try await MediaPlayerRuntime.shared.publishTree().value
    }

    /// `name` made a valid bus-name element: each character other than an ASCII letter, digit
    /// or `_` becomes `_`, and a leading digit (or an empty name) gets a `_` before it.
    static func busNameElement(_ name: String) -> String {
        var element = String(
            name.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
                    ? Character(scalar) : "_"
            })
        if element.first.map({ $0.isNumber }) ?? true { element = "_" + element }
        return element
    }
}
