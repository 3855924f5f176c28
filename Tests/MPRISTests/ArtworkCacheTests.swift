import Digest
import MediaRemote
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import ProcessTestSupport
import Synchronization
import Testing

@testable import MPRIS

@Suite struct SHA256Tests {
    @Test func standardVectors() {
        #expect(SHA256.hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func digestIsThirtyTwoBytesAndNonContiguousInputAgrees() {
        let bytes = randomBytes(1000)
        let digest = SHA256.hash(bytes)
        #expect(digest.count == 32)
        // A lazy map has no contiguous storage, so this takes the copying path.
        #expect(SHA256.hash(bytes.lazy.map { $0 }) == digest)
        #expect(SHA256.hash(Data(bytes)) == digest)
        #expect(SHA256.hash(Data(bytes)[10...]) == SHA256.hash(bytes[10...]))
    }

    /// Random buffers of every awkward length around the padding boundaries, and one of
    /// 10 KB, against coreutils' `sha256sum`.
    @Test func agreesWithCoreutils() async throws {
        let folder = try TemporaryDirectory(prefix: "sha256-tests")
        defer { folder.remove() }
        let directory = folder.path
        let lengths = [1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 10_240]
        var expected: [String: String] = [:]
        for length in lengths {
            let bytes = randomBytes(length)
            let path = "\(directory)/\(length).bin"
            try writeFile(path, bytes)
            expected[path] = SHA256.hex(SHA256.hash(bytes))
        }
        let output = try await ChildProcess.run("/usr/bin/sha256sum", lengths.map { "\(directory)/\($0).bin" })
            .check().stdout
        var checked = 0
        for line in output.split(separator: "\n") {
            // "<hex>  <path>"
            let digest = String(line.prefix(64))
            let path = String(line.dropFirst(66))
            #expect(expected[path] == digest, "length \(path)")
            checked += 1
        }
        #expect(checked == lengths.count)
    }
}

/// Each test gets a fresh directory from mkdtemp, removed when the test ends.
@Suite final class ArtworkCacheTests {
    let folder: TemporaryDirectory
    var root: String { folder.path }

    init() throws { folder = try TemporaryDirectory(prefix: "artwork-cache-tests") }
    deinit { folder.remove() }

    @Test func pngAndJPEGGetContentAddressedFileURLs() throws {
        let cache = ArtworkCache(directory: root)
        for (image, ext) in [(png(3000), "png"), (jpeg(2000), "jpg")] {
            let sha = SHA256.hex(SHA256.hash(image))
            let url = try cache.fileURL(for: image)
            #expect(url.absoluteString == "file://\(root)/\(sha).\(ext)")
            #expect(url.isFileURL)
            #expect(try readFile(url.path) == [UInt8](image))
            let info = try #require(fileStatus(url.path))
            // Entries are private to the user, like their 0700 directory.
            #expect(info.st_mode & 0o777 == 0o600)

            let again = try cache.fileURL(for: image)
            #expect(again == url)
            #expect(fileStatus(url.path)?.st_ino == info.st_ino)
        }
        #expect(listing(root).count == 2)
    }

    /// Artwork read on request is read once: stored, it is found by its hash, by this
    /// instance and by another sharing the directory, without being read again.
    @Test func requestedArtworkIsReadOnceAndFoundByItsHashAfter() throws {
        let image = png(3000)
        let loads = Mutex(0)
        let artwork = MediaItemArtwork.requested(
            identifier: SHA256.hex(SHA256.hash(image)),
            load: ArtworkLoader {
                loads.withLock { $0 += 1 }
                return image
            })
        let cache = ArtworkCache(directory: root)
        let url = try #require(cache.url(for: artwork))
        #expect(try readFile(url.path) == [UInt8](image))
        #expect(cache.url(for: artwork) == url)
        #expect(ArtworkCache(directory: root).url(for: artwork) == url)
        #expect(loads.withLock { $0 } == 1)
        // Nothing to read, nothing shown; an identifier that is not a hash is read each time.
        #expect(cache.url(for: .requested(identifier: "gone", load: ArtworkLoader { nil })) == nil)
        #expect(cache.url(for: .requested(identifier: "album-7", load: ArtworkLoader { image })) == url)
    }

    @Test(arguments: [
        ([0xFF, 0xD8, 0xFF, 0xE0], "jpg"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "png"),
        (Array("GIF87a".utf8), "gif"),
        (Array("GIF89a".utf8), "gif"),
        (Array("RIFF\u{10}\0\0\0WEBPVP8 ".utf8), "webp"),
        (Array("BM".utf8), "bmp"),
    ] as [([UInt8], String)])
    func extensionComesFromMagicBytes(header: [UInt8], ext: String) throws {
        let url = try ArtworkCache(directory: root).fileURL(for: Data(header + randomBytes(100)))
        #expect(url.pathExtension == ext)
        #expect(listing(root) == [url.lastPathComponent])
    }

    @Test(arguments: [
        Data(), Data("hello, world".utf8), Data("GIF88a and more".utf8), Data("RIFF\u{10}\0\0\0WAVEfmt ".utf8),
        Data([0xFF, 0xD8]), Data([0x89, 0x50, 0x4E, 0x47]),
    ])
    func nonImagesAreRefusedAndNothingIsWritten(bytes: Data) {
        let cache = ArtworkCache(directory: root + "/cache")
        #expect(throws: ArtworkCacheError.unrecognizedImage) { try cache.fileURL(for: bytes) }
        #expect(listing(root).isEmpty)
    }

    @Test func tooLargeImageIsRefusedAndNothingIsWritten() throws {
        let cache = ArtworkCache(directory: root, maximumBytes: 1000)
        #expect(throws: ArtworkCacheError.tooLarge) { try cache.fileURL(for: png(1001)) }
        #expect(listing(root).isEmpty)
        _ = try cache.fileURL(for: png(1000))
        #expect(listing(root).count == 1)
    }

    @Test func sameBytesAgainAreNotHashedAgain() throws {
        let cache = ArtworkCache(directory: root)
        let first = png(50_000)
        let url = try cache.fileURL(for: first)
        #expect(cache.hashedImageCount == 1)
        // Equal bytes in a different buffer, as an app republishing its artwork hands them in.
        #expect(try cache.fileURL(for: Data([UInt8](first))) == url)
        #expect(cache.hashedImageCount == 1)

        _ = try cache.fileURL(for: jpeg(100))
        #expect(cache.hashedImageCount == 2)
        #expect(try cache.fileURL(for: first) == url)
        #expect(cache.hashedImageCount == 3)

        // Cleared behind the cache's back: the file comes back.
        unlink(url.path)
        #expect(try cache.fileURL(for: first) == url)
        #expect(try readFile(url.path) == [UInt8](first))
    }

    @Test func fewestFilesKeepsTheMostRecent() throws {
        let cache = ArtworkCache(directory: root, maximumFiles: 3)
        var names: [String] = []
        for _ in 0..<5 { names.append(try cache.fileURL(for: png(500)).lastPathComponent) }
        #expect(listing(root) == Set(names.suffix(3)))
    }

    @Test func totalSizeStaysWithinTheBound() throws {
        let cache = ArtworkCache(directory: root, maximumBytes: 2500)
        var names: [String] = []
        for size in [1200, 900, 1500, 700, 1000, 2500, 300] {
            let name = try cache.fileURL(for: jpeg(size)).lastPathComponent
            names.append(name)
            let present = listing(root)
            #expect(present.contains(name))
            #expect(totalSize(root) <= 2500)
            // What is left is the most recent run of writes.
            #expect(present == Set(names.suffix(present.count)))
        }
        #expect(listing(root) == [names[6]])  // 2500 + 300 > 2500: the 2500-byte image went too
    }

    @Test func touchedEntrySurvivesEviction() throws {
        let cache = ArtworkCache(directory: root, maximumFiles: 3)
        let a = png(400), b = png(400), c = png(400), d = png(400)
        let urlA = try cache.fileURL(for: a)
        let urlB = try cache.fileURL(for: b)
        let urlC = try cache.fileURL(for: c)
        _ = try cache.fileURL(for: a)  // A is now more recent than B and C.
        let urlD = try cache.fileURL(for: d)
        #expect(listing(root) == Set([urlA, urlC, urlD].map(\.lastPathComponent)))
        #expect(!listing(root).contains(urlB.lastPathComponent))
    }

    @Test func newFileSurvivesWhenOlderEntriesCannotBeDeleted() throws {
        let cache = ArtworkCache(directory: root, maximumFiles: 1)
        let old = try cache.fileURL(for: png(400))
        // Something replaced the old entry with a directory, which unlink cannot remove.
        unlink(old.path)
        mkdir(old.path, 0o700)
        mkdir(old.path + "/inside", 0o700)
        let new = try cache.fileURL(for: png(400))
        #expect(listing(root).contains(new.lastPathComponent))
        #expect(fileStatus(new.path)?.st_size == 400)
    }

    @Test func existingFileFromAnotherProcessIsReusedAndMarkedRecent() throws {
        let image = png(800)
        let url = try ArtworkCache(directory: root).fileURL(for: image)
        setModificationTime(url.path, seconds: 1000)
        let inode = fileStatus(url.path)?.st_ino

        // A new instance stands for a new process: it has no memo and no index.
        #expect(try ArtworkCache(directory: root).fileURL(for: image) == url)
        let info = try #require(fileStatus(url.path))
        #expect(info.st_ino == inode)
        #expect(info.st_mtim.tv_sec > 1000)
    }

    @Test func preexistingDirectoryIsIndexedAndBounded() throws {
        // Five entries from a previous run, oldest first, and files that are not entries.
        var old: [String] = []
        for seconds in [5000, 1000, 4000, 2000, 3000] {
            let bytes = [UInt8](png(300))
            let name = SHA256.hex(SHA256.hash(bytes)) + ".png"
            try writeFile("\(root)/\(name)", bytes)
            setModificationTime("\(root)/\(name)", seconds: seconds)
            old.append(name)
        }
        let strangers = ["notes.txt", "ABCDEF.png", String(repeating: "A", count: 64) + ".png", ".fresh.tmp"]
        for name in strangers { try writeFile("\(root)/\(name)", [1, 2, 3]) }
        // A temporary file abandoned by a writer that crashed long ago.
        try writeFile("\(root)/.abandoned.tmp", [1, 2, 3])
        setModificationTime("\(root)/.abandoned.tmp", seconds: 1000)

        let cache = ArtworkCache(directory: root, maximumFiles: 3)
        let new = try cache.fileURL(for: jpeg(300)).lastPathComponent
        // Kept: the two most recent old entries (5000 s and 4000 s) and the new one.
        #expect(listing(root, includingHidden: true) == Set([old[0], old[2], new] + strangers))
    }

    @Test func preexistingDirectoryOverTheByteBoundIsTrimmed() throws {
        for seconds in 1...6 {
            let bytes = [UInt8](png(1000))
            let path = "\(root)/\(SHA256.hex(SHA256.hash(bytes))).png"
            try writeFile(path, bytes)
            setModificationTime(path, seconds: seconds * 1000)
        }
        let cache = ArtworkCache(directory: root, maximumBytes: 3000)
        _ = try cache.fileURL(for: png(1000))
        #expect(totalSize(root) == 3000)
        #expect(listing(root).count == 3)
    }

    @Test func createsMissingDirectoriesPrivately() throws {
        let directory = root + "/a/b/artwork"
        let url = try ArtworkCache(directory: directory + "/").fileURL(for: png(100))
        #expect(url.path == "\(directory)/\(url.lastPathComponent)")
        for path in [root + "/a", root + "/a/b", directory] {
            #expect(fileStatus(path).map { $0.st_mode & 0o777 } == 0o700, "\(path)")
        }
    }

    @Test func concurrentWritersOfTheSameImageLeaveOneCompleteFile() async throws {
        let directory = root
        let image = png(300_000)
        let shared = ArtworkCache(directory: directory)
        // One shared instance, and separate instances standing for separate processes.
        let urls = await withTaskGroup(of: URL?.self) { group in
            for task in 0..<16 {
                group.addTask {
                    let cache = task < 8 ? shared : ArtworkCache(directory: directory)
                    return try? cache.fileURL(for: image)
                }
            }
            return await group.reduce(into: [URL?]()) { $0.append($1) }
        }
        #expect(urls.count == 16)
        #expect(!urls.contains(nil))
        let url = try #require(urls.first ?? nil)
        #expect(Set(urls) == [url])
        #expect(listing(directory, includingHidden: true) == [url.lastPathComponent])
        #expect(try readFile(url.path) == [UInt8](image))
    }

    @Test func unwritableDirectoryThrowsCannotWrite() throws {
        try writeFile(root + "/plain", [0])
        let cache = ArtworkCache(directory: root + "/plain/artwork")
        for _ in 0..<2 {
            let error = #expect(throws: ArtworkCacheError.self) { try cache.fileURL(for: png(100)) }
            guard case .cannotWrite(let path, let message) = error else {
                Issue.record("expected cannotWrite, got \(String(describing: error))")
                return
            }
            #expect(path.hasPrefix(root + "/plain"))
            #expect(!message.isEmpty)
        }
        #expect(listing(root) == ["plain"])
    }

    @Test func defaultDirectoryFollowsXDG() {
        #expect(
            ArtworkCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/x/cache/", "HOME": "/home/u"])
                == "/x/cache/mpris-bridge/artwork")
        #expect(
            ArtworkCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"])
                == "/home/u/.cache/mpris-bridge/artwork")
        #expect(
            ArtworkCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "", "HOME": "/home/u"])
                == "/home/u/.cache/mpris-bridge/artwork")
        #expect(
            ArtworkCache.defaultDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.cache/mpris-bridge/artwork")
        // No HOME: the password database's home directory.
        let fallback = ArtworkCache.defaultDirectory(environment: [:])
        #expect(fallback.hasPrefix("/"))
        #expect(fallback.hasSuffix("/.cache/mpris-bridge/artwork"))
    }
}

// MARK: - Helpers

private func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in generator.next() }
}

/// A PNG signature followed by random bytes: `count` bytes in all, unique per call.
private func png(_ count: Int) -> Data {
    Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + randomBytes(count - 8))
}

/// A JPEG signature followed by random bytes: `count` bytes in all, unique per call.
private func jpeg(_ count: Int) -> Data {
    Data([0xFF, 0xD8, 0xFF, 0xE0] + randomBytes(count - 4))
}

/// The names in a directory, without "." and "..", and without other dot files unless asked.
private func listing(_ path: String, includingHidden: Bool = false) -> Set<String> {
    Set((directoryEntries(path) ?? []).filter { includingHidden || !$0.hasPrefix(".") })
}

/// The summed sizes of the regular files in a directory whose names are cache entries'.
private func totalSize(_ path: String) -> Int {
    listing(path).filter(ArtworkCache.isEntryName).reduce(0) { $0 + Int(fileStatus(path + "/" + $1)?.st_size ?? 0) }
}

private func fileStatus(_ path: String) -> stat? {
    var info = stat()
    return stat(path, &info) == 0 ? info : nil
}

private func setModificationTime(_ path: String, seconds: Int) {
    let time = timespec(tv_sec: seconds, tv_nsec: 0)
    let times = [time, time]
    #expect(utimensat(AT_FDCWD, path, times, 0) == 0)
}

private struct FileError: Error, CustomStringConvertible {
    var description: String
}

private func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw FileError(description: "open \(path): \(errno)") }
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw FileError(description: "write \(path): \(errno)") }
}

private func readFile(_ path: String) throws -> [UInt8] {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { throw FileError(description: "open \(path): \(errno)") }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw FileError(description: "read \(path): \(errno)") }
        if count == 0 { return bytes }
        bytes += chunk[..<count]
    }
}
