#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the audio files TagLib cannot, for a scan: formats TagLib has no reader for
/// (Matroska, say) and files whose length it cannot tell. The daemon's reads with GStreamer's
/// discoverer; a library given none lists such files as failures. The index needs no player
/// to be read or scanned: what reads the rest is the app's choice.
///
/// What a scan guarantees: it makes a discoverer (``AudioFileDiscovererFactory``) for a
/// reading thread only when that thread first meets a file TagLib cannot read, and calls it
/// from that thread alone, so an implementation needs no lock, and a scan of files TagLib
/// reads whole makes none (nor loads what one needs).
///
/// What an implementation guarantees: ``discover(_:)`` blocks until the file is read or has
/// failed, within a timeout of its own.
public protocol AudioFileDiscoverer {
    /// What the index keeps of the file at `url`.
    ///
    /// - Throws: ``AudioFileReadError`` with the reason the scan lists the file under.
    func discover(_ url: URL) throws(AudioFileReadError) -> AudioFileMetadata
}

/// Makes a discoverer for one of a scan's reading threads (see ``AudioFileDiscoverer``).
/// Throws when none can be made: the files that needed it fail with the reason.
public typealias AudioFileDiscovererFactory = @Sendable () throws(AudioFileReadError) -> any AudioFileDiscoverer

/// Why an audio file could not be read: the reason a scan lists it under
/// (``ScanFailure/reason``), a phrase for people without the file's name.
public struct AudioFileReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, such as `not playable media: Could not determine type of stream.`
    public var reason: String

    public init(reason: String) { self.reason = reason }

    public var description: String { reason }

    /// A file TagLib cannot read, in a library given no discoverer.
    static let noDiscoverer = AudioFileReadError(reason: "TagLib cannot read it, and no other reader was given")
}
