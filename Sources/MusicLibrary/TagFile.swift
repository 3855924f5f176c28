import AudioTags

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads what the index keeps of an audio file from its tags, through TagLib: no decoder runs,
/// so a file costs a fraction of a millisecond instead of a GStreamer preroll.
enum TagFile {
    /// The file's media as GStreamer's discoverer would describe it, or `nil` when TagLib
    /// cannot read it (a format it does not know, or no length it can tell): the caller then
    /// asks its ``AudioFileDiscoverer``.
    static func media(at path: String) -> AudioFileMetadata? {
        guard let tags = try? AudioTags.read(path, pictures: true), let duration = tags.duration else { return nil }
        var media = AudioFileMetadata(duration: duration)
        media.mimeType = tags.mimeType
        media.title = tags.first("TITLE")
        media.artists = values(tags, "ARTIST")
        media.album = tags.first("ALBUM")
        media.albumArtists = values(tags, "ALBUMARTIST")
        media.genres = values(tags, "GENRE")
        media.composers = values(tags, "COMPOSER")
        (media.trackNumber, media.trackCount) = numberAndCount(tags.first("TRACKNUMBER"))
        (media.discNumber, media.discCount) = numberAndCount(tags.first("DISCNUMBER"))
        if let count = tags.first("TRACKTOTAL").flatMap(positive) ?? tags.first("TOTALTRACKS").flatMap(positive) {
            media.trackCount = count
        }
        if let count = tags.first("DISCTOTAL").flatMap(positive) ?? tags.first("TOTALDISCS").flatMap(positive) {
            media.discCount = count
        }
        media.releaseDate = tags.first("DATE").flatMap(isoDate)
        // The front cover if there is one, else the first picture.
        let picture = tags.pictures.first(where: \.isFrontCover) ?? tags.pictures.first
        media.image = picture.map { Data($0.data) }
        return media
    }

    private static func values(_ tags: AudioFileTags, _ key: String) -> [String] {
        (tags.properties[key] ?? []).filter { !$0.isEmpty }
    }

    /// "3", "3/12" or " 03 / 12 ": the number and the count, each when positive.
    static func numberAndCount(_ text: String?) -> (Int?, Int?) {
        guard let text else { return (nil, nil) }
        let parts = text.split(separator: "/", maxSplits: 1)
        return (parts.first.flatMap(positive), parts.count > 1 ? positive(parts[1]) : nil)
    }

    private static func positive(_ text: some StringProtocol) -> Int? {
        Int(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed().map(String.init).joined())
            .flatMap { $0 > 0 ? $0 : nil }
    }

    /// The date as the index keeps it: `2019`, `2019-05` or `2019-05-17`, from a tag such as
    /// `2019-05-17T10:00:00` or `2019`; `nil` when it does not start with a year.
    static func isoDate(_ text: String) -> String? {
        let fields = text.prefix { $0 != "T" && $0 != " " }.split(separator: "-", omittingEmptySubsequences: false)
        guard let year = fields.first, year.count == 4, year.allSatisfy(\.isASCIIDigit) else { return nil }
        var date = String(year)
        for (field, maximum) in zip(fields.dropFirst().prefix(2), [12, 31]) {
            guard field.count == 2, field.allSatisfy(\.isASCIIDigit), let value = Int(field), (1...maximum).contains(value)
            else { break }
            date += "-" + field
        }
        return date
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
