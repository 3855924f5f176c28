import MediaRemote
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A field of a track the tree does not keep, read from where the tracks are (the index) when a
/// remote first sorts by it.
enum TrackSortField: Sendable, CaseIterable {
    case date, genre, trackNumber, duration

    /// The index's column.
    var column: String {
        switch self {
        case .date: "release_date"
        case .genre: "genres"
        case .trackNumber: "track_number"
        case .duration: "duration"
        }
    }

    init?(_ field: ContentField) {
        switch field {
        case .date: self = .date
        case .genre: self = .genre
        case .trackNumber: self = .trackNumber
        case .duration: self = .duration
        default: return nil
        }
    }
}

/// Calls its second argument with every track's path and value of a field (text for dates and
/// genres as the index keeps them, a number for track numbers and lengths in nanoseconds).
typealias TrackFieldReader =
    @Sendable (TrackSortField, (_ path: String, _ text: String?, _ number: Int64?) -> Void) throws -> Void

/// What sorting a tree's rows needs, made when a remote first sorts and kept with the tree (a
/// new tree after a scan starts afresh): every row's sort key for a field is a 32-bit number,
/// so a sort compares integers and moves no strings or dictionaries.
///
/// - The title, artist and album of every row are texts of the model
///   (``LibraryContentModel/texts``); their keys are the texts' ranks in the case-insensitive
///   order, computed once (some 30 ms for 50,000 tracks in release builds).
/// - A track's date, genre, number and length are read from the index once per field (one
///   query over the tracks), and kept as a key per track; a date's or genre's key is its rank
///   among the library's distinct values.
/// - The orders of the last few sorted containers are kept (``ordersKept``), so paging
///   through a sorted Tracks tab costs a page, not a sort.
///
/// Memory is bounded by the library's size: at most 4 bytes per text, 4 per track and field
/// (four fields), and ``ordersKept`` orders of 4 bytes per row: some 2 MB at 50,000 tracks.
final class LibrarySortKeys: Sendable {
    /// How many sorted orders are kept, the least recently used dropped first.
    static let ordersKept = 4

    /// Stands for a row without a value: after every other, in both directions.
    static let missing = Int32.max

    private struct Cache {
        var textRanks: [Int32]?
        var trackKeys: [TrackSortField: [Int32]] = [:]
        /// Dates' ranks by their folded text, for an album's date.
        var dateRanks: [String: Int32] = [:]
        /// Sorted orders by container and sort, the most recently used last.
        var orders: [(key: OrderKey, order: [Int32])] = []
    }

    struct OrderKey: Hashable {
        var indexPath: IndexPath
        var sort: ContentSort
    }

    private let fieldReader: TrackFieldReader?
    private let cache = Mutex(Cache())

    init(fieldReader: TrackFieldReader?) {
        self.fieldReader = fieldReader
    }

    /// The order kept for `key`, if any (and marks it used).
    func order(for key: OrderKey) -> [Int32]? {
        cache.withLock { cache in
            guard let position = cache.orders.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = cache.orders.remove(at: position)
            cache.orders.append(entry)
            return entry.order
        }
    }

    func keep(_ order: [Int32], for key: OrderKey) {
        cache.withLock { cache in
            cache.orders.removeAll { $0.key == key }
            cache.orders.append((key, order))
            if cache.orders.count > Self.ordersKept { cache.orders.removeFirst(cache.orders.count - Self.ordersKept) }
        }
    }

    /// The keys `sort` needs for `model`'s rows, read and computed as needed; nil when a
    /// track field cannot be read (the index is gone).
    func keys(for sort: ContentSort, in model: LibraryContentModel) -> RowKeys? {
        var ranks = cache.withLock { $0.textRanks }
        if ranks == nil, sort.keys.contains(where: { [.title, .artist, .album].contains($0.field) }) {
            let computed = model.texts.ranks().map { Int32(clamping: $0) }
            cache.withLock { $0.textRanks = computed }
            ranks = computed
        }
        var tracks: [TrackSortField: [Int32]] = [:]
        for key in sort.keys {
            guard let field = TrackSortField(key.field) else { continue }
            if let kept = cache.withLock({ $0.trackKeys[field] }) {
                tracks[field] = kept
                continue
            }
            guard let (values, dateRanks) = read(field, in: model) else { return nil }
            cache.withLock { cache in
                cache.trackKeys[field] = values
                if let dateRanks { cache.dateRanks = dateRanks }
            }
            tracks[field] = values
        }
        return RowKeys(
            model: model, textRanks: ranks ?? [], tracks: tracks, dateRanks: cache.withLock { $0.dateRanks })
    }

    /// Every track's key for `field`, and for dates the ranks of the distinct dates.
    private func read(_ field: TrackSortField, in model: LibraryContentModel) -> ([Int32], [String: Int32]?)? {
        let rows = model.rows
        var texts = [String?](repeating: nil, count: field == .date || field == .genre ? rows.count : 0)
        var numbers = [Int32](repeating: Self.missing, count: rows.count)
        func take(_ index: Int, _ text: String?, _ number: Int64?) {
            switch field {
            case .date: texts[index] = text.flatMap { $0.isEmpty ? nil : ContentComparison.folded($0) }
            case .genre:
                texts[index] = LibraryContentModel.line(LibraryIndex.split(text)).map(ContentComparison.folded)
            case .trackNumber: numbers[index] = number.map { Int32(clamping: $0) }.map { min($0, Self.missing - 1) } ?? Self.missing
            case .duration:
                numbers[index] = number.map { Int32(clamping: $0 / 1_000_000_000) }.map { min($0, Self.missing - 1) } ?? Self.missing
            }
        }
        if let tracks = rows.tracksInMemory {
            for (index, track) in tracks.enumerated() {
                switch field {
                case .date: take(index, track.releaseDate, nil)
                case .genre: take(index, track.genres.joined(separator: "\u{1F}"), nil)
                case .trackNumber: take(index, nil, track.trackNumber.map(Int64.init))
                case .duration: take(index, nil, track.duration.map { $0.components.seconds * 1_000_000_000 })
                }
            }
        } else if let fieldReader {
            do {
                try fieldReader(field) { path, text, number in
                    if let index = rows.index(ofID: path) { take(index, text, number) }
                }
            } catch {
                return nil
            }
        } else {
            return nil
        }
        guard field == .date || field == .genre else { return (numbers, nil) }
        // Texts become their ranks among the distinct values.
        let distinct = Set(texts.compactMap { $0 }).sorted()
        var rank: [String: Int32] = [:]
        for (position, text) in distinct.enumerated() { rank[text] = Int32(position) }
        let keys = texts.map { $0.flatMap { rank[$0] } ?? Self.missing }
        return (keys, field == .date ? rank : nil)
    }
}

extension Location {
    /// The track this row shows, if it is one.
    func track(in model: LibraryContentModel) -> Int? {
        switch self {
        case .albumTrack(let album, let position): model.albums[album].tracks[position]
        case .tracksTabTrack(let position): model.tracksByTitle[position]
        case .folderTrack(let folder, let position): model.folders[folder].tracks[position]
        case .playlistEntry(let playlist, let position):
            if case .track(let track) = model.playlists[playlist].entries[position].kind { track } else { nil }
        default: nil
        }
    }
}

/// The sort keys of a model's rows for one sort (see ``LibrarySortKeys``).
struct RowKeys {
    let model: LibraryContentModel
    let textRanks: [Int32]
    let tracks: [TrackSortField: [Int32]]
    let dateRanks: [String: Int32]

    private static let missing = LibrarySortKeys.missing

    /// The key of `location`'s row for `field`; ``LibrarySortKeys/missing`` when it has no
    /// value, nil for a row that has no keys (the root, a tab, the informative row).
    func key(_ field: ContentField, of location: Location) -> Int32? {
        // `kind` by name: audio, container, music.
        let container: Int32 = 1
        switch location {
        case .root, .informative, .tab, .folder(0): return nil
        case .artist(let index):
            let artist = model.artists[index]
            switch field {
            case .title, .artist: return text(artist.text)
            case .kind: return container
            default: return Self.missing
            }
        case .album(let index):
            let album = model.albums[index]
            switch field {
            case .title, .album: return text(album.text)
            case .artist: return text(model.artists[album.artist].text)
            case .date: return album.date.flatMap { dateRanks[ContentComparison.folded($0)] } ?? Self.missing
            case .kind: return container
            default: return Self.missing
            }
        case .playlist(let index):
            return field == .title ? text(model.playlists[index].text) : field == .kind ? container : Self.missing
        case .folder(let index):
            return field == .title ? text(model.folders[index].text) : field == .kind ? container : Self.missing
        case .albumTrack(let album, let position): return trackKey(field, model.albums[album].tracks[position])
        case .tracksTabTrack(let position): return trackKey(field, model.tracksByTitle[position])
        case .folderTrack(let folder, let position): return trackKey(field, model.folders[folder].tracks[position])
        case .playlistEntry(let playlist, let position):
            switch model.playlists[playlist].entries[position].kind {
            case .track(let track): return trackKey(field, track)
            case .stream(_, _, let streamText):
                return field == .title ? text(streamText) : field == .kind ? 0 : Self.missing
            }
        }
    }

    private func trackKey(_ field: ContentField, _ track: Int) -> Int32 {
        let place = model.places[track]
        switch field {
        case .title: return text(place.title)
        case .artist: return text(place.artist)
        case .album: return text(place.album)
        case .kind: return 2
        default: return TrackSortField(field).flatMap { tracks[$0]?[track] } ?? Self.missing
        }
    }

    /// Text `id`'s key: its rank, or ``LibrarySortKeys/missing`` for no text.
    private func text(_ id: Int) -> Int32 { id == LibraryContentModel.noText ? Self.missing : textRanks[id] }

    /// `count` rows in `sort`'s order: their positions, sorted, ties in their given order.
    /// `keyAt(row, key)` is the row's key for `sort.keys[key]`.
    static func order(count: Int, sort: ContentSort, _ keyAt: (Int, Int) -> Int32) -> [Int32] {
        let width = sort.keys.count
        var values = [Int32](repeating: 0, count: count * width)
        for row in 0..<count {
            for key in 0..<width { values[row * width + key] = keyAt(row, key) }
        }
        let ascending = sort.keys.map(\.ascending)
        var order = (0..<Int32(count)).map { $0 }
        values.withUnsafeBufferPointer { values in
            order.sort { left, right in
                let a = Int(left) * width
                let b = Int(right) * width
                for key in 0..<width {
                    let x = values[a + key]
                    let y = values[b + key]
                    if x == y { continue }
                    if x == missing { return false }
                    if y == missing { return true }
                    return ascending[key] ? x < y : x > y
                }
                return left < right
            }
        }
        return order
    }
}

extension LibraryContent {
    /// The children of the container at `indexPath` in `sort`'s order (see ``ContentSort``):
    /// the indexes of those at the sorted places `range`.
    ///
    /// Sorted from keys the tree computes once (``LibrarySortKeys``): the texts' ranks, and the
    /// fields it does not keep read from the index once; the order of the last few containers
    /// sorted is kept, so a remote paging through a sorted Tracks tab of 50,000 tracks sorts it
    /// once (some 20 ms in release builds) and then reads a page per call. Nil for the root,
    /// whose tabs the manager sorts itself, and when the index cannot be read.
    public func sortedChildIndexes(at indexPath: IndexPath, by sort: ContentSort, in range: Range<Int>) -> [Int]? {
        let (model, root) = snapshotForSorting
        guard let location = Location(indexPath, in: model, root: root), location != .root else {
            return nil
        }
        let key = LibrarySortKeys.OrderKey(indexPath: indexPath, sort: sort)
        // The Recent tab changes without a new model: its few rows are sorted at each call.
        let keepsOrder = location != .tab(.recent)
        let order: [Int32]
        if keepsOrder, let kept = model.sortKeys.order(for: key) {
            order = kept
        } else {
            guard let keys = model.sortKeys.keys(for: sort, in: model) else { return nil }
            let children = (0..<location.childCount(in: model, root: root)).map {
                location.child($0, in: model, root: root)
            }
            order = RowKeys.order(count: children.count, sort: sort) { row, position in
                children[row].flatMap { keys.key(sort.keys[position].field, of: $0) } ?? LibrarySortKeys.missing
            }
            if keepsOrder { model.sortKeys.keep(order, for: key) }
        }
        let window = range.clamped(to: 0..<order.count)
        let indexes = order[window].map(Int.init)
        // The page's tracks in one read: each row read alone would read the hundred rows after
        // it in the natural order too (a natural page's prefetch), a hundred times too many.
        prefetchTracks(
            model, indexes.compactMap { location.child($0, in: model, root: root)?.track(in: model) })
        return indexes
    }

    /// `indexPaths` (a search's results) in `sort`'s order, from the same keys as
    /// ``sortedChildIndexes(at:by:in:)``: rows without keys (a tab) come last. Nil when the index
    /// cannot be read.
    public func sortedIndexPaths(_ indexPaths: [IndexPath], by sort: ContentSort) -> [IndexPath]? {
        let (model, root) = snapshotForSorting
        guard let keys = model.sortKeys.keys(for: sort, in: model) else { return nil }
        let locations = indexPaths.map { Location($0, in: model, root: root) }
        let order = RowKeys.order(count: indexPaths.count, sort: sort) { row, position in
            locations[row].flatMap { keys.key(sort.keys[position].field, of: $0) } ?? LibrarySortKeys.missing
        }
        return order.map { indexPaths[Int($0)] }
    }

    private var snapshotForSorting: (LibraryContentModel, RootRows) { state.withLock { ($0.model, rootRows($0)) } }

    /// Reads a track field for sorting from `library`'s index.
    static func fieldReader(of library: MusicLibrary) -> TrackFieldReader {
        { field, body in try library.forEachTrack(field, body) }
    }
}
