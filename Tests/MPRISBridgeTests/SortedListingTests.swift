import AudioTags
import DBusTestSupport
import Foundation
import ProcessTestSupport
import TestMedia
import Testing

/// dLeyna's sorted listings and counted search (`ListChildrenEx`, `ListContainersEx`,
/// `ListItemsEx`, `SearchObjectsEx`) and the root's `SortCaps`/`SearchCaps`, called by
/// python3-dbus, as GENIVI's media manager calls them through dLeyna, on the daemon serving a
/// generated library.
@Suite(.timeLimit(.minutes(2))) struct SortedListingTests {
    static let root = "/org/gnome/UPnP/MediaServer2/mprisbridge"

    /// Five tracks (title, artist, album, date, track number): titles whose case-insensitive
    /// order differs from their bytes' order, artists repeated, one track without a date.
    static let tags: [(title: String, artist: String, album: String, date: String?, number: Int)] = [
        ("delta", "Beta Band", "X", "2001", 3),
        ("alpha", "Alpha Band", "Y", "1999", 1),
        ("Charlie", "Beta Band", "X", "2001", 1),
        ("Bravo", "Zed", "Z", nil, 2),
        ("Echo", "Alpha Band", "Y", "1999", 2),
    ]

    static func library() async throws -> GeneratedLibrary {
        let folder = try TemporaryDirectory(prefix: "bridge-sorted")
        let source = folder.path + "/source.ogg"
        try await TestMedia.generate(.ogg, seconds: 3, frequency: 330, tags: TestMedia.Tags(), at: source)
        var tracks: [LibraryTrack] = []
        for (index, tag) in tags.enumerated() {
            let track = LibraryTrack(
                path: "\(tag.album)/\(index) \(tag.title).ogg", format: .ogg, seconds: 3, title: tag.title,
                album: tag.album, trackNumber: tag.number)
            let path = folder.path + "/music/" + track.path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: source, toPath: path)
            try AudioTags.write(
                [("TITLE", tag.title), ("ARTIST", tag.artist), ("ALBUM", tag.album), ("TRACKNUMBER", "\(tag.number)")]
                    + (tag.date.map { [("DATE", $0)] } ?? []),
                to: path)
            tracks.append(track)
        }
        try FileManager.default.removeItem(atPath: source)
        return GeneratedLibrary(folder: folder, tracks: tracks)
    }

    /// Runs python3-dbus calls on the tree: each line of `calls` is `METHOD PATH ARGS…` (ARGS a
    /// Python literal list); prints the DisplayNames of each reply (and TotalItems), or the
    /// error's name and message.
    static func calls(_ daemon: DaemonFixture, _ calls: [String]) async throws -> [String] {
        let script = """
            import ast, dbus, sys
            bus = dbus.SessionBus()
            for line in sys.stdin.read().splitlines():
                method, path, arguments = line.split(" ", 2)
                target = dbus.Interface(bus.get_object(sys.argv[1], sys.argv[2] + path),
                                        "org.gnome.UPnP.MediaContainer2")
                arguments = ast.literal_eval(arguments)
                try:
                    reply = getattr(target, method)(*arguments, signature="uuas" + "s" if method != "SearchObjectsEx" else "suuass")
                    if method == "SearchObjectsEx":
                        rows, total = reply
                        print("|".join(str(row["DisplayName"]) for row in rows), "total", int(total))
                    else:
                        print("|".join(str(row["DisplayName"]) for row in reply))
                except dbus.DBusException as error:
                    print(error.get_dbus_name(), error.get_dbus_message())
            """
        let output = try await daemon.bus.python(
            script, ["org.gnome.UPnP.MediaServer2.mprisbridge", root], input: calls.joined(separator: "\n") + "\n")
        #expect(output.succeeded, "\(output)")
        // An empty listing is an empty line.
        return output.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test func theExMethodsSortByTheIndexAndSearchObjectsExCounts() async throws {
        try await DaemonFixture.with(library: try await Self.library()) { daemon in
            let lines = try await Self.calls(
                daemon,
                [
                    "ListItemsEx /tracks [0, 0, ['DisplayName'], '-Artist,+DisplayName']",
                    "ListItemsEx /tracks [1, 2, ['DisplayName'], '-Artist,+DisplayName']",
                    "ListChildrenEx /tracks [0, 0, ['*'], '+Date,-TrackNumber']",
                    "ListItemsEx /tracks [0, 0, ['DisplayName'], '-Date']",
                    "ListItemsEx /tracks [0, 0, ['DisplayName'], '']",
                    "ListContainersEx /albums [0, 0, ['DisplayName'], '-DisplayName']",
                    "ListContainersEx /albums [0, 0, ['DisplayName'], '+Date']",
                    "ListItemsEx /albums [0, 0, ['DisplayName'], '+Date']",
                    "SearchObjectsEx  ['upnp:class derivedfrom \"object.item.audioItem\"', 0, 2, ['DisplayName'], '+DisplayName']",
                    "SearchObjectsEx  ['Artist = \"beta band\"', 0, 0, ['DisplayName'], '+DisplayName']",
                    "SearchObjectsEx  ['Artist = \"beta band\"', 1, 1, ['DisplayName'], '-DisplayName']",
                ])
            #expect(
                lines == [
                    // Zed, then Beta Band, then Alpha Band; titles case-insensitively within.
                    "Bravo|Charlie|delta|alpha|Echo",
                    "Charlie|delta",
                    // 1999 before 2001, higher track numbers first; the undated last.
                    "Echo|alpha|delta|Charlie|Bravo",
                    // Descending, the undated still last; ties keep the Tracks tab's order.
                    "Charlie|delta|alpha|Echo|Bravo",
                    "alpha|Bravo|Charlie|delta|Echo",
                    "Z|Y|X",
                    "Y|X|Z",
                    "",
                    "alpha|Bravo total 5",
                    // The artist, its album and its two tracks.
                    "Beta Band|Charlie|delta|X total 4",
                    "delta total 4",
                ], "\(lines)")
        }
    }

    @Test func contentLimitsCapTheSortedRowsAndTheTotal() async throws {
        try await DaemonFixture.with(library: try await Self.library()) { daemon in
            let limits = try await daemon.bus.run(
                "gdbus",
                ["call", "--session", "--dest", "org.gnome.UPnP.MediaServer2.mprisbridge", "--object-path", Self.root,
                 "--method", "org.mprisbridge.MediaRoot1.SetContentLimits", "true", "3", "5"])
            #expect(limits.succeeded, "\(limits)")
            let lines = try await Self.calls(
                daemon,
                [
                    "ListItemsEx /tracks [0, 0, ['DisplayName'], '-Artist,+DisplayName']",
                    "ListItemsEx /tracks [2, 10, ['DisplayName'], '-Artist,+DisplayName']",
                    "SearchObjectsEx  ['upnp:class derivedfrom \"object.item.audioItem\"', 0, 0, ['DisplayName'], '-DisplayName']",
                ])
            // The first three rows of the sorted listing, as a screen shows them.
            #expect(lines == ["Bravo|Charlie|delta", "delta", "Echo|delta|Charlie total 3"], "\(lines)")
        }
    }

    @Test func aBadSortByIsInvalidArgsAndTheCapabilitiesSayWhatIsAccepted() async throws {
        try await DaemonFixture.with(library: try await Self.library()) { daemon in
            let long = "+DisplayName," + String(repeating: "x", count: 300)
            let lines = try await Self.calls(
                daemon,
                [
                    "ListChildrenEx /tracks [0, 0, ['DisplayName'], 'DisplayName']",
                    "ListItemsEx /tracks [0, 0, ['DisplayName'], '+Bitrate']",
                    "ListContainersEx /albums [0, 0, ['DisplayName'], '+DisplayName,-DisplayName']",
                    "ListChildrenEx /tracks [0, 0, ['DisplayName'], '+Artist, +DisplayName']",
                    "ListChildrenEx /tracks [0, 0, ['DisplayName'], '+Artist,']",
                    "ListChildrenEx /tracks [0, 0, ['DisplayName'], '\(long)']",
                    "SearchObjectsEx  ['*', 0, 0, ['DisplayName'], '+URLs']",
                ])
            #expect(lines.count == 7, "\(lines)")
            for line in lines { #expect(line.hasPrefix("org.freedesktop.DBus.Error.InvalidArgs "), "\(line)") }
            #expect(lines[0].contains("'DisplayName' must start with + or -"), "\(lines[0])")
            #expect(lines[1].contains("'Bitrate'"), "\(lines[1])")
            #expect(lines[2].contains("'DisplayName' appears twice"), "\(lines[2])")
            #expect(lines[5].contains("longer than 256"), "\(lines[5])")
            #expect(lines[6].contains("'URLs'"), "\(lines[6])")
            // Nothing changed: the natural listing is as before.
            #expect(try await Self.calls(daemon, ["ListItemsEx /tracks [0, 0, ['DisplayName'], '']"]) == ["alpha|Bravo|Charlie|delta|Echo"])

            let caps = try await daemon.bus.python(
                """
                import dbus, sys
                root = dbus.SessionBus().get_object(sys.argv[1], sys.argv[2])
                properties = root.GetAll("org.mprisbridge.MediaRoot1", dbus_interface="org.freedesktop.DBus.Properties")
                print(",".join(properties["SortCaps"]))
                print(",".join(properties["SearchCaps"]))
                """, ["org.gnome.UPnP.MediaServer2.mprisbridge", Self.root])
            #expect(caps.succeeded, "\(caps)")
            let capsLines = caps.stdout.split(separator: "\n").map(String.init)
            #expect(capsLines.first == "DisplayName,Type,Artist,Album,Genre,Date,TrackNumber,Duration", "\(caps)")
            #expect(capsLines.last?.hasPrefix("DisplayName,Artist,Album,Genre,MIMEType,Date,TrackNumber,Duration,Type") == true, "\(caps)")
            #expect(capsLines.last?.contains("upnp:class") == true, "\(caps)")
        }
    }
}
