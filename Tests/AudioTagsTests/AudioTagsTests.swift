import AudioTags
import Glibc
import ProcessTestSupport
import TestMedia
import Testing

/// TagLib through `AudioTags`: what each format's file says, tags written and read back, and
/// files that are not audio.
@Suite(.timeLimit(.minutes(1))) struct AudioTagsTests {
    static let tags = TestMedia.Tags(
        title: "Sine Song", artist: "The Oscillators", album: "Test Tones", albumArtist: "Various",
        genre: "Electronic", trackNumber: 3, discNumber: 2, year: 2019)

    @Test(arguments: TestMedia.Format.allCases)
    func readsLengthStreamAndTags(_ format: TestMedia.Format) async throws {
        let folder = try TemporaryDirectory(prefix: "audio-tags")
        defer { folder.remove() }
        let path = folder.path + "/tone.\(format.fileExtension)"
        try await TestMedia.generate(format, seconds: 1.5, tags: Self.tags, at: path)

        let read = try AudioTags.read(path)
        let seconds = try #require(read.duration).seconds
        #expect(abs(seconds - 1.5) < 0.1, "\(seconds) s")
        let expectedType: [TestMedia.Format: String] = [
            .ogg: "audio/ogg", .opus: "audio/ogg", .flac: "audio/x-flac", .mp3: "audio/mpeg", .wav: "audio/x-wav",
        ]
        #expect(read.mimeType == expectedType[format])
        #expect(read.channels == 2)
        #expect(read.sampleRate == (format == .opus ? 48_000 : 44_100))
        #expect((read.bitrate ?? 0) > 0)
        // WAV keeps its tags in a LIST INFO chunk, which has no album artist, disc or genre keys
        // that GStreamer writes.
        #expect(read.first("TITLE") == "Sine Song")
        #expect(read.first("ARTIST") == "The Oscillators")
        #expect(read.first("ALBUM") == "Test Tones")
        if format != .wav {
            #expect(read.first("ALBUMARTIST") == "Various")
            #expect(read.first("GENRE") == "Electronic")
            #expect(read.first("TRACKNUMBER")?.hasPrefix("3") == true, "\(read.properties)")
            #expect(read.first("DISCNUMBER")?.hasPrefix("2") == true, "\(read.properties)")
        }
        #expect(read.pictures.isEmpty)
    }

    /// Tags written replace the file's, keep several values of a key in order and any text,
    /// and the audio still reads the same.
    @Test func writtenTagsReadBack() async throws {
        let folder = try TemporaryDirectory(prefix: "audio-tags-write")
        defer { folder.remove() }
        for format in [TestMedia.Format.ogg, .flac, .mp3] {
            let path = folder.path + "/tone.\(format.fileExtension)"
            try await TestMedia.generate(format, seconds: 1, tags: Self.tags, at: path)
            let before = try AudioTags.read(path)
            try AudioTags.write(
                [("TITLE", "Ünïcödé ✓ 曲"), ("ARTIST", "Ann"), ("ARTIST", "Bob"), ("TRACKNUMBER", "7"), ("DATE", "2001-02-03")],
                to: path)
            let after = try AudioTags.read(path)
            #expect(after.first("TITLE") == "Ünïcödé ✓ 曲", "\(format)")
            #expect(after.properties["ARTIST"] == ["Ann", "Bob"], "\(format): \(after.properties)")
            #expect(after.first("TRACKNUMBER") == "7", "\(format)")
            #expect(after.first("DATE") == "2001-02-03", "\(format)")
            #expect(after.first("ALBUM") == nil, "\(format): the old tags are gone")
            #expect(after.duration == before.duration, "\(format)")
        }
    }

    /// The format is told by content: an Ogg file named `.mp3` is read as Ogg, and text named
    /// `.mp3` is no format at all.
    @Test func theFormatComesFromTheContentNotTheName() async throws {
        let folder = try TemporaryDirectory(prefix: "audio-tags-content")
        defer { folder.remove() }
        try await TestMedia.generate(.ogg, seconds: 1, tags: Self.tags, at: folder.path + "/really-ogg.mp3")
        #expect(try AudioTags.read(folder.path + "/really-ogg.mp3").mimeType == "audio/ogg")

        let text = folder.path + "/notes.mp3"
        let file = fopen(text, "w")
        fputs(String(repeating: "Not audio at all, just words.\n", count: 200), file)
        fclose(file)
        #expect(throws: AudioTagsError.unknownFormat(path: text)) { try AudioTags.read(text) }
    }

    /// A missing file and a FIFO fail at once, with the reason; reading a FIFO would block.
    @Test func whatIsNotARegularFileFailsAtOnce() throws {
        let folder = try TemporaryDirectory(prefix: "audio-tags-fifo")
        defer { folder.remove() }
        let missing = folder.path + "/missing.ogg"
        #expect(throws: AudioTagsError.unreadable(path: missing, reason: "No such file or directory")) {
            try AudioTags.read(missing)
        }
        let fifo = folder.path + "/pipe.mp3"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: AudioTagsError.unreadable(path: fifo, reason: "not a regular file")) { try AudioTags.read(fifo) }
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
