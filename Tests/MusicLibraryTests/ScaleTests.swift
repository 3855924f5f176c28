#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MediaRemote
import TestMedia
import Testing

@testable import MusicLibrary

/// Large libraries: what comes out is right, whatever the machine's load. Each prints what it
/// measured; the figures themselves are the benchmarks' (`Scripts/benchmark`), since a test that
/// needs a quiet machine is a benchmark.
@Suite struct ScaleTests {
    /// 200 files (copies of five generated ones under different names) read cold, then an
    /// unchanged rescan that reads nothing.
    @Test func indexesTwoHundredFilesAndARescanReadsNone() async throws {
        let folder = try LibraryFolder("two-hundred")
        defer { folder.remove() }
        let formats = TestMedia.Format.allCases
        try await withThrowingTaskGroup(of: Void.self) { group in
            for format in formats {
                group.addTask {
                    try await folder.generate(
                        format, "source/tone.\(format.fileExtension)", seconds: 1,
                        tags: TestMedia.Tags(title: "Tone", artist: "Generator", album: "\(format)", trackNumber: 1))
                }
            }
            try await group.waitForAll()
        }
        for index in 0..<200 {
            let format = formats[index % formats.count]
            try folder.copy(
                "source/tone.\(format.fileExtension)",
                to: "Album \(index / 20)/Track \(index).\(format.fileExtension)")
        }
        for format in formats { folder.delete("source/tone.\(format.fileExtension)") }

        let library = try folder.open()
        let cold = try await library.scan()
        #expect((cold.added, cold.read, cold.failures) == (200, 200, []))
        let warm = try await library.scan()
        #expect((warm.read, warm.unchanged) == (0, 200))
        let reopened = try await folder.open().scan()
        #expect(reopened.read == 0)

        let filesPerSecond = 200 / cold.duration.seconds
        print(
            "MusicLibrary: 200 files cold \(cold.duration.milliseconds) ms (\(Int(filesPerSecond)) files/s), "
                + "unchanged rescan \(warm.duration.milliseconds) ms, "
                + "after reopening \(reopened.duration.milliseconds) ms")
        // How fast is a benchmark's question (DaemonBenchmark); here, that a rescan reads nothing.
    }

    /// `tracks()` over 10,000 rows inserted without reading files.
    @Test func listsTenThousandTracksInOrder() throws {
        let folder = try LibraryFolder("ten-thousand")
        defer { folder.remove() }
        let library = try folder.open()
        let rows = (0..<10_000).map { index in
            (
                file: FolderWalk.File(
                    path: "Artist \(index % 97)/Album \(index % 13)/\(index).flac", size: 5_000_000 + index,
                    modified: 1_700_000_000_000_000_000, kind: .audio),
                media: AudioFileMetadata(
                    duration: .seconds(180 + index % 120), title: "Song \(index)", artists: ["Artist \(index % 97)"],
                    album: "Album \(index % 13)", albumArtists: ["Artist \(index % 97)"], genres: ["Rock", "Pop"],
                    trackNumber: index % 20 + 1, discNumber: 1, releaseDate: "2001-02-03", mimeType: "audio/x-flac")
            )
        }
        // Half the folders have a cover image.
        let folders = Set(rows.map { LibraryPath.folder(of: $0.file.path) }).sorted()
        let folderArt = Dictionary(uniqueKeysWithValues: folders.enumerated().filter { $0.offset % 2 == 0 }.map {
            ($0.element, $0.element + "/cover.jpg")
        })
        try library.write {
            try $0.insertSyntheticTracks(rows)
            try $0.finishScan(folderArt: folderArt, walkFailures: [])
        }

        let clock = ContinuousClock()
        var best = Duration.seconds(1000)
        var tracks: [Track] = []
        for _ in 0..<3 {
            let start = clock.now
            tracks = try library.tracks()
            best = min(best, clock.now - start)
        }
        print("MusicLibrary: tracks() for \(tracks.count) rows \(best.milliseconds) ms (best of 3)")
        #expect(tracks.count == 10_000)
        #expect(tracks.first?.albumArtists == ["Artist 0"])
        #expect(tracks.first?.genres == ["Rock", "Pop"])
        #expect(tracks.filter { $0.artwork != nil }.count > 3000)
    }

    /// A tree built from the index keeps paths, not tracks: every row it shows equals the row
    /// of a tree holding the tracks in memory, and a row is read from the index when shown (a
    /// track removed from the index since is not invented from a copy).
    @Test func aTreeReadingItsRowsFromTheIndexShowsWhatATreeInMemoryShows() async throws {
        let folder = try LibraryFolder("rows-from-index")
        defer { folder.remove() }
        let library = try folder.open()
        let rows = (0..<3_000).map { index in
            (
                file: FolderWalk.File(
                    path: "Artist \(index % 37)/Album \(index % 11)/\(index) é.flac", size: 1_000 + index,
                    modified: 1_700_000_000_000_000_000, kind: .audio),
                media: AudioFileMetadata(
                    duration: .seconds(100 + index % 50), title: "Song \(index)", artists: ["Artist \(index % 37)"],
                    album: "Album \(index % 11)", albumArtists: [], genres: ["Jazz"], trackNumber: index % 15 + 1,
                    discNumber: 1, releaseDate: "1999", mimeType: "audio/x-flac")
            )
        }
        try library.write {
            try $0.insertSyntheticTracks(rows)
            _ = try $0.finishScan(folderArt: ["Artist 1/Album 1": "Artist 1/Album 1/cover.jpg"], walkFailures: [])
        }
        let tracks = try library.tracks()
        let artwork: @Sendable (Track) -> MediaItemArtwork? = { track in
            if case .file(let url)? = track.artwork { .url(url) } else { nil }
        }
        let inMemory = LibraryContent(tracks: tracks, playlists: [], libraryName: "Music", artwork: artwork)
        let fromIndex = try LibraryContent(library: library, libraryName: "Music", artwork: artwork)

        #expect(compareEveryRow(of: fromIndex, with: inMemory) > 4 * 3_000)
        let id = "Artist 1/Album 1/1 é.flac"
        let byIdentifier = try await fromIndex.contentItem(forIdentifier: LibraryContent.identifier(ofTrack: id))
        #expect(byIdentifier?.artwork == .url(URL(filePath: folder.path("Artist 1/Album 1/cover.jpg"))))
        #expect(byIdentifier == (try await inMemory.contentItem(forIdentifier: LibraryContent.identifier(ofTrack: id))))
        #expect(fromIndex.indexPath(ofTrack: id, inContainer: nil) == inMemory.indexPath(ofTrack: id, inContainer: nil))
        #expect(fromIndex.indexPath(ofTrack: "Artist 1/Album 1/missing.flac", inContainer: nil) == nil)
        #expect(fromIndex.playback(forItemAt: [2, 0]) == inMemory.playback(forItemAt: [2, 0]))

        // Rows read since: a fresh tree over the index, then the track removed from the index.
        let fresh = try LibraryContent(library: library, libraryName: "Music", artwork: artwork)
        try library.write { try $0.remove(paths: [id]) }
        let removedPath = try #require(fresh.indexPath(ofTrack: id, inContainer: nil))
        #expect(fresh.contentItem(at: removedPath) == nil)
        #expect(inMemory.contentItem(at: removedPath)?.title == "Song 1")
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    fileprivate var milliseconds: String {
        let value = seconds * 1000
        return value < 10 ? String(Double(Int(value * 10)) / 10) : String(Int(value))
    }
}
