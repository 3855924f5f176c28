import GStreamerPlayback
import MusicLibrary

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The index's reader of the files TagLib cannot read: GStreamer's discoverer. The index
/// itself links no GStreamer; a scan makes one of these per reading thread, and only when a
/// file needs it, so a scan of files TagLib reads whole never initialises GStreamer.
struct GStreamerFileDiscoverer: AudioFileDiscoverer {
    private let discoverer: Discoverer

    /// How long the discoverer may take over one file.
    static let defaultTimeout: Duration = .seconds(10)

    /// - Throws: why GStreamer or its discoverer could not be started.
    init(timeout: Duration = defaultTimeout) throws(AudioFileReadError) {
        do {
            discoverer = try Discoverer(timeout: timeout)
        } catch {
            throw Self.readError(error)
        }
    }

    /// Makes one discoverer per call, each giving up on a file after `timeout`: the library's
    /// `discoverer`.
    static func factory(timeout: Duration = defaultTimeout) -> AudioFileDiscovererFactory {
        { () throws(AudioFileReadError) in try GStreamerFileDiscoverer(timeout: timeout) }
    }

    func discover(_ url: URL) throws(AudioFileReadError) -> AudioFileMetadata {
        let media: DiscoveredMedia
        do {
            media = try discoverer.discover(url)
        } catch {
            throw Self.readError(error)
        }
        return AudioFileMetadata(
            duration: media.duration, title: media.title, artists: media.artists, album: media.album,
            albumArtists: media.albumArtists, genres: media.genres, composers: media.composers,
            trackNumber: media.trackNumber, trackCount: media.trackCount, discNumber: media.discNumber,
            discCount: media.discCount, releaseDate: media.releaseDate, image: media.image, mimeType: media.mimeType)
    }

    /// The discoverer's reason, without the file's name (the scan lists it by path).
    private static func readError(_ error: any Error) -> AudioFileReadError {
        AudioFileReadError(reason: (error as? DiscovererError)?.reason ?? String(describing: error))
    }
}
