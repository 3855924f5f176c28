import MediaRemote
import MusicLibrary
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Walks `tree` and `reference` together from their tabs and expects every container's count and
/// every row to be equal; returns the rows compared.
func compareEveryRow(of tree: LibraryContent, with reference: LibraryContent) -> Int {
    var compared = 0
    var paths: [IndexPath] = (0..<5).map { [$0] }
    while let path = paths.popLast() {
        let count = reference.numberOfChildItems(at: path)
        #expect(tree.numberOfChildItems(at: path) == count)
        for index in 0..<count {
            let child = path.appending(index)
            let item = reference.contentItem(at: child)
            #expect(tree.contentItem(at: child) == item, "at \(Array(child))")
            compared += 1
            if item?.isContainer == true { paths.append(child) }
        }
    }
    return compared
}
