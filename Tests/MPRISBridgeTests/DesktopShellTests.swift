import DBusTestSupport
import Foundation
import ProcessTestSupport
import TestMedia
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

/// `playerctld`, which several desktops run: it proxies the most recently active player as
/// `org.mpris.MediaPlayer2.playerctld` and media keys bound to `playerctl` go through it.
@Suite struct PlayerctldTests {
    @Test func playerctldFollowsASessionOfPlayNextATrackListEditAndAPlaylist() async throws {
        try await DaemonFixture.with { daemon in
            let playerctld = try daemon.bus.spawn("playerctld", [])
            defer { playerctld.kill() }
            // The daemon was already running, so once playerctld serves, it proxies the daemon.
            let served = try await daemon.bus.run(
                "gdbus", ["wait", "--session", "--timeout", "10", "org.mpris.MediaPlayer2.playerctld"], timeout: .seconds(15))
            #expect(served.succeeded, "\(served)")
            let follower = try daemon.bus.spawn(
                "playerctl", ["--player=playerctld", "--follow", "metadata", "--format", "{{status}} {{title}}"])
            defer { follower.kill() }
            func through(_ arguments: String...) async throws {
                let output = try await daemon.bus.run("playerctl", ["--player=playerctld"] + arguments)
                #expect(output.succeeded, "\(output)")
            }
            func shown(_ line: String) async throws {
                _ = try await follower.waitForLine(timeout: .seconds(10)) { $0 == line }
            }

            try await through("play")
            try await shown("Playing Tone 1")
            #expect(try await daemon.playerctl("status") == "Playing")
            try await through("next")
            try await shown("Playing Tone 2")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")

            // A TrackList edit on the daemon itself: the new entry made current.
            let third = daemon.library.tracks[2].url(in: daemon.library.path)
            let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
            #expect(try await daemon.client("call", "tracklist", "AddTrack", "s:\(third)", "o:\(noTrack)", "b:true") == ["ok"])
            try await shown("Playing Tone 3")

            // A playlist (the album) activated on the daemon plays from its first track.
            let playlists = try await daemon.client("playlists")
            let album = try #require(playlists.first?.split(separator: "|").first { $0.hasSuffix(" Generated") })
            let path = String(album.split(separator: " ")[0])
            #expect(try await daemon.client("call", "playlists", "ActivatePlaylist", "o:\(path)") == ["ok"])
            try await shown("Playing Tone 1")

            try await through("pause")
            try await shown("Paused Tone 1")
            // Still up, still the daemon's proxy.
            #expect(processState(playerctld.pid).map { $0 != "Z" } == true)
            #expect(try await daemon.bus.run("playerctl", ["--player=playerctld", "status"]).stdout.trimmingSuffix() == "Paused")
        }
    }
}

/// Players in sandboxes: a process id is unique only within its PID namespace, and every
/// Flatpak app can be pid 2, so two players can both be `.instance<pid>`.
@Suite struct SandboxedInstanceTests {
    @Test func daemonsWithTheSamePidEachGetANameOfTheirOwn() async throws {
        let library = try await GeneratedLibrary.make(seconds: 2, formats: [.ogg])
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let first = try await DaemonFixture.start(on: bus, library: library, arguments: ["--no-scan"])
            defer { first.process.kill() }
            // Each in a PID namespace of its own, where it is pid 1; killed with its launcher.
            var sandboxed: [DaemonFixture] = []
            defer { for daemon in sandboxed { daemon.process.kill() } }
            for index in 0..<2 {
                let folder = library.folder.path + "/sandbox\(index)"
                sandboxed.append(
                    try await DaemonFixture.start(
                        on: bus, library: library,
                        arguments: ["--no-scan", "--cache-dir", folder + "/cache", "--state-dir", folder + "/state"],
                        launcher: ["unshare", "--pid", "--fork", "--kill-child=SIGKILL"]))
            }
            let names = try await bus.run(
                "dbus-send", ["--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"])
            let players = names.stdout.split(separator: "\"").map(String.init).filter { $0.hasPrefix(DaemonFixture.busName) }.sorted()
            #expect(players.count == 3, "\(players)")
            #expect(players.first == DaemonFixture.busName)
            #expect(players.contains(DaemonFixture.busName + ".instance1"), "\(players)")
            #expect(players.contains { $0.hasPrefix(DaemonFixture.busName + ".instance1_") }, "\(players)")
            // Each name is a player that answers.
            for player in players {
                let identity = try await bus.run(
                    "dbus-send",
                    ["--print-reply", "--dest=\(player)", "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties.Get",
                     "string:org.mpris.MediaPlayer2", "string:Identity"])
                #expect(identity.stdout.contains("mpris-bridge"), "\(player): \(identity)")
            }
        }
    }
}
