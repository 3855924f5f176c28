import CGStreamer

/// Names the media type of a file from its first bytes, with the type finders
/// GStreamer itself uses to choose a demuxer, so what it accepts is what
/// playback can open. The only file that calls GStreamer's type-find helper.
public enum MediaTypeFinder {
    /// How many bytes from the start of a file ``mediaType(of:)`` needs to
    /// recognise every format playback reads: enough for an MP3 without tags
    /// (several frames) and an Ogg or Matroska header.
    public static let sampleSize = 16 * 1024

    /// The media type GStreamer's type finders give `bytes`, the start of a
    /// file: `audio/x-flac`, `audio/ogg`, `application/x-id3` (an MP3's tag
    /// comes first), `text/plain`…; `nil` when none recognises them or
    /// GStreamer cannot be initialised.
    ///
    /// Reads nothing from disk and runs no pipeline: a few microseconds.
    public static func mediaType(of bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, (try? GStreamerLibrary.initialize()) != nil else { return nil }
        var probability = GST_TYPE_FIND_NONE
        let found = bytes.withUnsafeBufferPointer { buffer in
            gst_type_find_helper_for_data(nil, buffer.baseAddress, gsize(buffer.count), &probability)
        }
        guard let caps = found else { return nil }
        defer { gst_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0),
            let name = gst_structure_get_name(structure)
        else { return nil }
        return String(cString: name)
    }

    /// The audio MIME type a remote knows for a type-finder `type`, or `nil`
    /// when `type` is not audio playback reads.
    ///
    /// Tags that precede the audio (ID3, APE) stand for MPEG audio, the
    /// format that carries them; type finders' private names map to the
    /// registered ones (`audio/x-m4a` is `audio/mp4`, `application/ogg` is
    /// `audio/ogg`). Video containers are not audio.
    public static func audioMIMEType(forFoundType type: String) -> String? {
        switch type {
        case "application/x-id3", "application/x-apetag": "audio/mpeg"
        case "application/ogg": "audio/ogg"
        case "audio/x-m4a": "audio/mp4"
        case "video/x-ms-asf": "audio/x-ms-wma"
        case "application/x-ape": "audio/x-ape"
        case let audio where audio.hasPrefix("audio/"): audio
        default: nil
        }
    }
}
