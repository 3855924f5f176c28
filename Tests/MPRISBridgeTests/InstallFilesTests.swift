import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import TestMedia
import Testing

/// The files in `dbus/` as a user installs them: the activation file starts the
/// daemon on first use, and the system-bus policy lets only the daemon's user
/// own its names and only a configured group call it.
@Suite struct InstallFilesTests {
    static let identityCall = [
        "--print-reply", "--dest=org.mpris.MediaPlayer2.mprisbridge", "/org/mpris/MediaPlayer2",
        "org.freedesktop.DBus.Properties.Get", "string:org.mpris.MediaPlayer2", "string:Identity",
    ]

    /// `dbus/NAME` with `@BINDIR@` replaced by the build folder, as Scripts/install writes it.
    static func installed(_ name: String) throws -> String {
        try String(contentsOfFile: repositoryRoot + "/dbus/" + name, encoding: .utf8)
            .replacingOccurrences(of: "@BINDIR@", with: buildProductsFolder)
    }

    /// A call to each name the daemon owns, with what its answer must contain.
    static let activations: [(name: String, call: [String], answer: String)] = [
        ("org.mpris.MediaPlayer2.mprisbridge", identityCall, "string \"mpris-bridge\""),
        (
            "org.gnome.UPnP.MediaServer2.mprisbridge",
            [
                "--print-reply", "--dest=org.gnome.UPnP.MediaServer2.mprisbridge",
                "/org/gnome/UPnP/MediaServer2/mprisbridge", "org.freedesktop.DBus.Properties.Get",
                "string:org.gnome.UPnP.MediaObject2", "string:Type",
            ],
            "string \"container\""
        ),
    ]

    @Test(arguments: activations.indices)
    func aCallToTheNameStartsTheDaemon(activation: Int) async throws {
        let (name, call, answer) = Self.activations[activation]
        let library = try await GeneratedLibrary.make(seconds: 1, formats: [.ogg])
        defer { library.remove() }
        let root = library.folder.path
        try FileManager.default.createDirectory(atPath: root + "/services", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/home", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/home/Music", withDestinationPath: library.path)
        try Self.installed("\(name).service")
            .write(toFile: root + "/services/\(name).service", atomically: true, encoding: .utf8)
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(root)</listen>
              <servicedir>\(root)/services</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: root + "/bus.conf", atomically: true, encoding: .utf8)
        // What the activated daemon inherits from the bus: a home whose ~/Music is the library.
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = root + "/home"
        environment["XDG_CACHE_HOME"] = root + "/cache"
        environment["XDG_STATE_HOME"] = root + "/state"
        environment["XDG_CONFIG_HOME"] = root + "/config"
        try await PrivateBus.with(configuration: root + "/bus.conf", environment: environment) { bus in
            let reply = try await bus.run("dbus-send", call, timeout: .seconds(20))
            #expect(reply.succeeded, "\(reply)")
            #expect(reply.stdout.contains(answer), "\(reply)")
            // Stop the activated daemon by its process id, as the bus reports it, and see its name go.
            let stopped = try await bus.python(
                """
                import os, signal, sys, dbus, dbus.mainloop.glib
                from gi.repository import GLib
                dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
                bus = dbus.SessionBus()
                name = "\(name)"
                loop = GLib.MainLoop()
                bus.watch_name_owner(name, lambda owner: loop.quit() if owner == "" else None)
                pid = int(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus").GetConnectionUnixProcessID(
                    name, dbus_interface="org.freedesktop.DBus"))
                os.kill(pid, signal.SIGTERM)
                GLib.timeout_add_seconds(10, lambda: sys.exit("still running"))
                loop.run()
                print("stopped", pid)
                """)
            #expect(stopped.succeeded, "\(stopped)")
        }
        // The daemon saved its state in the XDG state folder it was given.
        #expect(FileManager.default.fileExists(atPath: root + "/state/mpris-bridge/state.sqlite"))
    }

    @Test(.enabled(if: getuid() == 0, "changing users needs root"))
    func theSystemBusPolicyAdmitsOnlyTheDaemonsUserAndTheControlGroup() async throws {
        let library = try await GeneratedLibrary.make(seconds: 1, formats: [.ogg])
        defer { library.remove() }
        let root = library.folder.path
        // Other users must reach the socket inside the test's private folder.
        chmod(root, 0o755)
        let policy = try String(contentsOfFile: repositoryRoot + "/dbus/mpris-bridge.conf", encoding: .utf8)
            .replacingOccurrences(of: "user=\"mpris-bridge\"", with: "user=\"root\"")
            .replacingOccurrences(of: "group=\"mpris-bridge-control\"", with: "group=\"nogroup\"")
        try policy.write(toFile: root + "/mpris-bridge.conf", atomically: true, encoding: .utf8)
        // The defaults of Debian's system.conf that matter here: no names, no method calls, unless allowed.
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(root)/system_bus_socket</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
              </policy>
              <include>\(root)/mpris-bridge.conf</include>
            </busconfig>
            """
        try configuration.write(toFile: root + "/bus.conf", atomically: true, encoding: .utf8)
        try await PrivateBus.with(configuration: root + "/bus.conf") { bus in
            _ = try await DaemonFixture.scan(library).check()
            let daemon = try await DaemonFixture.start(on: bus, library: library, arguments: ["--bus", "system"])
            defer { daemon.process.kill() }
            func call(as user: Int, group: Int) async throws -> ProcessOutput {
                try await bus.run(
                    "setpriv",
                    ["--reuid=\(user)", "--regid=\(group)", "--clear-groups", "dbus-send", "--system"] + Self.identityCall)
            }
            let member = try await call(as: 65534, group: 65534)  // nobody, in nogroup
            #expect(member.succeeded, "\(member)")
            #expect(member.stdout.contains("mpris-bridge"))
            let outsider = try await call(as: 1, group: 1)  // daemon, in its own group only
            #expect(!outsider.succeeded)
            #expect(outsider.stderr.contains("AccessDenied"), "\(outsider)")
            // Nobody else may take the daemon's name.
            let squatter = try await bus.run(
                "setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", "dbus-send", "--system", "--print-reply",
                    "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName",
                    "string:org.mpris.MediaPlayer2.mprisbridge.instance1", "uint32:0",
                ])
            #expect(squatter.stderr.contains("AccessDenied"), "\(squatter)")
            try await daemon.stop()
        }
    }
}
