import DBus
import DBusTestSupport
import Foundation
import MPRIS
import MediaRemote
import ProcessTestSupport
import Testing

/// The one map from what an app reports to the D-Bus error a remote receives: every error each
/// interface can answer, by name, checked against the map, the interface files in `dbus/`, and
/// real calls where the tests' apps can produce them.
@Suite struct ErrorMapTests {
    /// Every case of the app's error types that reach D-Bus, and the name each becomes.
    static let contentErrors: [(ContentError, String)] = [
        (.noSuchContent("gone"), "org.mprisbridge.Error.NoSuchContent"),
        (.notPlayable("a tab"), "org.mprisbridge.Error.NotPlayable"),
        (.noDelegate, "org.freedesktop.DBus.Error.NotSupported"),
        (.searchNotSupported, "org.freedesktop.DBus.Error.NotSupported"),
        (.invalidQuery("("), "org.freedesktop.DBus.Error.InvalidArgs"),
        (.refreshNotSupported, "org.freedesktop.DBus.Error.NotSupported"),
        (.actionNotAvailable("like"), "org.freedesktop.DBus.Error.InvalidArgs"),
        (.sortNotSupported("paged"), "org.freedesktop.DBus.Error.NotSupported"),
        (.invalidSort("+nothing"), "org.freedesktop.DBus.Error.InvalidArgs"),
    ]
    static let audioSessionErrors: [(AudioSession.RequestError, String)] = [
        (.notSupported("no handler"), "org.freedesktop.DBus.Error.NotSupported"),
        (.invalidArgument("no such output"), "org.freedesktop.DBus.Error.InvalidArgs"),
        (.failed("the sink went away"), "org.mprisbridge.Error.CommandFailed"),
    ]

    /// Which errors each interface can answer (beyond the bus's own: UnknownMethod, a call's
    /// InvalidArgs signature check), as its file in `dbus/` must document them.
    static let answeredByInterface: [(file: String, names: [String])] = [
        // The commands' handler statuses, and NotSupported for a command MPRIS says errs when disabled.
        ("org.mpris.MediaPlayer2.Player", [
            "NoSuchContent", "NoActionableNowPlayingItem", "DeviceNotFound", "CommandFailed", "NotPlayable",
            "NotSupported", "PropertyReadOnly",
        ]),
        ("org.mpris.MediaPlayer2.TrackList", [
            "NoSuchContent", "NoActionableNowPlayingItem", "DeviceNotFound", "CommandFailed", "NotPlayable",
            "NotSupported", "InvalidArgs",
        ]),
        // ActivatePlaylist: initiatePlayback's ContentErrors and the delegate's failure; GetPlaylists' ordering.
        ("org.mpris.MediaPlayer2.Playlists", ["NoSuchContent", "NotPlayable", "NotSupported", "CommandFailed", "InvalidArgs"]),
        // SelectOutputRoute and ReplayGain: AudioSession.RequestError.
        ("org.mprisbridge.Player1", ["InvalidArgs", "NotSupported", "CommandFailed"]),
        // Play, PerformAction: ContentErrors and the app's failure.
        ("org.mprisbridge.MediaNode1", ["NotPlayable", "NoSuchContent", "CommandFailed", "NotSupported", "InvalidArgs"]),
        // Search and SortBy grammars, an app that cannot sort.
        ("org.gnome.UPnP.MediaContainer2", ["InvalidArgs", "NotSupported"]),
        // Rescan, PrepareQueue.
        ("org.mprisbridge.MediaRoot1", ["NotSupported", "CommandFailed", "NoSuchContent"]),
    ]

    @Test func everyErrorOfTheAppHasOneName() {
        for (error, name) in Self.contentErrors {
            #expect(error.dbusError.name.rawValue == name, "\(error)")
            #expect(error.dbusError.message == error.description)
            // The D-Bus layer's conversion, which every handler's thrown error goes through, agrees.
            #expect(DBusError(converting: error) == error.dbusError)
        }
        for (error, name) in Self.audioSessionErrors {
            #expect(error.dbusError.name.rawValue == name, "\(error)")
            #expect(DBusError(converting: error) == error.dbusError)
        }
        // Any other error is not the D-Bus layer's to name.
        struct Unnamed: Error {}
        #expect(DBusError(converting: Unnamed()) == nil)
        #expect(DBusError(converting: CancellationError()) == nil)
    }

    /// Every name an interface can answer is in its interface file, and every name the map
    /// produces is answered by some interface.
    @Test func theInterfaceFilesDocumentEveryNameTheirInterfaceAnswers() throws {
        for (file, names) in Self.answeredByInterface {
            let text = try String(contentsOfFile: "\(repositoryRoot)/dbus/\(file).xml", encoding: .utf8)
            for name in names { #expect(text.contains(name), "dbus/\(file).xml does not name \(name)") }
        }
        let answered = Set(Self.answeredByInterface.flatMap(\.names))
        let mapped = Self.contentErrors.map(\.1) + Self.audioSessionErrors.map(\.1)
        for name in mapped { #expect(answered.contains(String(name.split(separator: ".").last!)), "\(name)") }
    }

    /// One ContentError answers one name whichever interface it comes through: an app that plays
    /// nothing is NotSupported from ActivatePlaylist as from a node's Play (they once disagreed).
    @Test func aContentErrorHasTheSameNameOnEveryInterface() async throws {
        let playlistReplies = try await withPlaylists { playlists in
            playlists.content.delegate = nil
            return try await playlists.client(
                "activate \(PlaylistsTests.roadTrip)", "activate /org/mprisbridge/Playlist/nothing_here")
        }
        #expect(playlistReplies[0].hasPrefix("error org.freedesktop.DBus.Error.NotSupported: "), "\(playlistReplies)")
        #expect(playlistReplies.contains { $0.hasPrefix("error org.mprisbridge.Error.NoSuchContent: ") }, "\(playlistReplies)")
        let treeReplies = try await withMediaTree { tree in
            tree.manager.delegate = nil
            return try await tree.client(
                ["play", MediaTreeFixture.path("music", "album:2", "track:2-3")], ["play", MediaTreeFixture.path("odd", "note")])
        }
        #expect(treeReplies[0].hasPrefix("error org.freedesktop.DBus.Error.NotSupported "), "\(treeReplies)")
        #expect(treeReplies[1].hasPrefix("error org.mprisbridge.Error.NotPlayable "), "\(treeReplies)")
    }
}
