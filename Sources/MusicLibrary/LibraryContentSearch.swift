import Glibc
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``ContentQuery`` run over a ``LibraryContentModel``.
///
/// Conditions on the title, artist, album and kind are answered from the text folded when the
/// model was built, without making an item; any other condition makes the row's item once and
/// asks ``ContentQuery/matches(_:)``. Both give the answer ``ContentQuery/matches(_:)`` gives on
/// the row's item.
struct LibrarySearch {
    let model: LibraryContentModel
    private let query: CompiledQuery
    private let makeItem: (Location) -> ContentItem

    init(query: ContentQuery, model: LibraryContentModel, makeItem: @escaping (Location) -> ContentItem) {
        self.model = model
        self.query = CompiledQuery(query)
        self.makeItem = makeItem
    }

    /// The root's results: artists in the Artists tab, then albums in the Albums tab, then
    /// tracks in the Tracks tab.
    func atRoot() -> [IndexPath] {
        var found: [IndexPath] = []
        let artists = LibraryContent.Tab.artists.rawValue
        for index in model.artists.indices where matches(.artist(index)) { found.append([artists, index]) }
        let albums = LibraryContent.Tab.albums.rawValue
        for index in model.albums.indices where matches(.album(index)) { found.append([albums, index]) }
        let tracks = LibraryContent.Tab.tracks.rawValue
        for position in model.tracksByTitle.indices where matches(.tracksTabTrack(position)) {
            found.append([tracks, position])
        }
        return found
    }

    /// The matching descendants of `location` (at `indexPath`), parents before their children.
    func below(_ location: Location, at indexPath: IndexPath, showingInformative informative: Bool) -> [IndexPath] {
        var found: [IndexPath] = []
        func visit(_ location: Location, _ indexPath: IndexPath) {
            for index in 0..<location.childCount(in: model, showingInformative: informative) {
                guard let child = location.child(index, in: model, showingInformative: informative) else { continue }
                let childPath = indexPath.appending(index)
                if matches(child) { found.append(childPath) }
                visit(child, childPath)
            }
        }
        visit(location, indexPath)
        return found
    }

    private func matches(_ location: Location) -> Bool {
        var item: ContentItem?
        return evaluate(query, location, text(of: location), &item)
    }

    /// The folded title, artist, album and kind of the row's item.
    private struct RowText {
        var title: FoldedText?
        var artist: FoldedText?
        var album: FoldedText?
        var kind: FoldedText

        subscript(field: CompiledQuery.TextField) -> FoldedText? {
            switch field {
            case .title: title
            case .artist: artist
            case .album: album
            case .kind: kind
            }
        }
    }

    private static let container = FoldedText("container")
    private static let music = FoldedText("music")
    private static let audio = FoldedText("audio")

    private func text(of location: Location) -> RowText {
        switch location {
        case .artist(let index):
            let artist = model.artists[index]
            return RowText(title: artist.folded, artist: artist.folded, album: nil, kind: Self.container)
        case .album(let index):
            let album = model.albums[index]
            return RowText(
                title: album.foldedTitle, artist: model.artists[album.artist].folded, album: album.foldedTitle,
                kind: Self.container)
        case .albumTrack(let album, let position): return text(ofTrack: model.albums[album].tracks[position])
        case .tracksTabTrack(let position): return text(ofTrack: model.tracksByTitle[position])
        case .folderTrack(let folder, let position): return text(ofTrack: model.folders[folder].tracks[position])
        case .playlist(let index):
            return RowText(title: model.playlists[index].folded, kind: Self.container)
        case .playlistEntry(let playlist, let position):
            switch model.playlists[playlist].entries[position].kind {
            case .track(let track): return text(ofTrack: track)
            case .stream(_, _, let folded): return RowText(title: folded, kind: Self.audio)
            }
        case .folder(let index) where index != 0:
            return RowText(title: model.folders[index].folded, kind: Self.container)
        case .root, .informative, .tab, .folder:
            // Never searched (the root's children are not among results); made from the item.
            let item = makeItem(location)
            return RowText(
                title: item.title.map(FoldedText.init), artist: item.media?.artist.map(FoldedText.init),
                album: item.media?.album.map(FoldedText.init), kind: FoldedText(item.kind))
        }
    }

    private func text(ofTrack index: Int) -> RowText {
        let place = model.places[index]
        return RowText(title: place.title, artist: place.artist, album: place.album, kind: Self.music)
    }

    private func evaluate(_ query: CompiledQuery, _ location: Location, _ text: RowText, _ item: inout ContentItem?)
        -> Bool
    {
        switch query {
        case .all: return true
        case .and(let left, let right):
            return evaluate(left, location, text, &item) && evaluate(right, location, text, &item)
        case .or(let left, let right):
            return evaluate(left, location, text, &item) || evaluate(right, location, text, &item)
        case .exists(let field, let present): return (text[field] != nil) == present
        case .compare(let field, let comparison, let value):
            guard let actual = text[field] else { return comparison == .notEqual || comparison == .doesNotContain }
            return Self.holds(comparison, actual, value)
        case .other(let query):
            if item == nil { item = makeItem(location) }
            return query.matches(item!)
        }
    }

    /// ``ContentComparison`` on folded text, as ``ContentQuery/matches(_:)`` applies it to a
    /// text (not numeric) field.
    private static func holds(_ comparison: ContentComparison, _ actual: FoldedText, _ expected: FoldedText) -> Bool {
        switch comparison {
        case .contains: return contains(actual, expected)
        case .doesNotContain: return !contains(actual, expected)
        case .derivedFrom: return actual.text == expected.text || actual.text.hasPrefix(expected.text + ".")
        case .equal: return actual.text == expected.text
        case .notEqual: return actual.text != expected.text
        case .less: return actual.text < expected.text
        case .lessOrEqual: return actual.text <= expected.text
        case .greater: return actual.text > expected.text
        case .greaterOrEqual: return actual.text >= expected.text
        }
    }

    /// Whether `text` contains `part`: bytes compared when both are ASCII and `part` is not
    /// empty (the same answer, about ten times faster), characters otherwise.
    private static func contains(_ text: FoldedText, _ part: FoldedText) -> Bool {
        guard text.isASCII, part.isASCII, !part.text.isEmpty else { return text.text.contains(part.text) }
        var haystack = text.text
        var needle = part.text
        return haystack.withUTF8 { haystack in
            needle.withUTF8 { needle in
                guard needle.count <= haystack.count, let text = haystack.baseAddress, let part = needle.baseAddress
                else { return false }
                let first = part.pointee
                for start in 0...(haystack.count - needle.count)
                where text[start] == first && memcmp(text + start, part, needle.count) == 0 {
                    return true
                }
                return false
            }
        }
    }
}

/// A ``ContentQuery`` with its text folded once, and the conditions the model answers itself
/// told from those that need the row's item.
private indirect enum CompiledQuery {
    enum TextField { case title, artist, album, kind }

    case all
    case and(CompiledQuery, CompiledQuery)
    case or(CompiledQuery, CompiledQuery)
    case compare(TextField, ContentComparison, FoldedText)
    case exists(TextField, Bool)
    /// Asked of the row's item.
    case other(ContentQuery)

    init(_ query: ContentQuery) {
        switch query {
        case .all: self = .all
        case .and(let left, let right): self = .and(CompiledQuery(left), CompiledQuery(right))
        case .or(let left, let right): self = .or(CompiledQuery(left), CompiledQuery(right))
        case .compare(let field, let comparison, let value):
            if let field = Self.textField(field) {
                self = .compare(field, comparison, FoldedText(value))
            } else {
                self = .other(query)
            }
        case .exists(let field, let present):
            if let field = Self.textField(field) { self = .exists(field, present) } else { self = .other(query) }
        }
    }

    private static func textField(_ field: ContentField) -> TextField? {
        switch field {
        case .title: .title
        case .artist: .artist
        case .album: .album
        case .kind: .kind
        default: nil
        }
    }
}
