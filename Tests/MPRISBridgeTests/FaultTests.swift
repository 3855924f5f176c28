import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The daemon when the world fails it: killed, its folders full or unwritable, its index damaged.
/// Each test checks what a user sees afterwards.
@Suite(.timeLimit(.minutes(2))) struct FaultTests {
    /// A power cut or a SIGKILL while playing: the restart resumes the track that played, near
    /// where it was, though nothing was saved on the way out.
    @Test func afterSIGKILLTheRestartResumesTheTrackAndPosition() async throws {
        let library = try await GeneratedLibrary.make(seconds: 20)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let first = try await DaemonFixture.start(on: bus, library: library)
            _ = try await first.playerctl("play")
            _ = try await first.playerctl("next")
            _ = try await first.playerctl("position", "12")
            #expect(try await first.playerctl("metadata", "title") == "Tone 2")
            // Saved as it happened, while playing on: no pause, no stop, no queue change.
            _ = try await SavedState.wait(in: first.stateDirectory) { saved in
                saved.currentIdentifier == library.tracks[1].path && saved.positionMilliseconds >= 12_000
            }
            kill(first.process.pid, SIGKILL)
            _ = await first.process.waitForExit()

            let second = try await DaemonFixture.start(on: bus, library: library)
            #expect(try await second.playerctl("metadata", "title") == "Tone 2")
            #expect(try await second.playerctl("status") == "Paused")
            let position = try #require(Double(try await second.playerctl("position")))
            #expect(position >= 12 && position < 20, "resumed at \(position)")
            try await second.stop()
        }
    }

    /// A state folder that cannot be written (here: a file is where the folder should be) costs
    /// the resume point, never playback, and is said once in the log, not at every change.
    @Test func anUnwritableStateFolderIsReportedOnceAndPlaybackGoesOn() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let stateFolder = library.folder.path + "/state"
            try Data("not a folder".utf8).write(to: URL(filePath: stateFolder))
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            _ = try await daemon.playerctl("play")
            _ = try await daemon.playerctl("next")
            _ = try await daemon.playerctl("volume", "0.4")
            _ = try await daemon.playerctl("pause")
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
            try await daemon.stop()
            let reports = daemon.process.capturedStdout.split(separator: "\n").filter { $0.contains("cannot save the player's state") }
            #expect(reports.count == 1, "\(reports)")
            #expect(reports.first?.contains("cannot save the player's state in \(stateFolder)") == true)
            #expect(reports.first?.contains("CocoaError") == false, "a sentence, not an error dump: \(reports)")
        }
    }
    /// A state folder that became read-only (a read-only mount, in a mount namespace of the
    /// daemon's own): what was saved is still restored, and saving says once that it cannot.
    @Test func aReadOnlyStateFolderStillRestoresWhatWasSaved() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let first = try await DaemonFixture.start(on: bus, library: library)
            _ = try await first.playerctl("play")
            _ = try await first.playerctl("next")
            _ = try await first.playerctl("pause")
            _ = try await first.playerctl("position", "3")
            try await first.stop()

            let state = library.folder.path + "/state"
            let script = """
                set -e
                mount --bind "$1" "$1"
                mount -o remount,bind,ro "$1"
                shift
                exec "$@" 2>&1
                """
            let process = try bus.spawn(
                "unshare",
                [
                    "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", state, daemonExecutable,
                    "--library", library.path, "--cache-dir", library.folder.path + "/cache", "--state-dir", state,
                    // No MPD face: these daemons' logs are counted, and they run beside others.
                    "--audio-sink", "fakesink sync=true", "--no-mpd",
                ])
            defer { process.kill() }
            _ = try await process.waitForLine(timeout: .seconds(20)) { $0.contains("ready:") }
            let daemon = DaemonFixture(bus: bus, library: library, process: process)
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
            #expect(try await daemon.playerctl("status") == "Paused")
            let position = try #require(Double(try await daemon.playerctl("position")))
            #expect(abs(position - 3) < 0.05, "restored at \(position)")
            _ = try await daemon.playerctl("next")
            _ = try await daemon.playerctl("volume", "0.4")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 3")
            try await daemon.stop()
            let output = process.capturedStdout
            #expect(!output.contains("ignoring the saved state"), "\(output)")
            let reports = output.split(separator: "\n").filter { $0.contains("cannot save the player's state") }
            #expect(reports.count == 1, "\(reports)")
        }
    }
    /// A cache disk full to the last byte when the daemon starts: the index is only a cache, so
    /// the daemon serves what it holds, says so once, and does not try to rescan into it.
    @Test func aFullCacheDiskAtStartServesTheIndexAsItIs() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let cache = library.folder.path + "/cache"
            // The cache on a small tmpfs filled up, in a mount namespace of the daemon's own,
            // which goes away with it.
            let script = """
                set -e
                cp "$1/index.sqlite" "$1.copy"
                mount -t tmpfs -o size=1m tmpfs "$1"
                cp "$1.copy" "$1/index.sqlite"
                dd if=/dev/zero of="$1/filler" bs=4096 2>/dev/null || true
                shift
                exec "$@" 2>&1
                """
            let process = try bus.spawn(
                "unshare",
                [
                    "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", cache, daemonExecutable,
                    "--library", library.path, "--cache-dir", cache, "--state-dir", library.folder.path + "/state",
                    // No MPD face: these daemons' logs are counted, and they run beside others.
                    "--audio-sink", "fakesink sync=true", "--no-mpd",
                ])
            defer { process.kill() }
            _ = try await process.waitForLine(timeout: .seconds(20)) { $0.contains("ready:") }
            let daemon = DaemonFixture(bus: bus, library: library, process: process)
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
            _ = try await daemon.playerctl("play")
            #expect(try await daemon.playerctl("status") == "Playing")
            #expect(try await daemon.client("titles") == ["Tone 1|Tone 2|Tone 3"])
            try await daemon.stop()
            let warnings = process.capturedStdout.split(separator: "\n").filter { $0.contains(" warning ") || $0.contains(" error ") }
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.contains("the index \(cache)/index.sqlite cannot be written") == true, "\(warnings)")
        }
    }
    /// An open-file limit below what the daemon needs (a service manager's `LimitNOFILE` set
    /// too low): the daemon says so and exits with a failure status before it connects, instead
    /// of stopping on a trap where a descriptor runs out, or starting without the one its
    /// handling of SIGTERM needs and ignoring the signal (as it did at 9). Seven leaves one or
    /// two past libdispatch's own (how many it opens first differs between machines); with none
    /// left (6) libdispatch itself may trap.
    @Test(arguments: [7, 9, 40, 63])
    func anOpenFileLimitBelowWhatTheDaemonNeedsIsAnError(limit: Int) async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            let process = try ChildProcess.spawn(
                "/bin/sh",
                [
                    "-c", "exec \"$0\" \"$@\" 2>&1", "prlimit", "--nofile=\(limit)", daemonExecutable, "--library",
                    library.path, "--cache-dir", library.folder.path + "/cache", "--state-dir",
                    library.folder.path + "/state", "--audio-sink", "fakesink", "--no-mpd",
                ],
                environment: bus.environment)
            defer { process.kill() }
            let status = try await process.waitForExit(timeout: .seconds(20))
            let output = process.capturedStdout
            #expect(status == 1, "\(output)")
            #expect(
                output.contains("the open-file limit is \(limit) (ulimit -n) and the daemon needs at least 64"),
                "\(output)")
        }
    }

    /// At the fewest open files it accepts (soft and hard limit 64), the daemon plays, answers
    /// its MPD face, and a SIGTERM stops it cleanly.
    @Test func atTheFewestOpenFilesItAcceptsTheDaemonPlaysAndStopsOnSIGTERM() async throws {
        // DaemonFixture.with ends with its stop, which sends SIGTERM and expects a clean exit.
        try await DaemonFixture.with(launcher: ["prlimit", "--nofile=64"]) { daemon in
            _ = try await daemon.playerctl("play")
            #expect(try await daemon.playerctl("status") == "Playing")
            #expect(try await daemon.mpc("current") == "Artist - Tone 1")
        }
    }

    /// A soft open-file limit under the hard one (1024 under 524288 is systemd's default) is
    /// raised to the hard one: many MPD clients do not run the daemon out of files.
    @Test func aSoftOpenFileLimitIsRaisedToTheHardOne() async throws {
        try await DaemonFixture.with(launcher: ["prlimit", "--nofile=100:4096"]) { daemon in
            let limits = try String(contentsOfFile: "/proc/\(daemon.process.pid)/limits", encoding: .utf8)
            let files = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
            #expect(files?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2) == ["4096", "4096"],
                "\(files ?? "")")
        }
    }

    /// The bus going away (a crashed or restarted dbus-daemon): the daemon saves where it was and
    /// exits with a failure status, so a service manager restarts it.
    @Test func losingTheBusSavesTheStateAndExitsWithAFailure() async throws {
        let library = try await GeneratedLibrary.make(seconds: 20)
        defer { library.remove() }
        let bus = try await PrivateBus.start()
        _ = try await DaemonFixture.scan(library).check()
        let daemon = try await DaemonFixture.start(on: bus, library: library)
        defer { daemon.process.kill() }
        _ = try await daemon.playerctl("play")
        _ = try await daemon.playerctl("position", "7")
        await bus.stop()
        let status = await daemon.process.waitForExit()
        #expect(status != 0)
        #expect(daemon.process.capturedStdout.contains("lost the connection to the message bus: saving the state"))
        let saved = try #require(SavedState.read(in: daemon.stateDirectory))
        #expect(saved.currentIdentifier == library.tracks[0].path)
        #expect(saved.positionMilliseconds >= 7_000, "\(saved)")
    }

    /// A file replaced by garbage after it was queued is skipped with a reason; the next plays.
    @Test func aFileCorruptedWhileQueuedIsSkipped() async throws {
        // Long tracks: the first must not end by itself before "next", however loaded the machine.
        try await DaemonFixture.with(library: try await GeneratedLibrary.make(seconds: 30)) { daemon in
            let second = daemon.library.path + "/" + daemon.library.tracks[1].path
            try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(filePath: second))
            _ = try await daemon.playerctl("play")
            _ = try await daemon.playerctl("next")
            _ = try await daemon.process.waitForLine { $0.contains("cannot play") && $0.contains("Tone%202") }
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 3")
            #expect(try await daemon.playerctl("status") == "Playing")
        }
    }

    /// An audio output that cannot start (here: a sink writing into a folder that does not exist):
    /// play says the device is missing, no track is blamed or skipped, and the daemon stays up.
    @Test func anAudioSinkThatFailsIsDeviceNotFoundAndSkipsNothing() async throws {
        try await DaemonFixture.with(arguments: ["--audio-sink", "filesink location=/nonexistent/folder/out.raw"]) {
            daemon in
            let played = try await daemon.client("call", "player", "Play")
            #expect(
                played == ["error org.mprisbridge.Error.DeviceNotFound: The player could not play: its output device is not available."],
                "\(played)")
            #expect(try await daemon.playerctl("status") == "Stopped")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
            #expect(daemon.process.capturedStdout.contains("the audio output failed"))
            #expect(!daemon.process.capturedStdout.contains("cannot play"))
        }
    }
    /// A damaged index (a crash mid-write, a bad disk) is a cache: rebuilt by the start's rescan,
    /// said in the log, and the library is back.
    @Test func aCorruptedIndexIsRebuiltAtStart() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let index = library.folder.path + "/cache/index.sqlite"
            let handle = try FileHandle(forWritingTo: URL(filePath: index))
            try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
            try handle.close()
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            _ = try await daemon.process.waitForLine { $0.contains("the media tree shows the scan's 3 tracks") }
            #expect(daemon.process.capturedStdout.contains("was damaged"), "\(daemon.process.capturedStdout)")
            #expect(try await daemon.client("titles") == ["Tone 1|Tone 2|Tone 3"])
            try await daemon.stop()
        }
    }
    /// A track load costs nothing that stays: GStreamer 1.22's soft volume left an element behind
    /// for each (about 4 KB: 4 MB over these 1,000 GoTo calls). The 10,000-load figure is the
    /// benchmark's.
    @Test func thousandsOfTrackChangesLeaveTheDaemonsMemoryWhereItWas() async throws {
        try await DaemonFixture.with { daemon in
            let script = """
                import dbus, sys
                player = dbus.SessionBus().get_object(sys.argv[1], "/org/mpris/MediaPlayer2")
                tracklist = dbus.Interface(player, "org.mpris.MediaPlayer2.TrackList")
                tracks = player.Get("org.mpris.MediaPlayer2.TrackList", "Tracks", dbus_interface="org.freedesktop.DBus.Properties")
                def rss():
                    for line in open("/proc/%s/status" % sys.argv[2]):
                        if line.startswith("VmRSS:"):
                            return int(line.split()[1])
                for i in range(200):
                    tracklist.GoTo(tracks[i % len(tracks)])
                before = rss()
                for i in range(1000):
                    tracklist.GoTo(tracks[i % len(tracks)])
                print(rss() - before)
                """
            let output = try await daemon.bus.python(script, [DaemonFixture.busName, "\(daemon.process.pid)"], timeout: .seconds(120))
            let growth = try #require(Int(output.stdout.trimmingSuffix()), "\(output)")
            print("1,000 track loads: the daemon's RSS grew \(growth) KB")
            #expect(growth < 2_000, "\(growth) KB")
        }
    }

    /// A client's largest messages cost the daemon memory only while they are read: ten calls
    /// of 120,000 object paths each (about 2 MB on the wire) and ten of 200,000, past the bound,
    /// leave its anonymous memory where it was (its whole RSS also counts code pages, which a
    /// loaded machine takes back and a later call brings in again). On a quiet machine that is
    /// within 200 KB. Under a full parallel suite with every core loaded, about 7 MB has been
    /// seen to stay, once, whose cause is not found; the bound is set above it and below the
    /// 17 MB one such call kept before the heap was trimmed after it, so the test still fails
    /// if a large message's memory is kept again.
    @Test func hugeMessagesLeaveTheDaemonsMemoryWhereItWas() async throws {
        try await DaemonFixture.with { daemon in
            // The start's rescan rebuilds the tree once it is done: measure after that.
            _ = try await daemon.process.waitForLine(timeout: .seconds(30)) { $0.contains("the media tree shows the scan's") }
            let script = """
                import dbus, sys, time
                bus = dbus.SessionBus()
                def rss():
                    for line in open("/proc/%s/status" % sys.argv[2]):
                        if line.startswith("RssAnon:"):
                            return int(line.split()[1])
                def send(count):
                    paths = dbus.Array([dbus.ObjectPath("/org/mpris/MediaPlayer2/Track/1")] * count, signature="o")
                    try:
                        bus.call_blocking(sys.argv[1], "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.TrackList",
                                          "GetTracksMetadata", "ao", [paths])
                        return "reply"
                    except dbus.DBusException as error:
                        return error.get_dbus_name()
                send(10)
                before = rss()
                replies = {send(count) for count in [120000] * 10 + [200000] * 10}
                # A large message is freed (and the heap trimmed) just after its reply is sent:
                # small calls after it, then the RSS once it has settled, or after 5 s.
                for _ in range(3):
                    send(1)
                deadline = time.monotonic() + 5
                while rss() - before >= 200 and time.monotonic() < deadline:
                    time.sleep(0.05)
                print(rss() - before, " ".join(sorted(replies)))
                """
            let output = try await daemon.bus.python(script, [DaemonFixture.busName, "\(daemon.process.pid)"], timeout: .seconds(120))
            let fields = output.stdout.trimmingSuffix().split(separator: " ")
            let growth = try #require(fields.first.flatMap { Int($0) }, "\(output)")
            print("20 huge messages: the daemon's anonymous memory grew \(growth) KB")
            #expect(fields.dropFirst() == ["org.freedesktop.DBus.Error.LimitsExceeded", "reply"], "\(output)")
            #expect(growth < 12_000, "\(growth) KB")
        }
    }
}
