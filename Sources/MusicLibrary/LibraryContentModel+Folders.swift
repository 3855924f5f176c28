extension LibraryContentModel {
    /// The folders of the tracks' relative paths and their ancestors.
    struct FolderBuild {
        struct Draft {
            var path: Substring
            var name: Substring
            var parent: Int?
            var text = 0
            var subfolders: [Int] = []
            var tracks: [Int] = []
        }
        var drafts = [Draft(path: "", name: "Folders", parent: nil)]
        var folderOfTrack: [Int] = []
        var positionInFolder: [Int] = []
        /// The tracks' file names, folded, to order the tracks of a folder.
        private var fileNames = FoldedTextTable()

        init<Outline: TrackOutlining>(_ tracks: [Outline]) {
            var byPath: [PathKey: Int] = [PathKey(""): 0]
            var last: (path: Substring, folder: Int) = ("", 0)
            folderOfTrack.reserveCapacity(tracks.count)
            for index in tracks.indices {
                let (folderPath, name) = Self.split(Substring(tracks[index].id))
                let folder: Int
                if folderPath.utf8.elementsEqual(last.path.utf8) {
                    folder = last.folder
                } else {
                    folder = Self.folder(folderPath, &drafts, &byPath)
                    last = (folderPath, folder)
                }
                drafts[folder].tracks.append(index)
                folderOfTrack.append(folder)
                _ = fileNames.append(name)
            }
        }

        /// A folder path compared and hashed by its bytes, as the file system tells folders
        /// apart (and cheaper than `String`'s Unicode-aware hashing).
        private struct PathKey: Hashable {
            let path: Substring
            init(_ path: Substring) { self.path = path }
            static func == (left: PathKey, right: PathKey) -> Bool { left.path.utf8.elementsEqual(right.path.utf8) }
            func hash(into hasher: inout Hasher) {
                if path.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) })
                    == nil
                {
                    for byte in path.utf8 { hasher.combine(byte) }
                }
            }
        }

        /// A path's folder and last component, split at its last `/`.
        private static func split(_ path: Substring) -> (folder: Substring, name: Substring) {
            guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
            return (path[..<slash], path[path.index(after: slash)...])
        }

        private static func folder(_ path: Substring, _ drafts: inout [Draft], _ byPath: inout [PathKey: Int]) -> Int {
            if let existing = byPath[PathKey(path)] { return existing }
            let (parentPath, name) = split(path)
            let parent = folder(parentPath, &drafts, &byPath)
            let index = drafts.count
            drafts.append(Draft(path: path, name: name, parent: parent))
            drafts[parent].subfolders.append(index)
            byPath[PathKey(path)] = index
            return index
        }

        /// The folders, their subfolders sorted by the ranks of their names' texts, their
        /// tracks by file name.
        mutating func folders(rank: [Int], trackIDs: (Int) -> String) -> [FolderNode] {
            positionInFolder = [Int](repeating: 0, count: folderOfTrack.count)
            var positionInParent = [Int](repeating: 0, count: drafts.count)
            let texts = drafts.map(\.text)
            let names = drafts.map(\.name)
            for index in drafts.indices {
                drafts[index].subfolders.sort { left, right in
                    rank[texts[left]] != rank[texts[right]]
                        ? rank[texts[left]] < rank[texts[right]] : names[left] < names[right]
                }
                let tracks = drafts[index].tracks
                drafts[index].tracks = fileNames.withReader { names in
                    tracks.sorted { left, right in
                        let order = names.compare(left, right)
                        return order != 0 ? order < 0 : trackIDs(left) < trackIDs(right)
                    }
                }
                for (position, child) in drafts[index].subfolders.enumerated() { positionInParent[child] = position }
                for (position, track) in drafts[index].tracks.enumerated() { positionInFolder[track] = position }
            }
            return drafts.enumerated().map { index, draft in
                FolderNode(
                    path: String(draft.path), name: String(draft.name),
                    identifier: index == 0
                        ? LibraryContent.Tab.folders.identifier
                        : LibraryContentModel.folderIdentifier(String(draft.path)),
                    text: draft.text, parent: draft.parent, positionInParent: positionInParent[index],
                    subfolders: draft.subfolders, tracks: draft.tracks)
            }
        }
    }
}
