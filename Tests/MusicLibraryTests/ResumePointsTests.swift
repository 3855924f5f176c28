#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MediaRemote
import MusicLibrary
import TestMedia
import Testing

/// Where long tracks were left: which tracks remember (``ResumePolicy``), the index's
/// `resume_points` (kept by path through rescans, migrated into an earlier index, pruned), and
/// what the tree shows of them.
@Suite struct ResumePointsTests {
    // MARK: Which tracks remember

    @Test func aTrackRemembersByLengthGenreOrFolder() throws {
        let policy = try ResumePolicy(
            minimumDuration: .seconds(20 * 60), folders: ["Books", "/music/Radio/"], genres: ResumePolicy.defaultGenres,
            in: "/music")
        #expect(policy.folders == ["Books", "Radio"])
        #expect(policy.remembersPosition(path: "Rock/long.flac", duration: .seconds(20 * 60 + 1), genres: []))
        #expect(!policy.remembersPosition(path: "Rock/song.flac", duration: .seconds(20 * 60), genres: ["Rock"]))
        #expect(policy.remembersPosition(path: "x.mp3", duration: .seconds(60), genres: ["Rock", "spoken WORD"]))
        #expect(policy.remembersPosition(path: "Books/Dune/01.mp3", duration: .seconds(60), genres: []))
        #expect(policy.remembersPosition(path: "Radio/show.ogg", duration: nil, genres: []))
        #expect(!policy.remembersPosition(path: "Booksellers/01.mp3", duration: .seconds(60), genres: []), "a prefix is not a folder")
        #expect(!policy.remembersPosition(path: "x.mp3", duration: nil, genres: []))
        #expect(!ResumePolicy.none.remembersPosition(path: "Books/a.mp3", duration: .seconds(99_999), genres: ["Podcast"]))
        #expect(ResumePolicy.standard.remembersPosition(path: "a.mp3", duration: .seconds(60), genres: ["Audiobook"]))
        #expect(ResumePolicy(minimumDuration: .zero, relativeFolders: [], genres: []).isNone, "0 turns length off")
        #expect(throws: MusicLibraryError.folderOutsideLibrary("/elsewhere/Books")) {
            try ResumePolicy(minimumDuration: nil, folders: ["/elsewhere/Books"], genres: [], in: "/music")
        }
        #expect(throws: MusicLibraryError.folderOutsideLibrary("../Books")) {
            try ResumePolicy(minimumDuration: nil, folders: ["../Books"], genres: [], in: "/music")
        }
    }

    // MARK: The index

    private func makeLibrary(_ name: String) async throws -> LibraryFolder {
        let folder = try LibraryFolder(name)
        try await folder.generate(.ogg, "Books/chapter.ogg", tags: TestMedia.Tags(title: "Chapter", genre: "Audiobook"))
        try await folder.generate(.ogg, "Music/song.ogg", tags: TestMedia.Tags(title: "Song"))
        return folder
    }

    @Test func aPointIsKeptByPathThroughARescanThatReadsItsTrackAgainAndAReopening() async throws {
        let folder = try await makeLibrary("resume-rescan")
        defer { folder.remove() }
        let library = try folder.open()
        _ = try await library.scan()
        try library.saveResumePoint(TrackResumePoint(position: .milliseconds(5_250)), ofTrack: "Books/chapter.ogg")
        try library.saveResumePoint(TrackResumePoint(position: .seconds(1)), ofTrack: "Music/song.ogg")
        try library.saveResumePoint(.finished, ofTrack: "Music/song.ogg")
        // Retagged: the scan deletes the track's row and inserts it again.
        try await folder.generate(.ogg, "Books/chapter.ogg", seconds: 2, tags: TestMedia.Tags(title: "Chapter 1"))
        let summary = try await library.scan()
        #expect(summary.updated == 1)
        let expected: [String: TrackResumePoint] = [
            "Books/chapter.ogg": TrackResumePoint(position: .milliseconds(5_250)), "Music/song.ogg": .finished,
        ]
        #expect(try library.resumePoints() == expected)
        #expect(try folder.open().resumePoints() == expected, "in the file, for the next start")
    }

    /// The points of a track gone from the folder stay a month (a disk not mounted during a
    /// scan keeps its places), then a scan forgets them.
    @Test func aScanForgetsThePointOfATrackGoneForAMonth() async throws {
        let folder = try await makeLibrary("resume-prune")
        defer { folder.remove() }
        let library = try folder.open()
        _ = try await library.scan()
        try library.saveResumePoint(TrackResumePoint(position: .seconds(1)), ofTrack: "Books/chapter.ogg")
        try library.saveResumePoint(TrackResumePoint(position: .seconds(1)), ofTrack: "Music/song.ogg")
        try library.saveResumePoint(TrackResumePoint(position: .seconds(1)), ofTrack: "Gone/old.ogg")
        let database = try SQLiteDatabase(path: folder.indexPath)
        let monthAndADayAgo = Int64(Date().timeIntervalSince1970) - 31 * 24 * 3600
        try database.run("UPDATE resume_points SET updated = ? WHERE path != 'Books/chapter.ogg'", .integer(monthAndADayAgo))
        folder.delete("Books/chapter.ogg")
        _ = try await library.scan()
        // The deleted chapter's point was saved just now: kept. The old point of a track still
        // indexed: kept. An old point of a track gone: forgotten.
        #expect(try Set(library.resumePoints().keys) == ["Books/chapter.ogg", "Music/song.ogg"])
    }

    /// An index of the version before resume points keeps its tracks: the table is added,
    /// and the next scan reads nothing again.
    @Test func anIndexOfTheEarlierVersionIsMigratedWithoutARescan() async throws {
        let folder = try await makeLibrary("resume-migrate")
        defer { folder.remove() }
        do {
            let library = try folder.open()
            _ = try await library.scan()
        }
        do {
            let database = try SQLiteDatabase(path: folder.indexPath)
            try database.execute("DROP TABLE resume_points; PRAGMA user_version = 1")
        }
        let library = try folder.open()
        #expect(library.indexRecovery == nil)
        #expect(try library.trackCount == 2)
        #expect(try library.resumePoints().isEmpty)
        try library.saveResumePoint(TrackResumePoint(position: .seconds(3)), ofTrack: "Books/chapter.ogg")
        let summary = try await library.scan()
        #expect((summary.read, summary.unchanged) == (0, 2))
        #expect(try library.resumePoints() == ["Books/chapter.ogg": TrackResumePoint(position: .seconds(3))])
        #expect(try SQLiteDatabase(path: folder.indexPath).integer("PRAGMA user_version") == 2)
    }

    // MARK: The tree

    static func track(_ path: String, album: String, seconds: Int, genres: [String] = []) -> Track {
        Track(
            id: path, url: URL(filePath: "/music/" + path), title: path, artists: ["A"], album: album,
            albumArtists: ["A"], genres: genres, duration: .seconds(seconds), fileSize: 1)
    }

    @Test func theTreeShowsTheProgressOfTracksThatRememberAndTheirContainersDisplayIt() throws {
        let tracks = [
            Self.track("Book/1.mp3", album: "Book", seconds: 100, genres: ["Audiobook"]),
            Self.track("Book/2.mp3", album: "Book", seconds: 100, genres: ["Audiobook"]),
            Self.track("Songs/1.mp3", album: "Songs", seconds: 100),
        ]
        // What the player's resume points make of them: finished, a quarter, half.
        let progress: [String: Double] = ["Book/1.mp3": 1, "Book/2.mp3": 0.25, "Songs/1.mp3": 0.5]
        let content = LibraryContent(
            tracks: tracks, playlists: [], libraryName: "Music", artwork: { _ in nil }, resumePolicy: .standard,
            playbackProgress: { progress[$0.id] })
        let albums = LibraryContent.Tab.albums.indexPath
        // Albums: Book, Songs.
        #expect(content.childItemsDisplayPlaybackProgress(at: albums.appending(0)))
        #expect(!content.childItemsDisplayPlaybackProgress(at: albums.appending(1)))
        #expect(!content.childItemsDisplayPlaybackProgress(at: albums), "albums have no progress of their own")
        #expect(content.childItemsDisplayPlaybackProgress(at: LibraryContent.Tab.tracks.indexPath))
        #expect(content.contentItem(at: albums.appending(0).appending(0))?.playbackProgress == 1)
        #expect(content.contentItem(at: albums.appending(0).appending(1))?.playbackProgress == 0.25)
        #expect(content.contentItem(at: albums.appending(1).appending(0))?.playbackProgress == nil, "a song shows none")
        // Folders: Book, Songs.
        let folders = LibraryContent.Tab.folders.indexPath
        #expect(content.childItemsDisplayPlaybackProgress(at: folders.appending(0)))
        #expect(!content.childItemsDisplayPlaybackProgress(at: folders.appending(1)))

        _ = content.changedContainerIdentifiers()
        content.playbackProgressChanged(ofTracks: ["Book/2.mp3", "Songs/1.mp3", "Nowhere.mp3"])
        #expect(
            content.changedContainerIdentifiers()
                == ["tracks", "album:A\u{1F}Book", "folder:Book"], "the song's album is not read again")
    }

    @Test func withoutAPolicyNothingShowsProgress() throws {
        let content = LibraryContent(
            tracks: [Self.track("Book/1.mp3", album: "Book", seconds: 100, genres: ["Audiobook"])], playlists: [],
            libraryName: "Music", artwork: { _ in nil }, playbackProgress: { _ in 0.5 })
        #expect(!content.childItemsDisplayPlaybackProgress(at: LibraryContent.Tab.albums.indexPath.appending(0)))
        #expect(content.contentItem(at: LibraryContent.Tab.albums.indexPath.appending(0).appending(0))?.playbackProgress == nil)
    }
}
