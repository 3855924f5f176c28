import DBus
import DBusTestSupport
import MPRIS
import MediaRemote
import ProcessTestSupport
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The media tree as a head unit (python3-dbus) browses it on a private bus.
@Suite(.timeLimit(.minutes(1))) struct MediaTreeTests {
    typealias F = MediaTreeFixture

    @Test func aHeadUnitWalksTheWholeTreeInPagesWithConsistentPathsTypesAndCounts() async throws {
        // The slow tab never finishes loading during the test: its loading row is always there.
        try await withMediaTree(sampleTree(albums: 7, tracksPerAlbum: 5, slowDelay: .seconds(60))) { tree in
            // Pages of 3: every container is listed in several pages.
            let lines = try await tree.client(["walk", "3"])
            // 4 tabs + 7 albums + 35 tracks + 6 odd rows + the slow tab's 2 rows and its loading row;
            // items: 35 + 5 odd tracks + the radio + 2 slow tracks.
            #expect(lines.first?.hasPrefix("nodes 55 containers 10 items 43 depth 2") == true, "\(lines)")
            #expect(lines.first?.hasSuffix("problems 0") == true, "\(lines)")
        }
    }

    @Test func listingsPageAndFilterAndPutTheInformativeRowFirst() async throws {
        try await withMediaTree { tree in
            let odd = F.path("odd")
            let lines = try await tree.client(
                ["list", "", "0", "0"],
                ["list", odd, "0", "0"],
                ["list", odd, "1", "2"],
                ["list", odd, "0", "0", "items"],
                ["list", F.path("music"), "0", "1", "children", "DisplayName,ChildCount"],
                ["list", F.path("music", "album:1"), "0", "1", "children", "URLs,Duration,TrackNumber,Artist,Nonsense"])
            #expect(lines[0] == "Music|container|Container Odd identifiers|container|Container Radio|audio|Playable,Streaming Slow|container|Container")
            #expect(lines[1] == "Sign in for more|container|Informative Unicode|music|Playable Empty|music|Playable Dup one|music|Playable Dup two|music|Playable Broken|music|Playable")
            #expect(lines[2] == "Unicode|music|Playable Empty|music|Playable")
            #expect(lines[3] == "Unicode|music|Playable Empty|music|Playable Dup one|music|Playable Dup two|music|Playable Broken|music|Playable")
            // Only the properties asked for, and unknown names ignored.
            #expect(lines[4] == "ChildCount,DisplayName")
            #expect(lines[5] == "Artist,Duration,TrackNumber,URLs")
        }
    }

    @Test func anyIdentifierYieldsAValidStablePathAndNodesAnswerDirectly() async throws {
        try await withMediaTree { tree in
            let odd = "odd"
            let lines = try await tree.client(
                ["get", F.path(odd, "spotify:track:ü/ñ 1?"), "org.mprisbridge.MediaNode1", "Identifier"],
                ["get", F.path(odd, ""), "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["get", F.path(odd, "dup"), "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["get", F.path(odd, "dup\u{0}2"), "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["get", F.path(odd, "spotify:track:ü/ñ 1?"), "org.gnome.UPnP.MediaItem2", "URLs"],
                ["get", F.path(odd, "spotify:track:ü/ñ 1?"), "org.gnome.UPnP.MediaObject2", "Parent"],
                ["get", F.path(odd, "nothing here"), "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["get", "odd/not_escaped_zz", "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["introspect", F.path(odd)],
                ["introspect", F.path(odd, "dup")],
                ["get", F.path(odd, "dup"), "org.gnome.UPnP.MediaItem2", "AlbumArt"])
            #expect(lines[0] == "String spotify:track:ü/ñ 1?")
            #expect(lines[1] == "String Empty")
            #expect(lines[2] == "String Dup one")
            #expect(lines[3] == "String Dup two")
            #expect(lines[4] == "Array ['file:///music/Unicode.ogg']")
            #expect(lines[5] == "ObjectPath \(F.root)/odd")
            #expect(lines[6] == "error org.freedesktop.DBus.Error.UnknownObject")
            #expect(lines[7] == "error org.freedesktop.DBus.Error.UnknownObject")
            #expect(lines[8] == "org.gnome.UPnP.MediaObject2 org.gnome.UPnP.MediaContainer2 org.mprisbridge.MediaNode1 6")
            #expect(lines[9] == "org.gnome.UPnP.MediaObject2 org.gnome.UPnP.MediaItem2 org.mprisbridge.MediaNode1 0")
            // The cover is an image object of its own, as MediaServer2's AlbumArt wants, named after its node.
            #expect(lines[10] == "ObjectPath \(F.root)/\(F.path(odd, "dup"))/__art", "\(lines[10])")
            let art = F.path(odd, "dup") + "/__art"
            let cover = try await tree.client(
                ["get", art, "org.gnome.UPnP.MediaItem2", "URLs"],
                ["get", art, "org.gnome.UPnP.MediaItem2", "MIMEType"],
                ["get", art, "org.gnome.UPnP.MediaObject2", "Type"],
                ["get", art, "org.gnome.UPnP.MediaObject2", "Parent"])
            #expect(
                cover == [
                    "Array ['file:///music/Album/cover.png']", "String image/png", "String image",
                    "ObjectPath \(F.root)/\(F.path(odd, "dup"))",
                ])
        }
    }

    @Test func onlyTheArtworkOfAnExistingNodeIsAnObject() async throws {
        try await withMediaTree { tree in
            // A path that names a file, as the art objects' paths once did, is no object; nor is the
            // cover of a node that has none, of a node that does not exist, or of a cover.
            let passwd = "__art/" + ObjectPath.escapeElement("file:///etc/passwd")
            let lines = try await tree.client(
                ["get", passwd, "org.gnome.UPnP.MediaItem2", "URLs"],
                ["get", F.path("odd", "dup") + "/" + passwd, "org.gnome.UPnP.MediaItem2", "URLs"],
                ["get", F.path("odd", "note") + "/__art", "org.gnome.UPnP.MediaItem2", "URLs"],
                ["get", F.path("odd", "nothing here") + "/__art", "org.gnome.UPnP.MediaItem2", "URLs"],
                ["get", F.path("odd", "dup") + "/__art/__art", "org.gnome.UPnP.MediaItem2", "URLs"],
                ["introspect", F.path("odd", "dup") + "/__art"])
            #expect(Array(lines.prefix(5)) == Array(repeating: "error org.freedesktop.DBus.Error.UnknownObject", count: 5))
            #expect(lines[5] == "org.gnome.UPnP.MediaObject2 org.gnome.UPnP.MediaItem2 0", "\(lines[5])")
        }
    }

    @Test func searchFindsByTitleArtistAndAlbumAndRefusesABadQuery() async throws {
        try await withMediaTree { tree in
            let music = F.path("music")
            let lines = try await tree.client(
                ["search", "", "Artist = \"abba\" and DisplayName contains \".2\"", "0", "0"],
                ["search", music, "upnp:class derivedfrom \"object.container\"", "0", "0"],
                ["search", music, "Album = \"Album 3\" or DisplayName = \"Song 1.1\"", "1", "2"],
                ["search", "", "DisplayName contains", "0", "0"],
                ["search", "", "Bitrate > \"1\"", "0", "0"],
                ["text", "", "abba", "0", "2"],
                ["text", F.path("music", "album:3"), "song", "0", "0"],
                ["search", F.path("music", "album:3"), "Type derivedfrom \"audio\"", "0", "2"],
                ["search", F.path("music", "album:3"), "Type = \"audio\"", "0", "2"])
            #expect(lines[0] == "Song 2.2")
            #expect(lines[1] == "Album 1 Album 2 Album 3")
            #expect(lines[2] == "Song 3.1 Song 3.2")
            #expect(lines[3] == "error org.freedesktop.DBus.Error.InvalidArgs")
            #expect(lines[4] == "error org.freedesktop.DBus.Error.InvalidArgs")
            #expect(lines[5] == "Song 2.1 Song 2.2")
            #expect(lines[6] == "Song 3.1 Song 3.2 Song 3.3 Song 3.4")
            // Music is a kind of audio: it derives from it, and is not equal to it.
            #expect(lines[7] == "Song 3.1 Song 3.2")
            #expect(lines[8] == "(none)")
        }
    }

    /// However many rows a client asks for (0 is "all"), a reply holds at most 5,000: the size of
    /// a reply is bounded, and `ChildCount` tells the client to page on.
    @Test func aListingReturnsAtMostFiveThousandRowsAndPagesOn() async throws {
        let big = TestNode.container("big", "Big", (0..<6_000).map { .track("t\($0)", "Track \($0)") })
        try await withMediaTree([big]) { tree in
            let lines = try await tree.client(
                ["get", F.path("big"), "org.gnome.UPnP.MediaContainer2", "ChildCount"],
                ["list", F.path("big"), "0", "0", "children", "Path"],
                ["list", F.path("big"), "0", "4294967295", "items", "Path"],
                ["list", F.path("big"), "5000", "0", "children", "Path"])
            #expect(lines[0] == "UInt32 6000")
            #expect(lines[1].split(separator: " ").count == 5_000)
            #expect(lines[2].split(separator: " ").count == 5_000)
            #expect(lines[3].split(separator: " ").count == 1_000)
        }
    }

    /// A container of 600 items (past a threshold of 100) from a data source that says so is served page by page: the
    /// same pages, a row's own object answers, the copy holds none of its rows, and marking
    /// one of them as playing is signalled on its object.
    @Test func aLargeContainerOfItemsIsServedPageByPageOnTheBus() async throws {
        let big = TestNode.container("big", "Big", (0..<600).map { .track("t\($0)", "Track \($0)") })
        try await withMediaTree([big], tellsLeafContainers: true, pagedContainerThreshold: 100) { tree in
            let lines = try await tree.client(
                ["get", F.path("big"), "org.gnome.UPnP.MediaContainer2", "ChildCount"],
                ["get", F.path("big"), "org.gnome.UPnP.MediaContainer2", "ContainerCount"],
                ["list", F.path("big"), "598", "10", "children", "DisplayName"],
                ["list", F.path("big"), "0", "0", "containers"],
                ["get", F.path("big", "t432"), "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["get", F.path("big", "t432"), "org.gnome.UPnP.MediaObject2", "Parent"])
            #expect(lines == [
                "UInt32 600", "UInt32 0", "DisplayName DisplayName", "(empty)", "String Track 432",
                "ObjectPath \(F.root)/\(F.path("big"))",
            ])
            #expect(tree.manager.cachedRowCount < 10)
            // A head unit's walk finds every row with its right path, parent and counts.
            #expect(try await tree.client(["walk", "50"]) == ["nodes 601 containers 1 items 600 depth 1 calls 14 problems 0"])
            let watcher = try await Self.watch(tree)
            defer { watcher.kill() }
            tree.manager.nowPlayingIdentifiers = ["t432"]
            let changed = try await Self.lines(of: watcher) { $0.hasSuffix("NowPlaying=true") }
            #expect(changed == ["changed \(F.path("big", "t432")) node NowPlaying=true"])
        }
    }

    /// A container of 150 containers past a threshold of 100 is served page by page: a head
    /// unit's walk opens every one of them, with right paths, parents and counts.
    @Test func aLargeContainerOfContainersIsServedPageByPageOnTheBus() async throws {
        let shelf = TestNode.container("shelf", "Shelf", (0..<150).map { album in
            .container("album:\(album)", "Album \(album)", (1...3).map { .track("t\(album).\($0)", "Song \(album).\($0)") })
        })
        try await withMediaTree([shelf], tellsLeafContainers: true, pagedContainerThreshold: 100) { tree in
            let walk = try await tree.client(["walk", "40"])
            #expect(walk == ["nodes 601 containers 151 items 450 depth 2 calls 155 problems 0"])
            let album = try await tree.client(["list", F.path("shelf", "album:149"), "0", "0"])
            #expect(album == ["Song 149.1|music|Playable Song 149.2|music|Playable Song 149.3|music|Playable"])
        }
    }

    /// Finding the node a call addresses (on the connection's queue, before any handler runs)
    /// does not read a container's children: a call refused for its arguments reads nothing,
    /// so a hostile client cannot make the service read every container by naming it, and a
    /// slow read holds only the listing that needs it, on its own task.
    @Test func findingTheNodeACallAddressesReadsNoneOfItsChildren() async throws {
        let shelf = TestNode.container("shelf", "Shelf", (0..<20).map { .track("s\($0)", "Song \($0)") })
        try await withMediaTree([shelf]) { tree in
            let refused = try await tree.bus.run(
                "dbus-send",
                ["--session", "--print-reply", "--dest=\(F.busName)", "\(F.root)/\(F.path("shelf"))",
                 "org.gnome.UPnP.MediaContainer2.ListChildren", "int32:0", "int32:10", "array:string:*"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs"))
            #expect(tree.content.childReads(of: "shelf") == 0)
            let listed = try await tree.client(["list", F.path("shelf"), "0", "0"])
            #expect(listed.count == 1 && listed[0].contains("Song 19"))
            #expect(tree.content.childReads(of: "shelf") >= 20)
        }
    }

    /// MediaServer2 has no type for a row that is neither playable nor a container, so an
    /// informative row is an empty container, and it answers as one.
    @Test func anInformativeRowAnswersEveryContainerMethodAsAnEmptyContainer() async throws {
        try await withMediaTree { tree in
            let note = F.path("odd", "note")
            let lines = try await tree.client(
                ["get", note, "org.gnome.UPnP.MediaObject2", "Type"],
                ["get", note, "org.gnome.UPnP.MediaContainer2", "ChildCount"],
                ["list", note, "0", "0"], ["list", note, "0", "10", "containers"], ["list", note, "5", "10", "items"],
                ["search", note, "*", "0", "0"], ["text", note, "sign", "0", "0"],
                ["search", note, "DisplayName contains", "0", "0"])
            #expect(lines == [
                "String container", "UInt32 0", "(empty)", "(empty)", "(empty)", "(none)", "(none)",
                "error org.freedesktop.DBus.Error.InvalidArgs",
            ])
        }
    }

    /// Parsing and evaluating a query recurse over its nesting, so a query any client may send is
    /// bounded first: one of thousands of terms, deep parentheses or a huge value is refused as
    /// invalid, with a short message, and the tree goes on answering.
    @Test func aHostileQueryIsRefusedWithAShortMessage() async throws {
        try await withMediaTree { tree in
            let lines = try await tree.client(
                ["hostile", "", "terms", "5000"], ["hostile", "", "nested", "10000"],
                ["hostile", "", "long", "1000000"], ["hostile", "", "text", "1000000"],
                ["hostile", "", "terms", "64"], ["hostile", "", "nested", "16"],
                ["search", F.path("music"), "DisplayName = \"Song 1.1\"", "0", "0"])
            for line in lines.prefix(4) {
                let parts = line.split(separator: " ")
                #expect(parts.count == 3 && parts[1] == "org.freedesktop.DBus.Error.InvalidArgs", "\(line)")
                #expect((Int(parts.last ?? "") ?? .max) <= 200, "\(line)")
            }
            // The bounds leave room for any real query.
            #expect(lines[4] == "Song 1.1", "\(lines[4])")
            #expect(lines[5] == "Song 1.1", "\(lines[5])")
            #expect(lines[6] == "Song 1.1")
        }
    }

    @Test func contentLimitsSetByTheHeadUnitCapEveryListingAndTheDelegateHearsThem() async throws {
        try await withMediaTree(sampleTree(albums: 9)) { tree in
            let music = F.path("music")
            let root = "org.mprisbridge.MediaRoot1"
            let lines = try await tree.client(
                ["set", "", root, "EnforcedItemCount", "u", "4"],
                ["set", "", root, "EnforcedTreeDepth", "u", "2"],
                ["set", "", root, "ContentLimitsEnforced", "b", "true"],
                ["list", music, "0", "0"],
                ["get", music, "org.gnome.UPnP.MediaContainer2", "ChildCount"],
                ["list", music, "3", "10"],
                ["get", F.path("music", "album:1"), "org.gnome.UPnP.MediaContainer2", "ChildCount"],
                ["list", F.path("music", "album:1"), "0", "0"],
                ["get", F.path("music", "album:1", "track:1-1"), "org.gnome.UPnP.MediaObject2", "DisplayName"],
                ["search", "", "DisplayName contains \"Song\" or DisplayName contains \"Album\"", "0", "0"],
                ["set", "", root, "ContentLimitsEnforced", "b", "false"],
                ["get", music, "org.gnome.UPnP.MediaContainer2", "ChildCount"])
            #expect(lines[3] == "Album 1|container|Playable,Container Album 2|container|Playable,Container Album 3|container|Playable,Container Album 4|container|Playable,Container")
            #expect(lines[4] == "UInt32 4")
            #expect(lines[5] == "Album 4|container|Playable,Container")
            // Depth 2 is the deepest level opened: the album (depth 2) is listed and playable but shows nothing.
            #expect(lines[6] == "UInt32 0")
            #expect(lines[7] == "(empty)")
            #expect(lines[8] == "error org.freedesktop.DBus.Error.UnknownObject")
            // Tracks lie deeper than depth 2: only reachable rows are found, at most 4.
            #expect(lines[9] == "Album 1 Album 2 Album 3 Album 4")
            #expect(lines[11] == "UInt32 9")
            let contexts = tree.delegate.contexts
            #expect(contexts.count == 4)
            #expect(contexts[2] == PlayableContentManagerContext(contentLimitsEnforced: true, enforcedContentItemsCount: 4, enforcedContentTreeDepth: 2))
            #expect(contexts.last?.contentLimitsEnforced == false)
        }
    }

    @Test func playRepliesOnlyOnceThePlayerHasStartedOrWithANamedError() async throws {
        try await withMediaTree { tree in
            let lines = try await tree.client(
                ["play", F.path("music", "album:2", "track:2-3")],
                ["get", F.path("music", "album:2", "track:2-3"), "org.mprisbridge.MediaNode1", "NowPlaying"],
                ["play", F.path("odd", "note")],
                ["play", F.path("odd", "Broken")],
                ["play", F.path("music")],
                ["play", F.path("music", "album:9")])
            let played = lines[0].split(separator: " ")
            #expect(played[0] == "played")
            // The delegate takes 300 ms to start the pipeline; the reply waits for it.
            #expect(Int(played[1])! >= 290, "\(lines[0])")
            #expect(lines[1] == "Boolean 1")
            #expect(lines[2].hasPrefix("error org.mprisbridge.Error.NotPlayable"))
            #expect(lines[3].hasPrefix("error org.mprisbridge.Error.CommandFailed"))
            #expect(lines[4].hasPrefix("error org.mprisbridge.Error.NotPlayable"))
            #expect(lines[5].hasPrefix("error org.freedesktop.DBus.Error.UnknownObject"))
            #expect(tree.delegate.started == [[0, 1, 2]])
        }
    }

    /// Starts `Python/watch_tree.py` and returns once it is subscribed.
    static func watch(_ tree: MediaTreeFixture) async throws -> ChildProcess {
        let watcher = try tree.bus.spawn(PrivateBus.systemPython, ["-u", pythonScript("watch_tree.py"), F.busName, F.root])
        _ = try await watcher.waitForLine { $0 == "READY" }
        return watcher
    }

    /// The watcher's lines after READY, up to and including the first that satisfies `last`.
    static func lines(of watcher: ChildProcess, through last: @escaping (String) -> Bool) async throws -> [String] {
        _ = try await watcher.waitForLine(where: last)
        let all = watcher.capturedStdout.split(separator: "\n").map(String.init)
        return Array(all.drop { $0 != "READY" }.dropFirst())
    }

    @Test func aBatchOfChangesSignalsEachChangedContainerOnceAndNowPlayingMarksFlip() async throws {
        try await withMediaTree(sampleTree(albums: 3).filter { $0.item.identifier != "slow" }) { tree in
            // The head unit has browsed everything.
            let walk = try await tree.client(["walk", "100"])
            #expect(walk.first?.hasSuffix("problems 0") == true, "\(walk)")
            let watcher = try await Self.watch(tree)
            defer { watcher.kill() }
            tree.manager.beginUpdates()
            tree.content.replace { root in
                root[0].children[0].item.title = "Album One"
                for index in 0..<4 { root[0].children[1].children[index].item.playbackProgress = 0.5 }
                root[0].children[2].children.append(.track("track:3-5", "Song 3.5"))
            }
            tree.manager.beginUpdates()
            tree.manager.endUpdates()
            tree.manager.endUpdates()
            tree.manager.nowPlayingIdentifiers = ["album:3", "track:3-5"]
            let playing = "changed \(F.path("music", "album:3", "track:3-5")) node NowPlaying=true"
            let lines = try await Self.lines(of: watcher) { $0 == playing }
            // Album 1's own row changed (so did the Music tab's rows); albums 2 and 3 have changed rows.
            // One Updated each, in no particular order, all before the now-playing marks.
            #expect(
                lines.prefix(4).sorted() == [
                    "updated music", "updated \(F.path("music", "album:1"))", "updated \(F.path("music", "album:2"))",
                    "updated \(F.path("music", "album:3"))",
                ])
            #expect(lines.dropFirst(4) == ["changed \(F.path("music", "album:3")) node NowPlaying=true", playing])
        }
    }

    @Test func prepareQueueHandsTheDelegateTheItemsOrItsOwnChoice() async throws {
        try await withMediaTree { tree in
            let lines = try await tree.client(
                ["prepare", F.path("music", "album:2"), F.path("music", "album:1", "track:1-3")],
                ["prepare"],
                ["prepare", F.path("music", "album:1"), "/org/mpris/MediaPlayer2"],
                ["prepare", F.path("music", "album:42")])
            #expect(lines == [
                "prepared", "prepared", "error org.mprisbridge.Error.NoSuchContent",
                "error org.mprisbridge.Error.NoSuchContent",
            ])
            // Refused requests reach the delegate not at all.
            #expect(tree.delegate.prepared == [["album:2", "track:1-3"], nil])
        }
    }

    @Test func theHeadUnitsContextIsAnnouncedOnTheRootOncePerChange() async throws {
        try await withMediaTree { tree in
            let watcher = try await Self.watch(tree)
            defer { watcher.kill() }
            tree.manager.updateContext { $0.contentLimitsEnforced = true }
            tree.manager.updateContext { $0.contentLimitsEnforced = true }
            tree.manager.updateContext { $0.enforcedContentItemsCount = 12 }
            let lines = try await Self.lines(of: watcher) { $0.contains("EnforcedItemCount=12") }
            #expect(
                lines == [
                    "changed  root ActionLimit=0,ContentLimitsEnforced=true,EndpointAvailable=false,EnforcedItemCount=100,EnforcedTextLength=0,EnforcedTreeDepth=5,TabLimit=0",
                    "changed  root ActionLimit=0,ContentLimitsEnforced=true,EndpointAvailable=false,EnforcedItemCount=12,EnforcedTextLength=0,EnforcedTreeDepth=5,TabLimit=0",
                ])
        }
    }

    @Test func aStormOfTenThousandItemChangesInOneBatchIsOneUpdated() async throws {
        let tree = [TestNode.container("music", "Music", playable: false, (1...1).map { album in
            .container("album:\(album)", "Big", (1...10_000).map { .track("t\($0)", "Song \($0)") })
        })]
        try await withMediaTree(tree) { tree in
            #expect(try await tree.client(["list", F.path("music", "album:1"), "9999", "1"]) == ["Song 10000|music|Playable"])
            let watcher = try await Self.watch(tree)
            defer { watcher.kill() }
            tree.manager.beginUpdates()
            tree.content.replace { root in
                for index in 0..<10_000 { root[0].children[0].children[index].item.playbackProgress = 1 }
            }
            tree.manager.endUpdates()
            tree.manager.nowPlayingIdentifiers = ["t1"]
            let lines = try await Self.lines(of: watcher) { $0.hasSuffix("NowPlaying=true") }
            #expect(lines == ["updated \(F.path("music", "album:1"))", "changed \(F.path("music", "album:1", "t1")) node NowPlaying=true"])
        }
    }

    /// A car's display hints pass from the app's items to the tree as they are: styles for a
    /// container's children, a row's heading, a typed problem and its way out. A listing's row
    /// carries only the hints it has; reading the node gives every one.
    @Test func displayHintsReachTheTreeAndListingsCarryOnlyThoseARowHas() async throws {
        var shelf = TestNode.container(
            "shelf", "Shelf", playable: false,
            [
                TestNode(
                    item: .informative(
                        identifier: "signin", title: "Sign in to see more",
                        problem: ContentProblem(
                            .authenticationRequired, resolution: ContentProblem.Resolution(action: "SignIn", label: "Sign in"))),
                    children: []),
                .track("t1", "One"),
            ])
        shelf.item.browsableChildrenStyle = .categoryGrid
        shelf.item.playableChildrenStyle = .list
        shelf.children[1].item.groupTitle = "Songs"
        try await withMediaTree([shelf]) { tree in
            let node = "org.mprisbridge.MediaNode1"
            let lines = try await tree.client(
                ["get", F.path("shelf"), node, "BrowsableStyle"], ["get", F.path("shelf"), node, "PlayableStyle"],
                ["get", F.path("shelf", "signin"), node, "ErrorCode"], ["get", F.path("shelf", "signin"), node, "ResolutionAction"],
                ["get", F.path("shelf", "signin"), node, "ResolutionLabel"], ["get", F.path("shelf", "t1"), node, "GroupTitle"],
                ["get", F.path("shelf", "t1"), node, "ErrorCode"],
                ["list", F.path("shelf"), "0", "0", "children", "GroupTitle,ErrorCode,ResolutionAction,BrowsableStyle,DisplayName"])
            #expect(Array(lines[0...6]) == [
                "String category-grid", "String list", "String authentication-required", "String SignIn",
                "String Sign in", "String Songs", "String ",
            ])
            #expect(lines[7] == "DisplayName,ErrorCode,ResolutionAction DisplayName,GroupTitle", "\(lines[7])")
        }
    }

    @Test func theTreeServesExactlyTheContractInDBusFolder() async throws {
        try await withMediaTree { tree in
            func check(_ path: String, _ files: [String]) async throws -> ProcessOutput {
                try await tree.bus.run(
                    PrivateBus.systemPython,
                    ["\(repositoryRoot)/Scripts/check-contract.py", F.busName, path]
                        + files.map { "\(repositoryRoot)/dbus/\($0).xml" })
            }
            let root = try await check(
                F.root,
                ["org.gnome.UPnP.MediaObject2", "org.gnome.UPnP.MediaContainer2", "org.mprisbridge.MediaNode1",
                 "org.mprisbridge.MediaRoot1"])
            #expect(root.stdout == "match 54 members\n", "\(root.stdout)\(root.stderr)")
            let item = try await check(
                F.root + "/" + F.path("music", "album:1", "track:1-1"),
                ["org.gnome.UPnP.MediaObject2", "org.gnome.UPnP.MediaItem2", "org.mprisbridge.MediaNode1"])
            #expect(item.stdout == "match 37 members\n", "\(item.stdout)\(item.stderr)")
        }
    }
}

/// The deadline of a listing, in wall-clock time: run alone, after the other suites (Scripts/test).
@Suite(.timeLimit(.minutes(1))) struct MediaTreeRealTimeTests {
    typealias F = MediaTreeFixture

    @Test func aSlowContainerAnswersByTheDeadlineWithALoadingRowThenSignalsUpdatedOnce() async throws {
        try await withMediaTree(sampleTree(slowDelay: .seconds(3)), loadingDeadline: .milliseconds(200)) { tree in
            let lines = try await tree.client(["slow", F.path("slow")])
            let first = try #require(lines.first)
            let milliseconds = try #require(Int(first.split(separator: " ")[1]))
            // The deadline is 200 ms; the data source takes 3 s.
            #expect(milliseconds >= 150 && milliseconds < 2500, "\(first)")
            #expect(first.hasSuffix(": Slow 1|music|Playable Slow 2|music|Playable Loading…|container|Loading"))
            #expect(lines[1] == "updated 1; then: Slow 1|music|Playable Slow 2|music|Playable Slow 3|music|Playable Slow 4|music|Playable Slow 5|music|Playable")
        }
    }
}
