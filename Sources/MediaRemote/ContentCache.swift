#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The decisions of ``PlayableContentManager``, as a value: its copy of the data source's tree,
/// what remotes are told about it (context, now-playing marks, actions), the containers being
/// loaded, and the fingerprints of the containers it forgot.
///
/// It never calls the data source, a delegate or an observer: it says what to read
/// (``Lookup``), takes what was read (``merge(_:into:complete:)``), and answers from what it
/// holds. The manager keeps it behind one lock and calls it one step at a time; a node id
/// is meaningful only inside the step that found it, or checked with ``ContentTree/exists(_:)``
/// in a later one (ids are generation-tagged, see ``ContentTree``).
struct ContentCache {
    var tree = ContentTree()
    var context = PlayableContentManagerContext()
    var customActions: [ContentAction] = []
    var nowPlaying: [String] = []
    var nowPlayingSet: Set<String> = []
    /// Containers whose loading has started and not ended: never forgotten meanwhile.
    var loading: Set<ContentTree.NodeID> = []
    /// Containers a call is reading its way through (see ``pin(_:)``), with how many calls are.
    var pins: [ContentTree.NodeID: Int] = [:]
    /// Containers forgotten to keep the copy bounded, by path, with the fingerprint of the
    /// rows they had: a batch of updates reads them again to tell whether they changed.
    var forgotten: [[String]: Int] = [:]
    /// The copy's size after the last pass that could forget nothing more: no pass runs
    /// again until the copy grows past it.
    var floorAfterForgetting = 0

    /// The most rows the copy keeps (see ``PlayableContentManager/maximumCachedRows``).
    let maximumRows: Int

    init(maximumRows: Int) {
        self.maximumRows = maximumRows
    }

    // MARK: Finding nodes

    /// What a lookup needs next.
    enum Lookup: Equatable {
        /// The node is in the copy.
        case found(ContentTree.NodeID)
        /// This container on the way has not been read: read it, then look again.
        case read(ContentTree.NodeID)
        /// This container on the way is served page by page: its child container `row` is
        /// found through the data source and copied as a remote opens it, then look again.
        case open(ContentTree.NodeID, Row)
        /// The row asked for is row `index` of this container served page by page: it is read
        /// from the data source, never copied.
        case pagedRow(ContentTree.NodeID, index: Int)
        /// Nothing is there, or it lies deeper than the content limits allow.
        case missing
    }

    /// A row of a paged container, by the key of its item or by its place in the data source.
    enum Row: Equatable {
        case key(String)
        case index(Int)
    }

    /// Looks up the node at `path` in the copy, marking it used when found.
    mutating func lookUp(_ path: [String]) -> Lookup {
        let (found, deepest, remaining) = tree.resolve(path)
        if let found {
            tree.touch(found)
            return .found(found)
        }
        if tree[deepest].pagedCount != nil { return .open(deepest, .key(path[tree[deepest].depth])) }
        let isContainer = deepest == ContentTree.rootID || tree[deepest].item?.isContainer == true
        guard remaining > 0, isContainer, isWithinDepth(deepest) else { return .missing }
        return .read(deepest)
    }

    /// Looks up the node the data source has at `indexPath` in the copy, marking it used when
    /// found.
    mutating func lookUp(_ indexPath: IndexPath) -> Lookup {
        var id = ContentTree.rootID
        for (position, index) in indexPath.enumerated() {
            let node = tree[id]
            guard isWithinDepth(id) else { return .missing }
            guard node.children != nil else { return .read(id) }
            if node.pagedCount != nil {
                guard position < indexPath.count - 1 else { return .pagedRow(id, index: index) }
                // A container below a paged one, on the way: copied as a remote opens it.
                guard let opened = node.childByKey.values.first(where: { tree[$0].sourceIndex == index }) else {
                    return .open(id, .index(index))
                }
                id = opened
                continue
            }
            guard let child = tree.child(of: id, atSourceIndex: index) else { return .missing }
            id = child
        }
        tree.touch(id)
        return .found(id)
    }

    /// Whether the children of `id` may be shown under the content limits (true for a node
    /// no longer in the copy: the caller finds out otherwise).
    func isWithinDepth(_ id: ContentTree.NodeID) -> Bool {
        guard let limit = context.depthLimit, tree.exists(id) else { return true }
        return tree[id].depth < limit
    }

    /// Whether `id` is the root or a container.
    func isContainer(_ id: ContentTree.NodeID) -> Bool {
        id == ContentTree.rootID || (tree.exists(id) && tree[id].item?.isContainer == true)
    }

    /// Marks `id` as being read through by a call, until ``unpin(_:)``: it and the containers
    /// above it are not forgotten meanwhile, so a walk down a deep path while others browse
    /// does not have its way forgotten under it again and again.
    mutating func pin(_ id: ContentTree.NodeID) { pins[id, default: 0] += 1 }

    mutating func unpin(_ id: ContentTree.NodeID) {
        guard let count = pins[id] else { return }
        pins[id] = count > 1 ? count - 1 : nil
    }

    // MARK: Taking what was read

    /// Merges what the data source said about container `id` (complete if `complete`), when
    /// `id` is still in the copy and (with `expectedIndexPath`) still at that place in the data
    /// source. Returns the paths of the containers whose rows changed, and the child containers
    /// read before, which a reload visits next.
    mutating func merge(
        _ read: ContentTree.ContainerRead, into id: ContentTree.NodeID, complete: Bool,
        expectedIndexPath: IndexPath? = nil
    ) -> (changed: [[String]], readChildren: [ContentTree.NodeID]) {
        guard tree.exists(id), expectedIndexPath == nil || tree.indexPath(of: id) == expectedIndexPath else { return ([], []) }
        rememberOpenedChildren(of: id)
        var ids: Set<ContentTree.NodeID> = []
        tree.merge(read, into: id, complete: complete || tree[id].isComplete, changed: &ids)
        let readChildren = (tree[id].children ?? []).filter { tree[$0].children != nil }
        return (ids.map { tree.path(of: $0) }, readChildren)
    }

    /// Takes a read of container `id` made while it was still loading, unless loading
    /// completed meanwhile.
    mutating func mergeSnapshot(_ read: ContentTree.ContainerRead, into id: ContentTree.NodeID) {
        guard tree.exists(id), !tree[id].isComplete else { return }
        var ignored: Set<ContentTree.NodeID> = []
        tree.merge(read, into: id, complete: false, changed: &ignored)
    }

    /// Before a paged container is read again (its opened children go, as their places may have
    /// moved): keeps the fingerprints of what was read below them, so a batch of updates still
    /// tells remotes which of them changed.
    private mutating func rememberOpenedChildren(of id: ContentTree.NodeID) {
        guard tree[id].pagedCount != nil else { return }
        for child in tree.childIDs(of: id) {
            for container in tree.readContainers(from: child) {
                forgotten[tree.path(of: container)] = forgottenFingerprint(of: container)
            }
        }
    }

    /// Copies the child container `item` of the paged container `parent`, read at `indexPath`,
    /// when `parent` is still paged and at that place; returns its id.
    mutating func addOpenedChild(_ item: ContentItem, of parent: ContentTree.NodeID, at indexPath: IndexPath)
        -> ContentTree.NodeID?
    {
        // No copy of the parent's node is held here: it would make adding the key copy its dictionary.
        guard tree.exists(parent), tree[parent].pagedCount != nil, let index = indexPath.last,
            tree.indexPath(of: parent).appending(index) == indexPath
        else { return nil }
        return tree.addOpenedChild(of: parent, key: item.identifier, item: item, sourceIndex: index)
    }

    /// Notes that a listing of `id` was answered before loading ended: remotes are owed an
    /// `Updated` when it does.
    mutating func noteAnsweredWhileLoading(_ id: ContentTree.NodeID) {
        if tree.exists(id) { tree[id].owesUpdate = true }
    }

    // MARK: What is playing

    /// Sets the identifiers of what is playing. Returns the identifiers marked or unmarked,
    /// the paths of the copied rows among them, and the paged containers (id and index path)
    /// whose rows the data source must be asked about.
    mutating func setNowPlaying(_ identifiers: [String])
        -> (flipped: Set<String>, paths: [[String]], paged: [(id: ContentTree.NodeID, indexPath: IndexPath)])
    {
        let new = Set(identifiers)
        let flipped = nowPlayingSet.symmetricDifference(new)
        nowPlaying = identifiers
        nowPlayingSet = new
        var paths: [[String]] = []
        var paged: [(id: ContentTree.NodeID, indexPath: IndexPath)] = []
        guard !flipped.isEmpty else { return (flipped, paths, paged) }
        for id in tree.allIDs {
            if let identifier = tree[id].item?.identifier, flipped.contains(identifier) { paths.append(tree.path(of: id)) }
            if tree[id].pagedCount != nil { paged.append((id, tree.indexPath(of: id))) }
        }
        return (flipped, paths, paged)
    }

    /// The identifiers of the containers (`""` for the root) that hold, among the rows read, a
    /// row whose identifier is one of `identifiers`.
    func containerIdentifiers(holding identifiers: Set<String>) -> Set<String> {
        var containers: Set<String> = []
        guard !identifiers.isEmpty else { return containers }
        for id in tree.allIDs {
            guard let identifier = tree[id].item?.identifier, identifiers.contains(identifier), let parent = tree[id].parent
            else { continue }
            containers.insert(tree[parent].item?.identifier ?? "")
        }
        return containers
    }

    /// The item with `identifier` among the rows read, if any.
    func copiedItem(withIdentifier identifier: String) -> ContentItem? {
        tree.allIDs.lazy.compactMap { tree[$0].item }.first { $0.identifier == identifier }
    }
}
