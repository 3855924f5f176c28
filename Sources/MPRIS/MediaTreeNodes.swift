import DBus
import MediaRemote

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Builds the D-Bus face of the media tree's nodes: object paths from
/// manager paths and back, property dictionaries for listings, and the
/// interfaces of a node called directly.
struct MediaTreeNodes: Sendable {
    static let object: InterfaceName = "org.gnome.UPnP.MediaObject2"
    static let container: InterfaceName = "org.gnome.UPnP.MediaContainer2"
    static let item: InterfaceName = "org.gnome.UPnP.MediaItem2"
    static let node: InterfaceName = "org.mprisbridge.MediaNode1"
    static let root: InterfaceName = "org.mprisbridge.MediaRoot1"

    let rootPath: ObjectPath
    let displayName: String
    let content: PlayableContentManager
    let artwork: ArtworkCache

    // MARK: Paths

    func objectPath(for path: [String]) -> ObjectPath {
        path.reduce(rootPath) { $0.appending($1) }
    }

    /// The last element of a cover-art object's path: `__art` is never the
    /// escape of an identifier (an escaped `_` is `_5f`), so it cannot name a row.
    static let artElement = "__art"

    /// The image object MediaServer2's `AlbumArt` points at for the cover of
    /// the node at `nodePath`: that object path plus `__art`.
    ///
    /// The path names the node, never a URL: an art object exists only for a
    /// node that has artwork, and serves that artwork's URL, so a client
    /// cannot make the tree present a file of its choosing.
    func artPath(ofNodeAt nodePath: ObjectPath) -> ObjectPath {
        ObjectPath(stringLiteral: nodePath.rawValue + "/" + Self.artElement)
    }

    /// The manager path of the node whose cover `objectPath` is, or `nil` if
    /// `objectPath` is not an `__art` path.
    func artNodePath(of objectPath: ObjectPath) -> [String]? {
        guard objectPath.rawValue.hasSuffix("/" + Self.artElement), let node = objectPath.parent else { return nil }
        return contentPath(for: node)
    }

    /// The manager path of an object path below the root, or `nil` when an
    /// element could not have come from ``ObjectPath/escapeElement(_:)``.
    func contentPath(for objectPath: ObjectPath) -> [String]? {
        guard objectPath.isDescendant(of: rootPath) else { return nil }
        // Every call on a node converts its path (twice): split the part below the root in
        // place rather than splitting both whole paths into arrays first.
        let text = objectPath.rawValue
        let below = text.utf8.dropFirst(rootPath.rawValue == "/" ? 0 : rootPath.rawValue.utf8.count)
        var keys: [String] = []
        for element in below.split(separator: UInt8(ascii: "/")) {
            guard let key = ObjectPath.unescapeElement(Substring(element)) else { return nil }
            keys.append(key)
        }
        return keys
    }

    /// The identifier of the row with manager key `key`: the key without the
    /// suffix of a repeated identifier; "" for the loading row.
    static func identifier(fromKey key: String) -> String {
        // The UTF-8 view: searching Characters cost 5 % of a listing's CPU time.
        guard let separator = key.utf8.firstIndex(of: 0) else { return key }
        return String(key[..<separator])
    }

    func childElements(of objectPath: ObjectPath) -> [String] {
        guard artNodePath(of: objectPath) == nil, let path = contentPath(for: objectPath) else { return [] }
        return content.childKeys(of: path).map(ObjectPath.escapeElement)
    }

    // MARK: Properties

    /// Which properties a listing returns: MediaServer2's `Filter`, where `*` is all.
    struct Filter: Sendable {
        let names: Set<String>?

        init(_ names: [String]) { self.names = names.contains("*") ? nil : Set(names) }

        func wants(_ name: String) -> Bool { names?.contains(name) ?? true }
    }

    /// The properties of `entry` that `filter` asks for, as in a `ListChildren` result.
    ///
    /// - Parameter parent: the object path of the entry's parent when the caller knows it
    ///   (the rows of one listing share it, and escaping it again for each row was measurable).
    /// - Parameter shown: the manager's context and action offer, when the caller read them
    ///   already (once per listing): while limits are enforced, texts are cut to the context's
    ///   text length, and a row's actions are those offered.
    /// - Parameter listing: whether the properties are a listing's row, which leaves out the
    ///   display hints the row does not have (styles, heading, completion, error, actions): most
    ///   rows have none, and a walk asking for every property paid a fifth more for them.
    func properties(
        of entry: ContentEntry, filter: Filter, parent: ObjectPath? = nil,
        shown: (context: PlayableContentManagerContext, actions: ContentActionOffer)? = nil, listing: Bool = false
    ) -> [DBusValue.DictionaryEntry] {
        var values: [DBusValue.DictionaryEntry] = []
        values.reserveCapacity(25)
        forEachProperty(of: entry, filter: filter, parent: parent, shown: shown, listing: listing) { name, value in
            values.append(.init(.string(name), .variant(Variant(value))))
        }
        return values
    }

    /// Calls `emit` with each property of `entry` that `filter` asks for, in the order of a
    /// `ListChildren` row: what ``properties(of:filter:parent:shown:listing:)`` collects, and
    /// what a listing writes to the wire without collecting them (``encodedRows(_:filter:)``).
    func forEachProperty(
        of entry: ContentEntry, filter: Filter, parent: ObjectPath? = nil,
        shown: (context: PlayableContentManagerContext, actions: ContentActionOffer)? = nil, listing: Bool = false,
        _ emit: (String, DBusValue) -> Void
    ) {
        let (context, offer) = shown ?? (content.context, content.actionOffer)
        func text(_ value: String) -> DBusValue { .string(context.fitted(value)) }
        func add(_ name: String, _ value: @autoclosure () -> DBusValue?) {
            guard filter.wants(name), let value = value() else { return }
            emit(name, value)
        }
        let item = entry.item
        let parentPath = entry.path.isEmpty ? rootPath : parent ?? objectPath(for: entry.path.dropLast())
        let path = entry.path.isEmpty ? rootPath : parentPath.appending(entry.path.last!)
        let showsAsContainer = item.isContainer || !item.isPlayable || entry.path.isEmpty
        // The cover's URL, found once per row (a stored cover is looked up in the artwork cache).
        var artText: String?
        func art() -> String {
            if let artText { return artText }
            let text = artURL(item.artwork)
            artText = text
            return text
        }
        // MediaObject2
        add("Parent", .objectPath(parentPath))
        add("Type", .string(Self.type(of: item, showsAsContainer: showsAsContainer)))
        add("Path", .objectPath(path))
        add("DisplayName", text(entry.path.isEmpty ? displayName : (item.title ?? item.identifier)))
        // MediaContainer2
        if showsAsContainer {
            let counts = entry.children
            add("ChildCount", .uint32(UInt32(clamping: counts?.childCount ?? 0)))
            if counts?.itemCount != nil || !item.isContainer {
                add("ItemCount", .uint32(UInt32(clamping: counts?.itemCount ?? 0)))
                add("ContainerCount", .uint32(UInt32(clamping: counts?.containerCount ?? 0)))
            }
            add("Searchable", .boolean(item.isContainer && content.supportsSearch))
        } else {
            // MediaItem2: only what is known, as the specification makes these optional.
            let media = item.media
            add("URLs", .array(.string, [media?.urlString].compactMap { $0.map { .string($0) } }))
            add("MIMEType", .string(media?.mimeType ?? (item.isStreamingContent ? "audio/mpeg" : "application/octet-stream")))
            if let size = media?.size { add("Size", .int64(size)) }
            if let artist = media?.artist { add("Artist", text(artist)) }
            if let album = media?.album { add("Album", text(album)) }
            if let date = media?.date { add("Date", .string(date)) }
            if let genre = media?.genre { add("Genre", text(genre)) }
            if let duration = media?.duration { add("Duration", .int32(Int32(clamping: duration.components.seconds))) }
            if let number = media?.trackNumber { add("TrackNumber", .int32(Int32(clamping: number))) }
            if filter.wants("AlbumArt"), !art().isEmpty {
                add("AlbumArt", .objectPath(artPath(ofNodeAt: path)))
            }
        }
        // MediaNode1
        add("Identifier", .string(entry.path.isEmpty ? "" : Self.identifier(fromKey: entry.path.last!)))
        add("Subtitle", text(item.subtitle ?? ""))
        add("Playable", .boolean(item.isPlayable))
        add("Container", .boolean(item.isContainer || entry.path.isEmpty))
        add("Informative", .boolean(item.isInformative && !entry.isLoadingPlaceholder && !entry.path.isEmpty))
        add("Loading", .boolean(entry.isLoadingPlaceholder))
        add("PlaybackProgress", .double(item.playbackProgress ?? -1))
        add("DisplaysPlaybackProgress", .boolean(entry.displaysPlaybackProgress))
        add("Explicit", .boolean(item.isExplicitContent))
        add("Streaming", .boolean(item.isStreamingContent))
        add("NowPlaying", .boolean(entry.isNowPlaying))
        add("ArtUrl", .string(art()))
        func hint(_ name: String, _ value: String?, fitted: Bool = false) {
            guard !listing || !(value ?? "").isEmpty else { return }
            add(name, fitted ? text(value ?? "") : .string(value ?? ""))
        }
        hint("BrowsableStyle", item.browsableChildrenStyle?.rawValue)
        hint("PlayableStyle", item.playableChildrenStyle?.rawValue)
        hint("GroupTitle", item.groupTitle, fitted: true)
        hint("CompletionStatus", Self.completionStatus(of: entry))
        hint("ErrorCode", item.problem?.code.rawValue)
        hint("ResolutionAction", item.problem?.resolution?.action)
        hint("ResolutionLabel", item.problem?.resolution?.label, fitted: true)
        if filter.wants("Actions"), case let actions = offer.actions(of: item), !listing || !actions.isEmpty {
            add("Actions", .array(.string, actions.map { .string($0) }))
        }
    }

    /// `not-played`, `partially-played` or `fully-played` for a row whose container shows
    /// progress, from its progress (none yet is not played); "" for any other row.
    static func completionStatus(of entry: ContentEntry) -> String {
        guard entry.displaysPlaybackProgress, entry.item.isPlayable else { return "" }
        switch entry.item.playbackProgress {
        case let progress? where progress >= 1: return "fully-played"
        case let progress? where progress > 0: return "partially-played"
        default: return "not-played"
        }
    }

    private func artURL(_ image: MediaItemArtwork?) -> String {
        image.flatMap(artwork.url(for:))?.absoluteString ?? ""
    }

    static func type(of item: ContentItem, showsAsContainer: Bool) -> String {
        if showsAsContainer { return "container" }
        if item.isStreamingContent { return "audio" }
        return item.media?.mimeType.map { $0.hasPrefix("video/") ? "video" : "music" } ?? "music"
    }

    static func contextProperties(_ context: PlayableContentManagerContext) -> [(name: String, value: DBusValue)] {
        [
            ("EndpointAvailable", .boolean(context.endpointAvailable)),
            ("ContentLimitsEnforced", .boolean(context.contentLimitsEnforced)),
            ("EnforcedItemCount", .uint32(UInt32(clamping: context.enforcedContentItemsCount))),
            ("EnforcedTreeDepth", .uint32(UInt32(clamping: context.enforcedContentTreeDepth))),
            ("TabLimit", .uint32(UInt32(clamping: context.maximumTabCount))),
            ("EnforcedTextLength", .uint32(UInt32(clamping: context.enforcedTextLength))),
            ("ActionLimit", .uint32(UInt32(clamping: context.maximumActionCount))),
        ]
    }

    // MARK: Objects

    static let listArguments = [Argument("Offset", .uint32), Argument("Max", .uint32), Argument("Filter", .array(.string))]
    static let listResult = [Argument("Children", .array(.dictionary(key: .string, value: .variant)))]
    /// dLeyna's sort order of the `…Ex` methods (see ``SortCriteria``).
    static let sortByArgument = Argument("SortBy", .string)

    /// The interfaces every node serves, declared once for the whole tree: their properties
    /// are read for the node a client asks about, and their methods find the node from the
    /// object path they are called on.
    final class SharedInterfaces: Sendable {
        let object: Interface
        let container: Interface
        let item: Interface
        let node: Interface
        let artObject: Interface
        let artItem: Interface

        init(_ nodes: MediaTreeNodes) {
            func declare(_ name: InterfaceName, _ properties: [(String, DBusType)], emitting: Set<String> = [])
                -> Interface
            {
                let interface = Interface(name)
                interface.objectProperties(
                    properties.map { (MemberName(stringLiteral: $0.0), $0.1, emitting.contains($0.0) ? .emitsValue : .none) },
                    values: { nodes.values(at: $0) })
                return interface
            }
            object = declare(Self.objectProperties.name, Self.objectProperties.properties)
            container = declare(
                MediaTreeNodes.container,
                [("ChildCount", .uint32), ("ItemCount", .uint32), ("ContainerCount", .uint32), ("Searchable", .boolean)])
            nodes.addListing(to: container)
            nodes.addSortedSearch(to: container)
            _ = container.signal("Updated")
            item = declare(
                MediaTreeNodes.item,
                [("URLs", .array(.string)), ("MIMEType", .string), ("Size", .int64), ("Artist", .string),
                 ("Album", .string), ("Date", .string), ("Genre", .string), ("Duration", .int32),
                 ("TrackNumber", .int32), ("AlbumArt", .objectPath)])
            node = declare(
                MediaTreeNodes.node,
                [("Identifier", .string), ("Subtitle", .string), ("Playable", .boolean), ("Container", .boolean),
                 ("Informative", .boolean), ("Loading", .boolean), ("PlaybackProgress", .double),
                 ("DisplaysPlaybackProgress", .boolean), ("Explicit", .boolean), ("Streaming", .boolean),
                 ("NowPlaying", .boolean), ("ArtUrl", .string), ("BrowsableStyle", .string),
                 ("PlayableStyle", .string), ("GroupTitle", .string), ("CompletionStatus", .string),
                 ("ErrorCode", .string), ("ResolutionAction", .string), ("ResolutionLabel", .string),
                 ("Actions", .array(.string))],
                emitting: ["NowPlaying"])
            nodes.addNodeMethods(to: node)
            artObject = declare(Self.objectProperties.name, Self.objectProperties.properties)
            artItem = declare(MediaTreeNodes.item, [("URLs", .array(.string)), ("MIMEType", .string)])
        }

        private static let objectProperties = (
            name: MediaTreeNodes.object,
            properties: [("Parent", DBusType.objectPath), ("Type", .string), ("Path", .objectPath), ("DisplayName", .string)]
        )
    }

    /// The interfaces of the node at `objectPath` (the shared ones, and the root's own), or
    /// `nil` if there is none.
    func interfaces(at objectPath: ObjectPath, shared: SharedInterfaces) -> [Interface]? {
        if let node = artNodePath(of: objectPath) {
            guard let entry = try? content.entry(at: node, readingChildren: false), !artURL(entry.item.artwork).isEmpty else { return nil }
            return [shared.artObject, shared.artItem]
        }
        guard let path = contentPath(for: objectPath), let item = try? content.rowItem(at: path) else { return nil }
        let showsAsContainer = item.isContainer || !item.isPlayable || path.isEmpty
        var interfaces = [shared.object, showsAsContainer ? shared.container : shared.item, shared.node]
        if path.isEmpty { interfaces.append(rootInterface()) }
        return interfaces
    }

    /// The properties of the node (or cover) at `objectPath` by name, as the shared interfaces
    /// serve them; nil when there is none any more (the content changed since the call found
    /// it, or is being updated), which the call answers as an unknown object.
    func values(at objectPath: ObjectPath) -> [String: DBusValue]? {
        if let node = artNodePath(of: objectPath) {
            guard let entry = try? content.entry(at: node, readingChildren: false), case let url = artURL(entry.item.artwork), !url.isEmpty
            else { return nil }
            let lowered = url.lowercased()
            let type =
                lowered.hasSuffix(".png") ? "image/png"
                : lowered.hasSuffix(".webp") ? "image/webp" : lowered.hasSuffix(".gif") ? "image/gif" : "image/jpeg"
            return [
                "Parent": .objectPath(self.objectPath(for: node)), "Type": .string("image"), "Path": .objectPath(objectPath),
                "DisplayName": .string("Cover"), "URLs": .array(.string, [.string(url)]), "MIMEType": .string(type),
            ]
        }
        guard let path = contentPath(for: objectPath), let entry = try? content.entry(at: path) else { return nil }
        var values: [String: DBusValue] = [:]
        for property in properties(of: entry, filter: Filter(["*"])) {
            if case .string(let name) = property.key, case .variant(let variant) = property.value {
                values[name] = variant.value
            }
        }
        return values
    }

    /// The node a method of a shared interface was called on, and whether it lists children
    /// (informative and loading rows show as containers, and answer as empty ones).
    func calledNode() throws -> (path: [String], listsChildren: Bool) {
        guard let objectPath = MethodCallContext.current?.path, let path = contentPath(for: objectPath) else {
            throw DBusError(.unknownObject, "No node at this path")
        }
        let item = try content.rowItem(at: path)
        return (path, item.isContainer || path.isEmpty)
    }

    func addListing(to container: Interface) {
        let content = self.content
        let nodes = self
        // MediaServer2's ListChildren / ListContainers / ListItems(Offset, Max, Filter): the
        // children (all, containers, items) from Offset, at most Max (0: no limit, which this
        // tree caps at `maximumRows`), each with the properties Filter names (`*`: all, unknown
        // names skipped). An informative or loading row answers as an empty container. A
        // container still loading past its deadline lists what it has, then a loading row.
        // dLeyna's ListChildrenEx / ListContainersEx / ListItemsEx(Offset, Max, Filter, SortBy)
        // are the same listings in SortBy's order (informative rows still first, content limits
        // capping the sorted rows); a bad SortBy is InvalidArgs, checked first.
        // A page in natural order that memory alone answers, of at most `rowsAnsweredAtOnce`
        // rows, is answered as the call arrives (most pages of a head unit's walk); any other
        // runs as a handler.
        for (name, kind) in [("ListChildren", ContentListingKind.all), ("ListContainers", .containers), ("ListItems", .items)] {
            for sorted in [false, true] {
                let inputs = Self.listArguments + (sorted ? [Self.sortByArgument] : [])
                container.method(
                    MemberName(stringLiteral: sorted ? name + "Ex" : name), inputs: inputs, outputs: Self.listResult,
                    atOnce: { body -> MethodResults? in
                        let (offset, maximum, filter) = try Self.window(body, from: 0)
                        guard try !sorted || Self.sortOrder(body[3]).isNatural,
                            // An unknown node is reported by the handler, as for any other call.
                            let (path, listsChildren) = try? nodes.calledNode()
                        else { return nil }
                        guard listsChildren else { return .values([nodes.dictionaries([], filter: filter)]) }
                        guard let listing = content.listChildrenImmediately(
                            of: path, kind: kind, offset: offset, maximum: maximum, rowLimit: Self.rowsAnsweredAtOnce)
                        else { return nil }
                        return nodes.listingResults(listing.entries, filter: filter)
                    }
                ) { body -> MethodResults in
                    let (offset, maximum, filter) = try Self.window(body, from: 0)
                    let sort = sorted ? try Self.sortOrder(body[3]) : .natural
                    let (path, listsChildren) = try nodes.calledNode()
                    guard listsChildren else { return .values([nodes.dictionaries([], filter: filter)]) }
                    let listing = try await contentCall("list the children") {
                        try await content.listChildren(of: path, kind: kind, sortedBy: sort, offset: offset, maximum: maximum)
                    }
                    return nodes.listingResults(listing.entries, filter: filter)
                }
            }
        }
        // SearchObjects(Query, Offset, Max, Filter): the objects below the container that match
        // the query (the specification's grammar, bounded: see SearchCriteria), paged and
        // filtered as a listing; offered where Searchable is true. A bad query is InvalidArgs.
        container.method(
            "SearchObjects", inputs: [Argument("Query", .string)] + Self.listArguments, outputs: Self.listResult
        ) { body -> MethodResults in
            guard case .string(let text) = body[0] else { return .values([]) }
            let (offset, maximum, filter) = try Self.window(body, from: 1)
            let query = try SearchCriteria.parse(text)
            let (path, listsChildren) = try nodes.calledNode()
            guard listsChildren else { return .values([nodes.dictionaries([], filter: filter)]) }
            let found = try await contentCall("search") {
                try await content.search(query, below: path, offset: offset, maximum: maximum)
            }
            return nodes.listingResults(found, filter: filter)
        }
    }

    fileprivate func addNodeMethods(to node: Interface) {
        let content = self.content
        let nodes = self
        // Play (this project's extension): asks the manager's delegate to play the node (a
        // track, or what a container holds), replying once playback has started, or with the
        // reason it could not.
        node.method("Play") { () async throws in
            let path = try nodes.calledNode().path
            try await contentCall("start playback") { try await content.initiatePlayback(at: path) }
        }
        // Search(Text, Offset, Max, Filter) (extension): rows below the node whose title, artist
        // or album contains the text (at most SearchCriteria.maximumLength characters), paged
        // and filtered as a listing.
        // PerformAction(Action) (extension): one of the node's Actions, carried out by the app;
        // replies once done. An action the node does not offer now is InvalidArgs.
        node.method("PerformAction", inputs: [Argument("Action", .string)], outputs: []) { body in
            guard case .string(let action) = body[0] else { return [] }
            let path = try nodes.calledNode().path
            try await contentCall("perform '\(DBusError.excerpt(action))'") {
                try await content.performAction(action, onRowAt: path)
            }
            return []
        }
        node.method(
            "Search", inputs: [Argument("Text", .string)] + Self.listArguments, outputs: Self.listResult
        ) { body -> MethodResults in
            guard case .string(let text) = body[0] else { return .values([]) }
            guard text.count <= SearchCriteria.maximumLength else {
                throw DBusError(.invalidArgs, "The search text is longer than \(SearchCriteria.maximumLength) characters")
            }
            let (offset, maximum, filter) = try Self.window(body, from: 1)
            let path = try nodes.calledNode().path
            let found = try await contentCall("search") {
                try await content.search(.text(text), below: path, offset: offset, maximum: maximum)
            }
            return nodes.listingResults(found, filter: filter)
        }
    }

    private func rootInterface() -> Interface {
        let content = self.content
        let root = Interface(Self.root)
        let context = content.context
        _ = root.property("EndpointAvailable", context.endpointAvailable, access: .readWrite) { value in
            content.updateContext { $0.endpointAvailable = value }
            return value
        }
        _ = root.property("ContentLimitsEnforced", context.contentLimitsEnforced, access: .readWrite) { value in
            content.updateContext { $0.contentLimitsEnforced = value }
            return value
        }
        // The head unit's counts, each written as a whole and told to the delegate:
        // EnforcedItemCount and EnforcedTreeDepth (while limits are enforced), and the
        // extension's TabLimit (the most tabs the root lists, always), EnforcedTextLength (while
        // enforced, texts cut to this many characters, the last an ellipsis) and ActionLimit (the
        // most custom actions a row offers); 0 is no limit for the last three.
        func count(_ name: MemberName, _ field: any WritableKeyPath<PlayableContentManagerContext, Int> & Sendable) {
            _ = root.property(name, UInt32(clamping: context[keyPath: field]), access: .readWrite) { (value: UInt32) in
                content.updateContext { $0[keyPath: field] = Int(value) }
                return value
            }
        }
        count("EnforcedItemCount", \.enforcedContentItemsCount)
        count("EnforcedTreeDepth", \.enforcedContentTreeDepth)
        count("TabLimit", \.maximumTabCount)
        count("EnforcedTextLength", \.enforcedTextLength)
        count("ActionLimit", \.maximumActionCount)
        // CustomActions (extension): every action a row may offer, (identifier, title, icon URL or "").
        _ = root.property("CustomActions", content.customActions.map(ActionDescription.init), changes: .const)
        _ = root.property("NowPlayingIdentifiers", content.nowPlayingIdentifiers, changes: .none)
        addCapabilities(to: root)
        // SetContentLimits(Enforced, ItemCount, TreeDepth) (extension): a head unit's limits while
        // driving, applied to every listing, count and depth; the delegate hears them.
        root.method("SetContentLimits", arguments: ["Enforced", "ItemCount", "TreeDepth"]) {
            (enforced: Bool, items: UInt32, depth: UInt32) in
            content.updateContext {
                $0.contentLimitsEnforced = enforced
                $0.enforcedContentItemsCount = Int(items)
                $0.enforcedContentTreeDepth = Int(depth)
            }
        }
        // PrepareQueue(Items) (extension): hands the delegate the nodes a head unit expects to
        // play next (empty: its own choice); a path that is not a node of this tree is an error.
        root.method("PrepareQueue", arguments: ["Items"]) { (items: [ObjectPath]) async throws in
            let paths = try items.map { item throws(DBusError) -> [String] in
                guard let path = contentPath(for: item) else {
                    throw DBusError(CommandError.noSuchContent, "'\(DBusError.excerpt(item.rawValue))' is not a node of this media tree")
                }
                return path
            }
            try await contentCall("prepare a queue") {
                try await content.initializePlaybackQueue(with: paths.isEmpty ? nil : paths)
            }
        }
        // Rescan (extension): asks the data source to read its content again; replies once it
        // has, and remotes hear Updated for what changed.
        root.method("Rescan") { () async throws in
            try await contentCall("read the content again") { try await content.refreshContent() }
        }
        return root
    }

    /// A listing's reply: its rows written to the wire as they are visited, without a
    /// ``DBusValue`` per row (a page of 100 tracks with every property is some 2,300 values,
    /// boxed and then appended one by one through libdbus's iterators); as values, with the
    /// same rows, when a row cannot be written so (libdbus then refuses it as before).
    func listingResults(_ entries: [ContentEntry], filter: Filter) -> MethodResults {
        var rows = writtenRows(entries, filter: filter)
        let written = rows.finishResults { [self] in [dictionaries(entries, filter: filter)] }
        return written.map(MethodResults.encoded) ?? .values([dictionaries(entries, filter: filter)])
    }

    /// The rows of ``dictionaries(_:filter:)`` in wire format (`aa{sv}`), or nil when one cannot be written.
    func encodedRows(_ entries: [ContentEntry], filter: Filter) -> [UInt8]? {
        var rows = writtenRows(entries, filter: filter)
        return rows.finish()
    }

    private func writtenRows(_ entries: [ContentEntry], filter: Filter) -> PropertyRows {
        // About 650 bytes a track with every property.
        var rows = PropertyRows(capacity: entries.count * (filter.names == nil ? 768 : 128) + 16)
        forEachRow(of: entries, filter: filter) { visitProperties in
            rows.appendRow { row in visitProperties { name, value in row.add(name, value) } }
        }
        return rows
    }

    func dictionaries(_ entries: [ContentEntry], filter: Filter) -> DBusValue {
        var rows: [DBusValue] = []
        rows.reserveCapacity(entries.count)
        forEachRow(of: entries, filter: filter) { visitProperties in
            var values: [DBusValue.DictionaryEntry] = []
            values.reserveCapacity(25)
            visitProperties { name, value in values.append(.init(.string(name), .variant(Variant(value)))) }
            rows.append(.dictionary(key: .string, value: .variant, values))
        }
        return .array(.dictionary(key: .string, value: .variant), rows)
    }

    /// Calls `row` for each of `entries`, in order, with a visitor of that row's properties as a
    /// listing shows them (``forEachProperty(of:filter:parent:shown:listing:_:)``): the one walk
    /// behind a listing's values and its wire bytes. A listing's rows share their parent, whose
    /// object path is made once; a search's rows come from many.
    private func forEachRow(
        of entries: [ContentEntry], filter: Filter, _ row: (_ visitProperties: ((String, DBusValue) -> Void) -> Void) -> Void
    ) {
        var parent: (path: ArraySlice<String>, objectPath: ObjectPath)?
        let shown = (content.context, content.actionOffer)
        for entry in entries {
            let parentPath = entry.path.dropLast()
            if parent?.path != parentPath { parent = (parentPath, objectPath(for: Array(parentPath))) }
            let parentObject = parent?.objectPath
            row { emit in
                forEachProperty(of: entry, filter: filter, parent: parentObject, shown: shown, listing: true, emit)
            }
        }
    }

    /// The most rows one listing or search returns, whatever `Max` asks (0 included): about
    /// 6 MB with every property. A client pages past it with `Offset`, as `ChildCount` tells it to.
    static let maximumRows = 5_000
    /// The most rows a listing answered on the connection's thread shows: about a millisecond
    /// of it, which a command arriving meanwhile waits at most.
    static let rowsAnsweredAtOnce = 200

    static func window(_ body: [DBusValue], from start: Int) throws -> (Int, Int?, Filter) {
        guard case .uint32(let offset) = body[start], case .uint32(let maximum) = body[start + 1],
            case .array(_, let names) = body[start + 2]
        else { throw DBusError(.invalidArgs, "Expected offset, max and filter") }
        let filter = Filter(names.compactMap { if case .string(let name) = $0 { name } else { nil } })
        return (Int(offset), maximum == 0 ? maximumRows : min(Int(maximum), maximumRows), filter)
    }
}

/// Runs a call into the content manager: its ``ContentError``s and what the app threw reach the
/// remote as ``CommandError/error(for:failing:)`` names them.
func contentCall<T>(_ action: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw CommandError.error(for: error, failing: "Could not \(action)")
    }
}

/// A custom action as `MediaRoot1.CustomActions` lists it: `(identifier, title, icon URL or "")`.
struct ActionDescription: DBusRepresentable {
    var identifier: String, title: String, icon: String

    init(_ action: ContentAction) {
        (identifier, title, icon) = (action.identifier, action.title, action.icon?.absoluteString ?? "")
    }

    static var dbusType: DBusType { .structure([.string, .string, .string]) }
    var dbusValue: DBusValue { .structure([.string(identifier), .string(title), .string(icon)]) }
    init(dbusValue: DBusValue) throws {
        let fields = try dbusValue.structureFields(count: 3)
        (identifier, title, icon) = (try .init(dbusValue: fields[0]), try .init(dbusValue: fields[1]), try .init(dbusValue: fields[2]))
    }
}
