import DBus
import MediaRemote

/// `org.mpris.MediaPlayer2`: who the player is and what it can open.
///
/// `Identity`, `DesktopEntry` and the raise and quit actions come from
/// ``MPRISConfiguration``, as does `HasTrackList` (whether the TrackList
/// interface is exported); `SupportedUriSchemes` and `SupportedMimeTypes`
/// from the open-URL command's options, and are empty while neither it nor,
/// with a TrackList, the add-to-queue command (`AddTrack` accepts the same
/// URIs) is available.
final class RootInterface: Sendable {
    static let name: InterfaceName = "org.mpris.MediaPlayer2"

    let interface = Interface(RootInterface.name)
    private let commands: RemoteCommandCenter
    private let hasTrackList: Bool
    let supportedURISchemes: Property<[String]>
    let supportedMIMETypes: Property<[String]>

    init(configuration: MPRISConfiguration, commands: RemoteCommandCenter) {
        self.commands = commands
        hasTrackList = configuration.hasTrackList
        let interface = self.interface
        let raise = configuration.raise
        let quit = configuration.quit
        // Raise: brings the player's user interface to the front; no effect while CanRaise is
        // false (there is no window unless the app gives `raise`).
        interface.method("Raise") { () async in await raise?() }
        // Quit: the player should quit, though it may refuse; no effect while CanQuit is false.
        interface.method("Quit") { () async in await quit?() }
        _ = interface.property("CanQuit", quit != nil, changes: .const)
        // Fullscreen is optional; the player has no window to make fullscreen, so writes are ignored.
        _ = interface.property("Fullscreen", false, access: .readWrite) { (_: Bool) in false }
        _ = interface.property("CanSetFullscreen", false, changes: .const)
        _ = interface.property("CanRaise", raise != nil, changes: .const)
        _ = interface.property("HasTrackList", configuration.hasTrackList, changes: .const)
        _ = interface.property("Identity", configuration.identity, changes: .const)
        if let desktopEntry = configuration.desktopEntry {
            _ = interface.property("DesktopEntry", desktopEntry, changes: .const)
        }
        supportedURISchemes = interface.property("SupportedUriSchemes", [String]())
        supportedMIMETypes = interface.property("SupportedMimeTypes", [String]())
    }

    func refresh() {
        let open = commands.openURLCommand
        let available = open.isAvailable || (hasTrackList && commands.addItemToQueueCommand.isAvailable)
        interface.batch {
            supportedURISchemes.value = available ? open.supportedURLSchemes : []
            supportedMIMETypes.value = available ? open.supportedMIMETypes : []
        }
    }
}
