import DBus
import DBusTestSupport
import Foundation
import Glibc
import MusicLibrary
import ProcessTestSupport
import TestMedia
import Testing

/// Long tracks remember where they were left, end to end: an audiobook played, moved, paused,
/// the daemon restarted, played again where it was; what a head unit sees of it in the tree;
/// a chapter played to its end; a rescan; and the options' bad values.
@Suite(.timeLimit(.minutes(3))) struct ResumeTests {
    static let tree = MediaTreeDaemonTests.self
    static let book = "album:Author\u{1F}Book"
    static let songs = "album:Band\u{1F}Songs"

    /// An audiobook (genre Audiobook: a chapter of 30 s and a short last one of 3 s) and a
    /// song of 30 s, in albums and folders of their own.
    static func makeLibrary() async throws -> GeneratedLibrary {
        let folder = try TemporaryDirectory(prefix: "bridge-resume")
        let tracks = [
            LibraryTrack(path: "Books/Book/01 Chapter One.ogg", format: .ogg, seconds: 30, title: "Chapter One", album: "Book", trackNumber: 1),
            LibraryTrack(path: "Books/Book/02 Last Chapter.ogg", format: .ogg, seconds: 3, title: "Last Chapter", album: "Book", trackNumber: 2),
            LibraryTrack(path: "Music/Songs/01 Song.ogg", format: .ogg, seconds: 30, title: "Song", album: "Songs", trackNumber: 1),
        ]
        let library = GeneratedLibrary(folder: folder, tracks: tracks)
        for (index, track) in tracks.enumerated() {
            let path = library.path + "/" + track.path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let isBook = track.album == "Book"
            try await TestMedia.generate(
                track.format, seconds: track.seconds, frequency: 220 * (index + 1),
                tags: TestMedia.Tags(
                    title: track.title, artist: isBook ? "Author" : "Band", album: track.album,
                    albumArtist: isBook ? "Author" : "Band", genre: isBook ? "Audiobook" : "Rock",
                    trackNumber: track.trackNumber),
                at: path)
        }
        return library
    }

    static func node(_ album: String, _ library: GeneratedLibrary, _ index: Int) -> String {
        tree.path("albums", album, tree.track(library, index))
    }

    /// The property `name` of MediaNode1 at `path`, as the head-unit client prints it.
    static func property(_ daemon: DaemonFixture, _ path: String, _ name: String) async throws -> String {
        try await tree.headUnit(daemon, ["get", path, "org.mprisbridge.MediaNode1", name]).first ?? ""
    }

    static func progress(_ daemon: DaemonFixture, _ path: String) async throws -> Double {
        let line = try await property(daemon, path, "PlaybackProgress")
        return try #require(Double(line.split(separator: " ").last ?? ""), "\(line)")
    }

    /// Waits until the node at `path` shows a progress `accepts` takes: read again after each
    /// `Updated` of its album (which the daemon sends once the place is saved).
    static func waitForProgress(
        _ daemon: DaemonFixture, _ path: String, watcher: ChildProcess, album: String,
        _ accepts: (Double) -> Bool
    ) async throws -> Double {
        var progress = try await Self.progress(daemon, path)
        let deadline = ContinuousClock.now + .seconds(15)
        while !accepts(progress), ContinuousClock.now < deadline {
            _ = try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "updated " + tree.path("albums", album) }
            progress = try await Self.progress(daemon, path)
        }
        return progress
    }

    static func watchTree(_ daemon: DaemonFixture) async throws -> ChildProcess {
        let watcher = try daemon.bus.spawn(
            PrivateBus.systemPython,
            ["-u", "\(repositoryRoot)/Tests/MPRISTests/Python/watch_tree.py", tree.treeName, tree.root])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }

    static func position(_ daemon: DaemonFixture) async throws -> Double {
        try #require(Double(try await daemon.playerctl("position")))
    }

    /// The point saved in the index for `path`, read with SQLite as any client would.
    static func savedPoint(_ daemon: DaemonFixture, _ path: String) throws -> (milliseconds: Int64, finished: Bool)? {
        let database = try SQLiteDatabase(path: daemon.cacheDirectory + "/index.sqlite")
        var found: (Int64, Bool)?
        try database.forEachRow("SELECT position_ms, finished FROM resume_points WHERE path = ?", [.text(path)]) { row in
            found = (row.integer(0) ?? -1, row.integer(1) == 1)
        }
        return found
    }

    /// What a listener of audiobooks expects: one played, moved to 10 s and paused; the daemon stopped
    /// by its pid and started again; opening the audiobook again plays it from 10 s. Meanwhile
    /// the tree shows how far it was listened to, and a rescan that reads the file again keeps
    /// the place.
    @Test func anAudiobookResumesAtItsPositionAfterARestartAndTheTreeShowsItsProgress() async throws {
        let library = try await Self.makeLibrary()
        defer { library.remove() }
        try await PrivateBus.with { bus in
            _ = try await DaemonFixture.scan(library).check()
            var daemon = try await DaemonFixture.start(on: bus, library: library)
            defer { daemon.process.kill() }
            let chapter = Self.node(Self.book, library, 0)
            let song = Self.node(Self.songs, library, 2)
            // Never played: -1, in a container that displays progress; a song: -1, in one that does not.
            #expect(try await Self.property(daemon, chapter, "PlaybackProgress") == "Double -1.0")
            #expect(try await Self.property(daemon, chapter, "DisplaysPlaybackProgress") == "Boolean 1")
            #expect(try await Self.property(daemon, song, "DisplaysPlaybackProgress") == "Boolean 0")
            // What a car shows as a badge: only where progress is shown.
            #expect(try await Self.property(daemon, chapter, "CompletionStatus") == "String not-played")
            #expect(try await Self.property(daemon, song, "CompletionStatus") == "String ")
            let watcher = try await Self.watchTree(daemon)
            defer { watcher.kill() }

            _ = try await daemon.playerctl("open", library.tracks[0].url(in: library.path))
            #expect(try await daemon.playerctl("metadata", "title") == "Chapter One")
            _ = try await daemon.playerctl("position", "10")
            _ = try await daemon.playerctl("pause")
            let paused = try await Self.position(daemon)
            // 10 s and however long it played on before the pause (long on a loaded machine).
            #expect(paused >= 10 && paused < 12, "paused at \(paused)")
            let progress = try await Self.waitForProgress(daemon, chapter, watcher: watcher, album: Self.book) {
                abs($0 - paused / 30) < 0.02
            }
            #expect(abs(progress - paused / 30) < 0.02, "the tree shows \(progress) of the chapter listened to")
            #expect(try await Self.property(daemon, chapter, "CompletionStatus") == "String partially-played")
            // A song played and paused remembers nothing.
            _ = try await daemon.playerctl("open", library.tracks[2].url(in: library.path))
            _ = try await daemon.playerctl("position", "12")
            _ = try await daemon.playerctl("pause")
            #expect(try await Self.property(daemon, song, "PlaybackProgress") == "Double -1.0")
            #expect(try Self.savedPoint(daemon, library.tracks[2].path) == nil)

            // Rescanned after the file changed on disk: its row is read again, its place stays.
            try await daemon.stop()
            let chapterFile = library.path + "/" + library.tracks[0].path
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: chapterFile)
            let rescan = try await DaemonFixture.scan(library).check()
            #expect(rescan.stdout.contains("1 updated"), "\(rescan.stdout)")
            let saved = try #require(try Self.savedPoint(daemon, library.tracks[0].path))
            #expect(abs(Double(saved.milliseconds) / 1000 - paused) < 0.5 && !saved.finished, "\(saved)")

            daemon = try await DaemonFixture.start(on: bus, library: library)
            #expect(abs(try await Self.progress(daemon, chapter) - paused / 30) < 0.02, "after the restart")
            _ = try await daemon.playerctl("open", library.tracks[0].url(in: library.path))
            #expect(try await daemon.playerctl("metadata", "title") == "Chapter One")
            #expect(try await daemon.playerctl("status") == "Playing")
            let resumed = try await Self.position(daemon)
            #expect(resumed >= paused - 0.3 && resumed < paused + 3, "resumed at \(resumed), left at \(paused)")
            try await daemon.stop()
        }
    }

    /// A chapter played to its end is finished (progress 1), and playing it again starts at 0.
    @Test func aChapterPlayedToItsEndIsFinishedAndStartsAgainFromItsBeginning() async throws {
        try await DaemonFixture.with(library: try await Self.makeLibrary()) { daemon in
            let library = daemon.library
            let last = Self.node(Self.book, library, 1)
            let watcher = try await Self.watchTree(daemon)
            defer { watcher.kill() }
            // Played from the tree: the album is queued from its last chapter, which is the end.
            #expect(try await Self.tree.headUnit(daemon, ["play", last]).first?.hasPrefix("played") == true)
            let finished = try await Self.waitForProgress(daemon, last, watcher: watcher, album: Self.book) { $0 == 1 }
            #expect(finished == 1)
            #expect(try Self.savedPoint(daemon, library.tracks[1].path).map { $0.finished } == true)

            #expect(try await Self.tree.headUnit(daemon, ["play", last]).first?.hasPrefix("played") == true)
            // Paused at once, before the short chapter can end again (a loaded machine may take
            // seconds between two client calls).
            _ = try await daemon.playerctl("pause")
            let position = try await Self.position(daemon)
            #expect(position < 2, "a finished chapter starts again from its beginning, not at \(position)")
            // In progress again.
            let again = try await Self.waitForProgress(daemon, last, watcher: watcher, album: Self.book) { $0 < 1 }
            #expect(again < 1)
        }
    }

    @Test func badResumeOptionsAreRefusedWithTheReason() async throws {
        let folder = try TemporaryDirectory(prefix: "bridge-resume-options")
        defer { folder.remove() }
        let cases: [([String], String)] = [
            (["--resume-longer-than", "twenty"], "'twenty' is invalid for '--resume-longer-than <length>'"),
            (["--resume-longer-than=-5"], "'-5' is invalid for '--resume-longer-than <length>'"),
            (["--resume-longer-than", "20x"], "'20x' is invalid for '--resume-longer-than <length>'"),
            (["--resume-longer-than", "30s20m"], "'30s20m' is invalid"),
            (["--resume-folder", "/etc"], "--resume-folder /etc: not a folder of the library \(folder.path)"),
            (["--resume-folder", "../x"], "--resume-folder ../x: not a folder of the library"),
            (["--resume-genre", ""], "--resume-genre \"\": a genre needs a name"),
        ]
        for (arguments, message) in cases {
            try await DaemonFixture.expectRefusal(of: arguments, library: folder.path, saying: message)
        }
        // Good values parse (checked with --help, which validates nothing else and exits 0).
        for good in ["0", "off", "90", "1h30m", "20m", "1m30s", "12.5"] {
            let output = try await ChildProcess.run(daemonExecutable, ["serve", "--resume-longer-than", good, "--help"])
            #expect(output.succeeded, "\(good): \(output.stderr)")
        }
    }
}
