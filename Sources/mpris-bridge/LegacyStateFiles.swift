import Playback

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// The files earlier versions kept the state in, read once to move what they hold into
/// `state.sqlite`, then removed.
///
/// `state.json` is the whole state with a save's sequence number; `resume.json` the current
/// entry and position alone, which counts when its sequence number is higher than the state's.
enum LegacyStateFiles {
    /// The file names, in the state folder.
    static let names = ["state.json", "resume.json"]

    /// Whether `folder` holds any of the files.
    static func exist(in folder: String) -> Bool {
        names.contains { FileManager.default.fileExists(atPath: folder + "/" + $0) }
    }

    /// The state the files in `folder` hold, with the resume point applied when it is newer; nil
    /// when there is no `state.json`. Throws when it cannot be read. Identifiers are made unique
    /// (the first entry of a name kept) and a play order that is not a permutation of the entries
    /// becomes the order added, as the player would restore it.
    static func read(in folder: String) throws -> PlayerSnapshot? {
        let path = folder + "/state.json"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let saved = try JSONDecoder().decode(SavedState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        var snapshot = saved.snapshot
        if let data = try? Data(contentsOf: URL(fileURLWithPath: folder + "/resume.json")),
            let resume = try? JSONDecoder().decode(ResumePoint.self, from: data), resume.sequence > saved.sequence
        {
            snapshot.currentIdentifier = resume.currentIdentifier
            snapshot.positionMilliseconds = resume.positionMilliseconds
        }
        return uniqued(snapshot)
    }

    /// Removes the files from `folder`, with a write's leftovers.
    static func remove(in folder: String) {
        for name in names {
            unlink(folder + "/" + name)
            unlink(folder + "/" + name + ".new")
        }
    }

    private static func uniqued(_ snapshot: PlayerSnapshot) -> PlayerSnapshot {
        var snapshot = snapshot
        var seen = Set<String>()
        var newIndex = [Int?](repeating: nil, count: snapshot.addedOrder.count)
        var entries: [PlayerSnapshot.Entry] = []
        for (index, entry) in snapshot.addedOrder.enumerated() where seen.insert(entry.identifier).inserted {
            newIndex[index] = entries.count
            entries.append(entry)
        }
        let playOrder = snapshot.playOrder.compactMap { $0 >= 0 && $0 < newIndex.count ? newIndex[$0] : nil }
        snapshot.playOrder = Set(playOrder).count == entries.count && playOrder.count == entries.count
            ? playOrder : Array(entries.indices)
        snapshot.addedOrder = entries
        return snapshot
    }
}

/// `state.json`: a ``PlayerSnapshot``'s fields and the save's sequence number.
private struct SavedState: Decodable {
    var snapshot: PlayerSnapshot
    var sequence: Int

    private enum Keys: String, CodingKey { case saveSequence }

    init(from decoder: any Decoder) throws {
        snapshot = try PlayerSnapshot(from: decoder)
        // Files from before the resume point have no number: older than any resume point.
        sequence = try decoder.container(keyedBy: Keys.self).decodeIfPresent(Int.self, forKey: .saveSequence) ?? 0
    }
}

/// `resume.json`: where playback was, newer than `state.json` when its sequence number is higher.
private struct ResumePoint: Decodable {
    var sequence: Int
    var currentIdentifier: String?
    var positionMilliseconds: Int64
}
