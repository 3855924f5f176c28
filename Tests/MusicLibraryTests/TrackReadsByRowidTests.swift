import MediaRemote
import Testing

@testable import MusicLibrary

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A tree's rows are read by rowid, the index's own key, kept beside their paths: the tracks
/// are those read by path, also once the rows were given to other tracks since.
@Suite struct TrackReadsByRowidTests {
    @Test func tracksReadByRowidAreThoseReadByPathEvenWhenTheRowsMoved() throws {
        let folder = try LibraryFolder("rowid-reads")
        defer { folder.remove() }
        let library = try FolderQueryTests.makeLibrary(folder)
        let outlines = try library.write { try $0.trackOutlines() }
        #expect(outlines.allSatisfy { $0.rowid > 0 })
        let keys = outlines.map { TrackRows.Key(id: $0.id, rowid: $0.rowid) }
        let byPath = try library.tracks(identifiedBy: outlines.map(\.id))
        #expect(byPath.allSatisfy { $0 != nil })
        #expect(try library.tracks(keys, covers: FolderCovers()) == byPath)
        // Every track indexed again, in the reverse order: the old rowids now name other tracks.
        try library.write { index in
            try index.remove(paths: FolderQueryTests.paths)
            try index.insertSyntheticTracks(FolderQueryTests.paths.reversed().map { FolderQueryTests.row($0) })
        }
        let moved = try library.write { try $0.trackOutlines() }
        #expect(Dictionary(uniqueKeysWithValues: moved.map { ($0.id, $0.rowid) }) != Dictionary(uniqueKeysWithValues: outlines.map { ($0.id, $0.rowid) }))
        #expect(try library.tracks(keys, covers: FolderCovers()) == library.tracks(identifiedBy: outlines.map(\.id)))
        // A track gone reads as nil either way.
        try library.write { try $0.remove(paths: ["root.flac"]) }
        let gone = try library.tracks(keys, covers: FolderCovers())
        #expect(gone == (try library.tracks(identifiedBy: outlines.map(\.id))))
        #expect(gone.filter { $0 == nil }.count == 1)
    }

    /// A row of a track without a cover of its own shows its folder's, read once for the tree,
    /// and a tree read again after the folder's cover changed shows the new one.
    @Test func aFoldersCoverIsReadOnceForATreeAndAgainForTheNext() throws {
        let folder = try LibraryFolder("rowid-covers")
        defer { folder.remove() }
        let library = try FolderQueryTests.makeLibrary(folder)
        let content = try LibraryContent(library: library, libraryName: "Music") { track in
            if case .file(let url)? = track.artwork { .url(url) } else { nil }
        }
        func cover(of id: String) -> String {
            let tracks = IndexPath(index: 2)  // the full layout: Artists, Albums, Tracks, …
            for index in 0..<content.numberOfChildItems(at: tracks) {
                guard let item = content.contentItem(at: tracks.appending(index)), item.identifier == "track:" + id else { continue }
                return item.artwork.map { "\($0)" } ?? ""
            }
            return "(no row)"
        }
        #expect(cover(of: "A/02 y.flac").contains("A/cover.jpg"))
        #expect(cover(of: "root.flac") == "")
        _ = try library.write { try $0.finishScan(folderArt: ["A": "A/new.jpg"], walkFailures: []) }
        try content.update(from: library)
        #expect(cover(of: "A/02 y.flac").contains("A/new.jpg"))
    }
}
