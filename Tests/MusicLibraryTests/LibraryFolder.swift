#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import Glibc
import MusicLibrary
import ProcessTestSupport
import TestMedia
@testable import mpris_bridge

/// A temporary music folder (and an index file beside it) that a test fills with generated media,
/// images, playlists and junk.
struct LibraryFolder {
    let folder: TemporaryDirectory
    /// The music folder.
    var root: String { folder.path + "/Music" }
    /// Where the test keeps the index.
    var indexPath: String { folder.path + "/state/index.sqlite" }

    init(_ name: String) throws {
        folder = try TemporaryDirectory(prefix: "music-library-\(name)")
        try makeFolder("")
    }

    func remove() { folder.remove() }

    /// The library, given the daemon's discoverer (GStreamer's) for what TagLib cannot read.
    func open(discoveryTimeout: Duration = .seconds(10)) throws -> MusicLibrary {
        try MusicLibrary(
            root: root, indexPath: indexPath, discoverer: GStreamerFileDiscoverer.factory(timeout: discoveryTimeout))
    }

    func path(_ relative: String) -> String { relative.isEmpty ? root : root + "/" + relative }

    func url(_ relative: String) -> URL { URL(filePath: path(relative)) }

    /// Creates the folder `relative` and its parents.
    func makeFolder(_ relative: String) throws {
        var current = folder.path + "/Music"
        if mkdir(current, 0o755) != 0 && errno != EEXIST { throw FileSystemError("mkdir", errno) }
        for part in relative.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 && errno != EEXIST { throw FileSystemError("mkdir", errno) }
        }
    }

    private func makeParent(of relative: String) throws {
        if let slash = relative.lastIndex(of: "/") { try makeFolder(String(relative[..<slash])) }
    }

    /// A sine tone in `format`, tagged with `tags`.
    func generate(
        _ format: TestMedia.Format, _ relative: String, seconds: Double = 1, tags: TestMedia.Tags = TestMedia.Tags()
    ) async throws {
        try makeParent(of: relative)
        try await TestMedia.generate(format, seconds: seconds, tags: tags, at: path(relative))
    }

    /// An Ogg Vorbis file titled `title` with `picture` embedded as its front cover: a FLAC
    /// picture block in a `METADATA_BLOCK_PICTURE` Vorbis comment, written by GStreamer's
    /// vorbisenc from an `extended-comment` tag.
    func generateOggWithCover(_ relative: String, title: String, picture: [UInt8]) async throws {
        func word(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).bigEndian) { Array($0) } }
        let mime = Array("image/png".utf8)
        let block =
            word(3) + word(mime.count) + mime + word(0) + word(16) + word(16) + word(24) + word(0) + word(picture.count)
            + picture
        let base64 = Data(block).base64EncodedString()
        let comment = "METADATA_BLOCK_PICTURE=\(base64)"
        try await generateOgg(relative, tags: [("title", "string", title), ("extended-comment", "string", comment)])
    }

    /// An Ogg Vorbis file with any tags `taginject` can write: (name, type, value) triples such
    /// as `("composer", "string", "Bach")` or `("track-count", "uint", "12")`; type "raw" passes
    /// the value through, e.g. a list `{(string)\\"A\\",(string)\\"B\\"}`.
    func generateOgg(_ relative: String, tags: [(name: String, type: String, value: String)]) async throws {
        try makeParent(of: relative)
        let description = tags.map { tag in
            switch tag.type {
            case "string": "\(tag.name)=(string)\\\"\(tag.value)\\\""
            case "raw": "\(tag.name)=\(tag.value)"
            default: "\(tag.name)=(\(tag.type))\(tag.value)"
            }
        }.joined(separator: ",")
        let arguments = [
            "-q", "audiotestsrc", "num-buffers=10", "samplesperbuffer=4410", "!", "audio/x-raw,rate=44100,channels=2",
            "!", "audioconvert", "!", "taginject", "tags=\"\(description)\"", "!", "vorbisenc", "!", "oggmux", "!",
            "filesink", "location=\(path(relative))",
        ]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }

    /// Vorbis in Matroska, titled `title`: a format TagLib has no reader for, so the index
    /// reads it with GStreamer's discoverer.
    func generateMatroska(_ relative: String, seconds: Double = 1, title: String) async throws {
        try makeParent(of: relative)
        let arguments = [
            "-q", "audiotestsrc", "num-buffers=\(max(1, Int(seconds * 10)))", "samplesperbuffer=4410", "!",
            "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!",
            "taginject", "tags=\"title=(string)\\\"\(title)\\\"\"", "!", "vorbisenc", "!", "matroskamux", "!",
            "filesink", "location=\(path(relative))",
        ]
        try await ChildProcess.run("gst-launch-1.0", arguments, timeout: .seconds(60)).check()
    }

    /// A PNG picture.
    func generatePicture(_ relative: String, size: Int = 16) async throws {
        try makeParent(of: relative)
        try await TestMedia.generatePicture(size: size, at: path(relative))
    }

    func write(_ text: String, to relative: String) throws {
        try write(Array(text.utf8), to: relative)
    }

    func write(_ bytes: [UInt8], to relative: String) throws {
        try makeParent(of: relative)
        let descriptor = Glibc.open(path(relative), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw FileSystemError("open", errno) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw FileSystemError("write", errno) }
    }

    func read(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url(relative)))
    }

    func copy(_ source: String, to destination: String) throws {
        try write(try read(source), to: destination)
    }

    func delete(_ relative: String) {
        unlink(path(relative))
    }

    func symlink(_ relative: String, pointingTo target: String) throws {
        try makeParent(of: relative)
        guard Glibc.symlink(target, path(relative)) == 0 else { throw FileSystemError("symlink", errno) }
    }

    /// Sets the file's modification time to `seconds` after 1970 (its size is unchanged).
    func touch(_ relative: String, modifiedAt seconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, path(relative), &times, 0) == 0 else { throw FileSystemError("utimensat", errno) }
    }
}

/// Deterministic bytes that no GStreamer typefinder recognises (checked: "Could not determine
/// type of stream").
func junkBytes(count: Int, seed: UInt64 = 0x5EED) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    return (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
}

extension Duration {
    /// Whether the duration is within `tolerance` of `seconds`.
    func isClose(toSeconds seconds: Double, tolerance: Double = 0.1) -> Bool {
        let value = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return abs(value - seconds) <= tolerance
    }
}

/// A system call of the fixture failed.
struct FileSystemError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}
