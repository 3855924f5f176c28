import AudioTags
import Dispatch
import Glibc
import ProcessTestSupport
import Synchronization
import TestMedia

/// A library of N tagged Ogg Vorbis tracks, generated once in one folder and kept between runs.
///
/// Encoding is what takes time, so only a few one-second tones are encoded, with `gst-launch-1.0`;
/// every track is a copy of one of them whose tags TagLib (`AudioTags`) then replaces: a distinct
/// file to the indexer, which keys files by path, size and modification time, and reads the tags.
/// Layout, as a real collection: `music/Artist NNNN/Album NNNNN/NN Title.ogg`, 12 tracks to an
/// album, 1 to 6 albums to an artist (seeded, so the same N gives the same library), a cover image
/// in every third album, and `music/Playlists/` with M3U playlists. Beside `music/`, outside the
/// library, `staging/Added Album/` holds 1,000 more tracks that a run renames into the library
/// and back.
public struct ScaleLibrary: Sendable {
    /// Bump when what is generated changes: a folder marked with another version is made again.
    public static let version = "1"
    public static let tracksPerAlbum = 12
    public static let toneCount = 8
    public static let playlistCount = 42
    public static let tracksPerPlaylist = 50
    public static let addedTrackCount = 1_000
    /// The queue's first track is longer than the others, so that it still plays when its memory is
    /// read (a one-second track would have ended, and the daemon may stop at the end of a short one).
    public static let firstTrackSeconds = 30
    public static let words = "love night river fire light dream heart rain stone blue summer winter shadow gold road home sky song"
        .split(separator: " ").map(String.init)
    public static let genres = ["Rock", "Jazz", "Pop", "Folk"]

    /// The folder that holds everything.
    public let folder: String
    public let tracks: Int

    public var music: String { folder + "/music" }
    public var tones: String { folder + "/tones" }
    private var marker: String { folder + "/complete" }
    /// The 1,000 added tracks while they are out of the library.
    public var stagedAlbum: String { folder + "/staging/Added Album" }
    /// The same folder once renamed into the library: a new album folder of an existing artist folder.
    public var addedAlbum: String { music + "/Artist 0001/Added Album" }

    /// The library of `tracks` tracks kept in `folder` (made by ``prepare(log:)``).
    public init(folder: String, tracks: Int) {
        self.folder = folder
        self.tracks = tracks
    }

    /// What generating the library did.
    public struct Outcome: Sendable {
        /// False when a complete library of this size was already there.
        public var generated: Bool
        public var seconds: Double
        public var albums: Int
        public var artists: Int
        /// Bytes of every generated file (tracks, covers, playlists, the added tracks).
        public var bytes: Int

        public init(generated: Bool, seconds: Double, albums: Int, artists: Int, bytes: Int) {
            self.generated = generated
            self.seconds = seconds
            self.albums = albums
            self.artists = artists
            self.bytes = bytes
        }
    }

    /// One track to write: which tone it copies, where, with which tags.
    private struct TrackFile: Sendable {
        var tone: String
        var path: String
        var tags: [(key: String, value: String)]
    }

    /// Makes the library unless a complete one of this size is there; puts back the added album if
    /// a run that failed left it in the library.
    public func prepare(log: (String) -> Void) async throws -> Outcome {
        if access(addedAlbum, F_OK) == 0 {
            log("moving \(addedAlbum), left by an earlier run, out of the library")
            try rename(addedAlbum, to: stagedAlbum)
        }
        // "version V tracks N ALBUMS ARTISTS BYTES"
        if let words = readWholeFile(marker)?.split(whereSeparator: { $0 == " " || $0 == "\n" }),
            words.count == 7, words.prefix(4).joined(separator: " ") == markerText
        {
            let counts = words.suffix(3).map { Int($0) ?? 0 }
            return Outcome(generated: false, seconds: 0, albums: counts[0], artists: counts[1], bytes: counts[2])
        }
        let started = monotonicNanoseconds()
        removeTree(folder)
        try makeDirectories(tones)
        try makeDirectories(folder + "/staging")
        log("encoding \(Self.toneCount + 1) tones with gst-launch-1.0 in \(tones)...")
        try await encodeTones()
        let (files, playlists, albums, artists) = plan()
        log("copying and tagging \(files.count) tracks in \(music) (\(albums) albums, \(artists) artists)...")
        var bytes = try write(files)
        log("writing \(playlists.count) playlists and the \(Self.addedTrackCount) tracks to add...")
        for (name, text) in playlists {
            try writeFile(music + "/Playlists/" + name, text)
            bytes += text.utf8.count
        }
        bytes += try write(addedTracks())
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        try writeFile(marker, "\(markerText) \(albums) \(artists) \(bytes)\n")
        return Outcome(generated: true, seconds: seconds, albums: albums, artists: artists, bytes: bytes)
    }

    private var markerText: String { "version \(Self.version) tracks \(tracks)" }

    private func tone(_ index: Int) -> String { tones + "/tone-\(index).ogg" }
    private var firstTone: String { tones + "/first.ogg" }
    private var cover: String { tones + "/cover.png" }

    /// 8 one-second tones, the longer first one and a cover picture, two encoders at a time.
    private func encodeTones() async throws {
        let jobs: [(path: String, seconds: Int, frequency: Int)] =
            (0..<Self.toneCount).map { (tone($0), 1, 300 + 50 * $0) } + [(firstTone, Self.firstTrackSeconds, 440)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func addJob() {
                let job = jobs[next]
                next += 1
                group.addTask {
                    let arguments = [
                        "-q", "audiotestsrc", "num-buffers=\(job.seconds * 10)", "samplesperbuffer=4410",
                        "freq=\(job.frequency)", "!", "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!",
                        "vorbisenc", "quality=0.1", "!", "oggmux", "!", "filesink", "location=\(job.path)",
                    ]
                    try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(120)).check()
                }
            }
            for _ in 0..<min(2, jobs.count) { addJob() }
            while try await group.next() != nil {
                if next < jobs.count { addJob() }
            }
        }
        try await TestMedia.generatePicture(size: 300, at: cover)
    }

    /// Every track's file and tags, the playlists' names and text, and the album and artist
    /// counts; creates the folders.
    private func plan() -> ([TrackFile], [(String, String)], albums: Int, artists: Int) {
        var random = SplitMix64(seed: 7)
        var files: [TrackFile] = []
        files.reserveCapacity(tracks)
        var album = 0
        var artist = 0
        while files.count < tracks {
            artist += 1
            let artistName = "Artist \(digits(artist, 4))"
            for _ in 0..<Int.random(in: 1...6, using: &random) where files.count < tracks {
                album += 1
                let albumName = "Album \(digits(album, 5))"
                let albumFolder = music + "/" + artistName + "/" + albumName
                try? makeDirectories(albumFolder)
                if album % 3 == 1 { try? copyFile(cover, to: albumFolder + "/cover.png") }
                let year = String(1960 + album % 60)
                for number in 1...Self.tracksPerAlbum where files.count < tracks {
                    let title =
                        "\(Self.words.randomElement(using: &random)!) \(Self.words.randomElement(using: &random)!) \(number)"
                    let genre = Self.genres.randomElement(using: &random)!
                    let index = files.count
                    files.append(
                        TrackFile(
                            tone: index == 0 ? firstTone : tone(index % Self.toneCount),
                            path: albumFolder + "/\(digits(number, 2)) \(title).ogg",
                            tags: [
                                ("TITLE", capitalised(title)), ("ARTIST", artistName), ("ALBUM", albumName),
                                ("ALBUMARTIST", artistName), ("TRACKNUMBER", String(number)), ("DATE", year),
                                ("GENRE", genre),
                            ]))
                }
            }
        }
        try? makeDirectories(music + "/Playlists")
        let prefix = music + "/"
        var playlists: [(String, String)] = []
        for number in 1...Self.playlistCount {
            var text = "#EXTM3U\n"
            for _ in 0..<min(Self.tracksPerPlaylist, files.count) {
                let file = files[Int.random(in: 0..<files.count, using: &random)]
                // Relative to the playlist's folder, as a music program writes them.
                text += "../" + file.path.dropFirst(prefix.count) + "\n"
            }
            playlists.append(("Playlist \(digits(number, 2)).m3u", text))
        }
        return (files, playlists, album, artist)
    }

    /// The album that a run adds: 1,000 tracks of a new artist, in the staging folder.
    private func addedTracks() -> [TrackFile] {
        try? makeDirectories(stagedAlbum)
        return (1...Self.addedTrackCount).map { number in
            TrackFile(
                tone: tone(number % Self.toneCount), path: stagedAlbum + "/\(digits(number, 4)) Added \(number).ogg",
                tags: [
                    ("TITLE", "Added \(number)"), ("ARTIST", "Added Artist"), ("ALBUM", "Added Album"),
                    ("ALBUMARTIST", "Added Artist"), ("TRACKNUMBER", String(number)), ("DATE", "2024"),
                    ("GENRE", "Rock"),
                ])
        }
    }

    /// Copies and tags `files` on every core; returns the bytes written.
    private func write(_ files: [TrackFile]) throws -> Int {
        let chunks = max(1, min(files.count / 200, 256))
        let failure = Mutex<String?>(nil)
        let bytes = Atomic<Int>(0)
        // Copying is I/O and tagging CPU: chunks on every core keep both busy.
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = (files.count * chunk / chunks)..<(files.count * (chunk + 1) / chunks)
            var written = 0
            for file in files[range] {
                do {
                    try copyFile(file.tone, to: file.path)
                    try AudioTags.write(file.tags, to: file.path)
                } catch {
                    failure.withLock { $0 = $0 ?? "\(file.path): \(error)" }
                    return
                }
                var info = stat()
                if stat(file.path, &info) == 0 { written += Int(info.st_size) }
            }
            bytes.add(written, ordering: .relaxed)
        }
        if let failure = failure.withLock({ $0 }) { throw BenchmarkFailure(description: "cannot write \(failure)") }
        return bytes.load(ordering: .relaxed)
    }

    private func digits(_ value: Int, _ count: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    private func capitalised(_ title: String) -> String {
        title.split(separator: " ").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }
}

/// `rename(2)`, with the system's reason in the error.
public func rename(_ source: String, to destination: String) throws {
    guard Glibc.rename(source, destination) == 0 else {
        throw BenchmarkFailure(
            description: "cannot rename \(source) to \(destination): \(String(cString: strerror(errno)))")
    }
}
