#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Glibc
import MediaRemote
import MusicLibrary
import ProcessTestSupport
import Synchronization
import TestMedia
import Testing

@Suite struct ScanTests {
    /// Nested folders of tagged files in every format, an untagged WAV, folder art and an
    /// embedded cover: every field a user sees comes out of the index.
    @Test func indexesATaggedLibraryInNestedFolders() async throws {
        let folder = try LibraryFolder("tagged")
        defer { folder.remove() }
        func tags(_ title: String, track: Int, disc: Int = 1) -> TestMedia.Tags {
            TestMedia.Tags(
                title: title, artist: "Solo Artist", album: "First Album", albumArtist: "Album Artist",
                genre: "Jazz", trackNumber: track, discNumber: disc, year: 2021)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            let album = "Album Artist/First Album"
            group.addTask { try await folder.generate(.ogg, "\(album)/01 one.ogg", tags: tags("One", track: 1)) }
            group.addTask { try await folder.generate(.opus, "\(album)/02 two.opus", tags: tags("Two", track: 2)) }
            group.addTask {
                try await folder.generate(
                    .flac, "\(album)/CD2/01 three.flac", seconds: 2, tags: tags("Three", track: 1, disc: 2))
            }
            group.addTask { try await folder.generate(.mp3, "Other/mp3/four.mp3", tags: tags("Four", track: 4)) }
            group.addTask { try await folder.generate(.wav, "Other/Untagged Tone.wav") }
            group.addTask { try await folder.generatePicture("Album Artist/First Album/Cover.JPG") }
            group.addTask { try await folder.generatePicture("Album Artist/First Album/folder.png") }
            group.addTask { try await folder.generatePicture("Other/mp3/folder.png") }
            group.addTask {
                try await folder.generatePicture("Embedded/source.data")
                let picture = try folder.read("Embedded/source.data")
                try await folder.generateOggWithCover("Embedded/pictured.ogg", title: "Pictured", picture: picture)
            }
            try await group.waitForAll()
        }
        try folder.write("not music", to: "Other/notes.txt")

        let library = try folder.open()
        let progress = Mutex<[ScanProgress]>([])
        let summary = try await library.scan { report in progress.withLock { $0.append(report) } }

        #expect(summary.added == 6)
        #expect(summary.read == 6)
        #expect(summary.failures == [])
        #expect(progress.withLock { $0.last } == ScanProgress(examined: 6, total: 6, currentPath: ""))
        #expect(try library.trackCount == 6)

        let tracks = try library.tracks()
        // Ordered by album artist, album, disc, track: untagged and single files ("" artist) first.
        #expect(
            tracks.map(\.id) == [
                "Embedded/pictured.ogg", "Other/Untagged Tone.wav",
                "Album Artist/First Album/01 one.ogg", "Album Artist/First Album/02 two.opus",
                "Other/mp3/four.mp3", "Album Artist/First Album/CD2/01 three.flac",
            ])

        let three = try #require(try library.track(id: "Album Artist/First Album/CD2/01 three.flac"))
        #expect(three.title == "Three")
        #expect(three.artists == ["Solo Artist"])
        #expect(three.album == "First Album")
        #expect(three.albumArtists == ["Album Artist"])
        #expect(three.genres == ["Jazz"])
        #expect(three.trackNumber == 1)
        #expect(three.discNumber == 2)
        #expect(three.releaseDate == "2021-01-01")
        #expect(three.duration?.isClose(toSeconds: 2) == true)
        #expect(three.mimeType == "audio/x-flac")
        #expect(three.url == folder.url("Album Artist/First Album/CD2/01 three.flac"))
        #expect(three.fileSize > 0)
        // No picture in CD2 itself, and folder art is not inherited from the parent folder.
        #expect(three.artwork == nil)

        // The first folder has Cover.JPG and folder.png: "cover" wins, whatever its case.
        let one = try #require(tracks.first { $0.title == "One" })
        #expect(one.artwork == .file(folder.url("Album Artist/First Album/Cover.JPG")))
        let coverBytes = try folder.read("Album Artist/First Album/Cover.JPG")
        #expect(try library.artworkData(for: #require(one.artwork)).map { [UInt8]($0) } == coverBytes)

        let four = try #require(tracks.first { $0.title == "Four" })
        #expect(four.mimeType == "audio/mpeg")
        #expect(four.trackNumber == 4)
        #expect(four.artwork == .file(folder.url("Other/mp3/folder.png")))

        let untagged = try #require(tracks.first { $0.id == "Other/Untagged Tone.wav" })
        #expect(untagged.title == "Untagged Tone")
        #expect(untagged.artists == [])
        #expect(untagged.album == nil)
        #expect(untagged.mimeType == "audio/x-wav")

        let pictured = try #require(tracks.first { $0.title == "Pictured" })
        guard case .embedded(let hash)? = pictured.artwork else {
            Issue.record("no embedded artwork: \(String(describing: pictured.artwork))")
            return
        }
        let picture = try folder.read("Embedded/source.data")
        #expect(hash.count == 64)
        #expect(try library.artworkData(for: .embedded(sha256: hash)).map { [UInt8]($0) } == picture)
        #expect(try library.mediaItemArtwork(for: pictured) == .imageData(Data(picture)))

        // Lookups by identifiers and by URL.
        let asked = try library.tracks(ids: ["Other/mp3/four.mp3", "nope.ogg", "Embedded/pictured.ogg"])
        #expect(asked.map(\.title) == ["Four", "Pictured"])
        #expect(try library.track(at: folder.url("Other/../Other/mp3/four.mp3"))?.title == "Four")
        #expect(try library.track(at: URL(filePath: "/elsewhere/four.mp3")) == nil)
    }

    @Test func nowPlayingInfoCarriesTheTrack() throws {
        let track = Track(
            id: "A/B/01 x.flac", url: URL(filePath: "/music/A/B/01 x.flac"), title: "X", artists: ["A"], album: "B",
            albumArtists: ["AA"], genres: ["G"], composers: ["C"], trackNumber: 1, trackCount: 9, discNumber: 2,
            discCount: 3, releaseDate: "2019-05-17", duration: .seconds(61), mimeType: "audio/x-flac",
            artwork: .file(URL(filePath: "/music/A/B/cover.jpg")))
        let info = track.nowPlayingInfo(artwork: .url(URL(filePath: "/music/A/B/cover.jpg")))
        #expect(info.identifier == "A/B/01 x.flac")
        #expect(info.title == "X")
        #expect(info.artists == ["A"])
        #expect(info.albumTitle == "B")
        #expect(info.albumArtists == ["AA"])
        #expect(info.genres == ["G"])
        #expect(info.composers == ["C"])
        #expect(info.playbackDuration == .seconds(61))
        #expect(info.trackNumber == 1)
        #expect(info.trackCount == 9)
        #expect(info.discNumber == 2)
        #expect(info.discCount == 3)
        #expect(info.artwork == .url(URL(filePath: "/music/A/B/cover.jpg")))
        #expect(info.assetURL == URL(filePath: "/music/A/B/01 x.flac"))
        // 2019-05-17T00:00:00Z.
        #expect(info.releaseDate == Date(timeIntervalSince1970: 1_558_051_200))

        var yearOnly = track
        yearOnly.releaseDate = "1969"
        #expect(yearOnly.nowPlayingInfo(artwork: nil).releaseDate == Date(timeIntervalSince1970: -31_536_000))
        yearOnly.releaseDate = "sometime"
        #expect(yearOnly.nowPlayingInfo(artwork: nil).releaseDate == nil)
    }

    /// A corrupt file, a truncated file, an empty one and a dangling link are listed with their
    /// reasons; the good file beside them is indexed.
    @Test func listsFilesThatCannotBeReadAndGoesOn() async throws {
        let folder = try LibraryFolder("failures")
        defer { folder.remove() }
        try await folder.generate(.ogg, "good.ogg", tags: TestMedia.Tags(title: "Good"))
        try folder.write(junkBytes(count: 8192), to: "bad/junk.ogg")
        try folder.write(Array(try folder.read("good.ogg").prefix(3000)), to: "bad/truncated.ogg")
        try folder.write([], to: "bad/empty.mp3")
        try folder.symlink("bad/gone.flac", pointingTo: folder.path("nowhere.flac"))
        var unreadable = false
        if geteuid() != 0 {
            // Root reads anything, so only an ordinary user can test permissions.
            try folder.write("secret", to: "bad/locked.wav")
            chmod(folder.path("bad/locked.wav"), 0)
            unreadable = true
        }

        // GStreamer 1.22's discoverer now and then (about one truncated Ogg file in a hundred,
        // measured) misses the error and waits for its timeout: kept short here.
        let library = try folder.open(discoveryTimeout: .seconds(2))
        let summary = try await library.scan()

        #expect(summary.added == 1)
        #expect(try library.tracks().map(\.title) == ["Good"])
        let reasons = Dictionary(uniqueKeysWithValues: summary.failures.map { ($0.path, $0.reason) })
        #expect(reasons["bad/junk.ogg"] == "not playable media: Could not determine type of stream.")
        let truncated = reasons["bad/truncated.ogg"] ?? ""
        #expect(
            truncated.hasPrefix("not playable media: ") || truncated == "reading timed out after 2.0 seconds",
            "\(reasons)")
        #expect(reasons["bad/empty.mp3"]?.hasPrefix("not playable media: ") == true, "\(reasons)")
        #expect(reasons["bad/gone.flac"] == "cannot read: No such file or directory")
        if unreadable { #expect(reasons["bad/locked.wav"] == "cannot read: Permission denied") }
        #expect(summary.failures.count == (unreadable ? 5 : 4))
        // Persisted with the index.
        #expect(try library.failures() == summary.failures)
        #expect(try folder.open().failures() == summary.failures)
    }

    /// Whatever is indexed is served to remotes, so links are followed only inside the library:
    /// a cover, a track or a folder linked from elsewhere is listed as a failure and never indexed.
    @Test func followsLinksOnlyInsideTheLibrary() async throws {
        let folder = try LibraryFolder("links")
        defer { folder.remove() }
        let outside = folder.folder.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside + "/Elsewhere", withIntermediateDirectories: true)
        try await TestMedia.generate(.ogg, seconds: 0.2, tags: TestMedia.Tags(title: "Outside"), at: outside + "/out.ogg")
        try await TestMedia.generate(
            .ogg, seconds: 0.2, tags: TestMedia.Tags(title: "Far"), at: outside + "/Elsewhere/far.ogg")
        try Data("not an image".utf8).write(to: URL(filePath: outside + "/secret.jpg"))
        try await folder.generate(.ogg, "Album/in.ogg", tags: TestMedia.Tags(title: "Inside"))
        try folder.symlink("Album/cover.jpg", pointingTo: outside + "/secret.jpg")
        try folder.symlink("Album/linked.ogg", pointingTo: outside + "/out.ogg")
        try folder.symlink("Linked Folder", pointingTo: outside + "/Elsewhere")
        // Links that stay inside are followed, and a loop is walked once.
        try folder.symlink("Also Album", pointingTo: folder.path("Album"))
        try folder.symlink("Album/loop", pointingTo: folder.path(""))

        let library = try folder.open()
        let summary = try await library.scan()

        #expect(try library.tracks().map(\.title) == ["Inside"])
        #expect(try library.tracks().first?.artwork == nil)
        let reasons = Dictionary(uniqueKeysWithValues: summary.failures.map { ($0.path, $0.reason) })
        #expect(
            reasons == [
                "Album/cover.jpg": "links outside the library", "Album/linked.ogg": "links outside the library",
                "Linked Folder": "links outside the library",
            ])
    }

    /// TagLib reads most files; one it has no format for (Vorbis in Matroska) is read by
    /// GStreamer, and both are in the index alike.
    @Test func aFormatTagLibCannotReadIsReadByGStreamer() async throws {
        let folder = try LibraryFolder("fallback")
        defer { folder.remove() }
        try await folder.generate(.ogg, "tagged.ogg", seconds: 1, tags: TestMedia.Tags(title: "By TagLib"))
        try await folder.generateMatroska("matroska.mka", seconds: 2, title: "By GStreamer")

        let library = try folder.open()
        let summary = try await library.scan()
        #expect(summary.added == 2 && summary.failures == [], "\(summary)")
        let tracks = try library.tracks().sorted { $0.id < $1.id }
        #expect(tracks.map(\.title) == ["By GStreamer", "By TagLib"])
        #expect(tracks[0].duration?.isClose(toSeconds: 2) == true, "\(String(describing: tracks[0].duration))")
        #expect(tracks[1].duration?.isClose(toSeconds: 1) == true, "\(String(describing: tracks[1].duration))")
    }

    /// The discoverer is the library's to be given: made only when a file needs it (never for
    /// files TagLib reads), its reasons listed as they are; without one such files fail, and
    /// one that cannot be made fails the files that needed it.
    @Test func theDiscovererIsMadeOnlyForFilesTagLibCannotRead() async throws {
        let folder = try LibraryFolder("injected")
        defer { folder.remove() }
        try await folder.generate(.ogg, "tagged.ogg", seconds: 1, tags: TestMedia.Tags(title: "By TagLib"))
        try await folder.generate(.flac, "tagged.flac", seconds: 1, tags: TestMedia.Tags(title: "Also TagLib"))

        /// Reads every file as a two-second track titled by its name, except `junk`, which it refuses.
        struct NameReader: AudioFileDiscoverer {
            func discover(_ url: URL) throws(AudioFileReadError) -> AudioFileMetadata {
                let name = url.deletingPathExtension().lastPathComponent
                guard name != "junk" else { throw AudioFileReadError(reason: "not music, says the reader") }
                return AudioFileMetadata(duration: .seconds(2), title: name, mimeType: "audio/x-matroska")
            }
        }
        let made = Mutex(0)
        let library = try MusicLibrary(root: folder.root, indexPath: folder.indexPath) { () throws(AudioFileReadError) in
            made.withLock { $0 += 1 }
            return NameReader()
        }
        var summary = try await library.scan()
        #expect(summary.added == 2 && summary.failures == [], "\(summary)")
        #expect(made.withLock { $0 } == 0)

        try folder.write("not audio", to: "mystery.mka")
        try folder.write("not audio either", to: "junk.mka")
        summary = try await library.scan()
        #expect(summary.added == 1, "\(summary)")
        #expect(summary.failures == [ScanFailure(path: "junk.mka", reason: "not music, says the reader")])
        #expect(try library.track(id: "mystery.mka")?.title == "mystery")
        // One per reading thread at most, and these two files met at most two threads.
        #expect((1...2).contains(made.withLock { $0 }))

        // Without a discoverer, or with one that cannot be made, such a file is a failure.
        try folder.write("still not audio", to: "other.mka")
        let without = try MusicLibrary(root: folder.root, indexPath: folder.indexPath)
        summary = try await without.scan()
        #expect(
            summary.failures.contains(
                ScanFailure(path: "other.mka", reason: "TagLib cannot read it, and no other reader was given")),
            "\(summary)")
        try folder.write("changed", to: "other.mka")
        let broken = try MusicLibrary(root: folder.root, indexPath: folder.indexPath) { () throws(AudioFileReadError) in
            throw AudioFileReadError(reason: "no reader today")
        }
        summary = try await broken.scan()
        #expect(summary.failures.contains(ScanFailure(path: "other.mka", reason: "no reader today")), "\(summary)")
    }

    /// The content revision grows when a scan changes what the library shows, and only then.
    @Test func theContentRevisionMovesOnlyWhenAScanChangesSomething() async throws {
        let folder = try LibraryFolder("revision")
        defer { folder.remove() }
        try await folder.generate(.ogg, "a/one.ogg", tags: TestMedia.Tags(title: "One"))
        let library = try folder.open()
        #expect(try library.contentRevision == 0)
        _ = try await library.scan()
        let first = try library.contentRevision
        #expect(first > 0)
        _ = try await library.scan()
        #expect(try library.contentRevision == first)

        try await folder.generatePicture("a/cover.png")
        _ = try await library.scan()
        let withCover = try library.contentRevision
        #expect(withCover > first)
        folder.delete("a/one.ogg")
        _ = try await library.scan()
        #expect(try library.contentRevision > withCover)
        let afterRemoval = try library.contentRevision
        _ = try await library.scan()
        #expect(try library.contentRevision == afterRemoval)
    }

    @Test func aMissingRootIsAnErrorThatKeepsTheIndex() async throws {
        let folder = try LibraryFolder("missing-root")
        defer { folder.remove() }
        try await folder.generate(.wav, "a.wav")
        let library = try folder.open()
        _ = try await library.scan()
        #expect(try library.trackCount == 1)

        rename(folder.root, folder.root + ".unmounted")
        await #expect(throws: MusicLibraryError.self) { try await library.scan() }
        #expect(try library.trackCount == 1)
    }

    /// A scan cancelled once it has read some files keeps what it read, and the next scan
    /// finishes the job.
    @Test func aCancelledScanIsResumedByTheNext() async throws {
        let folder = try LibraryFolder("cancel")
        defer { folder.remove() }
        // GStreamer reads these (TagLib has no Matroska reader), each in a few milliseconds of
        // processor time: 500 take over a second on two cores, and the first report comes after
        // 100 ms, even when the readers' eight threads leave the scan's own task little time.
        let files = 500
        try await folder.generateMatroska("source.mka", title: "Copy")
        for index in 0..<files { try folder.copy("source.mka", to: "copies/\(index).mka") }
        folder.delete("source.mka")
        let library = try folder.open()

        // Cancelled from its own progress report, on the scan's task: not when a busy machine
        // gets round to running the test again.
        let scanTask = ScanHandle()
        let scan = Task {
            try await library.scan { progress in
                if progress.examined > 0 { scanTask.cancel() }
            }
        }
        scanTask.set(scan)
        let cancelled = await scan.result
        #expect(throws: CancellationError.self) { try cancelled.get() }
        let kept = try library.trackCount
        #expect(kept > 0 && kept < files, "kept \(kept)")

        let resumed = try await library.scan()
        #expect(resumed.added == files - kept)
        #expect(resumed.unchanged == kept)
        #expect(try library.trackCount == files)
    }

    @Test func oneScanAtATime() async throws {
        let folder = try LibraryFolder("one-scan")
        defer { folder.remove() }
        for index in 0..<4 { try await folder.generate(.wav, "\(index).wav") }
        let library = try folder.open()
        async let first = outcome { try await library.scan() }
        async let second = outcome { try await library.scan() }
        let outcomes = [await first, await second]
        let refused = outcomes.filter {
            if case .failure(let error) = $0 { return error as? MusicLibraryError == .scanInProgress }
            return false
        }
        // Either the scans overlapped and one was refused, or they ran one after the other.
        let succeeded = outcomes.compactMap { try? $0.get() }
        #expect(refused.count + succeeded.count == 2)
        #expect(succeeded.map(\.added).reduce(0, +) == 4)
    }
}

/// The scan task, for its own progress handler to cancel.
private final class ScanHandle: Sendable {
    private let task = Mutex<Task<ScanSummary, any Error>?>(nil)
    private let isCancelled = Mutex(false)

    func set(_ task: Task<ScanSummary, any Error>) {
        self.task.withLock { $0 = task }
        if isCancelled.withLock({ $0 }) { task.cancel() }
    }

    /// Cancels the task, now or as soon as it is set.
    func cancel() {
        isCancelled.withLock { $0 = true }
        task.withLock { $0 }?.cancel()
    }
}

private func outcome<Success>(of body: @Sendable () async throws -> Success) async -> Result<Success, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
