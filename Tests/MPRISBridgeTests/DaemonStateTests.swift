import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The daemon's saved state end to end: an earlier version's files are moved into
/// `state.sqlite`, and a change writes what changed, not the queue.
@Suite(.timeLimit(.minutes(2))) struct DaemonStateTests {
    /// `state.json` as an earlier version wrote it: `entries` (identifier, nil for no URL) in
    /// the order added, the play order, the place and the modes.
    static func writeEarlierState(
        in folder: String, entries: [String], playOrder: [Int], current: String, positionMilliseconds: Int,
        volume: Double = 1, repeatMode: String = "off", shuffleMode: String = "off", sequence: Int = 1
    ) throws {
        let object: [String: Any] = [
            "addedOrder": entries.map { ["identifier": $0] }, "playOrder": playOrder, "currentIdentifier": current,
            "positionMilliseconds": positionMilliseconds, "volume": volume, "rate": 1.0, "repeatMode": repeatMode,
            "shuffleMode": shuffleMode, "saveSequence": sequence,
        ]
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(filePath: folder + "/state.json"))
    }

    /// `wchar` of `/proc/PID/io`: the bytes the process passed to write calls (files, pipes; the
    /// bus's messages go through `send`, which it does not count).
    static func writtenBytes(_ pid: pid_t) throws -> Int {
        let io = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("wchar:") })
        return try #require(Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// A daemon started on a folder with only an earlier version's `state.json` and a newer
    /// `resume.json` restores that queue, its order, the place and the modes, moves them into
    /// `state.sqlite` and removes the files; a restart then restores the same from the database.
    @Test func anEarlierVersionsStateIsRestoredAndMovedIntoTheDatabase() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let state = library.folder.path + "/state"
            try Self.writeEarlierState(
                in: state, entries: library.tracks.map(\.path), playOrder: [2, 0, 1], current: library.tracks[0].path,
                positionMilliseconds: 2_000, volume: 0.4, repeatMode: "all", shuffleMode: "items", sequence: 3)
            // The resume point written after the state: it counts.
            try #"{"sequence":4,"currentIdentifier":"\#(library.tracks[1].path)","positionMilliseconds":3500}"#
                .write(toFile: state + "/resume.json", atomically: true, encoding: .utf8)

            for start in ["first", "restart"] {
                let daemon = try await DaemonFixture.start(on: bus, library: library)
                #expect(try await daemon.client("titles") == ["Tone 3|Tone 1|Tone 2"], "\(start)")
                #expect(try await daemon.playerctl("metadata", "title") == "Tone 2", "\(start)")
                #expect(try await daemon.playerctl("status") == "Paused", "\(start)")
                let position = try #require(Double(try await daemon.playerctl("position")))
                #expect(abs(position - 3.5) < 0.05, "\(start): restored at \(position)")
                #expect(try await daemon.playerctl("volume") == "0.400000", "\(start)")
                #expect(try await daemon.playerctl("loop") == "Playlist", "\(start)")
                #expect(try await daemon.playerctl("shuffle") == "On", "\(start)")
                try await daemon.stop()
                #expect(FileManager.default.fileExists(atPath: state + "/state.sqlite"), "\(start)")
                #expect(!FileManager.default.fileExists(atPath: state + "/state.json"), "\(start)")
                #expect(!FileManager.default.fileExists(atPath: state + "/resume.json"), "\(start)")
                #expect(daemon.process.capturedStdout.contains("moved the saved state") == (start == "first"), "\(start)")
            }
        }
    }

    /// With 20,000 entries queued, one AddTrack and one track change each write a few
    /// kilobytes, where the queue written whole is about a megabyte (as `state.json` it was
    /// rewritten at every queue edit). Counted as the bytes the daemon passes to write calls,
    /// from the call until the database holds the change.
    @Test func anAddTrackAndATrackChangeWriteKilobytesNotTheQueue() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            // The library's three tracks queued again and again, as `<path>#<n>`: quicker to make
            // than 20,000 files, and restored like any saved queue.
            let count = 20_000
            let entries = (0..<count).map { index in
                let path = library.tracks[index % 3].path
                return index < 3 ? path : "\(path)#\(index / 3 + 1)"
            }
            let state = library.folder.path + "/state"
            try Self.writeEarlierState(
                in: state, entries: entries, playOrder: Array(0..<count), current: entries[0], positionMilliseconds: 0)
            let daemon = try await DaemonFixture.start(on: bus, library: library)
            defer { daemon.process.kill() }
            #expect(daemon.process.capturedStdout.contains("restored a queue of \(count) entries"))
            // The start's rescan is done (it writes the index): measure after it.
            _ = try await daemon.process.waitForLine(timeout: .seconds(30)) { $0.contains("the media tree shows the scan's") }
            let whole = try #require(try FileManager.default.attributesOfItem(atPath: state + "/state.sqlite")[.size] as? Int)

            let beforeAdd = try Self.writtenBytes(daemon.process.pid)
            let third = library.tracks[2].url(in: library.path)
            let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
            #expect(try await daemon.client("call", "tracklist", "AddTrack", "s:\(third)", "o:\(noTrack)", "b:false") == ["ok"])
            _ = try await SavedState.wait(in: state) { $0.entryCount == count + 1 }
            let added = try Self.writtenBytes(daemon.process.pid) - beforeAdd

            let beforeNext = try Self.writtenBytes(daemon.process.pid)
            _ = try await daemon.playerctl("next")
            _ = try await SavedState.wait(in: state) { $0.currentIdentifier == entries[1] }
            let trackChange = try Self.writtenBytes(daemon.process.pid) - beforeNext

            print("\(count) entries (\(whole / 1024) KB saved): AddTrack wrote \(added) B, a track change \(trackChange) B")
            #expect(whole > 500_000, "the queue saved whole is \(whole) B")
            #expect(added > 0 && added <= 64 * 1024, "AddTrack wrote \(added) B")
            #expect(trackChange > 0 && trackChange <= 16 * 1024, "a track change wrote \(trackChange) B")
            try await daemon.stop()
        }
    }
    /// A Play sent the moment the bus name appears (a media key that started the daemon through
    /// D-Bus activation) is carried out on the queue the daemon is about to have (the library,
    /// on a first start), not dropped for an empty one.
    /// Indexed before, the queue is the index's; on a first start (no index yet), it is what the
    /// start-up scan finds, and the Play waits for that scan.
    @Test(arguments: [true, false])
    func aPlaySentAsSoonAsTheNameAppearsPlaysTheQueue(indexedBefore: Bool) async throws {
        let library = try await GeneratedLibrary.make(seconds: 30)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            if indexedBefore { #expect(try await DaemonFixture.scan(library).succeeded) }
            let client = try ChildProcess.spawn(
                PrivateBus.systemPython, [pythonScript("play_on_start.py"), DaemonFixture.busName],
                environment: bus.pythonEnvironment)
            defer { client.kill() }
            _ = try await client.waitForLine { $0 == "watching" }
            let folder = library.folder.path
            let daemon = try ChildProcess.spawn(
                daemonExecutable,
                [
                    "--library", library.path, "--cache-dir", folder + "/cache", "--state-dir", folder + "/state",
                    "--audio-sink", "fakesink sync=true", "--no-mpd",
                ], environment: bus.environment)
            defer { daemon.kill() }
            let reply = try await client.waitForLine(timeout: .seconds(20)) { _ in true }
            #expect(reply == "played")
            let started = DaemonFixture(bus: bus, library: library, process: daemon)
            #expect(try await eventually { try await started.playerctl("status") == "Playing" })
            #expect(try await started.playerctl("metadata", "title") == "Tone 1")
            try await started.stop()
        }
    }
}
