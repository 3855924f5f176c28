/// A song as MPD's protocol shows it: a library file (`file:` its path in the library) or a
/// stream (`file:` its URL), with its tags; what filters test and responses print.
public struct MPDSong: Sendable, Equatable {
    /// The path relative to the library's root, or a stream's URL.
    public var uri: String
    /// The tags, in order; a tag with several values (two artists) appears once per value.
    public var tags: [(tag: MPDTag, value: String)]
    /// The length; nil for a stream or when unknown.
    public var duration: Duration?
    /// When the file was last changed, in seconds since 1970-01-01 UTC; nil for a stream.
    public var lastModified: Int64?
    /// The file's media type (`audio/flac`), when known.
    public var mediaType: String?

    public init(
        uri: String, tags: [(tag: MPDTag, value: String)] = [], duration: Duration? = nil, lastModified: Int64? = nil,
        mediaType: String? = nil
    ) {
        self.uri = uri
        self.tags = tags
        self.duration = duration
        self.lastModified = lastModified
        self.mediaType = mediaType
    }

    /// The values of `tag`, in order.
    public func values(of tag: MPDTag) -> [String] {
        tags.compactMap { $0.tag == tag ? $0.value : nil }
    }

    public static func == (lhs: MPDSong, rhs: MPDSong) -> Bool {
        lhs.uri == rhs.uri && lhs.duration == rhs.duration && lhs.lastModified == rhs.lastModified
            && lhs.mediaType == rhs.mediaType && lhs.tags.map(\.tag) == rhs.tags.map(\.tag)
            && lhs.tags.map(\.value) == rhs.tags.map(\.value)
    }
}
