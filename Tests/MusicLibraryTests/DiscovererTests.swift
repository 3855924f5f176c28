#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
@testable import GStreamerPlayback
import Glibc
import TestMedia
import Testing

@Suite struct DiscovererTests {
    static let tags = TestMedia.Tags(
        title: "Sine Song", artist: "The Oscillators", album: "Test Tones", albumArtist: "Various",
        genre: "Electronic", trackNumber: 3, discNumber: 2, year: 2019)

    @Test(arguments: TestMedia.Format.allCases)
    func readsTagsDurationAndMediaType(_ format: TestMedia.Format) async throws {
        let folder = try LibraryFolder("discover-\(format)")
        defer { folder.remove() }
        try await folder.generate(format, "tone.\(format.fileExtension)", seconds: 1.5, tags: Self.tags)

        let media = try Discoverer().discover(folder.url("tone.\(format.fileExtension)"))

        #expect(media.hasAudio)
        #expect(media.isSeekable)
        // MP3 counts encoder padding: allow for it.
        #expect(media.duration?.isClose(toSeconds: 1.5) == true, "\(String(describing: media.duration)), \(media)")
        let expectedType: [TestMedia.Format: String] = [
            .ogg: "audio/ogg", .opus: "audio/ogg", .flac: "audio/x-flac", .mp3: "audio/mpeg", .wav: "audio/x-wav",
        ]
        #expect(media.mimeType == expectedType[format])
        // Every container keeps these (WAV in its LIST INFO chunk).
        #expect(media.title == "Sine Song")
        #expect(media.artists == ["The Oscillators"])
        #expect(media.album == "Test Tones")
        #expect(media.albumArtists == ["Various"])
        #expect(media.genres == ["Electronic"])
        if format != .wav {
            #expect(media.trackNumber == 3)
            #expect(media.discNumber == 2)
        }
        if format != .wav && format != .mp3 {
            #expect(media.releaseDate == "2019-01-01")
        }
        #expect(media.image == nil)
    }

    /// An MP3 with no Xing or VBRI header, as old constant-bitrate rips are, still gets its
    /// length: found by GStreamer when its parser has seen enough frames, else estimated from
    /// the bitrate and the bytes after the ID3 tag.
    @Test func anMP3WithoutALengthHeaderStillHasItsLength() async throws {
        let folder = try LibraryFolder("discover-no-xing")
        defer { folder.remove() }
        try await TestMedia.generateMP3WithoutLengthHeader(seconds: 3, title: "Old Rip", at: folder.path("old.mp3"))

        let media = try Discoverer().discover(folder.url("old.mp3"))
        #expect(media.title == "Old Rip")
        #expect(media.bitrate == 128_000)
        #expect(media.duration?.isClose(toSeconds: 3) == true, "\(String(describing: media.duration))")
        // The estimate alone, which a loaded machine falls back on.
        let estimate = Discoverer.estimatedDuration(ofFileAt: folder.path("old.mp3"), bitrate: 128_000)
        #expect(estimate?.isClose(toSeconds: 3) == true, "\(String(describing: estimate))")

        // A 300,000-byte ID3v2 tag (a cover, say; its size in 7-bit bytes) is not audio: 16,000
        // bytes after it at 128 kbit/s are one second.
        let tagSize = 300_000
        let header: [UInt8] = [0x49, 0x44, 0x33, 4, 0, 0] + [21, 14, 7, 0].map { UInt8(tagSize >> ($0) & 0x7F) }
        try folder.write(header + [UInt8](repeating: 0, count: tagSize + 16_000), to: "tagged.mp3")
        #expect(Discoverer.estimatedDuration(ofFileAt: folder.path("tagged.mp3"), bitrate: 128_000) == .seconds(1))
    }

    @Test func readsListsCountsComposersAndTheEmbeddedCover() async throws {
        let folder = try LibraryFolder("discover-more")
        defer { folder.remove() }
        try await folder.generatePicture("cover.png")
        let picture = try folder.read("cover.png")
        try await folder.generateOgg(
            "many.ogg",
            tags: [
                ("artist", "raw", #"{(string)\"Ann\",(string)\"Bob\"}"#), ("composer", "string", "Bach"),
                ("track-count", "uint", "12"), ("album-disc-count", "uint", "3"),
            ])
        try await folder.generateOggWithCover("pictured.ogg", title: "With Cover", picture: picture)

        let discoverer = try Discoverer()
        let many = try discoverer.discover(folder.url("many.ogg"))
        #expect(many.artists == ["Ann", "Bob"])
        #expect(many.composers == ["Bach"])
        #expect(many.trackCount == 12)
        #expect(many.discCount == 3)

        let pictured = try discoverer.discover(folder.url("pictured.ogg"))
        #expect(pictured.title == "With Cover")
        #expect(pictured.image.map { [UInt8]($0) } == picture)
    }

    @Test func explainsWhatItCannotRead() async throws {
        let folder = try LibraryFolder("discover-errors")
        defer { folder.remove() }
        try folder.write(junkBytes(count: 8192), to: "junk.ogg")
        try await folder.generatePicture("picture.png")
        let discoverer = try Discoverer()

        #expect(throws: DiscovererError.notFound(folder.url("absent.ogg"))) {
            try discoverer.discover(folder.url("absent.ogg"))
        }
        do {
            _ = try discoverer.discover(folder.url("junk.ogg"))
            Issue.record("junk was read as media")
        } catch let error as DiscovererError {
            guard case .notMedia(_, let reason) = error else { throw error }
            #expect(reason == "Could not determine type of stream.")
            #expect(error.description.hasSuffix("junk.ogg"))
        }
        #expect(throws: DiscovererError.noAudio(folder.url("picture.png"))) {
            try discoverer.discover(folder.url("picture.png"))
        }
        #expect(throws: DiscovererError.unreadable(folder.url(""), reason: "not a regular file")) {
            try discoverer.discover(folder.url(""))
        }
        mkfifo(folder.path("pipe.ogg"), 0o600)
        #expect(throws: DiscovererError.unreadable(folder.url("pipe.ogg"), reason: "not a regular file")) {
            try discoverer.discover(folder.url("pipe.ogg"))
        }
        // The discoverer is still usable after failures.
        try await folder.generate(.wav, "fine.wav")
        #expect(try discoverer.discover(folder.url("fine.wav")).hasAudio)
    }
}
