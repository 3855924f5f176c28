import AudioTags
import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import TestMedia
import Testing

/// The daemon's MPD face end to end, driven by the clients users have: mpc, python-mpd2 replaying
/// Automotive Grade Linux's media backend and Home Assistant's integration, and a plain socket.
/// Each test checks what the user of such a client would see, and that MPRIS (playerctl) sees
/// the same player.
@Suite(.timeLimit(.minutes(3))) struct MPDDaemonTests {
    // MARK: mpc

    /// What an mpc user types: status, ls, add, play, current, each without a warning on stderr
    /// (a command mpc expected and did not get); `mpc current` follows a playerctl next.
    @Test func mpcBrowsesQueuesPlaysAndFollowsPlayerctl() async throws {
        try await DaemonFixture.with { daemon in
            let tracks = daemon.library.tracks
            let status = try await daemon.mpc("status")
            #expect(status.contains("volume:") && status.contains("repeat:"), "\(status)")
            #expect(try await daemon.mpc("ls") == "Artist")
            #expect(try await daemon.mpc("ls", "Artist/Generated") == tracks.map(\.path).joined(separator: "\n"))

            _ = try await daemon.mpc("clear")
            _ = try await daemon.mpc("add", "Artist/Generated")
            #expect(try await daemon.mpc("playlist") == tracks.map { "Artist - \($0.title)" }.joined(separator: "\n"))
            let playing = try await daemon.mpc("play")
            #expect(playing.hasPrefix("Artist - Tone 1\n[playing] #1/3"), "\(playing)")
            #expect(try await daemon.mpc("current") == "Artist - Tone 1")
            #expect(try await eventually { try await daemon.playerctl("metadata", "title") == "Tone 1" })

            // A track changed over MPRIS is the one mpc shows.
            _ = try await daemon.playerctl("next")
            #expect(try await eventually { try await daemon.mpc("current") == "Artist - Tone 2" })
            #expect(try await daemon.mpc("status").contains("[playing] #2/3"))
        }
    }

    // MARK: Events both ways

    /// An MPD client parked in idle on its own connection (as every MPD client keeps one) wakes
    /// with `player` when playerctl pauses or plays: three times, each with a fresh client.
    @Test func anIdleClientWakesWhenPlayerctlPausesOrPlays() async throws {
        try await DaemonFixture.with { daemon in
            _ = try await daemon.playerctl("play")
            #expect(try await eventually { try await daemon.mpc("status").contains("[playing]") })
            // From playerctl's start (a process, a bus call), and from its return (the pause
            // done), to the woken client's line read.
            var latencies: [(fromStart: Duration, fromReturn: Duration)] = []
            for expected in ["[paused]", "[playing]", "[paused]"] {
                let idler = try daemon.spawnMPDClient("idle", "player")
                defer { idler.kill() }
                _ = try await idler.waitForLine { $0.contains(#""step": "ready""#) }
                let started = ContinuousClock.now
                _ = try await daemon.playerctl("play-pause")
                let returned = ContinuousClock.now
                let line = try await idler.waitForLine(timeout: .seconds(5)) { $0.contains(#""step": "woken""#) }
                latencies.append((ContinuousClock.now - started, ContinuousClock.now - returned))
                #expect(try json(line)["changed"] as? [String] == ["player"], "\(line)")
                #expect(try await daemon.mpc("status").contains(expected))
                _ = try await idler.waitForExit(timeout: .seconds(5))
            }
            print("idle wake latencies (from playerctl's start, from its return): \(latencies)")
            // Within 1 s of the pause, however loaded the machine (playerctl's own start is not the daemon's).
            #expect(latencies.allSatisfy { $0.fromReturn < .seconds(1) }, "\(latencies)")
        }
    }

    /// An `mpc next` is seen on MPRIS as a PropertiesChanged of Metadata with the new title.
    @Test func playerctlSeesAnMPDNext() async throws {
        try await DaemonFixture.with { daemon in
            _ = try await daemon.mpc("clear")
            _ = try await daemon.mpc("add", "Artist/Generated")
            _ = try await daemon.mpc("play")
            #expect(try await eventually { try await daemon.playerctl("status") == "Playing" })
            let watcher = try await daemon.watch()
            defer { watcher.kill() }
            let started = ContinuousClock.now
            _ = try await daemon.mpc("next")
            let line = try await watcher.waitForLine(timeout: .seconds(5)) {
                $0.hasPrefix("changed player") && $0.contains("Metadata=")
            }
            print("PropertiesChanged after mpc next: \(ContinuousClock.now - started)")
            #expect(line.contains("Metadata=Tone 2"), "\(line)")
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 2")
        }
    }

    // MARK: Real clients' sequences

    /// Automotive Grade Linux's media backend: it queues the whole library, reads the queue, an
    /// event connection wakes on play, the current song and its embedded picture are read, and
    /// pause wakes the event connection again.
    @Test func aglSequence() async throws {
        let library = try await GeneratedLibrary.make()
        let picture = library.folder.path + "/cover.png"
        try await TestMedia.generatePicture(size: 160, at: picture)
        let pictureBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: picture)))
        // A song at the top of the library: mpd lists a folder's songs before its subfolders.
        try await EmbeddedCoverTests.generateOggWithCover(
            at: library.path + "/Pictured.ogg", title: "Pictured", picture: pictureBytes)
        try await DaemonFixture.with(library: library) { daemon in
            let steps = try await daemon.mpdClient("agl").map(json)
            let step = { (name: String) in steps.first { $0["step"] as? String == name } ?? [:] }
            #expect(step("version")["version"] as? String == "0.23.0")
            let queue = step("queue")["files"] as? [String]
            #expect(queue == ["Pictured.ogg"] + library.tracks.map(\.path), "\(steps)")
            #expect((step("woken")["changed"] as? [String])?.contains("player") == true, "\(steps)")
            let song = step("currentsong")["song"] as? [String: Any] ?? [:]
            #expect(song["file"] as? String == "Pictured.ogg", "\(song)")
            #expect(song["title"] as? String == "Pictured", "\(song)")
            let read = step("readpicture")
            #expect(read["size"] as? Int == pictureBytes.count, "\(read)")
            #expect(read["sha256"] as? String == (try await sha256(of: picture)))
            #expect(step("paused")["changed"] as? [String] == ["player"], "\(steps)")
            #expect(step("paused")["state"] as? String == "pause", "\(steps)")
            #expect(try await daemon.playerctl("status") == "Paused")
            #expect(try await daemon.playerctl("metadata", "title") == "Pictured")
        }
    }

    /// Home Assistant's mpd integration: `commands` once, then status, the current song, the
    /// stored playlists and the cover at each update; its actions (volume, load, play, seek,
    /// pause, next, stop) seen over MPD and over MPRIS alike.
    @Test func homeAssistantSequence() async throws {
        let library = try await GeneratedLibrary.make()
        let cover = library.path + "/Artist/Generated/cover.png"
        try await TestMedia.generatePicture(size: 96, at: cover)
        try "\(library.tracks[1].path)\n\(library.tracks[0].path)\n".write(
            toFile: library.path + "/Mix.m3u", atomically: true, encoding: .utf8)
        try await DaemonFixture.with(library: library) { daemon in
            let steps = try await daemon.mpdClient("home-assistant").map(json)
            let step = { (name: String) in steps.first { $0["step"] as? String == name } ?? [:] }
            #expect(step("commands")["has_albumart"] as? Bool == true, "\(steps)")
            #expect(step("commands")["has_readpicture"] as? Bool == true, "\(steps)")
            #expect(step("update")["playlists"] as? [String] == ["Mix.m3u"], "\(steps)")
            let playing = step("playing")
            #expect(playing["state"] as? String == "play", "\(playing)")
            #expect(playing["volume"] as? String == "40", "\(playing)")
            #expect(playing["repeat"] as? String == "1", "\(playing)")
            #expect(playing["title"] as? String == "Tone 2", "\(playing)")
            #expect(playing["file"] as? String == library.tracks[1].path, "\(playing)")
            #expect(playing["sha256"] as? String == (try await sha256(of: cover)), "\(playing)")
            let paused = step("paused")
            #expect(paused["state"] as? String == "pause", "\(paused)")
            let elapsed = paused["elapsed"] as? Double ?? -1
            #expect(elapsed >= 1.9 && elapsed < 3, "\(paused)")
            #expect(step("next")["title"] as? String == "Tone 1", "\(steps)")
            #expect(step("stopped")["state"] as? String == "stop", "\(steps)")
            // MPRIS shows the volume set over MPD, and the stop.
            let volume = Double(try await daemon.playerctl("volume")) ?? -1
            #expect(abs(volume - 0.4) < 0.005, "\(volume)")
            #expect(try await daemon.playerctl("status") == "Stopped")
        }
    }

    // MARK: Browsing and searching

    /// `lsinfo` mirrors the folders, `list … group` groups by album artist, filters find and
    /// search (case-insensitive), `count group` totals.
    @Test func browsingListingAndSearchingFollowTheFoldersAndTags() async throws {
        let library = try await Self.twoArtistLibrary()
        try await DaemonFixture.with(library: library) { daemon in
            let replies = try await daemon.mpdRaw(
                "lsinfo", "lsinfo Beta", #"lsinfo "Alpha/First Album""#, "list album group albumartist",
                #"find "(Artist == 'Guest')""#, #"search "(Album contains 'album')""#,
                #"find "(Album contains 'album')""#, #"find "((Artist == 'Beta') AND (Title != 'Three'))""#,
                "count group artist")
            func values(_ reply: [String], _ key: String) -> [String] {
                reply.compactMap { $0.hasPrefix(key + ": ") ? String($0.dropFirst(key.count + 2)) : nil }
            }
            let root = replies[0]
            #expect(Set(values(root, "directory")) == ["Alpha", "Beta"], "\(root)")
            #expect(values(root, "file") == ["Loose.ogg"], "\(root)")
            #expect(values(root, "playlist") == ["Mix.m3u"], "\(root)")
            #expect(root.last == "OK")
            let beta = replies[1]
            #expect(values(beta, "directory") == ["Beta/Second Album"], "\(beta)")
            #expect(values(beta, "file").isEmpty, "\(beta)")
            #expect(values(beta, "playlist") == ["Beta/Best.m3u"], "\(beta)")
            let album = replies[2]
            #expect(values(album, "file") == ["Alpha/First Album/01 One.ogg", "Alpha/First Album/02 Two.ogg"], "\(album)")
            #expect(values(album, "directory").isEmpty && values(album, "playlist").isEmpty, "\(album)")
            #expect(values(album, "Title") == ["One", "Two"], "\(album)")

            #expect(
                replies[3] == [
                    "AlbumArtist: Alpha", "Album: First Album", "AlbumArtist: Beta", "Album: Second Album",
                    "AlbumArtist: Gamma", "Album: Singles", "OK",
                ], "\(replies[3])")
            #expect(values(replies[4], "file") == ["Alpha/First Album/02 Two.ogg"], "\(replies[4])")
            #expect(
                Set(values(replies[5], "file")) == [
                    "Alpha/First Album/01 One.ogg", "Alpha/First Album/02 Two.ogg", "Beta/Second Album/01 Three.ogg",
                    "Beta/Second Album/02 Four.ogg",
                ], "\(replies[5])")
            #expect(replies[6] == ["OK"], "find is case-sensitive: \(replies[6])")
            #expect(values(replies[7], "file") == ["Beta/Second Album/02 Four.ogg"], "\(replies[7])")
            #expect(
                replies[8] == [
                    "Artist: Alpha", "songs: 1", "playtime: 3", "Artist: Beta", "songs: 2", "playtime: 6",
                    "Artist: Gamma", "songs: 1", "playtime: 3", "Artist: Guest", "songs: 1", "playtime: 3", "OK",
                ], "\(replies[8])")
        }
    }

    /// Five songs of three seconds: two albums by two album artists (one song of the first by
    /// a guest), a single at the top without an album artist, a playlist at the top and one in
    /// a folder.
    static func twoArtistLibrary() async throws -> GeneratedLibrary {
        let folder = try TemporaryDirectory(prefix: "bridge-mpd")
        let source = folder.path + "/source.ogg"
        try await TestMedia.generate(.ogg, seconds: 3, frequency: 330, tags: TestMedia.Tags(), at: source)
        let songs: [(path: String, title: String, artist: String, albumArtist: String?, album: String, number: Int)] = [
            ("Alpha/First Album/01 One.ogg", "One", "Alpha", "Alpha", "First Album", 1),
            ("Alpha/First Album/02 Two.ogg", "Two", "Guest", "Alpha", "First Album", 2),
            ("Beta/Second Album/01 Three.ogg", "Three", "Beta", "Beta", "Second Album", 1),
            ("Beta/Second Album/02 Four.ogg", "Four", "Beta", "Beta", "Second Album", 2),
            ("Loose.ogg", "Loose", "Gamma", nil, "Singles", 1),
        ]
        var tracks: [LibraryTrack] = []
        for song in songs {
            let path = folder.path + "/music/" + song.path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: source, toPath: path)
            var tags = [
                ("TITLE", song.title), ("ARTIST", song.artist), ("ALBUM", song.album), ("TRACKNUMBER", "\(song.number)"),
            ]
            if let albumArtist = song.albumArtist { tags.append(("ALBUMARTIST", albumArtist)) }
            try AudioTags.write(tags, to: path)
            tracks.append(
                LibraryTrack(
                    path: song.path, format: .ogg, seconds: 3, title: song.title, album: song.album,
                    trackNumber: song.number))
        }
        try FileManager.default.removeItem(atPath: source)
        try "Alpha/First Album/01 One.ogg\nLoose.ogg\n".write(
            toFile: folder.path + "/music/Mix.m3u", atomically: true, encoding: .utf8)
        try "Second Album/02 Four.ogg\n".write(
            toFile: folder.path + "/music/Beta/Best.m3u", atomically: true, encoding: .utf8)
        return GeneratedLibrary(folder: folder, tracks: tracks)
    }

    // MARK: Security and bounds

    /// With a password file, a client may only ping and list commands until it gives a
    /// password; a wrong one is refused, the right one grants what its line says.
    @Test func aPasswordFileGatesEveryCommand() async throws {
        let library = try await GeneratedLibrary.make()
        let passwords = library.folder.path + "/passwords"
        try "# MPD passwords\nsecret\nlistener@read\n".write(toFile: passwords, atomically: true, encoding: .utf8)
        chmod(passwords, 0o600)
        let socket = library.folder.path + "/mpd.socket"
        try await DaemonFixture.with(
            library: library, arguments: ["--mpd-password-file", passwords, "--mpd-port", "0", "--mpd-socket", socket]
        ) { daemon in
            try await daemon.waitForMPD()
            let anonymous = try await daemon.mpdRaw(
                "ping", "commands", "status", "currentsong", "lsinfo", "play", "password wrong", "status", "password secret",
                "status")
            #expect(anonymous[0] == ["OK"])
            // Only what needs no permission is listed.
            #expect(
                anonymous[1] == [
                    "command: binarylimit", "command: close", "command: commands", "command: notcommands",
                    "command: password", "command: ping", "command: tagtypes", "OK",
                ], "\(anonymous[1])")
            for (index, name) in [(2, "status"), (3, "currentsong"), (4, "lsinfo"), (5, "play"), (7, "status")] {
                #expect(anonymous[index].count == 1, "\(anonymous[index])")
                #expect(anonymous[index].last?.hasPrefix("ACK [4@0] {\(name)}") == true, "\(anonymous[index])")
            }
            #expect(anonymous[6].last?.hasPrefix("ACK [3@0] {password}") == true, "\(anonymous[6])")
            #expect(anonymous[8] == ["OK"], "\(anonymous[8])")
            #expect(anonymous[9].contains("state: stop") && anonymous[9].last == "OK", "\(anonymous[9])")
            // A password granting reading only: reading, not playing.
            let listener = try await daemon.mpdRaw("password listener", "status", "play")
            #expect(listener[0] == ["OK"] && listener[1].last == "OK", "\(listener)")
            #expect(listener[2].last?.hasPrefix("ACK [4@0] {play}") == true, "\(listener)")
            #expect(try await daemon.playerctl("status") == "Stopped")
        }
    }

    /// A password file others may read is refused at start, with a sentence saying what to do.
    @Test func aPasswordFileOthersMayReadIsRefusedAtStart() async throws {
        let folder = try TemporaryDirectory(prefix: "bridge-mpd-password")
        defer { folder.remove() }
        let passwords = folder.path + "/passwords"
        try "secret\n".write(toFile: passwords, atomically: true, encoding: .utf8)
        chmod(passwords, 0o644)
        try FileManager.default.createDirectory(atPath: folder.path + "/music", withIntermediateDirectories: true)
        try await DaemonFixture.expectRefusal(
            of: ["--mpd-password-file", passwords, "--mpd-port", "0", "--mpd-socket", folder.path + "/mpd.socket"],
            library: folder.path + "/music", saying: "may be read or written by other users; allow only its owner (chmod 600)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/mpd.socket"))
    }

    /// `--no-mpd`: neither the socket nor the port is listened on; MPRIS is served.
    @Test func noMPDListensNowhere() async throws {
        let library = try await GeneratedLibrary.make()
        let socket = library.folder.path + "/mpd.socket"
        let port = try freeTCPPort()
        try await DaemonFixture.with(
            library: library, arguments: ["--no-mpd", "--mpd-port", "\(port)", "--mpd-socket", socket]
        ) { daemon in
            _ = try await daemon.playerctl("play")
            #expect(try await eventually { try await daemon.playerctl("status") == "Playing" })
            #expect(!FileManager.default.fileExists(atPath: socket))
            #expect(!canConnect(toTCPPort: port))
            #expect(!daemon.process.capturedStdout.contains("MPD server listening"), "\(daemon.process.capturedStdout)")
        }
    }

    /// TCP on loopback only, on the port the log names (`--mpd-port 0` takes any free one); the
    /// Unix socket is its owner's only.
    @Test func tcpIsOnLoopbackOnlyAndTheSocketIsItsOwners() async throws {
        try await DaemonFixture.with { daemon in
            let log = daemon.process.capturedStdout
            let match = try #require(log.firstMatch(of: /tcp=127\.0\.0\.1:(\d+)/), "\(log)")
            let port = try #require(Int(match.1))
            #expect(port > 0)
            let output = try await ChildProcess.run(
                "mpc", ["-h", "127.0.0.1", "-p", "\(port)", "status"], environment: ["PATH": "/usr/bin:/bin"])
            #expect(output.succeeded && output.stdout.contains("volume:"), "\(output)")
            // Not reachable on the machine's other addresses.
            let addresses = ((try? await ChildProcess.run("hostname", ["-I"]))?.stdout ?? "").split(separator: " ")
            for address in addresses.map(String.init) where address.contains(".") && !address.hasPrefix("127.") {
                #expect(!canConnect(toTCPPort: port, at: address), "MPD answers on \(address):\(port)")
            }
            var info = stat()
            #expect(stat(daemon.mpdSocket, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o777 == 0o600, "mode \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    /// A port another program holds (a real mpd, say) costs MPD clients only: the log says MPD
    /// cannot listen, and the daemon serves MPRIS on.
    @Test func aTakenPortCostsOnlyTheMPDFace() async throws {
        let holder = try TCPListener()
        defer { holder.close() }
        let library = try await GeneratedLibrary.make()
        let socket = library.folder.path + "/mpd.socket"
        try await DaemonFixture.with(
            library: library, arguments: ["--mpd-port", "\(holder.port)", "--mpd-socket", socket]
        ) { daemon in
            #expect(
                try await eventually { daemon.process.capturedStdout.contains("MPD clients cannot reach the player") },
                "\(daemon.process.capturedStdout)")
            _ = try await daemon.playerctl("play")
            #expect(try await eventually { try await daemon.playerctl("status") == "Playing" })
            #expect(try await daemon.playerctl("metadata", "title") != "")
        }
    }

    /// A filter whose regular expression costs much per value (linear, but hundreds of
    /// instructions), over 2,000 tracks: the count is answered within its bound (10 s) or
    /// refused at it, instead of holding a reader for minutes; and while such a search runs,
    /// SIGTERM stops the daemon at once, cleanly (checked by the fixture's stop).
    @Test func aCostlySearchIsBoundedAndDoesNotHoldShutdown() async throws {
        let library = try await GeneratedLibrary.makeCopies(prefix: "bridge-mpd-costly", seconds: 1) {
            (0..<2_000).map { index in
                let title = "Song \(index) with a title as long as real ones are"
                return (
                    LibraryTrack(
                        path: "Artist \(index / 100)/\(title).ogg", format: .ogg, seconds: 1, title: title, trackNumber: 1),
                    artist: "Artist \(index / 100)")
            }
        }
        let costly = #"count "(Title =~ '(.?.?.?.?.?.?.?.?.?.?){60}Q')""#
        try await DaemonFixture.with(library: library) { daemon in
            let started = ContinuousClock.now
            let reply = try await daemon.mpdRaw(costly)[0]
            let elapsed = ContinuousClock.now - started
            print("a costly count over 2,000 tracks: \(reply.last ?? "") after \(elapsed)")
            #expect(elapsed < .seconds(15), "\(reply)")
            #expect(
                reply.last == "OK" || reply.last?.hasPrefix("ACK [52@0] {count} the search took longer than") == true,
                "\(reply)")

            // Another (not the same: an answer is kept until the library changes), running when
            // the test ends: once the daemon has spent 0.3 s of CPU on it.
            let searcher = try daemon.spawnMPDClient("raw", "ping", costly.replacingOccurrences(of: "Q')", with: "R')"))
            defer { searcher.kill() }
            _ = try await searcher.waitForLine { $0.contains(#""command": "ping""#) }
            let before = cpuTicks(of: daemon.process.pid)
            #expect(try await eventually { cpuTicks(of: daemon.process.pid) - before >= 30 })
        }
    }

    /// Paths out of the library, absolute paths and `file:` URLs are answered with ACK by every
    /// command that takes a song, and queue nothing; no reply holds the file's content.
    @Test func pathsOutOfTheLibraryAreRefused() async throws {
        try await DaemonFixture.with { daemon in
            let before = try await daemon.mpdRaw("status")[0]
            var lines: [String] = []
            for path in ["../../etc/passwd", "/etc/passwd", "file:///etc/passwd", "Artist/../../../etc/passwd"] {
                lines += [
                    "albumart \"\(path)\" 0", "readpicture \"\(path)\" 0", "add \"\(path)\"", "addid \"\(path)\"",
                    "lsinfo \"\(path)\"", "listallinfo \"\(path)\"",
                ]
            }
            let replies = try await daemon.mpdRaw(lines + ["status"])
            for (line, reply) in zip(lines, replies) {
                #expect(reply.count == 1 && reply[0].hasPrefix("ACK ["), "\(line): \(reply)")
                #expect(!reply.joined().contains("root:"), "\(line): \(reply)")
            }
            let playlistLength = { (status: [String]) in status.first { $0.hasPrefix("playlistlength: ") } }
            #expect(playlistLength(replies.last!) == playlistLength(before), "\(before) → \(replies.last!)")
        }
    }

    /// The manual page's list of what the MPD face answers is what `commands` lists, no more, no less.
    @Test func theManualPageListsExactlyTheCommandsTheDaemonAnswers() async throws {
        let page = try String(contentsOfFile: repositoryRoot + "/man/mpris-bridge.1", encoding: .utf8)
        let start = try #require(page.range(of: "What it answers:"))
        let end = try #require(page.range(of: "lists exactly these", range: start.upperBound..<page.endIndex))
        // Each command is set in bold, `\fBname\fR`; its arguments are not.
        let listed = Set(
            page[start.upperBound..<end.lowerBound].matches(of: /\\fB(.*?)\\f[RP]/)
                .flatMap { $0.output.1.split(separator: "/").map { String($0.split(separator: " ")[0]) } })
        try await DaemonFixture.with { daemon in
            let answered = try await daemon.mpdRaw("commands")[0].compactMap { line in
                line.hasPrefix("command: ") ? String(line.dropFirst("command: ".count)) : nil
            }
            // `command_list_*` and `noidle` are not listed by `commands`, as mpd does; `crossfade 0` names one.
            let pageCommands = listed.subtracting(["command_list_begin"]).filter { !$0.isEmpty && $0.first!.isLetter }
            #expect(Set(answered).subtracting(pageCommands).isEmpty, "answered, not in the page: \(Set(answered).subtracting(pageCommands).sorted())")
            #expect(pageCommands.subtracting(answered).subtracting(["noidle"]).isEmpty,
                "in the page, not answered: \(pageCommands.subtracting(answered).sorted())")
        }
    }

    /// Numbers at the ends of what a 64-bit integer holds, where a careless magnitude traps.
    @Test func numbersAtTheLimitsOfAnIntegerAreRefusedOrRead() async throws {
        try await DaemonFixture.with { daemon in
            let extremes = ["-9223372036854775808", "9223372036854775807", "-9223372036854775809", "18446744073709551616"]
            let lines = extremes.flatMap { number in
                ["plchanges \(number)", "plchangesposid \(number)", "play \(number)", "playid \(number)", "setvol \(number)",
                 "volume \(number)", "seekcur \(number)", "delete \(number)", "move \(number) 0", "binarylimit \(number)"]
            }
            let replies = try await daemon.mpdRaw(lines + ["ping"])
            for (line, reply) in zip(lines, replies) {
                #expect(reply.last?.hasPrefix("ACK [") == true || reply.last == "OK", "\(line): \(reply)")
            }
            #expect(replies.last == ["OK"], "the daemon stopped answering: \(replies.last ?? [])")
        }
    }
}

// MARK: Helpers

extension DaemonFixture {
    /// Starts Python/mpd_client.py with `arguments` against the daemon's MPD socket and returns
    /// it running; its stdout is one JSON document per line.
    func spawnMPDClient(_ arguments: String...) throws -> ChildProcess {
        try ChildProcess.spawn(PrivateBus.systemPython, ["-u", pythonScript("mpd_client.py"), mpdSocket] + arguments)
    }

    /// Sends each of `lines` as it is on one connection to the daemon's MPD socket; the reply
    /// to each, its lines up to and with `OK` or `ACK …`.
    func mpdRaw(_ lines: String...) async throws -> [[String]] { try await mpdRaw(lines) }

    func mpdRaw(_ lines: [String]) async throws -> [[String]] {
        let output = try await ChildProcess.run(
            PrivateBus.systemPython, [pythonScript("mpd_client.py"), mpdSocket, "raw"] + lines, timeout: .seconds(60))
        guard output.succeeded else { throw ChildProcessError.nonZeroExit(output) }
        let replies = try output.stdout.split(separator: "\n").map { try json(String($0))["reply"] as? [String] ?? [] }
        #expect(replies.count == lines.count, "\(output)")
        return replies
    }
}

/// A JSON object of mpd_client.py's output.
func json(_ line: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
}

/// Whether `condition` holds within `timeout`, asked every 50 ms.
func eventually(timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// The SHA-256 of the file at `path`, in hexadecimal, as sha256sum prints it.
func sha256(of path: String) async throws -> String {
    let output = try await ChildProcess.run("sha256sum", [path]).check()
    return String(output.stdout.prefix { $0 != " " })
}

/// The CPU time process `pid` has used, user and system, in clock ticks (1/100 s).
func cpuTicks(of pid: Int32) -> Int {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = stat.lastIndex(of: ")")
    else { return 0 }
    // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    guard fields.count > 12 else { return 0 }
    return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
}

/// A TCP socket listening on a free loopback port, held until ``close()``.
final class TCPListener: Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 1) == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            throw POSIXError(.init(rawValue: failure) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { Glibc.close(descriptor) }
}

/// A loopback port nothing listens on now (bound, then released).
func freeTCPPort() throws -> Int {
    let listener = try TCPListener()
    defer { listener.close() }
    return listener.port
}

/// Whether something accepts connections on `port` at the IPv4 `host` (loopback by default).
func canConnect(toTCPPort port: Int, at host: String = "127.0.0.1") -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr(host)
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}
