import MusicLibrary
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MPDCommands {
    /// Covers in chunks: `albumart` the folder's image file, `readpicture` the picture the file
    /// embeds, each only for a song the library holds, never another file.
    static let artworkCommands: [(String, MPDPermissions, Command)] = [
        ("albumart", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let offset = try Arguments.unsigned(a[1])
            let path = MPDCommands.libraryPath(a[0])
            guard let cover = try await c.cover(of: path, embedded: false) else {
                throw .noExist("No file exists")
            }
            return try c.chunk(of: cover, from: offset, withType: false, client)
        }),
        ("readpicture", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 2...2)
            let offset = try Arguments.unsigned(a[1])
            let path = MPDCommands.libraryPath(a[0])
            // mpd answers a song without a picture with an empty response, not an error.
            guard let cover = try await c.cover(of: path, embedded: true) else { return client.response() }
            return try c.chunk(of: cover, from: offset, withType: true, client)
        }),
    ]

    struct Cover: Sendable {
        var bytes: [UInt8]
        var type: String?
    }

    /// The largest cover served: a bigger image is most likely not a cover.
    static let maximumCoverBytes = 16 * 1024 * 1024

    /// The cover of the library song `path`: embedded, or its folder's image file.
    func cover(of path: String, embedded: Bool) async throws(MPDError) -> Cover? {
        let key = (embedded ? "e:" : "f:") + path
        if let cover = state.withLock({ $0.covers.value(for: key) }) { return cover }
        let cover: Cover? = try await read { library in
            guard !path.isEmpty, let track = try library.track(id: path) else { 
                // mpd's words for a song it does not have.
                throw MPDError.noExist(embedded ? "No such song" : "No file exists")
            }
            if embedded {
                guard case .embedded(let sha256)? = track.artwork,
                    let data = try library.artworkData(for: .embedded(sha256: sha256))
                else { return nil }
                return Cover(bytes: Array(data), type: MPDCommands.imageType(data))
            }
            guard let url = try library.folderArtworkURL(ofTrack: path),
                let size = MPDCommands.fileSize(at: url), size <= MPDCommands.maximumCoverBytes,
                let data = try library.artworkData(for: .file(url))
            else { return nil }
            return Cover(bytes: Array(data.prefix(MPDCommands.maximumCoverBytes)), type: MPDCommands.imageType(data))
        }
        if let cover { state.withLock { $0.covers.insert(cover, for: key) } }
        return cover
    }

    /// The size of the file at `url` in bytes; nil when it cannot be read.
    static func fileSize(at url: URL) -> Int? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path(percentEncoded: false))
        switch attributes?[.size] {
        case let size as Int: return size
        case let size as UInt: return Int(clamping: size)
        case let size as UInt64: return Int(clamping: size)
        case let size as Int64: return Int(clamping: size)
        default: return nil
        }
    }

    /// `size:`, `type:` (readpicture), then a binary chunk of at most the client's binary limit.
    func chunk(of cover: Cover, from offset: Int, withType: Bool, _ client: MPDClient) throws(MPDError) -> MPDResponse {
        guard offset <= cover.bytes.count else { throw .argument("Offset too large") }
        var response = client.response()
        try response.add("size", cover.bytes.count)
        if withType, let type = cover.type { try response.add("type", type) }
        let end = min(cover.bytes.count, offset + client.binaryLimit)
        try response.addBinary(cover.bytes[offset..<end])
        return response
    }

    /// The image's media type from its first bytes.
    static func imageType(_ data: Data) -> String? {
        let bytes = Array(data.prefix(12))
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46], bytes[8..<12] == [0x57, 0x45, 0x42, 0x50] {
            return "image/webp"
        }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        return nil
    }
}
