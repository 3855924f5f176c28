import DBus
import MediaRemote
import ProcessTestSupport
import Testing

@testable import MPRIS

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A listing's rows written straight to the wire are, byte for byte, what the general path
/// (a `DBusValue` per row, written as any reply is) sends: the same properties, values and order.
@Suite struct ListingWireTests {
    @Test(arguments: ["*", "DisplayName,URLs,Artist,Nonsense", "Parent,Type,Path,ArtUrl,AlbumArt,Actions,GroupTitle"])
    func rowsWrittenToTheWireEqualTheGeneralPathsRows(_ filterText: String) async throws {
        let artwork = try TemporaryDirectory(prefix: "listing-wire-artwork")
        defer { artwork.remove() }
        let big = TestNode.container(
            "big", "Big", (0..<300).map { .track("t\($0)", "Track \($0)", artist: "Ann", album: "Big", number: $0) })
        let content = TestContent(sampleTree() + [big], tellsLeafContainers: true)
        let manager = PlayableContentManager(
            dataSource: content, delegate: TestDelegate(), loadingDeadline: .seconds(5), pagedContainerThreshold: 100)
        let service = try MediaTreeService(
            name: "wire_test", displayName: "Test Music", content: manager, artworkCacheDirectory: artwork.path)
        manager.nowPlayingIdentifiers = ["t150", "track:1-2"]
        let filter = MediaTreeNodes.Filter(filterText.split(separator: ",").map(String.init))
        // The root (tabs), an album, odd identifiers with an informative row, a page of a paged container.
        let pages: [([String], Int, Int)] = [([], 0, 0), (["music", "album:1"], 0, 0), (["odd"], 0, 0), (["big"], 100, 100)]
        for (path, offset, maximum) in pages {
            let listing = try await manager.listChildren(of: path, offset: offset, maximum: maximum == 0 ? nil : maximum)
            #expect(!listing.entries.isEmpty)
            let general = EncodedResults.wireBytes(of: [service.nodes.dictionaries(listing.entries, filter: filter)])
            let direct = service.nodes.encodedRows(listing.entries, filter: filter)
            #expect(general != nil)
            #expect(direct == general, "\(path) with \(filterText)")
        }
        // A search's rows come from many containers.
        let found = try await manager.search(.text("Song"), below: [], offset: 0, maximum: 100)
        #expect(found.count > 3)
        #expect(service.nodes.encodedRows(found, filter: filter) == EncodedResults.wireBytes(of: [service.nodes.dictionaries(found, filter: filter)]))
    }
}
