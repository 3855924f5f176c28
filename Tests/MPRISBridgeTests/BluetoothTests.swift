import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// A car reaches the daemon through BlueZ: the daemon on a private session bus, a stand-in for
/// `bluetoothd` on a private system bus (Python/bluez_stand_in.py, which checks registrations as
/// bluetoothd 5.66 does and sends the car's AVRCP commands as it would), and between them either
/// the real `mpris-proxy` (Debian's `bluez`) or the daemon's own `--bluetooth` registration.
@Suite(.timeLimit(.minutes(2))) struct BluetoothTests {
    /// What `mpris-proxy` does: one `GetAll` of the Player, `RegisterPlayer` on the adapter with
    /// that dictionary at a path made of the player's unique name, then the car's calls forwarded
    /// to the session bus and the player's `PropertiesChanged` and `Seeked` forwarded back.
    @Test func mprisProxyRegistersTheDaemonAndTheCarControlsIt() async throws {
        try await DaemonFixture.with { daemon in
            let standIn = try await BlueZStandIn.start()
            let proxy = try ChildProcess.spawn(
                "mpris-proxy", [], environment: standIn.environment(withSessionOf: daemon.bus))
            do {
                let registered = try await standIn.next { $0.event == "registered" }
                let owner = try await uniqueName(of: DaemonFixture.busName, on: daemon.bus)
                // mpris-proxy's object for the player: the unique name with ':' and '.' as '_'.
                #expect(registered.string("path") == "/" + owner.map { $0 == ":" || $0 == "." ? "_" : $0 })
                #expect(registered.string("adapter") == "/org/bluez/hci0")
                // The Player interface has no Identity, so through mpris-proxy a car shows "Player";
                // `--bluetooth` registers the daemon's own name (see the next test).
                #expect(registered.string("name") == "Player")
                expectBluetoothTyping(registered)
                let values = registered.object("values")
                #expect(values["CanControl"] as? Bool == true)
                #expect(values["PlaybackStatus"] as? String == "Stopped")
                #expect((values["Metadata"] as? [String: Any])?["xesam:title"] as? String == "Tone 1")

                try await driveLikeACar(standIn, daemon)

                // A seek on the session bus reaches the car as Seeked.
                _ = try await daemon.playerctl("play")
                _ = try await daemon.playerctl("pause")
                _ = try await daemon.playerctl("position", "2")
                let seeked = try await standIn.next { $0.event == "seeked" }
                #expect((seeked["position"] as? Int).map { abs($0 - 2_000_000) < 50_000 } == true, "\(seeked.line)")

                // The proxy gone, bluetoothd forgets its player.
                proxy.kill()
                _ = await proxy.waitForExit()
                _ = try await standIn.next { $0.event == "gone" }
            } catch {
                proxy.kill()
                _ = await proxy.waitForExit()
                await standIn.stop()
                throw error
            }
            await standIn.stop()
        }
    }

    /// `--bluetooth`: the daemon registers its own Player with `org.bluez.Media1` on every
    /// adapter, so the car shows "mpris-bridge" and now-playing data with no mpris-proxy; it
    /// follows adapters plugged in and out, and unregisters at shutdown.
    @Test func theDaemonRegistersItselfWithEveryAdapterAndTheCarControlsIt() async throws {
        let standIn = try await BlueZStandIn.start(arguments: ["--adapters", "hci0,hci1"])
        do {
            try await DaemonFixture.with(
                arguments: ["--bluetooth"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": standIn.systemBus.address]
            ) { daemon in
                var adapters: Set<String> = []
                for _ in 0..<2 {
                    let registered = try await standIn.next { $0.event == "registered" }
                    adapters.insert(registered.string("adapter") ?? "")
                    #expect(registered.string("name") == "mpris-bridge")
                    #expect(registered.string("path") == "/org/mprisbridge/BluetoothPlayer")
                    #expect(registered.object("properties")["Identity"] as? String == "s")
                    expectBluetoothTyping(registered)
                    let values = registered.object("values")
                    #expect(values["CanControl"] as? Bool == true)
                    #expect(values["PlaybackStatus"] as? String == "Stopped")
                    #expect((values["Metadata"] as? [String: Any])?["xesam:title"] as? String == "Tone 1")
                }
                #expect(adapters == ["/org/bluez/hci0", "/org/bluez/hci1"])

                try await driveLikeACar(standIn, daemon)

                // An adapter plugged in later gets the player, with what it shows now.
                standIn.send("add-adapter hci2")
                let third = try await standIn.next { $0.event == "registered" }
                #expect(third.string("adapter") == "/org/bluez/hci2")
                #expect(third.string("name") == "mpris-bridge")
                #expect(third.object("values")["LoopStatus"] as? String == "Playlist")
                // One unplugged is forgotten.
                standIn.send("remove-adapter hci1")
                _ = try await daemon.process.waitForLine { $0.contains("Bluetooth adapter /org/bluez/hci1 is gone") }
            }
            // DaemonFixture stopped the daemon with SIGTERM: it unregistered from the two adapters left.
            var unregistered: Set<String> = []
            for _ in 0..<2 {
                unregistered.insert(
                    try await standIn.next(timeout: .seconds(5)) { $0.event == "unregistered" }.string("adapter") ?? "")
            }
            #expect(unregistered == ["/org/bluez/hci0", "/org/bluez/hci2"])
        } catch {
            await standIn.stop()
            throw error
        }
        await standIn.stop()
    }

    /// A bluetoothd that never answers RegisterPlayer holds up no command and no shutdown: the
    /// call gives up after its timeout (5 s), and the daemon says so.
    @Test func aStuckBluetoothdHoldsUpNothing() async throws {
        let standIn = try await BlueZStandIn.start(arguments: ["--adapters", "hci0,hci1", "--hang-register"])
        do {
            try await DaemonFixture.with(
                arguments: ["--bluetooth"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": standIn.systemBus.address]
            ) { daemon in
                // The registration arrived, and will never be answered.
                _ = try await standIn.next { $0.event == "registered" }
                _ = try await daemon.playerctl("play")
                #expect(try await daemon.playerctl("status") == "Playing")
                // Both answered while the registration still waited for its reply.
                #expect(!daemon.process.capturedStdout.contains("refused the player"), "\(daemon.process.capturedStdout)")
                _ = try await daemon.process.waitForLine(timeout: .seconds(20)) {
                    $0.contains("Bluetooth adapter /org/bluez/hci0 refused the player")
                }
                // Then it asks the next adapter, which hangs too: the shutdown that follows does not wait for it.
                _ = try await standIn.next { $0.event == "registered" && $0.string("adapter") == "/org/bluez/hci1" }
            }
            // (DaemonFixture's stop expects a clean exit within 8 s of SIGTERM.)
        } catch {
            await standIn.stop()
            throw error
        }
        await standIn.stop()
    }

    /// bluetoothd started after the daemon, or restarted, gets the player registered again.
    @Test func bluetoothdStartedLaterOrRestartedGetsThePlayer() async throws {
        let systemBus = try await PrivateBus.start()
        do {
            try await DaemonFixture.with(
                arguments: ["--bluetooth"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": systemBus.address]
            ) { daemon in
                let first = try await BlueZStandIn.start(on: systemBus)
                let registered = try await first.next { $0.event == "registered" }
                #expect(registered.string("name") == "mpris-bridge")
                // The stand-in reports a registration before it answers: wait for the answer too.
                _ = try await daemon.process.waitForLine { $0.contains("registered with Bluetooth adapter /org/bluez/hci0") }
                first.process.kill()
                _ = await first.process.waitForExit()
                _ = try await daemon.process.waitForLine { $0.contains("Bluetooth adapter /org/bluez/hci0 is gone") }

                let second = try await BlueZStandIn.start(on: systemBus)
                do {
                    _ = try await second.next { $0.event == "registered" }
                    second.send("Play")
                    _ = try await second.next {
                        $0.event == "changed" && $0.object("values")["PlaybackStatus"] as? String == "Playing"
                    }
                    #expect(try await daemon.playerctl("status") == "Playing")
                } catch {
                    await second.stop()
                    throw error
                }
                await second.stop()
            }
        } catch {
            await systemBus.stop()
            throw error
        }
        await systemBus.stop()
    }

    /// The stand-in is only worth its checks if it refuses what bluetoothd refuses: a metadata
    /// key of the wrong type, the way a player's registration fails for real.
    @Test func theStandInRefusesWhatBluetoothdRefuses() async throws {
        let standIn = try await BlueZStandIn.start()
        do {
            let script = """
                import dbus, sys
                media = dbus.Interface(dbus.SystemBus().get_object("org.bluez", "/org/bluez/hci0"), "org.bluez.Media1")
                def register(path, metadata):
                    try:
                        media.RegisterPlayer(dbus.ObjectPath(path), {"CanControl": dbus.Boolean(True),
                            "Metadata": dbus.Dictionary(metadata, signature="sv")})
                        print("ok")
                    except dbus.DBusException as error:
                        print(error.get_dbus_name())
                register("/bad", {"xesam:trackNumber": dbus.String("3")})
                register("/good", {"xesam:trackNumber": dbus.Int32(3), "xesam:artist": dbus.Array(["A"], signature="s")})
                register("/good", {})
                """
            let output = try await standIn.systemBus.python(script).check()
            #expect(
                output.stdout.split(separator: "\n") == [
                    "org.bluez.Error.InvalidArguments", "ok", "org.bluez.Error.AlreadyExists",
                ])
            let rejected = try await standIn.next { $0.event == "rejected" }
            #expect(rejected.string("error") == "Metadata xesam:trackNumber is s, not i")
        } catch {
            await standIn.stop()
            throw error
        }
        await standIn.stop()
    }
}

/// The registration's properties typed as bluetoothd reads them (profiles/audio/media.c), with
/// every metadata key it reads that the daemon's first track has.
func expectBluetoothTyping(_ registered: BlueZEvent, sourceLocation: SourceLocation = #_sourceLocation) {
    let properties = registered.object("properties").mapValues { $0 as? String ?? "?" }
    let expected = [
        "PlaybackStatus": "s", "LoopStatus": "s", "Shuffle": "b", "Position": "x", "CanControl": "b",
        "CanPlay": "b", "CanPause": "b", "CanGoNext": "b", "CanGoPrevious": "b", "Metadata": "a{sv}",
    ]
    for (name, signature) in expected {
        #expect(properties[name] == signature, "\(name) in \(registered.line)", sourceLocation: sourceLocation)
    }
    let metadata = registered.object("metadata").mapValues { $0 as? String ?? "?" }
    let expectedMetadata = [
        "xesam:title": "s", "xesam:artist": "as", "xesam:album": "s", "mpris:length": "x", "xesam:trackNumber": "i",
    ]
    for (key, signature) in expectedMetadata {
        #expect(metadata[key] == signature, "\(key) in \(registered.line)", sourceLocation: sourceLocation)
    }
}

/// The car's buttons, each seen to reach the daemon (playerctl on the session bus) and its
/// effect coming back to the car as a `PropertiesChanged` on the registered object.
func driveLikeACar(_ standIn: BlueZStandIn, _ daemon: DaemonFixture) async throws {
    /// Sends `command` and waits for the change it causes. (bluetoothd awaits no reply, and
    /// mpris-proxy sends none for a method without results.)
    func press(_ command: String, changes name: String, to expected: @escaping @Sendable (Any?) -> Bool) async throws {
        standIn.forgetUnconsumedEvents()
        standIn.send(command)
        _ = try await standIn.next { $0.event == "sent" && $0.string("command") == command }
        _ = try await standIn.next { $0.event == "changed" && expected($0.object("values")[name]) }
    }
    func title(_ title: String) -> @Sendable (Any?) -> Bool {
        { ($0 as? [String: Any])?["xesam:title"] as? String == title }
    }
    try await press("Play", changes: "PlaybackStatus") { $0 as? String == "Playing" }
    #expect(try await daemon.playerctl("status") == "Playing")
    try await press("Pause", changes: "PlaybackStatus") { $0 as? String == "Paused" }
    #expect(try await daemon.playerctl("status") == "Paused")
    // Paused, so that Previous goes back a track however slow the machine (past 3 s of a
    // track it would start the track again).
    try await press("Next", changes: "Metadata", to: title("Tone 2"))
    #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
    try await press("Previous", changes: "Metadata", to: title("Tone 1"))
    #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
    try await press("Shuffle on", changes: "Shuffle") { $0 as? Bool == true }
    #expect(try await daemon.playerctl("shuffle") == "On")
    try await press("LoopStatus Playlist", changes: "LoopStatus") { $0 as? String == "Playlist" }
    #expect(try await daemon.playerctl("loop") == "Playlist")
    try await press("Play", changes: "PlaybackStatus") { $0 as? String == "Playing" }
    try await press("Stop", changes: "PlaybackStatus") { $0 as? String == "Stopped" }
    #expect(try await daemon.playerctl("status") == "Stopped")
}

/// The unique name (`:1.4`) that owns `name` on `bus`.
func uniqueName(of name: String, on bus: PrivateBus) async throws -> String {
    let output = try await bus.run(
        "dbus-send",
        [
            "--print-reply=literal", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetNameOwner", "string:\(name)",
        ]
    ).check()
    return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}
