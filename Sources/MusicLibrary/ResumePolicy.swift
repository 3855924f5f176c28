/// Which tracks of a library remember where they were left, so that playing one again
/// resumes there: audiobooks and podcast episodes, told by their length, their folder or
/// their genre. A track that any of the three rules accepts remembers.
///
/// ```swift
/// let policy = try ResumePolicy(longerThan: .seconds(20 * 60), folders: ["Audiobooks"], in: library.root)
/// policy.remembersPosition(of: track)
/// ```
public struct ResumePolicy: Sendable, Hashable {
    /// Tracks longer than this remember; nil when length alone does not make a track remember.
    public var minimumDuration: Duration?
    /// Folders relative to the library root (normalised: no `.`, `..` or trailing slash); the
    /// tracks anywhere below one remember.
    public private(set) var folders: [String]
    /// Genres whose tracks remember, folded to lower case: a track remembers when one of its
    /// genres is one of these, compared case-insensitively.
    public private(set) var genres: Set<String>

    /// Twenty minutes: longer than nearly every song, shorter than nearly every episode.
    public static let defaultMinimumDuration: Duration = .seconds(20 * 60)
    /// The genres taggers and podcast clients give spoken-word recordings.
    public static let defaultGenres = ["Audiobook", "Audiobooks", "Podcast", "Podcasts", "Spoken Word", "Speech"]
    /// The defaults: longer than 20 minutes, or of a genre of ``defaultGenres``; no folder.
    public static let standard = ResumePolicy(
        minimumDuration: defaultMinimumDuration, relativeFolders: [], genres: defaultGenres)
    /// No track remembers.
    public static let none = ResumePolicy(minimumDuration: nil, relativeFolders: [], genres: [])

    /// A policy over folders given relative to the library root (see ``folders``).
    public init(minimumDuration: Duration?, relativeFolders: [String], genres: [String]) {
        self.minimumDuration = minimumDuration.flatMap { $0 > .zero ? $0 : nil }
        self.folders = relativeFolders.map { LibraryPath.normalised("/" + $0).dropFirst() }.map(String.init)
        self.genres = Set(genres.map { $0.lowercased() })
    }

    /// A policy whose folders are paths given on a command line: absolute ones must lie inside
    /// `root` (the library's, normalised), relative ones are taken from `root`.
    ///
    /// - Throws: ``MusicLibraryError/folderOutsideLibrary(_:)`` for a folder that is not inside
    ///   the library (the root itself counts as inside: every track then remembers).
    public init(minimumDuration: Duration?, folders: [String], genres: [String], in root: String) throws {
        let root = LibraryPath.normalised(root)
        var relative: [String] = []
        for folder in folders {
            let absolute = LibraryPath.normalised(folder.hasPrefix("/") ? folder : root + "/" + folder)
            if absolute == root {
                relative.append("")
            } else if let inside = LibraryPath.relative(absolute, to: root) {
                relative.append(inside)
            } else {
                throw MusicLibraryError.folderOutsideLibrary(folder)
            }
        }
        self.init(minimumDuration: minimumDuration, relativeFolders: relative, genres: genres)
    }

    /// Whether no track remembers.
    public var isNone: Bool { minimumDuration == nil && folders.isEmpty && genres.isEmpty }

    /// Whether the track at `path` (relative to the root), `duration` long, of `genres`, remembers.
    public func remembersPosition(path: Track.ID, duration: Duration?, genres trackGenres: [String]) -> Bool {
        if let minimumDuration, let duration, duration > minimumDuration { return true }
        if !genres.isEmpty, trackGenres.contains(where: { genres.contains($0.lowercased()) }) { return true }
        return folders.contains { $0.isEmpty || path.hasPrefix($0 + "/") }
    }

    /// Whether `track` remembers where it was left.
    public func remembersPosition(of track: Track) -> Bool {
        remembersPosition(path: track.id, duration: track.duration, genres: track.genres)
    }
}
