import BenchmarkSupport
import Glibc
import ProcessTestSupport
import TestMedia

/// The 12 tracks every player plays: one album of tagged Ogg Vorbis tones, generated once with
/// `TestMedia` (gst-launch) and kept between runs. The first, which every player starts with,
/// lasts 10 minutes, so that no player reaches its end while it is measured (a player at the end
/// of its queue stops, and its figures would be those of a stopped player); the others 20 s.
struct PeerLibrary: Sendable {
    /// Bump when what is generated changes: a folder marked with another version is made again.
    static let version = "1"
    static let trackCount = 12
    static let firstTrackSeconds = 600.0
    static let otherTrackSeconds = 20.0

    let folder: String
    var music: String { folder + "/music" }
    private var marker: String { folder + "/complete" }

    /// The tracks' paths in queue order (no spaces: Mopidy's `file://` URIs are built from them).
    var tracks: [String] { (1...Self.trackCount).map { music + "/" + Self.fileName($0) } }

    static func fileName(_ number: Int) -> String { (number < 10 ? "0" : "") + "\(number)-tone.ogg" }

    /// Generates the tracks unless a complete set of this version is there; returns a line saying what was done.
    func prepare() async throws -> String {
        if readWholeFile(marker) == "version \(Self.version)\n" { return "library: \(music) (kept)" }
        removeTree(folder)
        try makeDirectories(music)
        let started = monotonicNanoseconds()
        for number in 1...Self.trackCount {
            try await TestMedia.generate(
                .ogg, seconds: number == 1 ? Self.firstTrackSeconds : Self.otherTrackSeconds, frequency: 300 + 40 * number,
                tags: TestMedia.Tags(
                    title: "Tone \(number)", artist: "Peer Artist", album: "Peer Album", albumArtist: "Peer Artist",
                    genre: "Test", trackNumber: number, year: 2026),
                at: music + "/" + Self.fileName(number))
        }
        try writeFile(marker, "version \(Self.version)\n")
        return "library: \(music) (generated in \(fixed(Double(monotonicNanoseconds() - started) / 1e9, 1)) s)"
    }
}
