// The one wrapper of libgstpbutils' GstDiscoverer: every GStreamer handle used for tag discovery
// lives and dies in this file.
import CGStreamer
import Glibc
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What GStreamer's discoverer reads from a media file: its length, its tags and its cover.
///
/// Tags come from the audio stream first and from the container after, so that a container's own
/// tags (a muxing date, say) never hide the stream's. Strings are as tagged, untrimmed; lists keep
/// the file's order; absent tags are `nil` or empty.
public struct DiscoveredMedia: Sendable, Hashable {
    /// The media's length; `nil` when GStreamer cannot tell (a live stream). For a local file
    /// whose length GStreamer does not find (an MP3 without a Xing or VBRI header, read before
    /// the parser has seen enough frames), it is estimated from ``bitrate`` and the size of the
    /// audio data, as players do for such files.
    public var duration: Duration?
    /// The audio stream's bitrate in bits per second (the nominal one when the stream states
    /// it); `nil` when unknown.
    public var bitrate: Int?
    /// The `title` tag.
    public var title: String?
    /// The `artist` tags, in credit order.
    public var artists: [String]
    /// The `album` tag.
    public var album: String?
    /// The `album-artist` tags, in credit order.
    public var albumArtists: [String]
    /// The `genre` tags.
    public var genres: [String]
    /// The `composer` tags.
    public var composers: [String]
    /// The `track-number` tag, from 1.
    public var trackNumber: Int?
    /// The `track-count` tag.
    public var trackCount: Int?
    /// The `album-disc-number` tag, from 1.
    public var discNumber: Int?
    /// The `album-disc-count` tag.
    public var discCount: Int?
    /// The release date as tagged, in ISO 8601: `2019`, `2019-05` or `2019-05-17` (the time of
    /// day is dropped). From the `datetime` tag, else the `date` tag.
    public var releaseDate: String?
    /// Whether the media can be sought.
    public var isSeekable: Bool
    /// Whether the media has an audio stream. Always true for a value returned by
    /// ``Discoverer/discover(_:)``, which throws ``DiscovererError/noAudio(_:)`` otherwise.
    public var hasAudio: Bool
    /// The encoded bytes of the embedded cover (JPEG, PNG, ...): an `image` tag, else a
    /// `preview-image` tag; a front cover is preferred over other pictures.
    public var image: Data?
    /// The media type of the container (or of the bare stream when there is none), for example
    /// `audio/ogg`, `audio/mpeg`, `audio/x-flac` or `audio/x-wav`. An ID3 or APE tag wrapped
    /// around a stream is looked through: an MP3 file is `audio/mpeg`.
    public var mimeType: String?

    /// Creates a value; every field defaults to absent.
    public init(
        duration: Duration? = nil, title: String? = nil, artists: [String] = [], album: String? = nil,
        albumArtists: [String] = [], genres: [String] = [], composers: [String] = [],
        trackNumber: Int? = nil, trackCount: Int? = nil, discNumber: Int? = nil, discCount: Int? = nil,
        releaseDate: String? = nil, isSeekable: Bool = false, hasAudio: Bool = false, image: Data? = nil,
        mimeType: String? = nil, bitrate: Int? = nil
    ) {
        self.duration = duration
        self.bitrate = bitrate
        self.title = title
        self.artists = artists
        self.album = album
        self.albumArtists = albumArtists
        self.genres = genres
        self.composers = composers
        self.trackNumber = trackNumber
        self.trackCount = trackCount
        self.discNumber = discNumber
        self.discCount = discCount
        self.releaseDate = releaseDate
        self.isSeekable = isSeekable
        self.hasAudio = hasAudio
        self.image = image
        self.mimeType = mimeType
    }
}

/// Why ``Discoverer`` could not read a file. The description is a sentence for people, with
/// GStreamer's own message where there is one.
public enum DiscovererError: Error, Sendable, Hashable, CustomStringConvertible {
    /// GStreamer could not be initialised (its message).
    case initializationFailed(String)
    /// No file at this URL.
    case notFound(URL)
    /// The file exists but cannot be opened (the system's reason, e.g. permission denied).
    case unreadable(URL, reason: String)
    /// GStreamer does not recognise the content as media, or cannot decode it (its message).
    case notMedia(URL, reason: String)
    /// The media has no audio stream (a picture, a video without sound).
    case noAudio(URL)
    /// Discovery took longer than the discoverer's timeout.
    case timedOut(URL, after: Duration)
    /// Plugins needed to decode the media are not installed (GStreamer's list).
    case missingPlugins(URL, String)
    /// Any other failure (GStreamer's message).
    case failed(URL, reason: String)

    public var description: String {
        switch self {
        case .initializationFailed: reason
        case .notFound(let url), .unreadable(let url, _), .notMedia(let url, _), .noAudio(let url),
            .timedOut(let url, _), .missingPlugins(let url, _), .failed(let url, _):
            "\(reason): \(Self.display(url))"
        }
    }

    /// What went wrong, without the URL: for a list that already names the file.
    public var reason: String {
        switch self {
        case .initializationFailed(let message): "GStreamer could not be initialised: \(message)"
        case .notFound: "not found"
        case .unreadable(_, let reason): "cannot read: \(reason)"
        case .notMedia(_, let reason): "not playable media: \(reason)"
        case .noAudio: "no audio stream"
        case .timedOut(_, let timeout): "reading timed out after \(timeout)"
        case .missingPlugins(_, let plugins): "missing GStreamer plugins: \(plugins)"
        case .failed(_, let reason): reason
        }
    }

    private static func display(_ url: URL) -> String {
        url.isFileURL ? url.path(percentEncoded: false) : url.absoluteString
    }
}

/// Reads tags, length and cover art of media files with GStreamer's discoverer (`GstDiscoverer`
/// in synchronous mode): no tag parser of the project's own.
///
/// Threading: ``discover(_:)`` blocks its caller until the file is read or the timeout passes.
/// Calls on one instance are serialised (a lock), so for parallel discovery use one instance per
/// thread. GStreamer is initialised on first use, once per process.
public final class Discoverer: Sendable {
    private let handle: Mutex<UnsafeMutablePointer<GstDiscoverer>>
    private let timeout: Duration

    /// Creates a discoverer that gives up on one file after `timeout`.
    ///
    /// Throws ``DiscovererError/initializationFailed(_:)`` when GStreamer cannot be initialised
    /// or the discoverer element cannot be made.
    public init(timeout: Duration = .seconds(5)) throws {
        try discovererGStreamerInitialization.get()
        let nanoseconds = max(timeout, .milliseconds(1)).nanosecondsRoundedUp
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(nanoseconds), &error) else {
            throw DiscovererError.initializationFailed(consumeMessage(error) ?? "gst_discoverer_new failed")
        }
        consumeMessage(error)
        self.timeout = timeout
        handle = Mutex(discoverer)
    }

    deinit {
        handle.withLock { g_object_unref(UnsafeMutableRawPointer($0)) }
    }

    /// Reads the media at `url` (a `file:` URL, or any URI GStreamer can open), blocking the
    /// caller until done.
    ///
    /// Throws a ``DiscovererError``: ``DiscovererError/notFound(_:)`` or
    /// ``DiscovererError/unreadable(_:reason:)`` for a file that cannot be opened,
    /// ``DiscovererError/notMedia(_:reason:)`` for content GStreamer cannot decode (a corrupt
    /// file), ``DiscovererError/noAudio(_:)``, ``DiscovererError/timedOut(_:after:)``, and
    /// others with GStreamer's message.
    public func discover(_ url: URL) throws -> DiscoveredMedia {
        let uri: String
        if url.isFileURL {
            let path = url.path(percentEncoded: false)
            try checkReadable(path, url: url)
            var error: UnsafeMutablePointer<GError>?
            guard let converted = gst_filename_to_uri(path, &error) else {
                throw DiscovererError.failed(url, reason: consumeMessage(error) ?? "not a valid file name")
            }
            uri = String(cString: converted)
            g_free(converted)
        } else {
            uri = url.absoluteString
        }

        // The whole read happens under the lock: the info's tag lists belong to the discoverer.
        let outcome: Result<DiscoveredMedia, DiscovererError> = handle.withLock { discoverer in
            Result { () throws(DiscovererError) in
                let media = try discover(uri, url: url, with: discoverer)
                // An MP3 without a length header gets its duration from the frames the parser
                // has seen: on a loaded machine the query can come before any, and a second
                // look (the file is in the page cache by now) finds it.
                guard media.duration == nil, media.isSeekable else { return media }
                var second = try discover(uri, url: url, with: discoverer)
                if second.duration == nil, url.isFileURL, let bitrate = second.bitrate ?? media.bitrate {
                    second.duration = Self.estimatedDuration(ofFileAt: url.path(percentEncoded: false), bitrate: bitrate)
                }
                return second
            }
        }
        return try outcome.get()
    }

    private func discover(
        _ uri: String, url: URL, with discoverer: UnsafeMutablePointer<GstDiscoverer>
    ) throws(DiscovererError) -> DiscoveredMedia {
        var error: UnsafeMutablePointer<GError>?
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        let message = consumeMessage(error)
        guard let info else {
            throw DiscovererError.failed(url, reason: message ?? "discovery failed")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }

        switch gst_discoverer_info_get_result(info) {
        case GST_DISCOVERER_OK:
            break
        case GST_DISCOVERER_TIMEOUT:
            throw DiscovererError.timedOut(url, after: timeout)
        case GST_DISCOVERER_URI_INVALID:
            throw DiscovererError.failed(url, reason: message ?? "invalid URI")
        case GST_DISCOVERER_MISSING_PLUGINS:
            throw DiscovererError.missingPlugins(url, missingPlugins(info) ?? message ?? "unknown")
        case GST_DISCOVERER_ERROR:
            throw DiscovererError.notMedia(url, reason: message ?? "unknown error")
        default:
            throw DiscovererError.failed(url, reason: message ?? "discovery failed")
        }
        return try read(info, url: url)
    }

    /// Fails early, with the system's reason, for a file that is missing or cannot be opened:
    /// GStreamer's own message for these ("Resource not found.") names no cause. Anything but a
    /// regular file is refused: opening a FIFO would block GStreamer beyond any timeout.
    private func checkReadable(_ path: String, url: URL) throws(DiscovererError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw DiscovererError.notFound(url) }
            throw DiscovererError.unreadable(url, reason: String(cString: strerror(code)))
        }
        var status = stat()
        let isRegularFile = fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        close(descriptor)
        if !isRegularFile { throw DiscovererError.unreadable(url, reason: "not a regular file") }
    }

    private func read(_ info: OpaquePointer, url: URL) throws(DiscovererError) -> DiscoveredMedia {
        var media = DiscoveredMedia()

        // Audio stream tags first, then the containers' from the top down.
        var tagLists: [UnsafePointer<GstTagList>] = []
        if let audioStreams = gst_discoverer_info_get_audio_streams(info) {
            defer { gst_discoverer_stream_info_list_free(audioStreams) }
            media.hasAudio = true
            var node: UnsafeMutablePointer<GList>? = audioStreams
            while let current = node {
                if let stream = current.pointee.data {
                    if let tags = gst_discoverer_stream_info_get_tags(OpaquePointer(stream)) {
                        tagLists.append(tags)
                    }
                    let bitrate = gst_discoverer_audio_info_get_bitrate(OpaquePointer(stream))
                    if media.bitrate == nil, bitrate > 0 { media.bitrate = Int(bitrate) }
                }
                node = current.pointee.next
            }
            // The tag lists belong to the stream infos, which the discoverer info keeps alive.
        }
        guard media.hasAudio else { throw DiscovererError.noAudio(url) }

        var stream = gst_discoverer_info_get_stream_info(info)
        while let current = stream {
            let type = gst_discoverer_stream_info_get_stream_type_nick(current).map { String(cString: $0) }
            if type == "container", let tags = gst_discoverer_container_info_get_tags(current) {
                tagLists.append(tags)
            }
            let mediaType = capsName(current)
            if media.mimeType == nil, let mediaType, !Self.tagWrappers.contains(mediaType) {
                media.mimeType = mediaType
            }
            stream = gst_discoverer_stream_info_get_next(current)
            g_object_unref(UnsafeMutableRawPointer(current))
        }

        let duration = gst_discoverer_info_get_duration(info)
        if duration != GstClockTime.max, duration > 0 { media.duration = .nanoseconds(Int64(clamping: duration)) }
        media.isSeekable = gst_discoverer_info_get_seekable(info) != 0

        let tags = TagReader(lists: tagLists)
        media.title = tags.strings("title").first
        media.artists = tags.strings("artist")
        media.album = tags.strings("album").first
        media.albumArtists = tags.strings("album-artist")
        media.genres = tags.strings("genre")
        media.composers = tags.strings("composer")
        media.trackNumber = tags.number("track-number")
        media.trackCount = tags.number("track-count")
        media.discNumber = tags.number("album-disc-number")
        media.discCount = tags.number("album-disc-count")
        media.releaseDate = tags.releaseDate()
        media.image = tags.image()
        return media
    }

    /// The length of a constant-bitrate file: its bytes after an ID3v2 tag, at `bitrate` bits per
    /// second. `nil` when the file cannot be read.
    static func estimatedDuration(ofFileAt path: String, bitrate: Int) -> Duration? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0, bitrate > 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        var header = [UInt8](repeating: 0, count: 10)
        let count = Glibc.read(descriptor, &header, 10)
        var tagBytes = 0
        // "ID3", version, flags, then the tag's size in four 7-bit bytes; a footer adds 10 more.
        if count == 10, header[0] == 0x49, header[1] == 0x44, header[2] == 0x33 {
            let size = header[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            tagBytes = 10 + size + (header[5] & 0x10 != 0 ? 10 : 0)
        }
        let audioBytes = Int(status.st_size) - tagBytes
        guard audioBytes > 0 else { return nil }
        return .milliseconds(Int64(audioBytes) * 8_000 / Int64(bitrate))
    }

    /// Media types of tags wrapped around a stream rather than containers of it.
    private static let tagWrappers: Set<String> = ["application/x-id3", "application/x-apetag"]

    private func capsName(_ stream: OpaquePointer) -> String? {
        guard let caps = gst_discoverer_stream_info_get_caps(stream) else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            let name = gst_structure_get_name(structure)
        else { return nil }
        return String(cString: name)
    }

    private func missingPlugins(_ info: OpaquePointer) -> String? {
        guard let details = gst_discoverer_info_get_missing_elements_installer_details(info) else { return nil }
        var names: [String] = []
        var index = 0
        while let detail = details[index] {
            // "gstreamer|1.0|app|description|type" — the description is what people read.
            let fields = String(cString: detail).split(separator: "|", omittingEmptySubsequences: false)
            names.append(fields.count > 3 ? String(fields[3]) : String(cString: detail))
            index += 1
        }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }
}

/// Reads tags from a list of tag lists in order of preference: each tag comes from the first
/// list that has it.
private struct TagReader {
    let lists: [UnsafePointer<GstTagList>]

    func strings(_ tag: String) -> [String] {
        for list in lists {
            let count = gst_tag_list_get_tag_size(list, tag)
            var values: [String] = []
            for index in 0..<count {
                var value: UnsafePointer<gchar>?
                if gst_tag_list_peek_string_index(list, tag, index, &value) != 0, let value {
                    values.append(String(cString: value))
                }
            }
            if !values.isEmpty { return values }
        }
        return []
    }

    func number(_ tag: String) -> Int? {
        for list in lists {
            var value: guint = 0
            if gst_tag_list_get_uint(list, tag, &value) != 0, value > 0 { return Int(value) }
        }
        return nil
    }

    func releaseDate() -> String? {
        for list in lists {
            var dateTime: OpaquePointer?
            if gst_tag_list_get_date_time(list, "datetime", &dateTime) != 0, let dateTime {
                defer { gst_date_time_unref(dateTime) }
                guard gst_date_time_has_year(dateTime) != 0 else { continue }
                var text = fourDigits(gst_date_time_get_year(dateTime))
                if gst_date_time_has_month(dateTime) != 0 {
                    text += "-" + twoDigits(gst_date_time_get_month(dateTime))
                    if gst_date_time_has_day(dateTime) != 0 {
                        text += "-" + twoDigits(gst_date_time_get_day(dateTime))
                    }
                }
                return text
            }
        }
        for list in lists {
            var date: UnsafeMutablePointer<GDate>?
            if gst_tag_list_get_date(list, "date", &date) != 0, let date {
                defer { g_date_free(date) }
                guard g_date_valid(date) != 0 else { continue }
                let month = Int32(g_date_get_month(date).rawValue)
                return fourDigits(Int32(g_date_get_year(date))) + "-" + twoDigits(month) + "-"
                    + twoDigits(Int32(g_date_get_day(date)))
            }
        }
        return nil
    }

    /// The embedded picture: among `image` then `preview-image` samples, the first front cover,
    /// else the first picture.
    func image() -> Data? {
        for tag in ["image", "preview-image"] {
            var first: Data?
            for list in lists {
                let count = gst_tag_list_get_tag_size(list, tag)
                for index in 0..<count {
                    var sample: OpaquePointer?
                    guard gst_tag_list_get_sample_index(list, tag, index, &sample) != 0, let sample else { continue }
                    defer { gst_sample_unref(sample) }
                    guard let bytes = Self.bytes(of: sample) else { continue }
                    if Self.isFrontCover(sample) { return bytes }
                    if first == nil { first = bytes }
                }
            }
            if let first { return first }
        }
        return nil
    }

    private static func bytes(of sample: OpaquePointer) -> Data? {
        guard let buffer = gst_sample_get_buffer(sample) else { return nil }
        let size = gst_buffer_get_size(buffer)
        guard size > 0 else { return nil }
        var data = Data(count: Int(size))
        let copied = data.withUnsafeMutableBytes { gst_buffer_extract(buffer, 0, $0.baseAddress, size) }
        return copied == size ? data : nil
    }

    /// GST_TAG_IMAGE_TYPE_FRONT_COVER, read through GValue: the enum's GType lives in libgsttag,
    /// which the project does not link.
    private static func isFrontCover(_ sample: OpaquePointer) -> Bool {
        guard let info = gst_sample_get_info(sample), let value = gst_structure_get_value(info, "image-type") else {
            return false
        }
        return g_type_check_value_holds(value, GType(12 << 2 /* G_TYPE_ENUM */)) != 0 && g_value_get_enum(value) == 1
    }

    private func fourDigits(_ value: Int32) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    private func twoDigits(_ value: Int32) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}

/// The message of a GError, which it frees; nil when there is none.
@discardableResult
private func consumeMessage(_ error: UnsafeMutablePointer<GError>?) -> String? {
    guard let error else { return nil }
    defer { g_error_free(error) }
    return error.pointee.message.map { String(cString: $0) }
}

/// `gst_init_check`, once per process. Playback may initialise GStreamer too; calling
/// `gst_init_check` again is harmless.
private let discovererGStreamerInitialization: Result<Void, DiscovererError> = {
    if let failure = GStreamerLibrary.loadFailure { return .failure(.initializationFailed(failure)) }
    var error: UnsafeMutablePointer<GError>?
    if gst_init_check(nil, nil, &error) != 0 {
        consumeMessage(error)
        return .success(())
    }
    return .failure(.initializationFailed(consumeMessage(error) ?? "gst_init_check failed"))
}()

extension Duration {
    /// The whole nanoseconds of the duration, rounded up, at least 0.
    fileprivate var nanosecondsRoundedUp: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let nanoseconds = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return UInt64.max }
        return nanoseconds.partialValue + UInt64((attoseconds + 999_999_999) / 1_000_000_000)
    }
}
