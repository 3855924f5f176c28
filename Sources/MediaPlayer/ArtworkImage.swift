import Foundation

/// An encoded image (PNG, JPEG, GIF, WebP, BMP), what ``MPMediaItemArtwork`` hands to remotes.
///
/// Linux has no UIKit: this stands where iOS code has a `UIImage`, with the two initializers
/// such code uses to make one from bytes or a file. An app's artwork code is the same on
/// both, but for the line that makes the image:
///
/// ```swift
/// #if os(Linux)
/// let image = ArtworkImage(contentsOfFile: coverPath)!
/// #else
/// let image = UIImage(contentsOfFile: coverPath)!
/// #endif
/// let artwork = MPMediaItemArtwork(boundsSize: image.size) { _ in image }
/// ```
///
/// The bytes are passed on as they are: remotes get the file the app has, never a re-encoding.
public final class ArtworkImage: Sendable {
    /// The encoded image, as read.
    public let data: Data
    /// The image's size in pixels, read from its header (PNG, JPEG, GIF, WebP, BMP); zero when
    /// the header is not one of those.
    public let size: CGSize

    /// An image from its encoded bytes; nil when `data` is empty.
    public init?(data: Data) {
        guard !data.isEmpty else { return nil }
        self.data = data
        let dimensions = Self.pixelSize(of: data)
        self.size = CGSize(width: dimensions.width, height: dimensions.height)
    }

    /// The image in the file at `path`; nil when it cannot be read or is empty.
    public convenience init?(contentsOfFile path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        self.init(data: data)
    }

    /// The image in the local file `url`; nil when it is not a file URL, cannot be read, or
    /// is empty.
    public convenience init?(contentsOf url: URL) {
        guard url.isFileURL else { return nil }
        self.init(contentsOfFile: url.path)
    }

    /// Width and height from the first bytes of a PNG, GIF, BMP, WebP or JPEG; zero otherwise.
    static func pixelSize(of data: Data) -> (width: Int, height: Int) {
        let bytes = [UInt8](data.prefix(64 * 1024))
        func big(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
        }
        func little(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<at + count].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47]), let width = big(16, 4), let height = big(20, 4) { return (width, height) }
        if starts(Array("GIF".utf8)), let width = little(6, 2), let height = little(8, 2) { return (width, height) }
        if starts(Array("BM".utf8)), let width = little(18, 4), let height = little(22, 4) {
            return (width, abs(Int(Int32(truncatingIfNeeded: height))))
        }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) {
            if starts(Array("VP8X".utf8), at: 12), let width = little(24, 3), let height = little(27, 3) {
                return (width + 1, height + 1)
            }
            if starts(Array("VP8 ".utf8), at: 12), let width = little(26, 2), let height = little(28, 2) {
                return (width & 0x3FFF, height & 0x3FFF)
            }
            if starts(Array("VP8L".utf8), at: 12), let bits = little(21, 4) {
                return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
            }
        }
        if starts([0xFF, 0xD8]) {
            // Walk the segments to the first start-of-frame marker (C0–CF but C4, C8, CC).
            var offset = 2
            while offset + 9 < bytes.count, bytes[offset] == 0xFF {
                let marker = bytes[offset + 1]
                guard let length = big(offset + 2, 2), length >= 2 else { break }
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker),
                    let height = big(offset + 5, 2), let width = big(offset + 7, 2)
                {
                    return (width, height)
                }
                offset += 2 + length
            }
        }
        return (0, 0)
    }
}
