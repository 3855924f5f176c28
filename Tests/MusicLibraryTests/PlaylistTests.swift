#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MusicLibrary
import ProcessTestSupport
import TestMedia
import Testing

@Suite struct PlaylistTests {
    /// M3U8, Latin-1 M3U with CRLF lines, and PLS, with relative and absolute paths, file URLs,
    /// streams and entries that are missing or outside the library.
    @Test func readsEveryKindOfPlaylist() async throws {
        let folder = try LibraryFolder("playlists")
        defer { folder.remove() }
        try await folder.generate(.wav, "Artist/Album/01 a.wav")
        try folder.copy("Artist/Album/01 a.wav", to: "Artist/Album/02 b.wav")
        try folder.copy("Artist/Album/01 a.wav", to: "Other/Café.wav")
        try folder.write(junkBytes(count: 4096), to: "Other/broken.ogg")
        let outsider = folder.folder.path + "/outside.wav"
        try folder.copy("Artist/Album/01 a.wav", to: "../outside.wav")
        let encodedRoot = folder.url("").absoluteString

        try folder.write(
            """
            #EXTM3U
            #PLAYLIST:My Mix
            #EXTINF:61,Artist - A
            ../Artist/Album/01 a.wav
            #EXTINF:-1 tvg-name="x,y",Radio Éire
            https://radio.example/stream.mp3
            \(folder.path("Other/Café.wav"))
            \(encodedRoot)/Artist/Album/02%20b.wav
            ../Artist/Album/03 missing.wav
            \(outsider)
            ../Other/broken.ogg

            """, to: "Playlists/mix.m3u8")
        // Latin-1, CRLF, no #EXTM3U header, a byte-order mark would be UTF-8 so there is none.
        try folder.write(
            Array("Café.wav\r\n# a comment\r\n../Artist/Album/./02 b.wav\r\n".unicodeScalars.map { UInt8($0.value) }),
            to: "Other/old.m3u")
        try folder.write(
            """
            [playlist]
            NumberOfEntries=3
            File2=http://radio.example/live
            Title2=Live Radio
            File1=Artist/Album/02 b.wav
            Title1=B
            File3=nothing-here.mp3
            Version=2
            """, to: "top.pls")

        let library = try folder.open()
        let summary = try await library.scan()
        #expect(summary.playlists == 3)
        #expect(summary.added == 3)

        let playlists = try library.playlists()
        #expect(playlists.map(\.id) == ["Other/old.m3u", "Playlists/mix.m3u8", "top.pls"])
        #expect(playlists.map(\.name) == ["old", "My Mix", "top"])
        #expect(
            playlists.map(\.url) == [folder.url("Other/old.m3u"), folder.url("Playlists/mix.m3u8"), folder.url("top.pls")])

        #expect(playlists[0].entries == [.track("Other/Café.wav"), .track("Artist/Album/02 b.wav")])
        #expect(
            playlists[1].entries == [
                .track("Artist/Album/01 a.wav"),
                .stream(URL(string: "https://radio.example/stream.mp3")!, title: "Radio Éire"),
                .track("Other/Café.wav"),
                .track("Artist/Album/02 b.wav"),
                .missing("../Artist/Album/03 missing.wav"),
                .missing(outsider),
                .missing("../Other/broken.ogg"),
            ])
        #expect(
            playlists[2].entries == [
                .track("Artist/Album/02 b.wav"),
                .stream(URL(string: "http://radio.example/live")!, title: "Live Radio"),
                .missing("nothing-here.mp3"),
            ])

        // Entries follow the library: a deleted track becomes missing, a new one appears, without
        // the playlists changing.
        folder.delete("Artist/Album/02 b.wav")
        try folder.copy("Artist/Album/01 a.wav", to: "nothing-here.mp3.wav")
        try folder.copy("Artist/Album/01 a.wav", to: "Artist/Album/03 missing.wav")
        let rescan = try await library.scan()
        #expect(rescan.read == 2)
        let after = try library.playlists()
        #expect(after[2].entries.first == .missing("Artist/Album/02 b.wav"))
        #expect(after[1].entries[4] == .track("Artist/Album/03 missing.wav"))

        // A changed playlist is read again; a removed one is gone.
        try folder.write("#EXTM3U\n../Artist/Album/01 a.wav\n", to: "Playlists/mix.m3u8")
        folder.delete("top.pls")
        let last = try await library.scan()
        #expect(last.playlists == 2)
        #expect(try library.playlists().map(\.entries) == [after[0].entries, [.track("Artist/Album/01 a.wav")]])
    }
}
