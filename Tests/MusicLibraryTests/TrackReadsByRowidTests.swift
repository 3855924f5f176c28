import Testing

@testable import MusicLibrary

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
        #expect(try library.tracks(keys) == byPath)
        // Every track indexed again, in the reverse order: the old rowids now name other tracks.
        try library.write { index in
            try index.remove(paths: FolderQueryTests.paths)
            try index.insertSyntheticTracks(FolderQueryTests.paths.reversed().map { FolderQueryTests.row($0) })
        }
        let moved = try library.write { try $0.trackOutlines() }
        #expect(Dictionary(uniqueKeysWithValues: moved.map { ($0.id, $0.rowid) }) != Dictionary(uniqueKeysWithValues: outlines.map { ($0.id, $0.rowid) }))
        #expect(try library.tracks(keys) == library.tracks(identifiedBy: outlines.map(\.id)))
        // A track gone reads as nil either way.
        try library.write { try $0.remove(paths: ["root.flac"]) }
        let gone = try library.tracks(keys)
        #expect(gone == (try library.tracks(identifiedBy: outlines.map(\.id))))
        #expect(gone.filter { $0 == nil }.count == 1)
    }
}
