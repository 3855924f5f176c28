import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import TestMedia
import Testing

/// The daemon end to end: real files, real playback into `fakesink sync=true`,
/// driven by playerctl and python3-dbus on a private bus.
@Suite struct DaemonTests {
    @Test func playerctlDrivesTheDaemon() async throws {
        try await DaemonFixture.with { daemon in
            #expect(try await daemon.playerctl("status") == "Stopped")
            #expect(try await daemon.playerctl("metadata", "--format", "{{artist}} - {{title}} ({{album}})") == "Artist - Tone 1 (Generated)")
            _ = try await daemon.playerctl("play")
            #expect(try await daemon.playerctl("status") == "Playing")
            _ = try await daemon.playerctl("next")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
            #expect(try await daemon.playerctl("status") == "Playing")
            _ = try await daemon.playerctl("previous")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
            _ = try await daemon.playerctl("pause")
            #expect(try await daemon.playerctl("status") == "Paused")
            _ = try await daemon.playerctl("position", "1.5")
            let position = try #require(Double(try await daemon.playerctl("position")))
            #expect(abs(position - 1.5) < 0.05, "paused at \(position)")
            _ = try await daemon.playerctl("volume", "0.5")
            #expect(try await daemon.playerctl("volume") == "0.500000")
            _ = try await daemon.playerctl("loop", "Track")
            #expect(try await daemon.playerctl("loop") == "Track")
            _ = try await daemon.playerctl("shuffle", "On")
            #expect(try await daemon.playerctl("shuffle") == "On")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1", "shuffling keeps the current track")
            _ = try await daemon.playerctl("stop")
            #expect(try await daemon.playerctl("status") == "Stopped")
            let third = daemon.library.tracks[2].url(in: daemon.library.path)
            _ = try await daemon.playerctl("open", third)
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 3")
            #expect(try await daemon.playerctl("status") == "Playing")
        }
    }

    @Test func theQueueModesVolumeAndPositionSurviveARestart() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            let first = try await DaemonFixture.start(on: bus, library: library)
            _ = try await first.playerctl("play")
            _ = try await first.playerctl("next")
            _ = try await first.playerctl("pause")
            _ = try await first.playerctl("position", "1.25")
            _ = try await first.playerctl("loop", "Playlist")
            _ = try await first.playerctl("shuffle", "On")
            _ = try await first.playerctl("volume", "0.3")
            let order = try await first.client("tracks")
            try await first.stop()

            let second = try await DaemonFixture.start(on: bus, library: library)
            #expect(try await second.playerctl("status") == "Paused")
            #expect(try await second.playerctl("metadata", "title") == "Tone 2")
            let position = try #require(Double(try await second.playerctl("position")))
            #expect(abs(position - 1.25) < 0.05, "restored at \(position)")
            #expect(try await second.playerctl("loop") == "Playlist")
            #expect(try await second.playerctl("shuffle") == "On")
            #expect(try await second.playerctl("volume") == "0.300000")
            #expect(try await second.client("tracks") == order)
            _ = try await second.playerctl("play")
            #expect(try await second.playerctl("status") == "Playing")
            let resumed = try #require(Double(try await second.playerctl("position")))
            #expect(resumed >= 1.2, "resumed at \(resumed)")
            try await second.stop()
        }
    }

    @Test func theTrackListIsTheQueue() async throws {
        try await DaemonFixture.with { daemon in
            #expect(try await daemon.client("get", "root", "HasTrackList") == ["true"])
            #expect(try await daemon.client("titles") == ["Tone 1|Tone 2|Tone 3"])
            let ids = try #require(try await daemon.client("tracks").first).split(separator: " ").map(String.init)
            #expect(ids.count == 3)
            #expect(try await daemon.client("get", "tracklist", "CanEditTracks") == ["true"])

            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            let third = daemon.library.tracks[2].url(in: daemon.library.path)
            let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
            #expect(try await daemon.client("call", "tracklist", "AddTrack", "s:\(third)", "o:\(noTrack)", "b:false") == ["ok"])
            let added = try await watcher.waitForLine { $0.hasPrefix("added ") }
            #expect(added.hasSuffix(" after \(noTrack)"), "inserted first: \(added)")
            let addedID = String(added.dropFirst("added ".count).prefix { $0 != " " })
            #expect(!ids.contains(addedID), "a second entry of the same file gets its own id")
            #expect(try await daemon.client("tracks") == [([addedID] + ids).joined(separator: " ")])
            #expect(try await daemon.client("titles") == ["Tone 3|Tone 1|Tone 2|Tone 3"])

            #expect(try await daemon.client("call", "tracklist", "RemoveTrack", "o:\(ids[0])") == ["ok"])
            #expect(try await watcher.waitForLine { $0.hasPrefix("removed ") } == "removed \(ids[0])")
            #expect(try await daemon.client("titles") == ["Tone 3|Tone 2|Tone 3"])

            #expect(try await daemon.client("call", "tracklist", "GoTo", "o:\(ids[1])") == ["ok"])
            #expect(try await daemon.client("current") == ["\(ids[1]) Tone 2"])
            #expect(try await daemon.playerctl("status") == "Playing")

            // Bad input changes nothing.
            let bad = try await daemon.client("call", "tracklist", "AddTrack", "s:not%20a%20uri", "o:\(noTrack)", "b:false")
            #expect(bad.first?.hasPrefix("error org.freedesktop.DBus.Error.InvalidArgs") == true, "\(bad)")
            #expect(try await daemon.client("titles") == ["Tone 3|Tone 2|Tone 3"])
        }
    }

    @Test func corruptAndMissingFilesAreReportedAndSkipped() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        // Random bytes under an audio name, first in the folder.
        let corrupt = library.path + "/Artist/Generated/00 Corrupt.ogg"
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: corrupt))
        let scan = try await DaemonFixture.scan(library)
        #expect(scan.succeeded)
        #expect(scan.stderr.contains("cannot index Artist/Generated/00 Corrupt.ogg"), "\(scan)")
        #expect(scan.stdout.contains("3 added"), "\(scan)")
        // A file indexed and then deleted: the queue still names it.
        try FileManager.default.removeItem(atPath: library.path + "/" + library.tracks[0].path)
        try await PrivateBus.with { bus in
            let daemon = try await DaemonFixture.start(on: bus, library: library, arguments: ["--no-scan"])
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")
            _ = try await daemon.playerctl("play")
            #expect(try await daemon.playerctl("status") == "Playing")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
            try await daemon.stop()
            #expect(daemon.process.capturedStdout.contains("cannot play"))
        }
    }

    @Test func aSecondScanOfAnUnchangedLibraryReadsNothing() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        let first = try await DaemonFixture.scan(library).check()
        #expect(first.stdout.contains("3 added"), "\(first)")
        let second = try await DaemonFixture.scan(library).check()
        #expect(second.stdout.contains("0 added, 0 updated, 0 removed, 3 unchanged"), "\(second)")
    }

    @Test func badArgumentsGetAClearErrorAndAnExitStatus() async throws {
        let missing = try await ChildProcess.run(daemonExecutable, ["--library", "/nonexistent/music"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--library /nonexistent/music: no such folder"), "\(missing)")
        let badName = try await ChildProcess.run(daemonExecutable, ["--name", "9 lives"])
        #expect(badName.status == 64)
        #expect(badName.stderr.contains("--name"), "\(badName)")
    }
}

/// The daemon against the wall clock. It needs a quiet machine, so `Scripts/test` runs suites
/// named `RealTimeTests` alone, one test at a time, after all the others.
@Suite struct DaemonRealTimeTests {
    @Test func theEndOfATrackPlaysTheNextInRealTime() async throws {
        try await DaemonFixture.with(library: try await GeneratedLibrary.make(seconds: 2)) { daemon in
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            let started = ContinuousClock.now
            _ = try await daemon.playerctl("play")
            _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0.contains("Metadata=Tone 2") }
            let elapsed = ContinuousClock.now - started
            // Tone 1 lasts 2 s: the hand-over comes when it has really played.
            #expect(elapsed > .milliseconds(1800) && elapsed < .milliseconds(3000), "after \(elapsed)")
            #expect(try await daemon.playerctl("status") == "Playing")
        }
    }
}

/// Covers embedded in tracks: read from the index only when a remote is shown them (the
/// player's track, the track list, a listing), into the one artwork store MPRIS and the tree
/// share.
@Suite struct EmbeddedCoverTests {
    /// An Ogg Vorbis file titled `title` whose front cover is `picture`, in a
    /// `METADATA_BLOCK_PICTURE` comment written by vorbisenc.
    static func generateOggWithCover(at path: String, title: String, picture: [UInt8]) async throws {
        func word(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).bigEndian) { Array($0) } }
        let mime = Array("image/png".utf8)
        let block = word(3) + word(mime.count) + mime + word(0) + word(64) + word(64) + word(24) + word(0) + word(picture.count) + picture
        let tags = "title=(string)\\\"\(title)\\\",artist=(string)Artist,album=(string)Zed,album-artist=(string)Artist,"
            + "extended-comment=(string)\\\"METADATA_BLOCK_PICTURE=\(Data(block).base64EncodedString())\\\""
        let arguments = [
            "-q", "audiotestsrc", "num-buffers=120", "samplesperbuffer=4410", "!", "audio/x-raw,rate=44100,channels=2", "!",
            "audioconvert", "!", "taginject", "tags=\"\(tags)\"", "!", "vorbisenc", "!", "oggmux", "!", "filesink", "location=\(path)",
        ]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }

    @Test func anEmbeddedCoverIsServedFromTheArtworkStoreOnceShown() async throws {
        let library = try await GeneratedLibrary.make()
        defer { library.remove() }
        let picturePath = library.folder.path + "/cover.png"
        try await TestMedia.generatePicture(size: 64, at: picturePath)
        let picture = try [UInt8](Data(contentsOf: URL(fileURLWithPath: picturePath)))
        // Last in album order ("Zed" after "Generated"): the queue starts on a track without one.
        try FileManager.default.createDirectory(atPath: library.path + "/Artist/Zed", withIntermediateDirectories: true)
        try await Self.generateOggWithCover(at: library.path + "/Artist/Zed/01 Pictured.ogg", title: "Pictured", picture: picture)
        try await DaemonFixture.with(library: library) { daemon in
            // The daemon writes covers into the shared store only; the track list shows the
            // queue's first entries (this one among them) with their covers.
            let artwork = daemon.cacheDirectory + "/artwork"
            #expect(!FileManager.default.fileExists(atPath: daemon.cacheDirectory + "/covers"))

            let lines = try await MediaTreeDaemonTests.headUnit(
                daemon, ["play", MediaTreeDaemonTests.path("tracks", "track:Artist/Zed/01 Pictured.ogg")])
            #expect(lines.first?.hasPrefix("played") == true, "\(lines)")
            let artURL = try await daemon.playerctl("metadata", "mpris:artUrl")
            let path = try #require(URL(string: artURL)).path(percentEncoded: false)
            #expect(path.hasPrefix(artwork + "/") && path.hasSuffix(".png"), "\(artURL)")
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == picture)
            #expect(try FileManager.default.contentsOfDirectory(atPath: artwork).filter { !$0.hasPrefix(".") }.count == 1)
            #expect(!FileManager.default.fileExists(atPath: daemon.cacheDirectory + "/covers"))
        }
    }
}
