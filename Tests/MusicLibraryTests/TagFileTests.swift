#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@testable import MusicLibrary
@testable import mpris_bridge
import TestMedia
import Testing

/// The index reads tags with TagLib and falls back on the discoverer it is given (the daemon's,
/// GStreamer's): both must describe a file the same way, or a rescan would change what the
/// tree shows.
@Suite(.timeLimit(.minutes(1))) struct TagFileTests {
    @Test(arguments: TestMedia.Format.allCases)
    func tagLibDescribesAFileAsTheDiscovererDoes(_ format: TestMedia.Format) async throws {
        let folder = try LibraryFolder("tagfile-\(format)")
        defer { folder.remove() }
        try await folder.generate(format, "tone.\(format.fileExtension)", seconds: 1.5, tags: DiscovererTests.tags)

        let fromTagLib = try #require(TagFile.media(at: folder.path("tone.\(format.fileExtension)")))
        let fromGStreamer = try GStreamerFileDiscoverer().discover(folder.url("tone.\(format.fileExtension)"))

        let difference = try #require(fromTagLib.duration) - #require(fromGStreamer.duration)
        #expect(difference < .milliseconds(60) && difference > .milliseconds(-60), "TagLib \(fromTagLib.duration!), GStreamer \(fromGStreamer.duration!)")
        var same = fromTagLib
        same.duration = fromGStreamer.duration
        // GStreamer drops the date it cannot write to MP3 and WAV, TagLib reads what is there.
        if fromGStreamer.releaseDate == nil { same.releaseDate = nil }
        // GStreamer writes a WAV's album artist as the INFO chunk's subject (ISBJ) and reads it
        // back so; TagLib rightly does not take a subject for an album artist.
        if format == .wav { same.albumArtists = fromGStreamer.albumArtists }
        #expect(same == fromGStreamer)
    }

    @Test func theFrontCoverIsTheImage() async throws {
        let folder = try LibraryFolder("tagfile-cover")
        defer { folder.remove() }
        try await folder.generatePicture("cover.png")
        let picture = try folder.read("cover.png")
        try await folder.generateOggWithCover("covered.ogg", title: "Covered", picture: picture)

        let media = try #require(TagFile.media(at: folder.path("covered.ogg")))
        #expect(media.title == "Covered")
        #expect(media.image.map { [UInt8]($0) } == picture)
    }

    @Test func numbersAndDatesAreReadAsTheDiscovererGivesThem() {
        #expect(TagFile.numberAndCount("3") == (3, nil))
        #expect(TagFile.numberAndCount(" 03 / 12 ") == (3, 12))
        #expect(TagFile.numberAndCount("0/0") == (nil, nil))
        #expect(TagFile.numberAndCount("x/9") == (nil, 9))
        #expect(TagFile.isoDate("2019") == "2019")
        #expect(TagFile.isoDate("2019-05-17T10:00:00") == "2019-05-17")
        #expect(TagFile.isoDate("2019-05") == "2019-05")
        #expect(TagFile.isoDate("2019-13-01") == "2019")
        #expect(TagFile.isoDate("May 2019") == nil)
    }

    /// TagLib cannot read a file it knows no format for: the index then asks GStreamer.
    @Test func whatTagLibCannotReadIsLeftToTheDiscoverer() throws {
        let folder = try LibraryFolder("tagfile-unknown")
        defer { folder.remove() }
        try folder.write("not audio", to: "notes.mp3")
        #expect(TagFile.media(at: folder.path("notes.mp3")) == nil)
    }
}
