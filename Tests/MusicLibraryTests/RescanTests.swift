#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Glibc
import MusicLibrary
import ProcessTestSupport
import TestMedia
import Testing

@Suite struct RescanTests {
    private func makeLibrary(_ name: String) async throws -> LibraryFolder {
        let folder = try LibraryFolder(name)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await folder.generate(.ogg, "A/a.ogg", tags: TestMedia.Tags(title: "Ay")) }
            group.addTask { try await folder.generate(.flac, "B/b.flac", tags: TestMedia.Tags(title: "Bee")) }
            group.addTask { try await folder.generate(.wav, "C/c.wav") }
            try await group.waitForAll()
        }
        try folder.write(junkBytes(count: 4096), to: "C/junk.ogg")
        return folder
    }

    @Test func onlyChangedFilesAreReadAgain() async throws {
        let folder = try await makeLibrary("rescan")
        defer { folder.remove() }
        let library = try folder.open()
        let first = try await library.scan()
        #expect((first.added, first.read, first.unchanged, first.failures.count) == (3, 4, 0, 1))

        // Nothing changed: nothing is read, the failed file included.
        let second = try await library.scan()
        #expect(
            (second.added, second.updated, second.removed, second.unchanged, second.read) == (0, 0, 0, 4, 0))
        #expect(second.failures.map(\.path) == ["C/junk.ogg"])
        let tracks = try library.tracks()

        // A new time on the same bytes, new contents, a new file, a deleted file.
        try folder.touch("A/a.ogg", modifiedAt: 1_000_000_000)
        try await folder.generate(.flac, "B/b.flac", seconds: 2, tags: TestMedia.Tags(title: "Bee Two"))
        try await folder.generate(.mp3, "D/d.mp3", tags: TestMedia.Tags(title: "Dee"))
        folder.delete("C/c.wav")
        let third = try await library.scan()
        #expect((third.added, third.updated, third.removed, third.unchanged, third.read) == (1, 2, 1, 1, 3))

        let now = try library.tracks()
        #expect(Set(now.map(\.title)) == ["Ay", "Bee Two", "Dee"])
        let a = try #require(now.first { $0.id == "A/a.ogg" })
        #expect(a.modified == 1_000_000_000 * 1_000_000_000)
        #expect(a.title == tracks.first { $0.id == "A/a.ogg" }?.title)
        #expect(try library.track(id: "B/b.flac")?.duration?.isClose(toSeconds: 2) == true)
        #expect(try library.track(id: "C/c.wav") == nil)

        // A junk file that becomes audio is read and indexed.
        try folder.copy("A/a.ogg", to: "C/junk.ogg")
        let fourth = try await library.scan()
        #expect((fourth.added, fourth.read, fourth.failures) == (1, 1, []))
    }

    /// A restart over an unchanged folder: the reopened index has the same tracks and reads
    /// nothing.
    @Test func aReopenedIndexNeedsNoReading() async throws {
        let folder = try await makeLibrary("reopen")
        defer { folder.remove() }
        let tracks: [Track]
        let failures: [ScanFailure]
        do {
            let library = try folder.open()
            _ = try await library.scan()
            tracks = try library.tracks()
            failures = try library.failures()
        }
        let reopened = try folder.open()
        #expect(reopened.indexRecovery == nil)
        #expect(try reopened.tracks() == tracks)
        #expect(try reopened.failures() == failures)
        let rescan = try await reopened.scan()
        #expect((rescan.read, rescan.unchanged, rescan.added, rescan.removed) == (0, 4, 0, 0))
        #expect(try reopened.tracks() == tracks)
    }

    enum Damage: CaseIterable { case notADatabase, damagedPages }

    @Test(arguments: Damage.allCases)
    func aDamagedIndexIsRebuilt(_ damage: Damage) async throws {
        let folder = try await makeLibrary("damaged-\(damage)")
        defer { folder.remove() }
        do {
            let library = try folder.open()
            _ = try await library.scan()
            // Enough rows that the tracks span several pages.
            let many = try await library.scan()
            #expect(many.unchanged == 4)
        }
        var index = try [UInt8](Data(contentsOf: URL(filePath: folder.indexPath)))
        switch damage {
        case .notADatabase:
            index = junkBytes(count: index.count)
        case .damagedPages:
            // Keep the 100-byte header and the first page (the schema); ruin everything after.
            let pageSize = Int(index[16]) << 8 | Int(index[17])
            #expect(index.count > pageSize)
            for offset in pageSize..<index.count { index[offset] = 0xA5 }
        }
        try Data(index).write(to: URL(filePath: folder.indexPath))

        let library = try folder.open()
        let recovery = try #require(library.indexRecovery)
        #expect(recovery.contains(folder.indexPath))
        #expect(try library.trackCount == 0)
        let summary = try await library.scan()
        #expect((summary.added, summary.read) == (3, 4))
        #expect(try library.trackCount == 3)
        #expect(try folder.open().indexRecovery == nil)
    }

    @Test func anIndexOfAnotherFolderStartsEmpty() async throws {
        let folder = try await makeLibrary("other-root")
        defer { folder.remove() }
        do {
            let library = try folder.open()
            _ = try await library.scan()
            #expect(try library.trackCount == 3)
        }
        let elsewhere = try MusicLibrary(root: folder.folder.path + "/Elsewhere", indexPath: folder.indexPath)
        #expect(try elsewhere.trackCount == 0)
    }

    @Test func theIndexFolderIsCreated() throws {
        let folder = try LibraryFolder("index-folder")
        defer { folder.remove() }
        let library = try MusicLibrary(
            root: folder.root + "/./x/../", indexPath: folder.folder.path + "/deep/er/index.sqlite")
        #expect(try library.trackCount == 0)
        #expect(access(folder.folder.path + "/deep/er/index.sqlite", F_OK) == 0)
        #expect(library.root == folder.root)
    }
}
