import Foundation
import Logging
import MusicLibrary
import Playback
import ProcessTestSupport
import Testing

@testable import mpris_bridge

/// `state.sqlite` on its own: what is saved reads back the same through another connection,
/// however the queue was edited, and an edit writes a few pages, not the queue.
@Suite(.timeLimit(.minutes(2))) struct StateDatabaseTests {
    /// A queue of `count` library entries (no URL) with every tenth a stream, in the order added.
    static func snapshot(count: Int, prefix: String = "Artist/Album/") -> PlayerSnapshot {
        let entries = (0..<count).map { index in
            PlayerSnapshot.Entry(
                identifier: "\(prefix)\(index).flac",
                url: index % 10 == 9 ? URL(string: "http://radio.example/\(index)?q=a%20b") : nil)
        }
        return PlayerSnapshot(
            addedOrder: entries, playOrder: Array(entries.indices), currentIdentifier: entries.first?.identifier,
            positionMilliseconds: 0, volume: 1, rate: 1, repeatMode: .off, shuffleMode: .off)
    }

    /// What a fresh connection reads from `path`.
    static func readBack(_ path: String) throws -> PlayerSnapshot? {
        try StateDatabase(path: path).read()
    }

    /// The size of the database's write-ahead log: what the saves since the last checkpoint wrote.
    static func logSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
    }

    @Test func whatIsSavedReadsBackThroughAnotherConnection() throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        let database = try StateDatabase(path: path)
        #expect(try database.read() == nil, "a new database holds no state")
        var snapshot = Self.snapshot(count: 1_000)
        var generator = SplitMix64(seed: 7)
        snapshot.playOrder.shuffle(using: &generator)
        snapshot.currentIdentifier = snapshot.addedOrder[500].identifier
        snapshot.positionMilliseconds = 123_456
        snapshot.volume = 0.25
        snapshot.rate = 1.5
        snapshot.repeatMode = .all
        snapshot.shuffleMode = .items
        try database.write(snapshot)
        #expect(try Self.readBack(path) == snapshot)
        // What someone listens to is theirs alone, the log too.
        for file in [path, path + "-wal", path + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file): \(String(mode ?? 0, radix: 8))")
        }
        // Non-finite numbers are stored as NULL and read as the player's defaults, not refused.
        snapshot.volume = .nan
        try database.write(snapshot)
        #expect(try Self.readBack(path)?.volume == 1)
    }

    /// Edits as the player makes them (insert anywhere in play order, appended in the order
    /// added; removals; shuffle on and off; a URL changed; the place moved) and entries moved in
    /// play order, each saved as a difference and read back equal by a fresh connection.
    @Test func everyKindOfEditReadsBackAsSaved() throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        let database = try StateDatabase(path: path)
        var snapshot = Self.snapshot(count: 400)
        try database.write(snapshot)
        var generator = SplitMix64(seed: 42)
        var next = 400
        var incremental = 0
        for step in 0..<300 {
            let count = snapshot.addedOrder.count
            switch Int.random(in: 0..<20, using: &generator) {
            case 0..<8:
                // A few entries at once (a coalesced burst), each after a random one or first.
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let position = Int.random(in: 0...snapshot.playOrder.count, using: &generator)
                    let url = next % 3 == 0 ? URL(string: "file:///x/\(next).ogg") : nil
                    snapshot.addedOrder.append(.init(identifier: "new/\(next)", url: url))
                    snapshot.playOrder.insert(snapshot.addedOrder.count - 1, at: position)
                    next += 1
                }
            case 8..<15 where count > 0:
                for _ in 0..<Int.random(in: 1...2, using: &generator) where !snapshot.addedOrder.isEmpty {
                    let removed = Int.random(in: 0..<snapshot.addedOrder.count, using: &generator)
                    snapshot.addedOrder.remove(at: removed)
                    snapshot.playOrder = snapshot.playOrder.filter { $0 != removed }.map { $0 > removed ? $0 - 1 : $0 }
                }
            case 15:
                snapshot.playOrder.shuffle(using: &generator)
            case 16:
                snapshot.playOrder = Array(snapshot.addedOrder.indices)
            case 17 where count > 0:
                let index = Int.random(in: 0..<count, using: &generator)
                snapshot.addedOrder[index].url = URL(string: "http://other.example/\(step)")
            case 18 where count > 1:
                // A few entries moved a little way in play order (the player does not, but a store must not care).
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let from = Int.random(in: 0..<count, using: &generator)
                    let moved = snapshot.playOrder.remove(at: from)
                    let to = min(max(from + Int.random(in: -20...20, using: &generator), 0), count - 1)
                    snapshot.playOrder.insert(moved, at: to)
                }
            default:
                snapshot.currentIdentifier = snapshot.addedOrder.randomElement(using: &generator)?.identifier
                snapshot.positionMilliseconds = Int64(step * 1000)
            }
            let rows = try database.write(snapshot)
            if rows < snapshot.addedOrder.count / 2 { incremental += 1 }
            let read = try #require(try Self.readBack(path))
            #expect(read == snapshot, "after step \(step)")
            if read != snapshot { return }
        }
        #expect(incremental > 200, "most edits are written as differences: \(incremental) of 300")
    }

    /// Whatever keys the changed entries had, the planned ones put the whole order in order, and
    /// the entries outside the change keep theirs unless a window had to be spread anew.
    @Test func plannedKeysPutTheOrderInOrder() throws {
        var generator = SplitMix64(seed: 3)
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...40, using: &generator)
            let lower = Int.random(in: 0...count, using: &generator)
            let changed = lower..<Int.random(in: lower...count, using: &generator)
            // Outside the change: increasing keys, some packed tight. Inside: anything, or new.
            var stored: [Int64?] = []
            var key = Int64.random(in: -1_000...1_000, using: &generator)
            for position in 0..<count {
                key += Bool.random(using: &generator) ? 1 : Int64.random(in: 1...(1 << 40), using: &generator)
                stored.append(
                    changed.contains(position)
                        ? (Bool.random(using: &generator) ? nil : Int64.random(in: -(1 << 50)...(1 << 50), using: &generator))
                        : key)
            }
            let planned = try StateDatabase.plannedKeys(count: count, changed: changed) { stored[$0] }
            let keys = (0..<count).map { planned[$0] ?? stored[$0] }
            #expect(changed.allSatisfy { keys[$0] != nil }, "every changed entry has a key: \(stored) \(changed)")
            #expect(zip(keys, keys.dropFirst()).allSatisfy { ($0 ?? .min) < ($1 ?? .min) }, "\(stored) \(changed) → \(keys)")
        }
    }

    /// "Play next", again and again: each entry goes between the current one and the one added
    /// before, where the keys run out of room after 32; a window around them is spread anew,
    /// not the whole order.
    @Test func insertionsAtOnePlaceSpreadAWindowNotTheOrder() throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        let database = try StateDatabase(path: path)
        var snapshot = Self.snapshot(count: 5_000)
        try database.write(snapshot)
        var most = 0
        var total = 0
        for index in 0..<500 {
            snapshot.addedOrder.append(.init(identifier: "next/\(index)", url: nil))
            snapshot.playOrder.insert(snapshot.addedOrder.count - 1, at: 2_500)
            let rows = try database.write(snapshot)
            most = max(most, rows)
            total += rows
        }
        #expect(try Self.readBack(path) == snapshot)
        print("500 insertions at one place in 5,000 entries: \(total) rows written, at most \(most) at once")
        #expect(most < 1_000, "at most \(most) rows for one insertion")
        #expect(total < 10_000, "\(total) rows for 500 insertions")
    }

    /// The figure the daemon promises: on a queue of 50,000 entries, one insertion, one removal
    /// and one change of track each add at most 64 KB to the log (a few 4 KB pages), where
    /// writing the queue whole is megabytes.
    @Test func anEditOfALongQueueWritesAFewPages() throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        let database = try StateDatabase(path: path)
        var snapshot = Self.snapshot(count: 50_000)
        try database.write(snapshot)
        let whole = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        // A save that large is checkpointed at once: the log starts empty.
        #expect(Self.logSize(path) == 0)

        snapshot.addedOrder.append(.init(identifier: "Other/Added.ogg", url: nil))
        snapshot.playOrder.insert(snapshot.addedOrder.count - 1, at: 25_000)
        try database.write(snapshot)
        let insertion = Self.logSize(path)

        snapshot.addedOrder.remove(at: 10_000)
        snapshot.playOrder = snapshot.playOrder.filter { $0 != 10_000 }.map { $0 > 10_000 ? $0 - 1 : $0 }
        try database.write(snapshot)
        let removal = Self.logSize(path) - insertion

        snapshot.currentIdentifier = snapshot.addedOrder[1].identifier
        snapshot.positionMilliseconds = 1_000
        try database.write(snapshot)
        let trackChange = Self.logSize(path) - insertion - removal
        print(
            "50,000 entries: database \(whole / 1024) KB; insertion \(insertion) B, removal \(removal) B,"
                + " track change \(trackChange) B")
        #expect(whole > 1_000_000)
        #expect(insertion > 0 && insertion <= 64 * 1024)
        #expect(removal > 0 && removal <= 64 * 1024)
        #expect(trackChange > 0 && trackChange <= 16 * 1024)
        #expect(try Self.readBack(path) == snapshot)
    }

    /// Another process writing the same file (a second daemon on the same state folder): the
    /// next save notices and writes everything, rather than a difference from what it no longer holds.
    @Test func aSaveAfterAnotherWritersSaveWritesEverything() throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        let first = try StateDatabase(path: path)
        let second = try StateDatabase(path: path)
        var mine = Self.snapshot(count: 100)
        try first.write(mine)
        try second.write(Self.snapshot(count: 50, prefix: "Other/"))
        mine.currentIdentifier = mine.addedOrder[3].identifier
        try first.write(mine)
        #expect(try Self.readBack(path) == mine)
    }

    /// Single and consume read back as saved; a file of version 1 written before their columns
    /// existed reads them as off, keeps its queue, and gains the columns at its next save.
    @Test func singleAndConsumeAreKeptAndAnOlderFileGainsThem() throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        let older = try SQLiteDatabase(path: path)
        try older.execute(
            """
            CREATE TABLE queue (identifier TEXT PRIMARY KEY NOT NULL, url TEXT, added_key INTEGER NOT NULL,
                play_key INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE player (id INTEGER PRIMARY KEY CHECK (id = 1), current TEXT, position_ms INTEGER NOT NULL,
                volume REAL, rate REAL, repeat_mode TEXT NOT NULL, shuffle_mode TEXT NOT NULL);
            INSERT INTO queue VALUES ('a', NULL, 0, 1), ('b', NULL, 1, 0);
            INSERT INTO player VALUES (1, 'b', 1500, 0.5, 1, 'all', 'items');
            PRAGMA user_version = 1;
            """)
        let database = try StateDatabase(path: path)
        var snapshot = try #require(try database.read())
        #expect(snapshot.addedOrder.map(\.identifier) == ["a", "b"])
        #expect(snapshot.playOrder == [1, 0])
        #expect(snapshot.singleMode == .off && !snapshot.consumes && snapshot.repeatMode == .all)

        snapshot.singleMode = .oneshot
        snapshot.consumes = true
        try database.write(snapshot)
        #expect(try Self.readBack(path) == snapshot)
        snapshot.singleMode = .on
        try database.write(snapshot)
        #expect(try Self.readBack(path)?.singleMode == .on)
    }

    /// The files of earlier versions move into the database at the first load: the resume point
    /// counts when its sequence number is newer, duplicates are dropped, and the files go.
    @Test func earlierVersionsFilesMoveIntoTheDatabase() async throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let state = """
            {"addedOrder":[{"identifier":"a"},{"identifier":"b","url":"http://radio.example/b"},{"identifier":"c"},
            {"identifier":"a"}],"playOrder":[2,0,1,3],"currentIdentifier":"b","positionMilliseconds":1000,
            "volume":0.5,"rate":1.25,"repeatMode":"all","shuffleMode":"items","saveSequence":4}
            """
        try state.write(toFile: folder.path + "/state.json", atomically: true, encoding: .utf8)
        try #"{"sequence":5,"currentIdentifier":"c","positionMilliseconds":4500}"#
            .write(toFile: folder.path + "/resume.json", atomically: true, encoding: .utf8)
        let store = StateStore(directory: folder.path, logger: Logger(label: "test"))
        let loaded = try #require(store.load())
        let expected = PlayerSnapshot(
            addedOrder: [
                .init(identifier: "a", url: nil), .init(identifier: "b", url: URL(string: "http://radio.example/b")),
                .init(identifier: "c", url: nil),
            ],
            playOrder: [2, 0, 1], currentIdentifier: "c", positionMilliseconds: 4500, volume: 0.5, rate: 1.25,
            repeatMode: .all, shuffleMode: .items)
        #expect(loaded == expected)
        await store.close(with: loaded)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/state.json"))
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/resume.json"))
        #expect(try Self.readBack(folder.path + "/state.sqlite") == expected)
    }

    /// A damaged database is ignored (the daemon starts as if new) and replaced by the next save.
    @Test func aDamagedDatabaseIsIgnoredAndReplaced() async throws {
        let folder = try TemporaryDirectory(prefix: "state")
        defer { folder.remove() }
        let path = folder.path + "/state.sqlite"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(filePath: path))
        let store = StateStore(directory: folder.path, logger: Logger(label: "test"))
        #expect(store.load() == nil)
        let snapshot = Self.snapshot(count: 20)
        await store.close(with: snapshot)
        #expect(try Self.readBack(path) == snapshot)
    }
}
