import ProcessTestSupport
/// Audio files made at test time with `gst-launch-1.0`: a sine tone of a
/// given length, encoded in a given format and tagged, so tests play and index
/// real media without committing any.
public enum TestMedia {
    /// The containers and codecs tests use, with the pipeline tail that writes each.
    public enum Format: String, Sendable, CaseIterable {
        case ogg, opus, flac, mp3, wav

        /// The file name extension.
        public var fileExtension: String { rawValue == "opus" ? "opus" : rawValue }

        var encoder: String {
            switch self {
            case .ogg: "vorbisenc ! oggmux"
            case .opus: "audioresample ! opusenc ! oggmux"
            case .flac: "flacenc"
            // With a Xing/Info header, as LAME writes by default: without one, GStreamer
            // learns an MP3's length only from the frames it has parsed.
            case .mp3: "lamemp3enc ! xingmux ! id3v2mux"
            case .wav: "wavenc"
            }
        }
    }

    /// Tags written into a generated file. WAV keeps none of them.
    public struct Tags: Sendable {
        public var title: String?
        public var artist: String?
        public var album: String?
        public var albumArtist: String?
        public var genre: String?
        public var trackNumber: Int?
        public var discNumber: Int?
        /// A year, written as the `datetime` tag (lamemp3enc/id3v2mux drops it).
        public var year: Int?

        public init(
            title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
            genre: String? = nil, trackNumber: Int? = nil, discNumber: Int? = nil, year: Int? = nil
        ) {
            self.title = title
            self.artist = artist
            self.album = album
            self.albumArtist = albumArtist
            self.genre = genre
            self.trackNumber = trackNumber
            self.discNumber = discNumber
            self.year = year
        }

        /// The `taginject` description, or nil when there is nothing to write.
        var tagInjectDescription: String? {
            // Quoted twice over: once for gst-launch's property value, once for taginject's
            // structure. Double quotes and backslashes in values are not supported.
            func quoted(_ text: String) -> String { "(string)\\\"\(text)\\\"" }
            var parts: [String] = []
            if let title { parts.append("title=\(quoted(title))") }
            if let artist { parts.append("artist=\(quoted(artist))") }
            if let album { parts.append("album=\(quoted(album))") }
            if let albumArtist { parts.append("album-artist=\(quoted(albumArtist))") }
            if let genre { parts.append("genre=\(quoted(genre))") }
            if let trackNumber { parts.append("track-number=(uint)\(trackNumber)") }
            if let discNumber { parts.append("album-disc-number=(uint)\(discNumber)") }
            if let year { parts.append("datetime=(GstDateTime)\(year)-01-01") }
            return parts.isEmpty ? nil : parts.joined(separator: ",")
        }
    }

    /// Writes `seconds` of a sine tone at `frequency` Hz as `format` to `path`, tagged with `tags`.
    ///
    /// The length is rounded to tenths of a second (one 4410-sample buffer at 44.1 kHz).
    /// Throws ``ChildProcessError`` with gst-launch's output when encoding fails.
    public static func generate(
        _ format: Format, seconds: Double, frequency: Int = 440, tags: Tags = Tags(), at path: String
    ) async throws {
        let buffers = max(1, Int((seconds * 10).rounded()))
        var arguments = [
            "-q", "audiotestsrc", "num-buffers=\(buffers)", "samplesperbuffer=4410", "freq=\(frequency)",
            "volume=0.2", "!", "audio/x-raw,rate=44100,channels=2", "!", "audioconvert",
        ]
        if let tags = tags.tagInjectDescription { arguments += ["!", "taginject", "tags=\"\(tags)\""] }
        // gst-launch escapes the spaces of each argument that are outside quotes, so any path works.
        arguments += ["!"] + format.encoder.split(separator: " ").map(String.init)
        arguments += ["!", "filesink", "location=\(path)"]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }

    /// Writes `seconds` of a sine tone to `path` as a 128 kbit/s constant-bitrate MP3 with an ID3
    /// tag titled `title` and no Xing or VBRI header, as old rips are: GStreamer's discoverer
    /// learns such a file's length only from the frames it parses, and waits 50 ms for them.
    public static func generateMP3WithoutLengthHeader(seconds: Double, title: String, at path: String) async throws {
        let buffers = max(1, Int((seconds * 10).rounded()))
        let arguments = [
            "-q", "audiotestsrc", "num-buffers=\(buffers)", "samplesperbuffer=4410", "volume=0.2", "!",
            "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!",
            "taginject", "tags=\"title=(string)\\\"\(title)\\\"\"", "!",
            "lamemp3enc", "target=bitrate", "cbr=true", "bitrate=128", "!", "id3v2mux", "!", "filesink", "location=\(path)",
        ]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }

    /// Writes a `size`×`size` PNG test picture to `path` (folder art).
    public static func generatePicture(size: Int = 64, at path: String) async throws {
        let arguments = [
            "-q", "videotestsrc", "num-buffers=1", "!", "video/x-raw,width=\(size),height=\(size)", "!",
            "videoconvert", "!", "pngenc", "!", "filesink", "location=\(path)",
        ]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }
}
