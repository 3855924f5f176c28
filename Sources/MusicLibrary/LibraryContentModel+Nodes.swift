#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension LibraryContentModel {
    struct ArtistNode: Sendable {
        let name: String
        let identifier: String
        let text: Int
        /// Album indices, by date then title.
        let albums: [Int]
        /// The track whose cover stands for the artist.
        let representative: Int
    }

    struct AlbumNode: Sendable {
        let title: String
        /// Index in ``LibraryContentModel/artists``.
        let artist: Int
        let identifier: String
        let text: Int
        /// Track indices, by disc, track number and title.
        let tracks: [Int]
        /// The earliest release date of its tracks.
        let date: String?
        /// The track whose cover stands for the album: the first with artwork.
        let representative: Int
        /// Where the album is among its artist's.
        let positionInArtist: Int
    }

    /// A track's folded fields, and where it is in each container that lists it.
    ///
    /// Kept as 32-bit numbers (a library has far fewer than 2^31 tracks or texts): one of
    /// these per track, so it is half the size.
    struct TrackPlace: Sendable {
        private let fields: (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32)

        init(
            title: Int, artist: Int, album: Int, albumIndex: Int, positionInAlbum: Int, positionInTracksTab: Int,
            folder: Int, positionInFolder: Int
        ) {
            fields = (
                Int32(title), Int32(artist), Int32(album), Int32(albumIndex), Int32(positionInAlbum),
                Int32(positionInTracksTab), Int32(folder), Int32(positionInFolder)
            )
        }

        var title: Int { Int(fields.0) }
        var artist: Int { Int(fields.1) }
        var album: Int { Int(fields.2) }
        /// Index in ``LibraryContentModel/albums``.
        var albumIndex: Int { Int(fields.3) }
        var positionInAlbum: Int { Int(fields.4) }
        var positionInTracksTab: Int { Int(fields.5) }
        var folder: Int { Int(fields.6) }
        var positionInFolder: Int { Int(fields.7) }
    }

    struct FolderNode: Sendable {
        /// Relative to the library root; `""` for the root, which is the Folders tab.
        let path: String
        let name: String
        let identifier: String
        let text: Int
        let parent: Int?
        let positionInParent: Int
        /// Folder indices, by name.
        let subfolders: [Int]
        /// Track indices, by file name.
        let tracks: [Int]
    }

    struct PlaylistItem: Sendable {
        enum Kind: Sendable {
            case track(Int)
            case stream(URL, title: String?, text: Int)
        }
        let kind: Kind
        /// Unique in the playlist: a repeated entry's identifier gets an occurrence suffix.
        let identifier: String
    }

    struct PlaylistNode: Sendable {
        let id: String
        let name: String
        let identifier: String
        let text: Int
        let modified: Date?
        let entries: [PlaylistItem]
    }
}
