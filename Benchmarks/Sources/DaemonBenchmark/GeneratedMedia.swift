import BenchmarkSupport
import Glibc
import ProcessTestSupport
import TestMedia

/// The music the daemon benchmark indexes and serves, generated once and kept between runs in
/// one folder (by default `Benchmarks/.build/daemon-benchmark`, about 530 MB).
///
/// Encoding 2,000 files with gst-launch one by one would take minutes, so a few dozen distinct
/// tagged tones are encoded (8 per kind, 1 to 2.5 s long, but the first FLAC one, which the daemon
/// queues first, lasts 20 s) and copied to 2,000 paths in
/// artist/album folders, each album with a `cover.png`: a copy is a distinct file to the
/// indexer (it keys files by path, size and modification time). Three libraries differ only in
/// their formats, because MP3 decides the indexing speed: GStreamer's discoverer sleeps 50 ms
/// on an MP3 without a Xing header that has no duration yet, and `lamemp3enc ! id3v2mux` (what
/// `TestMedia` writes) makes exactly those; LAME-encoded music from the real world carries a
/// Xing/Info header. The 10,000-track library is five sets of hard links to the Xing-MP3
/// library's files (links, not copies, to save 0.8 GB: the index and the daemon see 10,000
/// distinct paths), with its index built once by `mpris-bridge scan` and cached too.
struct GeneratedMedia: Sendable {
    /// What one generated tone is encoded as.
    enum Kind: String, CaseIterable, Sendable {
        case ogg, opus, flac, wav
        /// `lamemp3enc ! id3v2mux`: no Xing header, the discoverer's slow case.
        case mp3
        /// `lamemp3enc ! xingmux ! id3v2mux`: a Xing header, as LAME writes by default.
        case mp3Xing = "mp3-xing"

        var fileExtension: String { self == .mp3Xing ? "mp3" : rawValue }
    }

    /// A library's mix of formats, in equal shares.
    enum Mix: String, CaseIterable, Sendable {
        case noMP3 = "no-mp3"
        case xingMP3 = "xing-mp3"
        case plainMP3 = "plain-mp3"

        var kinds: [Kind] {
            switch self {
            case .noMP3: [.ogg, .opus, .flac, .wav]
            case .xingMP3: [.ogg, .opus, .flac, .wav, .mp3Xing]
            case .plainMP3: [.ogg, .opus, .flac, .wav, .mp3]
            }
        }

        var label: String {
            switch self {
            case .noMP3: "ogg, opus, flac, wav (500 each)"
            case .xingMP3: "ogg, opus, flac, wav, MP3 with Xing header (400 each)"
            case .plainMP3: "ogg, opus, flac, wav, MP3 without Xing header (400 each)"
            }
        }
    }

    /// Bump when what is generated changes: a cache with another version is deleted and made again.
    static let version = "2"
    /// The length of the queue's first track.
    static let firstTrackSeconds = 20.0
    static let tonesPerKind = 8
    static let filesPerLibrary = 2_000
    static let setsInLargeLibrary = 5
    static var tracksInLargeLibrary: Int { filesPerLibrary * setsInLargeLibrary }

    /// The cache folder.
    let root: String

    func library(_ mix: Mix) -> String { root + "/library-\(mix.rawValue)" }
    var largeLibrary: String { root + "/library-10k" }
    /// One album of the Xing-MP3 library (10 tracks, its first the 20-s FLAC tone).
    var smallLibrary: String { library(.xingMP3) + "/" + Self.albumFolder(0) }
    /// The folder with the large library's `index.sqlite`.
    var largeLibraryCache: String { root + "/index-10k" }
    private var sources: String { root + "/sources" }
    private var marker: String { root + "/complete" }

    /// A generated tone in the given kind (the in-process playback measurement plays these).
    func tone(_ kind: Kind, _ index: Int) -> String { sources + "/\(kind.rawValue)-\(index).\(kind.fileExtension)" }

    /// Makes whatever is not cached yet; returns a line saying what was done. `daemon` builds
    /// the large library's index.
    func prepare(daemon: String, regenerate: Bool, log: (String) -> Void) async throws -> String {
        let expected = "\(Self.version) \(root)"
        if !regenerate, let text = readWholeFile(marker), text.split(separator: "\n").first.map(String.init) == expected
        {
            return "cached in \(root)"
        }
        let started = monotonicNanoseconds()
        removeTree(root)
        try makeDirectories(sources)
        log("generating \(Kind.allCases.count * Self.tonesPerKind) tones with gst-launch-1.0 in \(sources)...")
        try await generateTones()
        for mix in Mix.allCases {
            log("copying them to \(Self.filesPerLibrary) files in \(library(mix))...")
            try makeLibrary(mix)
        }
        log("linking \(Self.tracksInLargeLibrary) files in \(largeLibrary)...")
        try makeLargeLibrary()
        log("indexing \(largeLibrary) once with mpris-bridge scan...")
        try makeDirectories(largeLibraryCache)
        let scan = try await ChildProcess.run(
            daemon, ["scan", "--library", largeLibrary, "--cache-dir", largeLibraryCache, "--quiet"],
            timeout: .seconds(1800))
        guard scan.succeeded else { throw BenchmarkFailure(description: "indexing \(largeLibrary) failed: \(scan)") }
        try writeFile(marker, expected + "\n")
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        return "generated in \(root) in \(fixed(seconds, 0)) s"
    }

    private func generateTones() async throws {
        let jobs = Kind.allCases.flatMap { kind in (0..<Self.tonesPerKind).map { (kind, $0) } }
        // Two encoders at a time: one per core.
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func addJob() {
                let (kind, index) = jobs[next]
                next += 1
                group.addTask { try await generate(kind, index) }
            }
            for _ in 0..<min(2, jobs.count) { addJob() }
            while try await group.next() != nil {
                if next < jobs.count { addJob() }
            }
        }
        try await TestMedia.generatePicture(size: 300, at: sources + "/cover.png")
    }

    private func generate(_ kind: Kind, _ index: Int) async throws {
        // The first FLAC tone is the daemon's first track (artist "Generator", album "flac",
        // track 1 sorts first): 20 s, so that playing it for a few seconds stays on it.
        let seconds = kind == .flac && index == 0 ? Self.firstTrackSeconds : [1.0, 1.5, 2.0, 2.5][index % 4]
        let frequency = 220 + 55 * index
        let tags = TestMedia.Tags(
            title: "Tone \(index + 1)", artist: "Generator", album: kind.rawValue, albumArtist: "Generator",
            genre: "Test Tones", trackNumber: index + 1)
        let path = tone(kind, index)
        guard kind == .mp3Xing else {
            try await TestMedia.generate(
                TestMedia.Format(rawValue: kind.rawValue)!, seconds: seconds, frequency: frequency, tags: tags, at: path)
            return
        }
        // TestMedia has no Xing variant: the same pipeline with xingmux before the ID3 tag.
        let arguments = [
            "-q", "audiotestsrc", "num-buffers=\(Int(seconds * 10))", "samplesperbuffer=4410", "freq=\(frequency)",
            "volume=0.2", "!", "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!", "taginject",
            "tags=\"title=(string)\\\"Tone \(index + 1)\\\",artist=(string)\\\"Generator\\\","
                + "album=(string)\\\"\(kind.rawValue)\\\",track-number=(uint)\(index + 1)\"",
            "!", "lamemp3enc", "!", "xingmux", "!", "id3v2mux", "!", "filesink", "location=\(path)",
        ]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }

    /// 20 artists × 10 albums × 10 tracks, the mix's kinds in turn, each album with a cover.
    private func makeLibrary(_ mix: Mix) throws {
        let kinds = mix.kinds
        for file in 0..<Self.filesPerLibrary {
            let folder = library(mix) + "/" + Self.albumFolder(file)
            if file % 10 == 0 {
                try makeDirectories(folder)
                try copyFile(sources + "/cover.png", to: folder + "/cover.png")
            }
            let kind = kinds[file % kinds.count]
            let source = tone(kind, (file / kinds.count) % Self.tonesPerKind)
            try copyFile(source, to: folder + "/" + Self.trackName(file, kind))
        }
    }

    private func makeLargeLibrary() throws {
        let mix = Mix.xingMP3
        for set in 1...Self.setsInLargeLibrary {
            for file in 0..<Self.filesPerLibrary {
                let album = Self.albumFolder(file)
                let folder = largeLibrary + "/Set \(set)/" + album
                if file % 10 == 0 {
                    try makeDirectories(folder)
                    try hardLink(library(mix) + "/" + album + "/cover.png", to: folder + "/cover.png")
                }
                let name = Self.trackName(file, mix.kinds[file % mix.kinds.count])
                try hardLink(library(mix) + "/" + album + "/" + name, to: folder + "/" + name)
            }
        }
    }

    private static func albumFolder(_ file: Int) -> String {
        "Artist \(twoDigits(file / 100 + 1))/Album \(twoDigits(file / 10 % 10 + 1))"
    }

    private static func trackName(_ file: Int, _ kind: Kind) -> String {
        "\(twoDigits(file % 10 + 1)) Track \(file + 1).\(kind.fileExtension)"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
}
