#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The manager's copy of the data source's tree: every container read so far,
/// with its children in the data source's order. Nodes are addressed by
/// their keys from the root (see ``PlayableContentManager``), so a remote's
/// path to a node stays valid across reloads while the identifiers do.
///
/// A plain value guarded by the manager's lock; it never calls the data source.
///
/// **Ids.** A node is named by a ``NodeID``: a slot and the generation the slot had when the
/// node was put there. A removed node's slot is given to a later node under a new generation,
/// so an id kept past the step that found it can never name another node: ``exists(_:)`` is
/// false for it, and ``node(_:)`` answers nil.
struct ContentTree {
    /// A node's name, valid while the node is in the tree (see the type's discussion).
    struct NodeID: Hashable, Sendable {
        fileprivate var slot: Int
        fileprivate var generation: UInt32
    }

    struct Node {
        /// `nil` for the root.
        var item: ContentItem?
        /// Unique among siblings: the identifier, with a suffix for a repeated one.
        var key: String
        var parent: NodeID?
        /// Where the data source has it among its siblings.
        var sourceIndex: Int
        var depth: Int
        /// Children in the data source's order; `nil` until the container is read.
        var children: [NodeID]?
        var childByKey: [String: NodeID] = [:]
        var informativeCount = 0
        /// Children that open as containers to a media server: containers and informative rows.
        var containerCount = 0
        var displaysProgress = false
        /// Read after the data source finished loading it (not a snapshot taken meanwhile).
        var isComplete = false
        /// A listing was answered from an incomplete read, so an `Updated` is owed when loading ends.
        var owesUpdate = false
        /// When a remote last reached this node or a node below it (``touch(_:)``).
        var lastUse: UInt64 = 0
        /// For a container served page by page from the data source (a large one whose children
        /// are all alike): how many children it has. None of them is listed in `children`
        /// (empty); the child containers a remote opened are in `childByKey` alone.
        var pagedCount: Int?
        /// For a paged container: whether its children are containers.
        var pagesContainers = false
    }

    /// What the data source said about one container's children.
    struct ContainerRead: Sendable {
        var items: [(sourceIndex: Int, item: ContentItem)]
        var displaysProgress: Bool
        /// Set, with no items, for a container served page by page: its number of children.
        var pagedCount: Int? = nil
        /// For a paged container: whether its children are containers.
        var pagesContainers = false
    }

    static let rootID = NodeID(slot: 0, generation: 0)
    /// The key of the row standing for children still loading.
    static let loadingKey = "\u{0}loading"

    /// A node's slot: the node (a placeholder while the slot is free), and the generation of the
    /// id that names it. The node is not optional so that the subscript reads and changes it in
    /// place: through an optional, every `self[id].field` copied the whole node (its item's
    /// strings, its children, its dictionary of keys), and changing one key of a paged
    /// container's dictionary copied the dictionary.
    private struct Slot {
        var node: Node
        var generation: UInt32
        var isFree = false
    }

    private static let freeNode = Node(item: nil, key: "", parent: nil, sourceIndex: 0, depth: 0)

    private var slots: [Slot] = [Slot(node: Node(item: nil, key: "", parent: nil, sourceIndex: 0, depth: 0), generation: 0)]
    private var freeSlots: [Int] = []
    /// Nodes in the tree: the root and every row read.
    private(set) var liveCount = 1
    private var useClock: UInt64 = 0
    /// The stamp of the last ``touch(_:)``: the nodes on the way to what was reached last.
    var latestUse: UInt64 { useClock }

    /// The node `id` names. Only for an id known to be in the tree in this step (found by a
    /// lookup or a walk of the tree in it); ``node(_:)`` checks.
    subscript(id: NodeID) -> Node {
        _read {
            precondition(exists(id), "a node id used after its node was removed")
            yield slots[id.slot].node
        }
        _modify {
            precondition(exists(id), "a node id used after its node was removed")
            yield &slots[id.slot].node
        }
    }

    /// The node `id` names, or nil when it was removed (its slot may hold another node now).
    func node(_ id: NodeID) -> Node? { exists(id) ? slots[id.slot].node : nil }

    func exists(_ id: NodeID) -> Bool {
        id.slot < slots.count && slots[id.slot].generation == id.generation && !slots[id.slot].isFree
    }

    /// The id of every node in the tree, in no particular order: its fields are read in place
    /// with the subscript (a pass over a copy of every node retained all each one holds).
    var allIDs: some Sequence<NodeID> {
        slots.indices.lazy.compactMap { slot in
            slots[slot].isFree ? nil : NodeID(slot: slot, generation: slots[slot].generation)
        }
    }

    /// The node at `path` (keys from the root), among what has been read.
    func resolve(_ path: some Collection<String>) -> (found: NodeID?, deepestRead: NodeID, remaining: Int) {
        var id = Self.rootID
        var remaining = path.count
        for key in path {
            guard self[id].children != nil else { return (nil, id, remaining) }
            guard let child = self[id].childByKey[key] else { return (nil, id, -1) }
            id = child
            remaining -= 1
        }
        return (id, id, 0)
    }

    /// Marks `id` and the nodes above it as used now: a parent is never less recently used
    /// than its children, so forgetting the least recently used forgets leaves first.
    mutating func touch(_ id: NodeID) {
        useClock += 1
        var current: NodeID? = id
        while let node = current, exists(node) {
            self[node].lastUse = useClock
            current = self[node].parent
        }
    }

    /// The keys the rows `items` get among siblings: the identifier, with a suffix from the
    /// second occurrence of a repeated one (and for the loading row's key).
    static func keys(of items: some Sequence<ContentItem>) -> [String] {
        var taken = Set<String>()
        var keys: [String] = []
        for item in items {
            let key = key(for: item.identifier) { taken.contains($0) }
            taken.insert(key)
            keys.append(key)
        }
        return keys
    }

    /// The key of a row with `identifier` among siblings whose keys `isTaken` tells (see
    /// ``keys(of:)``, which gives each row of a container this key in order).
    static func key(for identifier: String, isTaken: (String) -> Bool) -> String {
        guard isTaken(identifier) || identifier == loadingKey else { return identifier }
        var suffix = 2
        while isTaken(identifier + "\u{0}\(suffix)") { suffix += 1 }
        return identifier + "\u{0}\(suffix)"
    }

    /// What a container's rows hash to: their keys and items in order, and whether they show
    /// playback progress. Equal for a container read now and as it was cached, if unchanged.
    static func fingerprint(keys: [String], items: some Sequence<ContentItem>, displaysProgress: Bool) -> Int {
        var hasher = Hasher()
        hasher.combine(displaysProgress)
        for (key, item) in zip(keys, items) {
            hasher.combine(key)
            hasher.combine(item)
        }
        return hasher.finalize()
    }

    /// The fingerprint of the rows cached for container `id`: the hash
    /// ``fingerprint(keys:items:displaysProgress:)`` gives for them, fed in the same order, read
    /// in place: a walk forgets every container it read, and copying each child's node twice for
    /// it was a quarter of the cost.
    func fingerprint(of id: NodeID) -> Int {
        var hasher = Hasher()
        hasher.combine(self[id].displaysProgress)
        for child in self[id].children ?? [] {
            hasher.combine(self[child].key)
            // Hashed where it is (`combine(item)` is `item.hash(into:)`), not copied out first.
            self[child].item?.hash(into: &hasher)
        }
        return hasher.finalize()
    }

    func path(of id: NodeID) -> [String] {
        var keys: [String] = []
        var current = id
        while let parent = self[current].parent {
            keys.append(self[current].key)
            current = parent
        }
        return keys.reversed()
    }

    func indexPath(of id: NodeID) -> IndexPath {
        var indexes: [Int] = []
        var current = id
        while let parent = self[current].parent {
            indexes.append(self[current].sourceIndex)
            current = parent
        }
        return IndexPath(indexes: indexes.reversed())
    }

    /// The child of `id` the data source has at `sourceIndex`.
    func child(of id: NodeID, atSourceIndex sourceIndex: Int) -> NodeID? {
        guard let children = self[id].children else { return nil }
        var low = 0
        var high = children.count
        while low < high {
            let middle = (low + high) / 2
            let index = self[children[middle]].sourceIndex
            if index == sourceIndex { return children[middle] }
            if index < sourceIndex { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The children of `id` in listing order: informative rows first, then the data source's order.
    func listingOrder(of id: NodeID) -> [NodeID] {
        guard let children = self[id].children else { return [] }
        guard self[id].informativeCount > 0 else { return children }
        let informative = children.filter { self[$0].item?.isInformative == true }
        return informative + children.filter { self[$0].item?.isInformative != true }
    }

    /// Every container read so far at or below `top`, parents before their children.
    func readContainers(from top: NodeID = rootID) -> [NodeID] {
        var order: [NodeID] = []
        var stack = [top]
        while let id = stack.popLast() {
            guard self[id].children != nil else { continue }
            order.append(id)
            for child in childIDs(of: id).reversed() where self[child].children != nil { stack.append(child) }
        }
        return order
    }

    /// Replaces the children of `id` with `read`, keeping the nodes (and the
    /// subtrees read below them) of children whose key is unchanged.
    ///
    /// Adds to `changed` the containers a remote must re-list: `id` if its
    /// rows differ in any way, and each kept child container whose own row changed.
    ///
    /// A paged read (``ContainerRead/pagedCount``) leaves `id` with no children copied; it
    /// counts as changed whenever it was read before, since its rows are not there to compare.
    mutating func merge(_ read: ContainerRead, into id: NodeID, complete: Bool, changed: inout Set<NodeID>) {
        guard exists(id) else { return }
        let wasPaged = self[id].pagedCount != nil
        if wasPaged && read.pagedCount == nil {
            // Opened children of a paged copy are not in `children`: start afresh, before
            // their ids can be given to new nodes.
            for child in childIDs(of: id) { removeSubtree(child) }
            self[id].childByKey = [:]
            self[id].pagedCount = nil
            self[id].pagesContainers = false
        }
        let old = self[id]
        if let count = read.pagedCount {
            for child in childIDs(of: id) { removeSubtree(child) }
            self[id].children = []
            self[id].childByKey = [:]
            self[id].informativeCount = 0
            self[id].containerCount = read.pagesContainers ? count : 0
            self[id].displaysProgress = read.displaysProgress
            self[id].pagedCount = count
            self[id].pagesContainers = read.pagesContainers
            if complete {
                self[id].isComplete = true
                self[id].owesUpdate = false
            }
            if old.children != nil { changed.insert(id) }
            return
        }
        var children: [NodeID] = []
        children.reserveCapacity(read.items.count)
        var byKey: [String: NodeID] = [:]
        byKey.reserveCapacity(read.items.count)
        var informative = 0
        var containers = 0
        var rowsChanged = old.children == nil || old.displaysProgress != read.displaysProgress
        let depth = old.depth + 1
        for (position, entry) in read.items.enumerated() {
            // As `keys(of:)` gives them, with the keys taken so far in `byKey`.
            let key = Self.key(for: entry.item.identifier) { byKey[$0] != nil }
            let childID: NodeID
            if let existing = old.childByKey[key], exists(existing) {
                childID = existing
                let before = self[existing]
                if before.item != entry.item {
                    rowsChanged = true
                    if before.children != nil { changed.insert(existing) }
                }
                if !rowsChanged, let oldChildren = old.children,
                    position >= oldChildren.count || oldChildren[position] != existing
                {
                    rowsChanged = true
                }
                self[existing].item = entry.item
                self[existing].sourceIndex = entry.sourceIndex
                if !entry.item.isContainer, self[existing].children != nil { remove(childrenOf: existing) }
            } else {
                rowsChanged = true
                childID = allocate(
                    Node(item: entry.item, key: key, parent: id, sourceIndex: entry.sourceIndex, depth: depth))
            }
            children.append(childID)
            byKey[key] = childID
            if entry.item.isInformative { informative += 1 }
            if entry.item.opensAsContainer { containers += 1 }
        }
        if let oldChildren = old.children {
            if oldChildren.count != children.count { rowsChanged = true }
            for child in oldChildren where byKey[self[child].key] != child { removeSubtree(child) }
        }
        self[id].children = children
        self[id].childByKey = byKey
        self[id].informativeCount = informative
        self[id].containerCount = containers
        self[id].displaysProgress = read.displaysProgress
        if complete {
            if self[id].owesUpdate { rowsChanged = true }
            self[id].isComplete = true
            self[id].owesUpdate = false
        }
        // A container a listing showed as loading is owed its `Updated` even if it had not been
        // read before.
        if rowsChanged && (old.children != nil || old.owesUpdate) { changed.insert(id) }
    }

    /// Forgets what was read below `id`, so the next listing reads it again.
    mutating func remove(childrenOf id: NodeID) {
        for child in childIDs(of: id) { removeSubtree(child) }
        self[id].children = nil
        self[id].childByKey = [:]
        self[id].isComplete = false
        self[id].informativeCount = 0
        self[id].containerCount = 0
        self[id].pagedCount = nil
        self[id].pagesContainers = false
    }

    /// The children of `id` in the copy: listed ones, or for a paged container the ones opened.
    func childIDs(of id: NodeID) -> [NodeID] {
        self[id].pagedCount != nil
            ? self[id].childByKey.values.sorted { self[$0].sourceIndex < self[$1].sourceIndex } : self[id].children ?? []
    }

    /// Adds the child container `item` of the paged container `parent`, at `sourceIndex`, as a
    /// remote opens it; returns its id (the existing one if it is there).
    mutating func addOpenedChild(of parent: NodeID, key: String, item: ContentItem, sourceIndex: Int) -> NodeID {
        if let existing = self[parent].childByKey[key], exists(existing) { return existing }
        let id = allocate(Node(item: item, key: key, parent: parent, sourceIndex: sourceIndex, depth: self[parent].depth + 1))
        self[parent].childByKey[key] = id
        return id
    }

    /// Removes an opened child of a paged container, with what was read below it.
    mutating func removeOpenedChild(_ id: NodeID) {
        guard exists(id), let parent = self[id].parent, self[parent].pagedCount != nil else { return }
        self[parent].childByKey[self[id].key] = nil
        removeSubtree(id)
    }

    private mutating func removeSubtree(_ id: NodeID) {
        var stack = [id]
        while let current = stack.popLast() {
            guard exists(current) else { continue }
            if self[current].pagedCount != nil {
                stack.append(contentsOf: self[current].childByKey.values)
            } else if let children = self[current].children {
                stack.append(contentsOf: children)
            }
            // The next node in this slot gets a new generation: ids of this one stay dead.
            slots[current.slot] = Slot(node: Self.freeNode, generation: slots[current.slot].generation &+ 1, isFree: true)
            freeSlots.append(current.slot)
            liveCount -= 1
        }
    }

    private mutating func allocate(_ node: Node) -> NodeID {
        liveCount += 1
        if let slot = freeSlots.popLast() {
            slots[slot].node = node
            slots[slot].isFree = false
            return NodeID(slot: slot, generation: slots[slot].generation)
        }
        slots.append(Slot(node: node, generation: 0))
        return NodeID(slot: slots.count - 1, generation: 0)
    }
}
