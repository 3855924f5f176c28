import DBusTestSupport
import ProcessTestSupport
import TestMedia
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `Python/stub_media_server.py` on a private bus: the Stub provider with two generated tones.
struct StubProvider {
    static let root = "/org/gnome/UPnP/MediaServer2/Stub"
    static let music = root + "/Music"

    let bus: PrivateBus
    let process: ChildProcess
    /// The two tones' files, in the order of the items.
    let files: [String]
    var urls: [String] { files.map { "file://" + $0 } }

    /// Generates the tones, starts the stub on a fresh bus, runs `body`, and stops both.
    static func with(searchable: Bool = false, _ body: (StubProvider) async throws -> Void) async throws {
        let folder = try TemporaryDirectory(prefix: "rygel-media")
        defer { folder.remove() }
        let files = [folder.path + "/tone1.ogg", folder.path + "/tone2.ogg"]
        for (index, file) in files.enumerated() {
            try await TestMedia.generate(.ogg, seconds: 0.5, frequency: 330 * (index + 1), at: file)
        }
        try await PrivateBus.with { bus in
            let process = try bus.spawn(
                PrivateBus.systemPython,
                ["-u", pythonScript("stub_media_server.py")] + (searchable ? ["--searchable"] : [])
                    + files.map { "file://" + $0 })
            defer { process.kill() }
            _ = try await process.waitForLine { $0 == "READY" }
            try await body(StubProvider(bus: bus, process: process, files: files))
        }
    }
}

/// Rygel's External plugin as a real UPnP consumer of a MediaServer2 tree (see RygelFixture).
@Suite struct RygelTests {
    @Test func rygelServesTheProvidersContainerAndItsTracks() async throws {
        try await StubProvider.with { stub in
            try await withRygel(bus: stub.bus.address, provider: "Stub") { rygel in
                let tree = try await rygel.browse()
                #expect(tree.map(\.depth) == [0, 1, 1], "\(tree)")
                let music = try #require(tree.first)
                #expect(music.isContainer)
                #expect(music.id == StubProvider.music, "a container's DIDL id is its object path")
                #expect(music.parentID == "0", "the provider's root is DIDL object 0")
                #expect(music.title == "Music")
                #expect(music.upnpClass == "object.container")
                #expect(music.childCount == 2)

                let tracks = try await rygel.browse(from: music.id)
                #expect(tracks == tree.dropFirst().map { var track = $0; track.depth = 0; return track })
                #expect(tracks.map(\.title) == ["Tone 1", "Tone 2"])
                #expect(tracks.map(\.id) == [StubProvider.music + "/Tone1", StubProvider.music + "/Tone2"])
                #expect(tracks.allSatisfy { !$0.isContainer && $0.parentID == music.id })
                #expect(tracks.allSatisfy { $0.upnpClass == "object.item.audioItem.musicTrack" })
                // Serving on loopback, Rygel also lists the provider's own URL (`internal:`); on a
                // network interface a renderer gets only Rygel's HTTP one.
                #expect(tracks.map { $0.url(for: "internal") } == stub.urls)

                let root = try #require(try await rygel.metadata(of: "0"))
                #expect(root.title == "Stub" && root.childCount == 1, "\(root)")

                // Rygel really serves the file behind the provider's URL.
                let http = try #require(tracks.last?.url(for: "http-get"), "\(tracks)")
                #expect(http.hasPrefix("http://127.0.0.1:\(rygel.port)/"))
                let copy = try TemporaryDirectory(prefix: "rygel-fetch")
                defer { copy.remove() }
                #expect(try await rygel.fetch(http, into: copy.path + "/tone2.ogg") == 200)
                let served = try Data(contentsOf: URL(filePath: copy.path + "/tone2.ogg"))
                #expect(served == (try Data(contentsOf: URL(filePath: stub.files[1]))))
            }
        }
    }

    @Test func rygelAnswersASearchByBrowsingNotByAskingTheProvider() async throws {
        // Even a provider that says Searchable gets no SearchObjects from Rygel 0.42: the External
        // plugin never stores the flag, so it walks the tree with ListChildren and filters itself.
        try await StubProvider.with(searchable: true) { stub in
            try await withRygel(bus: stub.bus.address, provider: "Stub") { rygel in
                let found = try await rygel.search(#"dc:title contains "2""#)
                #expect(found.map(\.title) == ["Tone 2"])
                #expect(found.map(\.id) == [StubProvider.music + "/Tone2"])
                _ = try await stub.process.waitForLine(timeout: .seconds(5)) {
                    $0.hasPrefix("CALL ListChildren \(StubProvider.music) ")
                }
                #expect(!stub.process.capturedStdout.contains("CALL SearchObjects"))
            }
        }
    }
}
