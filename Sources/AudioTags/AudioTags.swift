// The one wrapper of CTagLib: every call into TagLib, and every pointer it hands back, is here.
import CTagLib
import Glibc

/// What an audio file says about itself, read by TagLib: its length and stream, its
/// container's media type, its tags and, when asked, its embedded pictures.
public struct AudioFileTags: Sendable, Hashable {
    /// The audio's length, to the millisecond; `nil` when the file does not tell.
    public var duration: Duration?
    /// The average bitrate in bits per second; `nil` when unknown.
    public var bitrate: Int?
    /// Samples per second; `nil` when unknown.
    public var sampleRate: Int?
    /// `nil` when unknown.
    public var channels: Int?
    /// The container's media type: `audio/mpeg`, `audio/ogg` (Vorbis, Opus, Speex, Ogg FLAC),
    /// `audio/x-flac`, `audio/x-wav`, `audio/x-aiff`, `audio/mp4`; `nil` for other formats.
    public var mimeType: String?
    /// Every tag value under TagLib's unified keys (`TITLE`, `ARTIST`, `ALBUMARTIST`,
    /// `TRACKNUMBER`, `DISCNUMBER`, `DATE`, `GENRE`, `COMPOSER`, …), in the file's order.
    public var properties: [String: [String]]
    /// The embedded pictures, in the file's order; empty unless reading was asked for them.
    public var pictures: [EmbeddedPicture]

    public init(
        duration: Duration? = nil, bitrate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil,
        mimeType: String? = nil, properties: [String: [String]] = [:], pictures: [EmbeddedPicture] = []
    ) {
        self.duration = duration
        self.bitrate = bitrate
        self.sampleRate = sampleRate
        self.channels = channels
        self.mimeType = mimeType
        self.properties = properties
        self.pictures = pictures
    }

    /// The first value of `key`, when it is not empty.
    public func first(_ key: String) -> String? {
        properties[key]?.first { !$0.isEmpty }
    }
}

/// A picture embedded in an audio file.
public struct EmbeddedPicture: Sendable, Hashable {
    /// As the file gives it; may be empty.
    public var mimeType: String
    /// The encoded image.
    public var data: [UInt8]
    /// The ID3v2 picture type: 3 is the front cover, 0 "other".
    public var type: Int

    public init(mimeType: String, data: [UInt8], type: Int) {
        self.mimeType = mimeType
        self.data = data
        self.type = type
    }

    /// Whether the picture is the front cover.
    public var isFrontCover: Bool { type == 3 }
}

/// Why a file's tags could not be read or written.
public enum AudioTagsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened, with the system's reason, or is not a regular file.
    case unreadable(path: String, reason: String)
    /// TagLib knows no format for the file's content.
    case unknownFormat(path: String)
    /// The file is of a known format but holds no audio stream TagLib can describe.
    case noAudio(path: String)
    /// The file could not be saved.
    case notSaved(path: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .unknownFormat(let path): "\(path): not a format TagLib reads"
        case .noAudio(let path): "\(path): no audio stream"
        case .notSaved(let path): "cannot save the tags of \(path)"
        }
    }
}

/// Reads and writes tags with TagLib, which reads a file's header and tags only: no decoder
/// runs, and a file costs well under a millisecond once it is in the page cache.
///
/// Calls are synchronous and safe from any thread at once: each works on its own file handle.
public enum AudioTags {
    /// Why TagLib could not be loaded, nil once it is: the binary loads it on first use.
    private static let loadFailure: String? = {
        var message = [CChar](repeating: 0, count: 512)
        guard ctaglib_load(&message, message.count) == 0 else { return nil }
        return "TagLib could not be loaded: " + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Reads the regular file at `path`. Its format is told by its content, never its name.
    ///
    /// - Parameter pictures: also read the embedded pictures (their bytes are copied).
    public static func read(_ path: String, pictures: Bool = false) throws(AudioTagsError) -> AudioFileTags {
        if let loadFailure { throw .unreadable(path: path, reason: loadFailure) }
        // Non-blocking, so that a FIFO put in the library cannot hold the reader.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .unreadable(path: path, reason: "not a regular file")
        }
        // Reads block from here on: a regular file's reads do not wait on a writer.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)

        let collector = Collector()
        var audio = ctaglib_audio()
        var mime = [CChar](repeating: 0, count: 32)
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let result = withExtendedLifetime(collector) {
            ctaglib_read(
                descriptor, &audio, &mime, mime.count,
                { context, key, value in
                    guard let context, let key, let value else { return }
                    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                    collector.properties[String(cString: key), default: []].append(String(cString: value))
                },
                pictures
                    ? { context, mime, data, size, type in
                        guard let context else { return }
                        let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                        let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                        collector.pictures.append(
                            EmbeddedPicture(mimeType: mime.map { String(cString: $0) } ?? "", data: bytes, type: Int(type)))
                    } : nil,
                context)
        }
        switch result {
        case CTAGLIB_OK: break
        case CTAGLIB_NO_AUDIO: throw .noAudio(path: path)
        default: throw .unknownFormat(path: path)
        }
        let mimeType = String(decoding: mime.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return AudioFileTags(
            duration: audio.length_ms > 0 ? .milliseconds(audio.length_ms) : nil,
            bitrate: audio.bitrate_kbps > 0 ? Int(audio.bitrate_kbps) * 1000 : nil,
            sampleRate: audio.sample_rate > 0 ? Int(audio.sample_rate) : nil,
            channels: audio.channels > 0 ? Int(audio.channels) : nil,
            mimeType: mimeType.isEmpty ? nil : mimeType,
            properties: collector.properties, pictures: collector.pictures)
    }

    /// Replaces every tag of the file at `path` with `properties` (TagLib's unified keys; a key
    /// given several times gets several values) and saves the file.
    public static func write(_ properties: [(key: String, value: String)], to path: String) throws(AudioTagsError) {
        if let loadFailure { throw .unreadable(path: path, reason: loadFailure) }
        guard access(path, R_OK | W_OK) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        let keys = properties.map { strdup($0.key) }
        let values = properties.map { strdup($0.value) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let result = keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { keyPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                ctaglib_write(path, keyPointers.baseAddress, valuePointers.baseAddress, properties.count)
            }
        }
        switch result {
        case CTAGLIB_OK: return
        case CTAGLIB_NOT_READABLE: throw .unknownFormat(path: path)
        default: throw .notSaved(path: path)
        }
    }

    /// Gathers what the C callbacks hand over, on the calling thread only.
    private final class Collector {
        var properties: [String: [String]] = [:]
        var pictures: [EmbeddedPicture] = []
    }
}
