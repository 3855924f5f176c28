import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``ContentQuery`` run over a ``LibraryContentModel``.
///
/// Conditions on the title, artist, album and kind are answered from the model's folded texts,
/// each distinct text compared once per condition; any other condition makes the row's item
/// and asks ``ContentQuery/matches(_:)``. Either way the answer is the one
/// ``ContentQuery/matches(_:)`` gives on the row's item.
struct LibrarySearch {
    let model: LibraryContentModel
    private let query: ContentQuery
    private let compiled: CompiledQuery
    private let makeItem: (Location) -> ContentItem

    init(query: ContentQuery, model: LibraryContentModel, makeItem: @escaping (Location) -> ContentItem) {
        self.model = model
        self.query = query
        self.compiled = CompiledQuery(query)
        self.makeItem = makeItem
    }

    /// The root's results: artists in the Artists tab, then albums in the Albums tab, then
    /// tracks in the Tracks tab, or in their albums when `layout` has no Tracks tab.
    func atRoot(layout: LibraryContent.Layout) -> [IndexPath] {
        model.texts.withReader { reader in
            var evaluation = Evaluation(search: self, reader: reader)
            var found: [IndexPath] = []
            if let artists = layout.indexPath(of: .artists)?.first {
                for index in model.artists.indices where evaluation.matches(.artist(index)) {
                    found.append([artists, index])
                }
            }
            let albums = layout.indexPath(of: .albums)?.first
            if let albums {
                for index in model.albums.indices where evaluation.matches(.album(index)) { found.append([albums, index]) }
            }
            let tracks = layout.indexPath(of: .tracks)?.first
            for position in model.tracksByTitle.indices where evaluation.matches(.tracksTabTrack(position)) {
                if let tracks {
                    found.append([tracks, position])
                } else if let albums {
                    let place = model.places[model.tracksByTitle[position]]
                    found.append([albums, place.albumIndex, place.positionInAlbum])
                }
            }
            return found
        }
    }

    /// The matching descendants of `location` (at `indexPath`), parents before their children.
    func below(_ location: Location, at indexPath: IndexPath, root: RootRows) -> [IndexPath] {
        model.texts.withReader { reader in
            var evaluation = Evaluation(search: self, reader: reader)
            var found: [IndexPath] = []
            func visit(_ location: Location, _ indexPath: IndexPath) {
                for index in 0..<location.childCount(in: model, root: root) {
                    guard let child = location.child(index, in: model, root: root) else {
                        continue
                    }
                    let childPath = indexPath.appending(index)
                    if evaluation.matches(child) { found.append(childPath) }
                    visit(child, childPath)
                }
            }
            visit(location, indexPath)
            return found
        }
    }

    /// One search's state: what each condition answered for each text so far.
    private struct Evaluation {
        let search: LibrarySearch
        let reader: FoldedTextTable.Reader
        /// Per condition and text: 0 not asked yet, 1 false, 2 true.
        var answers: [UInt8]

        init(search: LibrarySearch, reader: FoldedTextTable.Reader) {
            self.search = search
            self.reader = reader
            answers = [UInt8](repeating: 0, count: search.compiled.conditionCount * search.model.texts.count)
        }

        mutating func matches(_ location: Location) -> Bool {
            guard let row = row(location) else { return search.query.matches(search.makeItem(location)) }
            var item: ContentItem?
            return evaluate(search.compiled.root, location, row, &item)
        }

        /// The row's title, artist and album texts and its kind.
        private func row(_ location: Location) -> Row? {
            let model = search.model
            let none = LibraryContentModel.noText
            switch location {
            case .artist(let index):
                let text = model.artists[index].text
                return Row(title: text, artist: text, album: none, kind: .container)
            case .album(let index):
                let album = model.albums[index]
                return Row(
                    title: album.text, artist: model.artists[album.artist].text, album: album.text, kind: .container)
            case .albumTrack(let album, let position): return track(model.albums[album].tracks[position])
            case .tracksTabTrack(let position): return track(model.tracksByTitle[position])
            case .folderTrack(let folder, let position): return track(model.folders[folder].tracks[position])
            case .playlist(let index):
                return Row(title: model.playlists[index].text, artist: none, album: none, kind: .container)
            case .playlistEntry(let playlist, let position):
                switch model.playlists[playlist].entries[position].kind {
                case .track(let index): return track(index)
                case .stream(_, _, let text): return Row(title: text, artist: none, album: none, kind: .audio)
                }
            case .folder(let index) where index != 0:
                return Row(title: model.folders[index].text, artist: none, album: none, kind: .container)
            case .root, .informative, .tab, .folder:
                return nil
            }
        }

        private func track(_ index: Int) -> Row {
            let place = search.model.places[index]
            return Row(title: place.title, artist: place.artist, album: place.album, kind: .music)
        }

        private mutating func evaluate(_ node: Int, _ location: Location, _ row: Row, _ item: inout ContentItem?)
            -> Bool
        {
            switch search.compiled.nodes[node] {
            case .all: return true
            case .and(let left, let right):
                return evaluate(left, location, row, &item) && evaluate(right, location, row, &item)
            case .or(let left, let right):
                return evaluate(left, location, row, &item) || evaluate(right, location, row, &item)
            case .exists(let field, let present): return (row[field] != LibraryContentModel.noText) == present
            case .kind(let answers): return answers[row.kind.rawValue]
            case .compare(let field, let comparison, let needle, let condition):
                let text = row[field]
                guard text != LibraryContentModel.noText else {
                    return comparison == .notEqual || comparison == .doesNotContain
                }
                let slot = condition * search.model.texts.count + text
                if answers[slot] == 0 {
                    answers[slot] = holds(comparison, text, search.compiled.needles[needle]) ? 2 : 1
                }
                return answers[slot] == 2
            case .other(let query):
                if item == nil { item = search.makeItem(location) }
                return search.compiled.others[query].matches(item!)
            }
        }

        /// ``ContentComparison`` of text `id` with `needle`, as ``ContentQuery/matches(_:)``
        /// applies it to a text field. Both are in normalization form C, so equality and order
        /// are those of their bytes.
        private func holds(_ comparison: ContentComparison, _ id: Int, _ needle: Needle) -> Bool {
            let text = reader.utf8(id)
            return needle.utf8.withUnsafeBufferPointer { part in
                switch comparison {
                case .contains: return contains(part, in: text, id, needle)
                case .doesNotContain: return !contains(part, in: text, id, needle)
                case .equal: return FoldedTextTable.Reader.compare(text, part) == 0
                case .notEqual: return FoldedTextTable.Reader.compare(text, part) != 0
                case .less: return FoldedTextTable.Reader.compare(text, part) < 0
                case .lessOrEqual: return FoldedTextTable.Reader.compare(text, part) <= 0
                case .greater: return FoldedTextTable.Reader.compare(text, part) > 0
                case .greaterOrEqual: return FoldedTextTable.Reader.compare(text, part) >= 0
                case .derivedFrom:
                    if FoldedTextTable.Reader.compare(text, part) == 0 { return true }
                    guard reader.comparesAsBytes(id), needle.comparesAsBytes else {
                        return CompiledQuery.holds(comparison, reader.string(id), needle.text)
                    }
                    return text.count > part.count && text[part.count] == UInt8(ascii: ".")
                        && FoldedTextTable.Reader.compare(UnsafeBufferPointer(rebasing: text[..<part.count]), part) == 0
                }
            }
        }

        /// Whether text `id` (whose bytes are `text`) holds `needle` (whose bytes are `part`):
        /// where it holds its bytes, starting and ending on character boundaries.
        private func contains(
            _ part: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, _ id: Int, _ needle: Needle
        )
            -> Bool
        {
            guard !part.isEmpty else { return reader.string(id).contains(needle.text) }
            let simple = needle.comparesAsBytes && reader.comparesAsBytes(id)
            var string: String?
            var start = 0
            while let offset = FoldedTextTable.Reader.firstOffset(of: part, in: text, from: start) {
                if simple
                    || (Self.isBoundary(before: offset, in: text, needle, &string)
                        && Self.isBoundary(after: offset + part.count, in: text, needle, &string))
                {
                    return true
                }
                start = offset + 1
            }
            return false
        }

        private static let lineFeed = UInt8(ascii: "\n")
        private static let carriageReturn = UInt8(ascii: "\r")

        /// Whether a match of `needle` at byte `offset` of `text` starts a character.
        private static func isBoundary(
            before offset: Int, in text: UnsafeBufferPointer<UInt8>, _ needle: Needle, _ string: inout String?
        ) -> Bool {
            if offset == 0 { return true }
            // After an ASCII character only the needle's first scalar decides (and CR LF).
            let previous = text[offset - 1]
            if previous < 0x80 {
                return needle.startsCharacterAfterASCII
                    && !(previous == carriageReturn && needle.utf8.first == lineFeed)
            }
            return isCharacterBoundary(offset, in: text, &string)
        }

        /// Whether a match of `needle` ending at byte `offset` of `text` ends a character.
        private static func isBoundary(
            after offset: Int, in text: UnsafeBufferPointer<UInt8>, _ needle: Needle, _ string: inout String?
        ) -> Bool {
            if offset == text.count { return true }
            // Before an ASCII character only the needle's last scalar decides (and CR LF).
            let next = text[offset]
            if next < 0x80 {
                return needle.endsCharacterBeforeASCII && !(next == lineFeed && needle.utf8.last == carriageReturn)
            }
            return isCharacterBoundary(offset, in: text, &string)
        }

        private static func isCharacterBoundary(
            _ offset: Int, in text: UnsafeBufferPointer<UInt8>, _ string: inout String?
        )
            -> Bool
        {
            if string == nil { string = String(decoding: text, as: UTF8.self) }
            let utf8 = string!.utf8
            return utf8.index(utf8.startIndex, offsetBy: offset).samePosition(in: string!) != nil
        }
    }

    private struct Row {
        var title: Int
        var artist: Int
        var album: Int
        var kind: CompiledQuery.Kind

        subscript(field: CompiledQuery.TextField) -> Int {
            switch field {
            case .title: title
            case .artist: artist
            case .album: album
            }
        }
    }
}

/// A search text, folded as the model's texts are.
private struct Needle {
    /// Lowercased.
    let text: String
    /// Lowercased, in normalization form C.
    let utf8: [UInt8]
    let comparesAsBytes: Bool
    /// Whether its first scalar starts a character after an ASCII character (it is not a
    /// combining mark, say).
    let startsCharacterAfterASCII: Bool
    /// Whether its last scalar ends a character before an ASCII character other than LF (it
    /// is not a prepended mark).
    let endsCharacterBeforeASCII: Bool

    init(_ value: String) {
        text = ContentComparison.folded(value)
        utf8 = FoldedTextTable.foldedUTF8(value)
        comparesAsBytes = FoldedTextTable.comparesAsBytes(utf8)
        let characters = text.count
        startsCharacterAfterASCII = ("a" + text).count == characters + 1
        endsCharacterBeforeASCII = (text + "a").count == characters + 1
    }
}

/// A ``ContentQuery`` as a flat list of nodes, its texts folded once, the conditions the model
/// answers itself told from those that need the row's item.
private struct CompiledQuery {
    enum TextField { case title, artist, album }
    enum Kind: Int { case container, music, audio }

    enum Node {
        case all
        case and(Int, Int)
        case or(Int, Int)
        /// A text field compared with ``CompiledQuery/needles``[needle]; `condition` numbers it
        /// among the query's text comparisons.
        case compare(TextField, ContentComparison, needle: Int, condition: Int)
        case exists(TextField, Bool)
        /// The answer for each ``Kind``, worked out once.
        case kind([Bool])
        /// Asked of the row's item.
        case other(Int)
    }

    private(set) var nodes: [Node] = []
    private(set) var needles: [Needle] = []
    private(set) var others: [ContentQuery] = []
    private(set) var conditionCount = 0
    private(set) var root = 0

    init(_ query: ContentQuery) {
        root = add(query)
    }

    private mutating func add(_ query: ContentQuery) -> Int {
        let node: Node
        switch query {
        case .all: node = .all
        case .and(let left, let right): node = .and(add(left), add(right))
        case .or(let left, let right): node = .or(add(left), add(right))
        case .compare(.kind, let comparison, let value):
            let value = ContentComparison.folded(value)
            node = .kind(["container", "music", "audio"].map { Self.holds(comparison, $0, value) })
        case .exists(.kind, let present):
            node = .kind([present, present, present])
        case .compare(let field, let comparison, let value):
            if let field = Self.textField(field) {
                needles.append(Needle(value))
                node = .compare(field, comparison, needle: needles.count - 1, condition: conditionCount)
                conditionCount += 1
            } else {
                others.append(query)
                node = .other(others.count - 1)
            }
        case .exists(let field, let present):
            if let field = Self.textField(field) {
                node = .exists(field, present)
            } else {
                others.append(query)
                node = .other(others.count - 1)
            }
        }
        nodes.append(node)
        return nodes.count - 1
    }

    private static func textField(_ field: ContentField) -> TextField? {
        switch field {
        case .title: .title
        case .artist: .artist
        case .album: .album
        default: nil
        }
    }

    /// ``ContentComparison`` of folded texts, as ``ContentQuery/matches(_:)`` applies it to a
    /// text (not numeric) field.
    static func holds(_ comparison: ContentComparison, _ actual: String, _ expected: String) -> Bool {
        switch comparison {
        case .contains: actual.contains(expected)
        case .doesNotContain: !actual.contains(expected)
        case .derivedFrom: actual == expected || actual.hasPrefix(expected + ".")
        case .equal: actual == expected
        case .notEqual: actual != expected
        case .less: actual < expected
        case .lessOrEqual: actual <= expected
        case .greater: actual > expected
        case .greaterOrEqual: actual >= expected
        }
    }
}
