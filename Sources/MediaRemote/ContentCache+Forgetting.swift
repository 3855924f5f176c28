#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Keeping the copy bounded: the containers remotes reached least recently are forgotten, each
/// leaving a fingerprint of its rows, which a batch of updates compares with the data source.
extension ContentCache {
    /// Forgets the least recently reached containers while the copy holds more than
    /// ``maximumRows`` rows, down to three quarters of it, keeping each one's fingerprint.
    ///
    /// Spared: the root, what the last lookup reached, a container still loading, one a call
    /// is reading its way through (pinned) and those above it, one too large to read again on
    /// every return to it, and a paged container of containers (it holds nothing but the ones
    /// remotes opened). A paged container of items goes with what it is: one node.
    mutating func forgetLeastRecentlyUsed() {
        let limit = maximumRows
        guard tree.liveCount - 1 > limit, tree.liveCount > floorAfterForgetting else { return }
        let target = limit - limit / 4
        let latest = tree.latestUse
        var spared: Set<ContentTree.NodeID> = [ContentTree.rootID]
        for pinned in pins.keys {
            var current: ContentTree.NodeID? = pinned
            while let id = current, tree.exists(id), spared.insert(id).inserted { current = tree[id].parent }
        }
        let candidates = tree.readContainers().filter { id in
            !spared.contains(id) && tree[id].lastUse != latest && tree[id].isComplete && !tree[id].owesUpdate
                && !loading.contains(id) && (tree[id].children?.count ?? 0) <= limit / 2
                && (tree[id].pagedCount == nil || !tree[id].pagesContainers)
        }.sorted { tree[$0].lastUse < tree[$1].lastUse }
        for id in candidates {
            guard tree.liveCount - 1 > target else { break }
            // Gone with a container forgotten before it in this pass.
            guard tree.exists(id), tree[id].children != nil else { continue }
            for container in tree.readContainers(from: id) {
                forgotten[tree.path(of: container)] = forgottenFingerprint(of: container)
            }
            tree.remove(childrenOf: id)
            // A container opened below a paged one goes whole: it is not in its parent's list.
            tree.removeOpenedChild(id)
        }
        floorAfterForgetting = tree.liveCount - 1 > target ? tree.liveCount : 0
    }

    /// What stands for a paged container's rows, which the copy never held: equal to no read's
    /// fingerprint, so a batch of updates that names the container always announces it.
    static let pagedFingerprint = Int.min

    /// The fingerprint kept for container `id` as it is forgotten.
    func forgottenFingerprint(of id: ContentTree.NodeID) -> Int {
        tree[id].pagedCount != nil ? Self.pagedFingerprint : tree.fingerprint(of: id)
    }

    /// Forgets everything read (the data source was replaced).
    mutating func forgetAll() {
        tree.remove(childrenOf: ContentTree.rootID)
        forgotten = [:]
    }

    /// The forgotten containers to check against the data source: all, or with `named` only
    /// those whose identifier it holds.
    func forgottenContainers(among named: Set<String>?) -> [[String]: Int] {
        guard let named else { return forgotten }
        // A key is the identifier, or the identifier, a NUL and a number for a repeated one.
        return forgotten.filter { path, _ in
            named.contains(String((path.last ?? "").split(separator: "\u{0}", omittingEmptySubsequences: false)[0]))
        }
    }

    /// Whether the container at `path` is in the copy again, read.
    func isCopied(_ path: [String]) -> Bool {
        tree.resolve(path).found.map { tree[$0].children != nil } ?? false
    }

    /// One step down the copy towards a forgotten container: from `current` (when still in the
    /// copy) to its child `key`. Tells whether `current` is read, whether it is paged, and the
    /// child with its index path when there is one.
    func step(from current: ContentTree.NodeID, to key: String)
        -> (isRead: Bool, isPaged: Bool, child: (id: ContentTree.NodeID, indexPath: IndexPath)?)
    {
        guard tree.exists(current), tree[current].children != nil else { return (false, false, nil) }
        let child = tree[current].childByKey[key].map { ($0, tree.indexPath(of: $0)) }
        return (true, tree[current].pagedCount != nil, child)
    }
}
