import DBusTestSupport
import Foundation
import ProcessTestSupport
import Testing

/// What desktop shells read of the player. GNOME Shell looks the player's `DesktopEntry` up
/// with GIO (`g_desktop_app_info_new`) for its name, icon and notification policy, and runs
/// the entry when the player is clicked; KDE's Plasma drops a player with an empty
/// `Identity` and shows no controls unless `CanControl` is true.
@Suite struct DesktopShellTests {
    /// What GIO finds for a desktop id, as JSON: what GNOME Shell's app lookup sees.
    static let lookUp = """
        import json, sys
        from gi.repository import Gio
        info = Gio.DesktopAppInfo.new(sys.argv[1])
        if info is None:
            print(json.dumps(None))
        else:
            print(json.dumps({"name": info.get_name(), "icon": info.get_icon().to_string(),
                              "commandline": info.get_commandline(), "nodisplay": info.get_nodisplay(),
                              "notifications": info.get_boolean("X-GNOME-UsesNotifications")}))
        """

    @Test func theInstalledDesktopEntryIsValidAndFoundByGIO() async throws {
        let home = try TemporaryDirectory(prefix: "bridge-desktop")
        defer { home.remove() }
        let data = home.path + "/data"
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_DATA_HOME"] = data
        environment["XDG_CONFIG_HOME"] = home.path + "/config"
        environment["BINDIR"] = buildProductsFolder
        let install = try await ChildProcess.run(repositoryRoot + "/Scripts/install-files", [], environment: environment)
        #expect(install.succeeded, "\(install)")
        let entry = data + "/applications/mpris-bridge.desktop"
        let validation = try await ChildProcess.run("desktop-file-validate", [entry])
        #expect(validation.succeeded && validation.stdout.isEmpty && validation.stderr.isEmpty, "\(validation)")

        try await DaemonFixture.with { daemon in
            let root = try await daemon.client(
                "get", "root", "DesktopEntry", "get", "root", "Identity", "get", "player", "CanControl")
            #expect(root == ["mpris-bridge", "mpris-bridge", "true"])

            // Only the user's data folder is searched, so the entry found is the installed one.
            var lookUpEnvironment = daemon.bus.pythonEnvironment
            lookUpEnvironment["XDG_DATA_HOME"] = data
            lookUpEnvironment["XDG_DATA_DIRS"] = home.path + "/none"
            let found = try await ChildProcess.run(
                PrivateBus.systemPython, ["-c", Self.lookUp, root[0] + ".desktop"], environment: lookUpEnvironment)
            #expect(found.succeeded, "\(found)")
            let app = try #require(
                try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as? [String: Any], "\(found)")
            #expect(app["name"] as? String == "mpris-bridge")
            #expect(app["nodisplay"] as? Bool == true)
            #expect(app["notifications"] as? Bool == true)
            let icon = try #require(app["icon"] as? String)
            #expect(FileManager.default.fileExists(atPath: data + "/icons/hicolor/scalable/apps/\(icon).svg"))

            // Clicking the player runs the entry's command: with the daemon running it starts
            // no second player and exits at once.
            let commandline = try #require(app["commandline"] as? String)
            #expect(commandline == buildProductsFolder + "/mpris-bridge --unless-running")
            var launchEnvironment = daemon.bus.environment
            launchEnvironment["HOME"] = home.path
            let launched = try await ChildProcess.run(
                "/bin/sh", ["-c", commandline], environment: launchEnvironment, timeout: .seconds(20))
            #expect(launched.succeeded, "\(launched)")
            let names = try await daemon.bus.run(
                "dbus-send", ["--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"])
            #expect(names.stdout.components(separatedBy: "org.mpris.MediaPlayer2.").count == 2, "\(names)")
        }
    }
}
