import MusicLibrary
import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The player's state in SQLite (`state.sqlite`), each save written as its difference from the
/// one before, so a change costs a few pages however long the queue is.
///
/// Two tables. `queue` has a row per entry: its identifier, its URL (NULL for an entry of the
/// library, found again by identifier) and a key in each of the two orders, the order added and
/// the play order. An entry's place in an order is its key's rank, and keys are sparse: an entry
/// put between two others takes a key between theirs, and no other row changes. When two
/// neighbours leave no room, the keys of a window around them are spread anew, the window
/// widened until there is room (the whole order at worst). `player` has one row: the current
/// entry, its position, the volume, the rate, repeat, shuffle, single and consume. `PRAGMA
/// user_version` is the schema's version. The columns `single_mode` and `consume` came later
/// within version 1: a file without them is read with both off and gains them at its next
/// save, keeping its queue (a new version would replace it).
///
/// A save is one transaction, and the log is synced when it commits (WAL, `synchronous =
/// FULL`), so a crash or a power cut leaves the previous save or the new one.
///
/// Not thread-safe: its owner keeps it behind a lock.
final class StateDatabase {
    let path: String
    private let database: SQLiteDatabase
    /// What the tables hold, as this connection last wrote or read them; nil when not known
    /// (nothing written yet, or a save failed), and the next save writes everything.
    private var stored: PlayerSnapshot?
    /// `PRAGMA data_version` when ``stored`` was last true; SQLite changes it when another
    /// connection commits (a second daemon on the same folder), and then ``stored`` no longer holds.
    private var dataVersion: Int64?

    /// The tables' shape; a database of another version is not read, and is replaced by the next save.
    static let schemaVersion: Int64 = 1
    /// The distance between neighbours' keys when an order is numbered afresh: 32 insertions
    /// between the same two entries before they run out of room.
    static let keySpacing: Int64 = 1 << 32
    /// The least distance between keys that a window spread anew must leave, so that the next
    /// insertions there find room again.
    static let respreadSpacing: Int64 = 1 << 16
    /// A save of at least this many rows is copied into the database file at once (a
    /// checkpoint), so the log shrinks back and the small saves after it stay small.
    static let checkpointRows = 1_000

    /// Opens (creating if needed) the database at `path`; the folder must exist. With
    /// `immutable`, only reads the file as it is, for a folder that cannot be written (where
    /// SQLite cannot make the log's shared memory); saves written to the log since its last
    /// checkpoint are not seen.
    init(path: String, immutable: Bool = false) throws(SQLiteError) {
        self.path = path
        database = try SQLiteDatabase(path: path, immutable: immutable)
        guard !immutable else { return }
        // The queue says what someone listens to: the owner's alone, as the log and its shared
        // memory, which SQLite creates with the database's permissions.
        chmod(path, 0o600)
        // A small page cache: the writer touches a few pages per save.
        try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -512")
    }

    /// Removes the database at `path` and its log, as a damaged one is: the next save starts afresh.
    static func remove(at path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }

    // MARK: Reading

    /// A database that cannot be read as a saved state; the description says why, as a sentence.
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    /// The saved state, or nil when there is none (a new database, or one whose first save never
    /// committed). Throws ``Unreadable`` or an `SQLiteError` when it cannot be read.
    func read() throws -> PlayerSnapshot? {
        let (snapshot, version) = try database.readTransaction { () throws -> (PlayerSnapshot?, Int64?) in
            let dataVersion = try database.integer("PRAGMA data_version")
            return (try readSnapshot(), dataVersion)
        }
        stored = snapshot
        self.dataVersion = version
        return snapshot
    }

    // MARK: Settings

    /// A setting kept beside the queue (the ReplayGain mode, the chosen output), nil if never
    /// saved. Its table is older versions' files' only difference, so it is made when first
    /// written rather than by a new schema version (which would drop the saved queue).
    func setting(_ key: String) throws(SQLiteError) -> String? {
        guard try database.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'settings'") == 1
        else { return nil }
        var value: String?
        try database.forEachRow("SELECT value FROM settings WHERE key = ?", [.text(key)]) { row throws(SQLiteError) in
            value = row.text(0)
        }
        return value
    }

    /// Saves `value` for `key` (nil removes it), in a transaction of its own, synced at commit.
    func setSetting(_ key: String, _ value: String?) throws(SQLiteError) {
        try database.execute(
            "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID")
        if let value {
            try database.run("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", .text(key), .text(value))
        } else {
            try database.run("DELETE FROM settings WHERE key = ?", .text(key))
        }
    }

    private func readSnapshot() throws -> PlayerSnapshot? {
        let version = try database.integer("PRAGMA user_version") ?? 0
        guard version != 0 else { return nil }
        guard version == Self.schemaVersion else {
            throw Unreadable(description: "it was saved by another version of mpris-bridge (schema \(version))")
        }
        var player: PlayerSnapshot?
        var unknownMode: String?
        let laterModes = try hasLaterModeColumns() ? "single_mode, consume" : "'off', 0"
        try database.forEachRow(
            "SELECT current, position_ms, volume, rate, repeat_mode, shuffle_mode, \(laterModes) FROM player WHERE id = 1"
        ) { row throws(SQLiteError) in
            guard let repeatMode = PlayerSnapshot.Repeat(rawValue: row.text(4) ?? ""),
                let shuffleMode = PlayerSnapshot.Shuffle(rawValue: row.text(5) ?? "")
            else {
                unknownMode = "\(row.text(4) ?? "NULL"), \(row.text(5) ?? "NULL")"
                return
            }
            // A NaN was stored as NULL: the player's default is as good as any.
            player = PlayerSnapshot(
                addedOrder: [], playOrder: [], currentIdentifier: row.text(0),
                positionMilliseconds: row.integer(1) ?? 0, volume: row.real(2) ?? 1, rate: row.real(3) ?? 1,
                repeatMode: repeatMode, shuffleMode: shuffleMode,
                // A single mode of a later version plays as off rather than losing the queue.
                singleMode: SingleMode(rawValue: row.text(6) ?? "") ?? .off, consumes: (row.integer(7) ?? 0) != 0)
        }
        if let unknownMode {
            throw Unreadable(description: "it names modes this version does not know (\(unknownMode))")
        }
        guard var snapshot = player else { return nil }
        (snapshot.addedOrder, snapshot.playOrder) = try readQueue()
        return snapshot
    }

    /// The queue's entries in the order added, and the play order as indices into them.
    private func readQueue() throws(SQLiteError) -> ([PlayerSnapshot.Entry], [Int]) {
        var identifiers: [String] = []
        var urls: [URL?] = []
        var addedKeys: [Int64] = []
        var playKeys: [Int64] = []
        try database.forEachRow("SELECT identifier, url, added_key, play_key FROM queue") { row throws(SQLiteError) in
            identifiers.append(row.text(0) ?? "")
            urls.append(row.text(1).flatMap { URL(string: $0) })
            addedKeys.append(row.integer(2) ?? 0)
            playKeys.append(row.integer(3) ?? 0)
        }
        // Ranks by key; equal keys (never written, but a file can be edited) keep the rows' order.
        let byAddedKey = identifiers.indices.sorted { (addedKeys[$0], $0) < (addedKeys[$1], $1) }
        var addedIndex = [Int](repeating: 0, count: identifiers.count)
        for (index, row) in byAddedKey.enumerated() { addedIndex[row] = index }
        let playOrder = identifiers.indices.sorted { (playKeys[$0], $0) < (playKeys[$1], $1) }.map { addedIndex[$0] }
        let entries = byAddedKey.map { PlayerSnapshot.Entry(identifier: identifiers[$0], url: urls[$0]) }
        return (entries, playOrder)
    }

    // MARK: Writing

    /// Saves `snapshot` in one transaction: the rows that differ from the last save (or read), or
    /// every row when that is not known. Returns the number of queue rows written (a row updated
    /// in both orders counts twice).
    ///
    /// The difference is found in O(n) comparisons of entries at most (the common beginning and
    /// end of each order); a change of place alone writes the `player` row only. The
    /// snapshot's identifiers must be unique (a ``PlayQueue``'s are); a play order that is not a
    /// permutation of the entries is saved as the order added, which is how the player restores it.
    @discardableResult
    func write(_ snapshot: PlayerSnapshot) throws -> Int {
        if let stored, stored == snapshot { return 0 }
        var snapshot = snapshot
        if stored.map({ $0.playOrder != snapshot.playOrder }) ?? true,
            !Self.isPermutation(snapshot.playOrder, of: snapshot.addedOrder.count)
        {
            snapshot.playOrder = Array(snapshot.addedOrder.indices)
        }
        let rows: Int
        do {
            rows = try database.transaction { () throws -> Int in
                let version = try database.integer("PRAGMA data_version")
                let previous = version == dataVersion ? stored : nil
                var rows = 0
                if let previous {
                    if previous.addedOrder != snapshot.addedOrder || previous.playOrder != snapshot.playOrder {
                        rows = try writeQueueDifference(from: previous, to: snapshot)
                    }
                } else {
                    try prepareSchema()
                    rows = try writeWholeQueue(snapshot)
                }
                if previous.map({ !Self.samePlayer($0, snapshot) }) ?? true { try writePlayer(snapshot) }
                dataVersion = version
                return rows
            }
        } catch {
            // Whether the commit reached the disk is not known for sure: the next save writes everything.
            stored = nil
            throw error
        }
        stored = snapshot
        if rows >= Self.checkpointRows { try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        return rows
    }

    private func prepareSchema() throws(SQLiteError) {
        guard try database.integer("PRAGMA user_version") != Self.schemaVersion else { return }
        try database.execute(
            """
            DROP TABLE IF EXISTS queue; DROP TABLE IF EXISTS player; DROP TABLE IF EXISTS settings;
            -- url: NULL for an entry of the library. The keys order the entries: added_key in the
            -- order added, play_key in play order.
            CREATE TABLE queue (identifier TEXT PRIMARY KEY NOT NULL, url TEXT, added_key INTEGER NOT NULL,
                play_key INTEGER NOT NULL) WITHOUT ROWID;
            -- One row. repeat_mode: off, one, all; shuffle_mode: off, items, collections;
            -- single_mode: off, on, oneshot; consume: 0 or 1.
            CREATE TABLE player (id INTEGER PRIMARY KEY CHECK (id = 1), current TEXT, position_ms INTEGER NOT NULL,
                volume REAL, rate REAL, repeat_mode TEXT NOT NULL, shuffle_mode TEXT NOT NULL,
                single_mode TEXT NOT NULL DEFAULT 'off', consume INTEGER NOT NULL DEFAULT 0);
            PRAGMA user_version = \(Self.schemaVersion);
            """)
    }

    private func writePlayer(_ snapshot: PlayerSnapshot) throws(SQLiteError) {
        if try !hasLaterModeColumns() {
            try database.execute(
                """
                ALTER TABLE player ADD COLUMN single_mode TEXT NOT NULL DEFAULT 'off';
                ALTER TABLE player ADD COLUMN consume INTEGER NOT NULL DEFAULT 0;
                """)
        }
        try database.run(
            """
            INSERT OR REPLACE INTO player (id, current, position_ms, volume, rate, repeat_mode, shuffle_mode,
                single_mode, consume)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            SQLiteValue(snapshot.currentIdentifier), .integer(snapshot.positionMilliseconds), .real(snapshot.volume),
            .real(snapshot.rate), .text(snapshot.repeatMode.rawValue), .text(snapshot.shuffleMode.rawValue),
            .text(snapshot.singleMode.rawValue), .integer(snapshot.consumes ? 1 : 0))
    }

    /// Whether `player` has the columns added within version 1 (single and consume).
    private func hasLaterModeColumns() throws(SQLiteError) -> Bool {
        try database.integer("SELECT count(*) FROM pragma_table_info('player') WHERE name = 'consume'") == 1
    }

    /// Replaces every row: a new queue, a reshuffle, or a first save. Keys are numbered afresh.
    private func writeWholeQueue(_ snapshot: PlayerSnapshot) throws(SQLiteError) -> Int {
        try database.run("DELETE FROM queue")
        var playKeys = [Int64](repeating: 0, count: snapshot.addedOrder.count)
        for (position, index) in snapshot.playOrder.enumerated() { playKeys[index] = Int64(position) * Self.keySpacing }
        // In about the table's order (SQLite compares the bytes; Swift the characters, which
        // agree but for text not in its canonical form), so the table's pages fill one after
        // another rather than all at once through a small page cache.
        let rows = snapshot.addedOrder.indices.sorted {
            snapshot.addedOrder[$0].identifier < snapshot.addedOrder[$1].identifier
        }
        for index in rows {
            let entry = snapshot.addedOrder[index]
            try database.run(
                "INSERT INTO queue (identifier, url, added_key, play_key) VALUES (?, ?, ?, ?)",
                .text(entry.identifier), SQLiteValue(entry.url?.absoluteString),
                .integer(Int64(index) * Self.keySpacing), .integer(playKeys[index]))
        }
        return snapshot.addedOrder.count
    }

    /// Writes what changed between two queues: rows of removed entries deleted, added ones
    /// inserted, and the keys (or URL) of the entries that moved updated. Returns the statements run.
    private func writeQueueDifference(from old: PlayerSnapshot, to new: PlayerSnapshot) throws -> Int {
        let added = Self.changedSpan(oldCount: old.addedOrder.count, newCount: new.addedOrder.count) {
            old.addedOrder[$0] == new.addedOrder[$1]
        }
        let play = Self.changedSpan(oldCount: old.playOrder.count, newCount: new.playOrder.count) {
            old.addedOrder[old.playOrder[$0]].identifier == new.addedOrder[new.playOrder[$1]].identifier
        }
        // Most of the queue changed (a new queue, a reshuffle, a short queue): writing it whole
        // costs no more than its difference, and is simpler.
        let changed = max(added.old.count, added.new.count, play.old.count, play.new.count)
        if changed * 2 > max(old.addedOrder.count, new.addedOrder.count) { return try writeWholeQueue(new) }

        // An entry that left or arrived is inside the changed span of the order added (the
        // entries before and after it are the same in both queues, and identifiers are unique).
        let oldEntries = Dictionary(
            old.addedOrder[added.old].map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        let newIdentifiers = Set(new.addedOrder[added.new].map(\.identifier))
        let removed = oldEntries.keys.filter { !newIdentifiers.contains($0) }
        let arrived = newIdentifiers.filter { oldEntries[$0] == nil }

        var storedKeys: [String: (added: Int64, play: Int64)] = [:]
        func storedKey(of identifier: String) throws(SQLiteError) -> (added: Int64, play: Int64)? {
            if arrived.contains(identifier) { return nil }
            if let keys = storedKeys[identifier] { return keys }
            var keys: (added: Int64, play: Int64)?
            try database.forEachRow(
                "SELECT added_key, play_key FROM queue WHERE identifier = ?", [.text(identifier)]
            ) { row throws(SQLiteError) in
                keys = (row.integer(0) ?? 0, row.integer(1) ?? 0)
            }
            storedKeys[identifier] = keys
            return keys
        }
        let addedKeys = try Self.plannedKeys(count: new.addedOrder.count, changed: added.new) {
            position throws(SQLiteError) in try storedKey(of: new.addedOrder[position].identifier)?.added
        }
        let playKeys = try Self.plannedKeys(count: new.playOrder.count, changed: play.new) {
            position throws(SQLiteError) in try storedKey(of: new.addedOrder[new.playOrder[position]].identifier)?.play
        }

        var statements = 0
        func run(_ sql: String, _ arguments: SQLiteValue...) throws(SQLiteError) {
            try database.forEachRow(sql, arguments) { _ throws(SQLiteError) in }
            statements += 1
        }
        for identifier in removed { try run("DELETE FROM queue WHERE identifier = ?", .text(identifier)) }
        var arrivedPlayKeys: [String: Int64] = [:]
        for (position, key) in playKeys {
            let identifier = new.addedOrder[new.playOrder[position]].identifier
            if arrived.contains(identifier) {
                arrivedPlayKeys[identifier] = key
            } else {
                try run("UPDATE queue SET play_key = ? WHERE identifier = ?", .integer(key), .text(identifier))
            }
        }
        for (position, key) in addedKeys {
            let entry = new.addedOrder[position]
            if let playKey = arrivedPlayKeys[entry.identifier] {
                try run(
                    "INSERT INTO queue (identifier, url, added_key, play_key) VALUES (?, ?, ?, ?)",
                    .text(entry.identifier), SQLiteValue(entry.url?.absoluteString), .integer(key), .integer(playKey))
            } else {
                try run("UPDATE queue SET added_key = ? WHERE identifier = ?", .integer(key), .text(entry.identifier))
            }
        }
        // The same entry under a new URL (an entry described anew) keeps its place.
        for entry in new.addedOrder[added.new] {
            guard let before = oldEntries[entry.identifier], before.url != entry.url else { continue }
            try run(
                "UPDATE queue SET url = ? WHERE identifier = ?", SQLiteValue(entry.url?.absoluteString),
                .text(entry.identifier))
        }
        return statements
    }

    // MARK: Order keys

    /// Where two sequences differ: the positions past their common beginning and before their
    /// common end, in each. `same(i, j)` compares the old sequence's `i` with the new one's `j`.
    static func changedSpan(oldCount: Int, newCount: Int, same: (Int, Int) -> Bool)
        -> (old: Range<Int>, new: Range<Int>)
    {
        var prefix = 0
        while prefix < oldCount, prefix < newCount, same(prefix, prefix) { prefix += 1 }
        var suffix = 0
        let shorter = min(oldCount, newCount) - prefix
        while suffix < shorter, same(oldCount - 1 - suffix, newCount - 1 - suffix) { suffix += 1 }
        return (prefix..<(oldCount - suffix), prefix..<(newCount - suffix))
    }

    /// The keys to write for an order of `count` entries whose entries at `changed` are new or
    /// moved: the positions given a key, with their keys.
    ///
    /// `storedKey(position)` is the key stored for the entry now at `position`, nil for a new
    /// entry; outside `changed` every entry has one, in increasing order. Inside it, an entry
    /// keeps its key when that still follows the last key kept (so entries that did not move
    /// keep theirs); the others take keys spread between their neighbours', or, when the
    /// neighbours leave no room, a window around them is spread anew, doubled until its keys
    /// can be at least ``respreadSpacing`` apart.
    static func plannedKeys(
        count: Int, changed: Range<Int>, storedKey: (Int) throws(SQLiteError) -> Int64?
    ) throws(SQLiteError) -> [Int: Int64] {
        var kept: [Int: Int64] = [:]
        let upper = changed.upperBound < count ? try storedKey(changed.upperBound) : nil
        var last = changed.lowerBound > 0 ? try storedKey(changed.lowerBound - 1) : nil
        for position in changed {
            guard let key = try storedKey(position), last.map({ key > $0 }) ?? true, upper.map({ key < $0 }) ?? true
            else { continue }
            kept[position] = key
            last = key
        }
        var planned: [Int: Int64] = [:]
        /// The key the entry at `position` has so far; nil for one still to be given a key.
        func key(at position: Int) throws(SQLiteError) -> Int64? {
            if let key = planned[position] { return key }
            return changed.contains(position) ? kept[position] : try storedKey(position)
        }
        var start = changed.lowerBound
        while start < changed.upperBound {
            guard kept[start] == nil, planned[start] == nil else {
                start += 1
                continue
            }
            var end = start + 1
            while end < changed.upperBound, kept[end] == nil { end += 1 }
            // The run start..<end needs keys: between its neighbours, or in a wider window.
            var below = start - 1
            var above = end
            var widening = 1
            var spacing: Int64 = 1
            while true {
                // A bound still to be given a key (a later run) joins the window.
                if above < count, try key(at: above) == nil {
                    above += 1
                    continue
                }
                let lowKey = below >= 0 ? try key(at: below) : nil
                let highKey = above < count ? try key(at: above) : nil
                if let keys = Self.keys(count: above - below - 1, above: lowKey, below: highKey, spacing: spacing) {
                    for (offset, key) in keys.enumerated() { planned[below + 1 + offset] = key }
                    break
                }
                below = max(below - widening, -1)
                above = min(above + widening, count)
                widening *= 2
                spacing = respreadSpacing
            }
            start = end
        }
        return planned
    }

    /// `count` increasing keys between `low` and `high` (nil: no bound on that side), at least
    /// `spacing` apart and from the bounds; nil when they do not fit.
    static func keys(count: Int, above low: Int64?, below high: Int64?, spacing: Int64) -> [Int64]? {
        guard count > 0 else { return [] }
        let steps = Int64(count)
        switch (low, high) {
        case (nil, nil):
            return (0..<steps).map { $0 * keySpacing }
        case (let low?, nil):
            let (span, overflow) = keySpacing.multipliedReportingOverflow(by: steps)
            guard !overflow, low <= Int64.max - span else { return nil }
            return (1...steps).map { low + $0 * keySpacing }
        case (nil, let high?):
            let (span, overflow) = keySpacing.multipliedReportingOverflow(by: steps)
            guard !overflow, high >= Int64.min + span else { return nil }
            return (0..<steps).map { high - (steps - $0) * keySpacing }
        case (let low?, let high?):
            let (gap, overflow) = high.subtractingReportingOverflow(low)
            guard !overflow, gap / (steps + 1) >= spacing else { return nil }
            let step = gap / (steps + 1)
            return (1...steps).map { low + $0 * step }
        }
    }

    /// Whether `order` holds each of `0..<count` once.
    private static func isPermutation(_ order: [Int], of count: Int) -> Bool {
        guard order.count == count else { return false }
        var seen = [Bool](repeating: false, count: count)
        for index in order {
            guard index >= 0, index < count, !seen[index] else { return false }
            seen[index] = true
        }
        return true
    }

    /// Whether two states agree on everything but the queue.
    private static func samePlayer(_ a: PlayerSnapshot, _ b: PlayerSnapshot) -> Bool {
        a.currentIdentifier == b.currentIdentifier && a.positionMilliseconds == b.positionMilliseconds
            && a.volume.bitPattern == b.volume.bitPattern && a.rate.bitPattern == b.rate.bitPattern
            && a.repeatMode == b.repeatMode && a.shuffleMode == b.shuffleMode && a.singleMode == b.singleMode
            && a.consumes == b.consumes
    }
}
