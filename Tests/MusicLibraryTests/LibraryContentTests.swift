import AsyncSupport
import MediaRemote
import MusicLibrary
import Synchronization
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The library's browsable tree, from synthetic tracks and playlists (no media files).
@Suite struct LibraryContentTests {
    // MARK: The library

    static func track(
        _ path: String, _ title: String, artists: [String] = [], album: String? = nil, albumArtists: [String] = [],
        number: Int? = nil, disc: Int? = nil, date: String? = nil, genres: [String] = []
    ) -> Track {
        Track(
            id: path, url: URL(filePath: "/music/" + path), title: title, artists: artists, album: album,
            albumArtists: albumArtists, genres: genres, trackNumber: number, discNumber: disc, releaseDate: date,
            duration: .seconds(180), mimeType: "audio/flac", fileSize: 1000)
    }

    static let tracks: [Track] = [
        track(
            "ABBA/Arrival/02.flac", "Dancing Queen", artists: ["ABBA"], album: "Arrival", albumArtists: ["ABBA"],
            number: 2, date: "1976", genres: ["Pop"]),
        track(
            "ABBA/Arrival/01.flac", "When I Kissed the Teacher", artists: ["ABBA"], album: "Arrival",
            albumArtists: ["ABBA"], number: 1, date: "1976"),
        track(
            "ABBA/Arrival/03.flac", "My Love, My Life", artists: ["ABBA"], album: "Arrival", albumArtists: ["ABBA"],
            number: 3, date: "1976"),
        track(
            "ABBA/Waterloo/01.flac", "Waterloo", artists: ["ABBA"], album: "Waterloo", albumArtists: ["ABBA"],
            number: 1, date: "1974-03-04"),
        track(
            "Beatles/White/2-01.flac", "Birthday", artists: ["The Beatles"], album: "The White Album",
            albumArtists: ["The Beatles"], number: 1, disc: 2),
        track(
            "Beatles/White/1-02.flac", "Dear Prudence", artists: ["The Beatles"], album: "The White Album",
            albumArtists: ["The Beatles"], number: 2, disc: 1),
        track(
            "Beatles/White/1-01.flac", "Back in the U.S.S.R.", artists: ["The Beatles"], album: "The White Album",
            albumArtists: ["The Beatles"], number: 1, disc: 1),
        track(
            "Beatles/Hits/01.flac", "Help!", artists: ["John", "Paul"], album: "Greatest Hits",
            albumArtists: ["The Beatles"], number: 1),
        track("Queen/Hits/01.flac", "Bohemian Rhapsody", artists: ["Queen"], album: "Greatest Hits", number: 1),
        track("beck/Odelay/01.flac", "Devils Haircut", artists: ["beck"], album: "Odelay", number: 1),
        track("Björk/Homogenic/01.flac", "Jóga", artists: ["Björk"], album: "Homogenic"),
        track("Solo/single.flac", "Alone", artists: ["Solo"]),
        track("loose.flac", "loose"),
    ]

    static let stream = URL(string: "https://radio.example/live.mp3")!

    static let playlists: [Playlist] = [
        Playlist(
            id: "Playlists/road.m3u8", name: "Road Trip", url: URL(filePath: "/music/Playlists/road.m3u8"),
            entries: [
                .track("ABBA/Arrival/02.flac"), .stream(stream, title: "Radio X"), .missing("gone.flac"),
                .track("ABBA/Waterloo/01.flac"), .track("not/indexed.flac"), .track("ABBA/Arrival/02.flac"),
            ]),
        Playlist(
            id: "ambient.m3u", name: "ambient", url: URL(filePath: "/music/ambient.m3u"),
            entries: [.track("Björk/Homogenic/01.flac")]),
    ]

    static func makeContent(tracks: [Track] = tracks, playlists: [Playlist] = playlists) -> LibraryContent {
        LibraryContent(
            tracks: tracks, playlists: playlists, libraryName: "~/Music",
            artworkURL: { track in track.id.hasPrefix("ABBA/") ? URL(filePath: "/covers/abba.jpg") : nil })
    }

    let content = makeContent()

    // MARK: Helpers

    func titles(at indexPath: IndexPath, in content: LibraryContent? = nil) -> [String] {
        let content = content ?? self.content
        return (0..<content.numberOfChildItems(at: indexPath)).map {
            content.contentItem(at: indexPath.appending($0))?.title ?? "<nil>"
        }
    }

    func identifiers(at indexPath: IndexPath) -> [String] {
        (0..<content.numberOfChildItems(at: indexPath)).map {
            content.contentItem(at: indexPath.appending($0))?.identifier ?? "<nil>"
        }
    }

    /// The index path of the child of `indexPath` titled `title`.
    func child(_ title: String, of indexPath: IndexPath, in content: LibraryContent? = nil) throws -> IndexPath {
        let index = try #require(
            titles(at: indexPath, in: content).firstIndex(of: title), "\(title) under \(indexPath)")
        return indexPath.appending(index)
    }

    /// Every index path below `indexPath`, parents before their children.
    func allIndexPaths(below indexPath: IndexPath = [], in content: LibraryContent? = nil) -> [IndexPath] {
        let content = content ?? self.content
        return (0..<content.numberOfChildItems(at: indexPath)).flatMap { index -> [IndexPath] in
            let path = indexPath.appending(index)
            return [path] + allIndexPaths(below: path, in: content)
        }
    }

    // MARK: Shape

    @Test func rootHasTheSixTabsInOrder() {
        #expect(content.numberOfChildItems(at: []) == 6)
        #expect(identifiers(at: []) == ["artists", "albums", "tracks", "playlists", "folders", "recent"])
        #expect(titles(at: []) == ["Artists", "Albums", "Tracks", "Playlists", "Folders", "Recent"])
        for index in 0..<6 {
            let tab = content.contentItem(at: [index])
            #expect(tab?.isContainer == true && tab?.isPlayable == false)
        }
        #expect(content.numberOfChildItems(at: [0]) == 7)  // ABBA, beck, Björk, Queen, Solo, The Beatles, Unknown Artist
        #expect(content.numberOfChildItems(at: [1]) == 9)
        #expect(content.numberOfChildItems(at: [2]) == Self.tracks.count)
        #expect(content.numberOfChildItems(at: [3]) == 2)
        #expect(titles(at: [4]) == ["ABBA", "Beatles", "beck", "Björk", "Queen", "Solo", "loose"])
        #expect(content.numberOfChildItems(at: [5]) == 0)  // nothing played yet
        #expect(LibraryContent.playlistLocations == [[1], [3]])
        #expect(content.contentItem(at: [6]) == nil)
        #expect(content.contentItem(at: [0, 99]) == nil)
        #expect(content.contentItem(at: [0, -1]) == nil)
        #expect(content.numberOfChildItems(at: [9, 9, 9]) == 0)
    }

    @Test func everyItemIsReachableWithTitleFlagsAndIdentifierLookup() async throws {
        let paths = allIndexPaths()
        #expect(paths.count > 100)
        for path in paths {
            let item = try #require(content.contentItem(at: path), "item at \(path)")
            #expect(item.title?.isEmpty == false, "title at \(path)")
            let isLeaf = item.identifier.hasPrefix("track:") || item.identifier.hasPrefix("stream:")
            #expect(item.isContainer == !isLeaf, "\(item.identifier)")
            #expect(item.isPlayable == (path.count > 1), "\(item.identifier)")
            #expect(item.isStreamingContent == item.identifier.hasPrefix("stream:"))
            if isLeaf {
                #expect(content.numberOfChildItems(at: path) == 0)
                #expect(item.media?.url != nil)
            }
            let siblings = identifiers(at: path.dropLast())
            #expect(Set(siblings).count == siblings.count, "siblings of \(path) have unique identifiers")
            // A heading belongs to the listing, not to the row.
            var row = item
            row.groupTitle = nil
            #expect(try await content.contentItem(forIdentifier: item.identifier) == row, "\(item.identifier)")
        }
        #expect(try await content.contentItem(forIdentifier: "track:nope") == nil)
        #expect(try await content.contentItem(forIdentifier: "nonsense") == nil)
        #expect(try await content.contentItem(forIdentifier: "status") == nil)
    }

    @Test func itemsCarryTheirFields() throws {
        let arrival = try child("Arrival", of: child("ABBA", of: [0]))
        let album = try #require(content.contentItem(at: arrival))
        #expect(album.identifier == "album:ABBA\u{1F}Arrival")
        #expect(album.subtitle == "ABBA")
        #expect(album.artwork == .url(URL(filePath: "/covers/abba.jpg")))
        #expect(album.media?.date == "1976")
        let abba = try #require(content.contentItem(at: child("ABBA", of: [0])))
        #expect(abba.subtitle == "2 albums")
        #expect(abba.identifier == "artist:ABBA")
        #expect(abba.artwork == .url(URL(filePath: "/covers/abba.jpg")))

        let queen = try #require(content.contentItem(at: child("Dancing Queen", of: arrival)))
        #expect(queen.identifier == "track:ABBA/Arrival/02.flac")
        #expect(queen.subtitle == "ABBA — Arrival")
        #expect(!queen.isContainer && queen.isPlayable && !queen.isStreamingContent)
        let media = try #require(queen.media)
        #expect(media.url == URL(filePath: "/music/ABBA/Arrival/02.flac"))
        #expect(media.mimeType == "audio/flac" && media.duration == .seconds(180) && media.size == 1000)
        #expect(media.artist == "ABBA" && media.album == "Arrival" && media.genre == "Pop")
        #expect(media.trackNumber == 2 && media.date == "1976")

        let help = try #require(content.contentItem(at: child("Help!", of: [2])))
        #expect(help.subtitle == "John, Paul — Greatest Hits")
        #expect(help.artwork == nil)
    }

    // MARK: Sorting and grouping

    @Test func sortsCaseInsensitivelyByTheDocumentedKeys() throws {
        #expect(titles(at: [0]) == ["ABBA", "beck", "Björk", "Queen", "Solo", "The Beatles", "Unknown Artist"])
        // An artist's albums by date, then title; an album's tracks by disc, number, title.
        #expect(try titles(at: child("ABBA", of: [0])) == ["Waterloo", "Arrival"])
        #expect(
            try titles(at: child("Arrival", of: child("ABBA", of: [0]))) == [
                "When I Kissed the Teacher", "Dancing Queen", "My Love, My Life",
            ])
        #expect(
            try titles(at: child("The White Album", of: [1])) == ["Back in the U.S.S.R.", "Dear Prudence", "Birthday"])
        #expect(
            titles(at: [1]) == [
                "Arrival", "Greatest Hits", "Greatest Hits", "Homogenic", "Odelay", "The White Album", "Unknown Album",
                "Unknown Album", "Waterloo",
            ])
        #expect(
            titles(at: [2]) == [
                "Alone", "Back in the U.S.S.R.", "Birthday", "Bohemian Rhapsody", "Dancing Queen", "Dear Prudence",
                "Devils Haircut", "Help!", "Jóga", "loose", "My Love, My Life", "Waterloo", "When I Kissed the Teacher",
            ])
        #expect(titles(at: [3]) == ["ambient", "Road Trip"])
        // Folders: subfolders first, by name; then tracks, by file name.
        #expect(try titles(at: child("Beatles", of: [4])) == ["Hits", "White"])
        #expect(
            try titles(at: child("White", of: child("Beatles", of: [4]))) == [
                "Back in the U.S.S.R.", "Dear Prudence", "Birthday",
            ])
        #expect(titles(at: [4]).last == "loose")
        let whiteFolder = try content.contentItem(at: child("White", of: child("Beatles", of: [4])))
        #expect(whiteFolder?.identifier == "folder:Beatles/White")
        #expect(whiteFolder?.isPlayable == true && whiteFolder?.isContainer == true)
    }

    @Test func tracksWithoutArtistOrAlbumAreFiledAsUnknown() throws {
        let unknown = try child("Unknown Artist", of: [0])
        #expect(titles(at: unknown) == ["Unknown Album"])
        #expect(titles(at: unknown.appending(0)) == ["loose"])
        #expect(content.contentItem(at: unknown.appending(0))?.identifier == "album:Unknown Artist\u{1F}Unknown Album")
        // A track with an artist but no album: under its artist, on Unknown Album.
        let solo = try child("Solo", of: [0])
        #expect(titles(at: solo) == ["Unknown Album"])
        #expect(titles(at: solo.appending(0)) == ["Alone"])
        let loose = try #require(content.contentItem(at: child("loose", of: [2])))
        #expect(loose.subtitle == nil && loose.media?.artist == nil && loose.media?.album == nil)
    }

    @Test func albumsWithTheSameNameUnderDifferentArtistsStaySeparate() throws {
        let albums = (0..<content.numberOfChildItems(at: [1])).compactMap { content.contentItem(at: [1, $0]) }
            .filter { $0.title == "Greatest Hits" }
        #expect(albums.map(\.subtitle) == ["Queen", "The Beatles"])
        #expect(Set(albums.map(\.identifier)).count == 2)
        let first = try child("Greatest Hits", of: [1])
        #expect(titles(at: first) == ["Bohemian Rhapsody"])
        #expect(titles(at: [1, first[1] + 1]) == ["Help!"])
        // Filed under the album artist, not the track's artists.
        #expect(try titles(at: child("The Beatles", of: [0])) == ["Greatest Hits", "The White Album"])
    }

    // MARK: Layouts and the Recent tab

    @Test func theCarLayoutShowsRecentArtistsAlbumsAndPlaylists() async throws {
        let car = LibraryContent(tracks: Self.tracks, playlists: [], libraryName: "~/Music", artwork: { _ in nil }, layout: .car)
        #expect((0..<car.numberOfChildItems(at: [])).compactMap { car.contentItem(at: [$0])?.identifier } == ["recent", "artists", "albums", "playlists"])
        #expect(LibraryContent.Layout.car.playlistLocations == [[2], [3]])
        #expect(car.contentItem(at: [2])?.browsableChildrenStyle == .grid)
        // Playing a track puts its album first; playing from a playlist or an artist, that container.
        let album = try #require(car.contentItem(at: [2, 0]))
        let track = try #require(car.contentItem(at: [2, 0, 0]))
        #expect(car.notePlayed([track.identifier]) == [album.identifier])
        #expect(car.notePlayed([album.identifier, track.identifier]) == nil)  // already first
        let artist = try #require(car.contentItem(at: [1, 1]))
        #expect(car.notePlayed([artist.identifier, track.identifier]) == [artist.identifier, album.identifier])
        #expect(car.numberOfChildItems(at: [0]) == 2)
        #expect(car.contentItem(at: [0, 0]) == artist)
        // Its rows open as they do in their own tab.
        #expect(car.numberOfChildItems(at: [0, 1]) == car.numberOfChildItems(at: [2, 0]))
        #expect(car.changedContainerIdentifiers()?.contains("recent") == true)
        // Searching the root finds tracks in their albums: the car layout has no Tracks tab.
        let found = try await car.searchContent(matching: ContentQuery.text(track.title!), in: [])
        #expect(found.contains([2, 0, 0]))
        // A row's place in Recent is not its place in its own tab: every row reads, with its
        // neighbours' covers, wherever it comes in the list.
        let artists = (0..<car.numberOfChildItems(at: [1])).compactMap { car.contentItem(at: [1, $0])?.identifier }
        let albums = (0..<car.numberOfChildItems(at: [2])).compactMap { car.contentItem(at: [2, $0])?.identifier }
        car.setRecentlyPlayed(artists + albums)
        #expect(car.numberOfChildItems(at: [0]) == artists.count + albums.count)
        #expect((0..<car.numberOfChildItems(at: [0])).compactMap { car.contentItem(at: [0, $0])?.identifier } == artists + albums)
        // Kept at most recentLimit, and what the tree no longer has is not listed.
        car.setRecentlyPlayed((0..<30).map { "album:gone \($0)" } + [album.identifier])
        #expect(car.recentlyPlayed.count == LibraryContent.recentLimit)
        #expect(car.numberOfChildItems(at: [0]) == 0)
    }

    @Test func aFolderWithSubfoldersAndTracksGroupsThemUnderHeadings() throws {
        let content = LibraryContent(
            tracks: [Self.track("Mix/a.flac", "A"), Self.track("Mix/Live/b.flac", "B"), Self.track("Solo/c.flac", "C")],
            playlists: [], libraryName: "~/Music", artwork: { _ in nil })
        let folders = try #require(LibraryContent.Layout.full.indexPath(of: .folders))
        #expect(titles(of: content, at: folders) == ["Mix", "Solo"])
        let mix = folders.appending(0)
        #expect(titles(of: content, at: mix) == ["Live", "A"])
        #expect(content.contentItem(at: mix.appending(0))?.groupTitle == "Folders")
        #expect(content.contentItem(at: mix.appending(1))?.groupTitle == "Tracks")
        // Only tracks: no headings.
        #expect(content.contentItem(at: folders.appending([1, 0]))?.groupTitle == nil)
        #expect(content.contentItem(at: folders.appending(1))?.groupTitle == nil)
    }

    private func titles(of content: LibraryContent, at path: IndexPath) -> [String] {
        (0..<content.numberOfChildItems(at: path)).compactMap { content.contentItem(at: path.appending($0))?.title }
    }

    // MARK: The informative row

    @Test func anEmptyLibraryShowsWhyFirst() async throws {
        let content = LibraryContent(tracks: [], playlists: [], libraryName: "~/Music")
        content.setStatus(.indexing)
        #expect(content.status == .indexing)
        #expect(content.numberOfChildItems(at: []) == 7)
        let row = try #require(content.contentItem(at: [6]))
        #expect(row.isInformative && row.title == "Indexing your music…" && row.identifier == "status")
        #expect(try await content.contentItem(forIdentifier: "status") == row)
        // The tabs keep their index paths.
        #expect(content.contentItem(at: LibraryContent.playlistLocations[0])?.identifier == "albums")
        #expect(content.contentItem(at: LibraryContent.playlistLocations[1])?.identifier == "playlists")
        #expect(content.playback(forItemAt: [6]) == nil)

        // Remotes see it first.
        let manager = PlayableContentManager(dataSource: content)
        let listing = try await manager.listChildren(of: [])
        #expect(
            listing.entries.map(\.item.identifier) == ["status", "artists", "albums", "tracks", "playlists", "folders", "recent"])

        content.setStatus(.unavailable("Cannot read /media/usb: no such folder"))
        #expect(content.contentItem(at: [6])?.title == "Cannot read /media/usb: no such folder")
        content.setStatus(.ready)
        #expect(content.contentItem(at: [6])?.title == "No music found in ~/Music")

        content.setStatus(.indexing)
        content.update(tracks: Self.tracks, playlists: [])
        #expect(content.numberOfChildItems(at: []) == 6)
        #expect(content.contentItem(at: [6]) == nil)
        #expect(try await content.contentItem(forIdentifier: "status") == nil)
    }

    // MARK: Search

    func searchTitles(_ query: ContentQuery, in indexPath: IndexPath = []) async throws -> [String] {
        try await content.searchContent(matching: query, in: indexPath).map {
            content.contentItem(at: $0)?.title ?? "<nil>"
        }
    }

    @Test func searchAtTheRootFindsArtistsThenAlbumsThenTracksInTheirTabs() async throws {
        #expect(content.supportsSearch)
        let found = try await content.searchContent(matching: .text("queen"), in: [])
        #expect(found.map { $0[0] } == [0, 1, 2, 2])
        #expect(
            found.map { content.contentItem(at: $0)?.title } == [
                "Queen", "Greatest Hits", "Bohemian Rhapsody", "Dancing Queen",
            ])
        #expect(found[1] == (try child("Greatest Hits", of: [1])))
        // Case-insensitive, on the artist and album too.
        #expect(
            try await searchTitles(.text("ARRIVAL")) == [
                "Arrival", "Dancing Queen", "My Love, My Life", "When I Kissed the Teacher",
            ])
        #expect(try await searchTitles(.compare(.artist, .contains, "bJöRk")) == ["Björk", "Homogenic", "Jóga"])
        #expect(try await searchTitles(.text("no such thing")) == [])
    }

    @Test func searchInsideAContainerFindsItsDescendantsAtTheirPaths() async throws {
        let abba = try child("ABBA", of: [0])
        let found = try await content.searchContent(matching: .text("QUEEN"), in: abba)
        #expect(found == [try child("Dancing Queen", of: child("Arrival", of: abba))])
        // Containers match too, parents before children.
        #expect(try await searchTitles(.text("waterloo"), in: abba) == ["Waterloo", "Waterloo"])
        // In Playlists: “ambient” has no “o” but its Jóga is on Homogenic; Road Trip's Dancing Queen has none.
        #expect(try await searchTitles(.text("o"), in: [3]) == ["Jóga", "Road Trip", "Radio X", "Waterloo"])
        #expect(try await searchTitles(.compare(.title, .contains, "white"), in: [4]) == ["White"])
        // A field without a fast path: answered from the item.
        #expect(try await searchTitles(.compare(.genre, .equal, "pop"), in: [2]) == ["Dancing Queen"])
        await #expect(throws: ContentError.self) { try await content.searchContent(matching: .all, in: [7]) }
    }

    /// The fast path answers as `ContentQuery.matches` does on the item, for every row, also
    /// for text whose bytes and characters differ: a decomposed “é”, U+037E (which is “;”), CR LF.
    @Test func searchAgreesWithMatchingEachItem() async throws {
        let content = Self.makeContent(
            tracks: Self.tracks + [
                Self.track("Edge/cafe.flac", "Cafe\u{301} Society", artists: ["Ame\u{301}lie"], album: "Cafe\u{301}"),
                Self.track("Edge/why.flac", "Why\u{37E} Not", artists: ["Zoe`"], album: "Lines"),
                Self.track("Edge/lines.flac", "Line\r\nBreak", artists: ["CR\rLF"], album: "Café"),
                Self.track("Edge/flags.flac", "🇺🇸🇫🇷 Flags", artists: ["\u{600}12 Prepended"], album: "한국"),
                Self.track("Edge/ring.flac", "Ring a\u{20DD}y", artists: ["Ring"]),
            ])
        let queries: [ContentQuery] = [
            .text("a"), .text("É"), .text("jÓ"), .text(""), .text("LOOSE"), .text("queen"), .text("cafe"),
            .text("café"), .text("e"), .text(";"), .text("`"), .text("\n"), .text("\r"), .text("\u{37E}"),
            .text("\u{301}"), .text("e\u{301}"), .text("fe\u{301} s"), .text("🇸🇫"), .text("🇫🇷"), .text("12"),
            .text("한"), .text("\r\n"), .text("\u{20DD}y"), .text("\u{600}"), .text("a\u{20DD}"),
            .compare(.title, .equal, "WATERLOO"), .compare(.title, .less, "b"), .compare(.title, .doesNotContain, "e"),
            .exists(.album, false), .compare(.album, .notEqual, "arrival"), .compare(.album, .greaterOrEqual, "café"),
            .compare(.kind, .derivedFrom, "container"), .compare(.title, .derivedFrom, "help!"),
            .and(.compare(.kind, .equal, "music"), .or(.text("hits"), .compare(.trackNumber, .greater, "1"))),
            .compare(.identifier, .contains, "folder:"), .exists(.genre, true),
        ]
        for container in [IndexPath(), [0], [1], [2], [3], [4]] {
            let candidates =
                container.isEmpty
                ? (0..<3).flatMap { tab in allIndexPaths(below: [tab], in: content).filter { $0.count == 2 } }
                : allIndexPaths(below: container, in: content)
            for query in queries {
                let expected = candidates.filter { query.matches(content.contentItem(at: $0)!) }
                #expect(
                    try await content.searchContent(matching: query, in: container) == expected,
                    "\(query) in \(container)")
            }
        }
        // The cases above do come up.
        #expect(try await content.searchContent(matching: .text(";"), in: [2]).count == 1)
        #expect(try await content.searchContent(matching: .text("cafe"), in: [2]).isEmpty)
        #expect(try await content.searchContent(matching: .text("café"), in: [2]).count == 2)
        #expect(try await content.searchContent(matching: .text("🇸🇫"), in: [2]).isEmpty)
        #expect(try await content.searchContent(matching: .text("12"), in: [2]).isEmpty)
        #expect(try await content.searchContent(matching: .text("\u{20DD}y"), in: [2]).isEmpty)
        #expect(try await content.searchContent(matching: .text("\u{600}"), in: [2]).isEmpty)
    }

    // MARK: Playback

    func trackIDs(_ playback: LibraryPlayback?) -> [String] {
        playback?.entries.map {
            switch $0.media {
            case .track(let id): id
            case .stream(let url, _): url.absoluteString
            }
        } ?? []
    }

    @Test func aTrackInAnAlbumPlaysTheAlbumFromIt() throws {
        let arrival = try child("Arrival", of: [1])
        let playback = try #require(content.playback(forItemAt: child("Dancing Queen", of: arrival)))
        #expect(trackIDs(playback) == ["ABBA/Arrival/01.flac", "ABBA/Arrival/02.flac", "ABBA/Arrival/03.flac"])
        #expect(playback.startIndex == 1)
        #expect(playback.containerIdentifier == "album:ABBA\u{1F}Arrival")
        #expect(playback.nowPlayingIdentifiers(at: 1) == ["album:ABBA\u{1F}Arrival", "track:ABBA/Arrival/02.flac"])
        // The Tracks tab plays every track, by title.
        let fromTab = try #require(content.playback(forItemAt: child("Dancing Queen", of: [2])))
        #expect(
            fromTab.entries.count == Self.tracks.count && fromTab.startIndex == 4
                && fromTab.containerIdentifier == "tracks")
    }

    @Test func containersPlayEverythingBeneathThemFromTheFirst() throws {
        let album = try #require(content.playback(forItemAt: child("The White Album", of: [1])))
        #expect(trackIDs(album) == ["Beatles/White/1-01.flac", "Beatles/White/1-02.flac", "Beatles/White/2-01.flac"])
        #expect(album.startIndex == 0)
        let artist = try #require(content.playback(forItemAt: child("ABBA", of: [0])))
        #expect(
            trackIDs(artist) == [
                "ABBA/Waterloo/01.flac", "ABBA/Arrival/01.flac", "ABBA/Arrival/02.flac", "ABBA/Arrival/03.flac",
            ])
        #expect(artist.containerIdentifier == "artist:ABBA")
        let beatlesFolder = try #require(content.playback(forItemAt: child("Beatles", of: [4])))
        #expect(
            trackIDs(beatlesFolder) == [
                "Beatles/Hits/01.flac", "Beatles/White/1-01.flac", "Beatles/White/1-02.flac", "Beatles/White/2-01.flac",
            ])
        #expect(beatlesFolder.containerIdentifier == "folder:Beatles")
        #expect(content.playback(forItemAt: [0]) == nil)
        #expect(content.playback(forItemAt: []) == nil)
        #expect(content.playback(forItemAt: [0, 99]) == nil)
    }

    @Test func aPlaylistPlaysItsTracksAndStreams() throws {
        let road = try child("Road Trip", of: [3])
        #expect(titles(at: road) == ["Dancing Queen", "Radio X", "Waterloo", "Dancing Queen"])
        let stream = try #require(content.contentItem(at: road.appending(1)))
        #expect(stream.isStreamingContent && stream.isPlayable && !stream.isContainer)
        #expect(stream.identifier == "stream:https://radio.example/live.mp3" && stream.media?.url == Self.stream)

        let playlist = try #require(content.playback(forItemAt: road))
        #expect(
            trackIDs(playlist) == [
                "ABBA/Arrival/02.flac", Self.stream.absoluteString, "ABBA/Waterloo/01.flac", "ABBA/Arrival/02.flac",
            ])
        #expect(playlist.entries[1].media == .stream(Self.stream, title: "Radio X"))
        #expect(playlist.startIndex == 0 && playlist.containerIdentifier == "playlist:Playlists/road.m3u8")
        // The repeated entry has an identifier of its own, which the tree answers.
        let identifiers = playlist.entries.map(\.identifier)
        #expect(Set(identifiers).count == 4 && identifiers[0] == "track:ABBA/Arrival/02.flac")
        #expect(identifiers == self.identifiers(at: road))

        let fromStream = try #require(content.playback(forItemAt: road.appending(1)))
        #expect(fromStream.startIndex == 1 && fromStream.entries == playlist.entries)
    }

    @Test func findsWhereATrackIsListedInAContainer() throws {
        let id = "ABBA/Arrival/02.flac"
        let containers: [String?] = [
            nil, "tracks", "album:ABBA\u{1F}Arrival", "artist:ABBA", "playlist:Playlists/road.m3u8",
            "folder:ABBA/Arrival",
        ]
        for container in containers {
            let path = try #require(content.indexPath(ofTrack: id, inContainer: container), "\(container ?? "nil")")
            #expect(content.contentItem(at: path)?.identifier == "track:" + id)
        }
        #expect(content.indexPath(ofTrack: "loose.flac", inContainer: "folders") == [4, 6])
        #expect(content.indexPath(ofTrack: id, inContainer: "album:ABBA\u{1F}Waterloo") == nil)
        #expect(content.indexPath(ofTrack: "nope", inContainer: nil) == nil)
    }

    // MARK: Updates

    @Test func updateChangesWhatIsServedAndKeepsIdentifiers() throws {
        let content = Self.makeContent()
        let abbaBefore = try content.contentItem(at: child("ABBA", of: [0], in: content))
        content.update(
            tracks: Self.tracks.filter { !$0.id.hasPrefix("Beatles/") } + [
                Self.track("New/new.flac", "Brand New", artists: ["Newcomer"], album: "Debut")
            ], playlists: [])
        #expect(
            titles(at: [0], in: content) == ["ABBA", "beck", "Björk", "Newcomer", "Queen", "Solo", "Unknown Artist"])
        #expect(content.numberOfChildItems(at: [3]) == 0)
        #expect(try content.contentItem(at: child("ABBA", of: [0], in: content)) == abbaBefore)
        #expect(titles(at: [2], in: content).contains("Brand New"))
        // A track repeating an earlier one's id is left out.
        content.update(tracks: Self.tracks + [Self.track("loose.flac", "Loose again")], playlists: [])
        #expect(content.numberOfChildItems(at: [2]) == Self.tracks.count)
        #expect(!titles(at: [2], in: content).contains("Loose again"))
    }

    @Test func playlistsCarryTheirFileModificationTime() throws {
        let folder = try LibraryFolder("content-playlist")
        defer { folder.remove() }
        try folder.write("loose.flac\n", to: "mix.m3u")
        try folder.touch("mix.m3u", modifiedAt: 1_700_000_000)
        let content = LibraryContent(
            tracks: Self.tracks,
            playlists: [
                Playlist(id: "mix.m3u", name: "Mix", url: folder.url("mix.m3u"), entries: [.track("loose.flac")])
            ],
            libraryName: "Music")
        let item = try #require(content.contentItem(at: [3, 0]))
        #expect(item.media?.modificationDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(item.subtitle == "1 track")
    }

    // MARK: Through the manager

    @Test func aManagerListsPagesSearchesAndHearsUpdates() async throws {
        let content = Self.makeContent()
        let manager = PlayableContentManager(dataSource: content)
        let page = try await manager.listChildren(of: ["tracks"], offset: 2, maximum: 3)
        #expect(page.totalCount == Self.tracks.count)
        #expect(page.entries.map(\.item.title) == ["Birthday", "Bohemian Rhapsody", "Dancing Queen"])
        #expect(
            page.entries.map(\.path) == [
                ["tracks", "track:Beatles/White/2-01.flac"], ["tracks", "track:Queen/Hits/01.flac"],
                ["tracks", "track:ABBA/Arrival/02.flac"],
            ])

        let album = try await manager.listChildren(of: ["artists", "artist:ABBA", "album:ABBA\u{1F}Arrival"])
        #expect(album.entries.map(\.item.title) == ["When I Kissed the Teacher", "Dancing Queen", "My Love, My Life"])

        let found = try await manager.search(.text("queen"))
        #expect(
            found.map(\.path) == [
                ["artists", "artist:Queen"], ["albums", "album:Queen\u{1F}Greatest Hits"],
                ["tracks", "track:Queen/Hits/01.flac"],
                ["tracks", "track:ABBA/Arrival/02.flac"],
            ])
        let inAlbum = try await manager.search(.text("queen"), below: ["albums", "album:ABBA\u{1F}Arrival"])
        #expect(inAlbum.map(\.item.title) == ["Dancing Queen"])

        let changes = Mutex<[ContentChange]>([])
        let observation = manager.observe { change in changes.withLock { $0.append(change) } }
        defer { observation.cancel() }
        manager.beginUpdates()
        content.update(
            tracks: Self.tracks + [
                Self.track(
                    "ABBA/Arrival/04.flac", "Tiger", artists: ["ABBA"], album: "Arrival", albumArtists: ["ABBA"],
                    number: 4, date: "1976")
            ], playlists: Self.playlists)
        manager.endUpdates()
        let updated = changes.withLock { $0 }.flatMap { change -> [[String]] in
            if case .containersUpdated(let paths) = change { return paths } else { return [] }
        }
        #expect(Set(updated).isSuperset(of: [["tracks"], ["artists", "artist:ABBA", "album:ABBA\u{1F}Arrival"]]))
        let after = try await manager.listChildren(of: ["artists", "artist:ABBA", "album:ABBA\u{1F}Arrival"])
        #expect(after.entries.last?.item.title == "Tiger")
    }

    /// After a remote read every container, a retagged track makes the manager read again only
    /// the containers the tree names as changed, and announce exactly those that list it.
    @Test func anUpdateRereadsOnlyTheContainersItChanged() async throws {
        let content = Self.makeContent()
        let source = CountingSource(content)
        let manager = PlayableContentManager(dataSource: source)
        var containers = 0
        var paths: [[String]] = [[]]
        while let path = paths.popLast() {
            containers += 1
            for entry in try await manager.listChildren(of: path).entries where entry.item.isContainer {
                paths.append(entry.path)
            }
        }
        let changes = Mutex<[[String]]>([])
        let observation = manager.observe { change in
            if case .containersUpdated(let paths) = change { changes.withLock { $0 += paths } }
        }
        defer { observation.cancel() }
        source.reads.withLock { $0 = [] }

        var retagged = Self.tracks
        let index = try #require(retagged.firstIndex { $0.id == "ABBA/Waterloo/01.flac" })
        retagged[index].title = "Waterloo (Remastered)"
        manager.beginUpdates()
        content.update(tracks: retagged, playlists: Self.playlists)
        manager.endUpdates()

        #expect(
            Set(changes.withLock { $0 }) == [
                ["albums", "album:ABBA\u{1F}Waterloo"], ["artists", "artist:ABBA", "album:ABBA\u{1F}Waterloo"],
                ["tracks"], ["folders", "folder:ABBA", "folder:ABBA/Waterloo"],
                ["playlists", "playlist:Playlists/road.m3u8"],
            ])
        let reread = source.reads.withLock { $0 }
        #expect(containers > 30)
        #expect(reread.count <= 10, "read again \(reread.count) of \(containers) containers: \(reread)")
        #expect(try await manager.listChildren(of: ["tracks"]).entries.contains { $0.item.title == "Waterloo (Remastered)" })

        // An update that changes nothing reads nothing again and announces nothing.
        source.reads.withLock { $0 = [] }
        changes.withLock { $0 = [] }
        manager.beginUpdates()
        content.update(tracks: retagged, playlists: Self.playlists)
        manager.endUpdates()
        #expect(source.reads.withLock { $0 }.isEmpty)
        #expect(changes.withLock { $0 }.isEmpty)
    }
}

extension LibraryContentTests {
    /// A container of more rows than the threshold that holds only items (the Tracks tab) is
    /// served page by page: every page, row, search result and now-playing mark is what a
    /// manager copying it shows, and the copy holds none of its rows.
    @Test func aLargeContainerOfItemsIsServedPageByPage() async throws {
        let content = Self.makeContent()
        let paged = PlayableContentManager(dataSource: content, pagedContainerThreshold: 4)
        let copied = PlayableContentManager(dataSource: content, pagedContainerThreshold: 1_000)
        #expect(content.uniformChildKind(at: [2]) == .items && content.uniformChildKind(at: [1]) == .containers)
        #expect(content.uniformChildKind(at: []) == nil)

        for (offset, maximum) in [(0, 5), (5, 5), (10, 5), (12, nil), (20, 3)] as [(Int, Int?)] {
            let page = try await paged.listChildren(of: ["tracks"], offset: offset, maximum: maximum)
            #expect(page == (try await copied.listChildren(of: ["tracks"], offset: offset, maximum: maximum)))
        }
        #expect(try await paged.listChildren(of: ["tracks"]).totalCount == Self.tracks.count)
        #expect(try await paged.listChildren(of: ["tracks"], kind: .containers).entries.isEmpty)
        #expect(try await paged.listChildren(of: ["tracks"], kind: .items) == (try await copied.listChildren(of: ["tracks"], kind: .items)))
        #expect(paged.cachedRowCount < 10 && copied.cachedRowCount > Self.tracks.count)
        // The tab's own row counts its rows.
        let root = try await paged.listChildren(of: [])
        #expect(root.entries.first { $0.item.identifier == "tracks" }?.children?.childCount == Self.tracks.count)
        #expect(root.entries.first { $0.item.identifier == "tracks" }?.children?.containerCount == 0)

        // A row below it, by path, by index path (search results) and for playback.
        let queen = ["tracks", "track:Queen/Hits/01.flac"]
        #expect(try paged.entry(at: queen) == (try copied.entry(at: queen)))
        #expect(throws: ContentError.self) { try paged.entry(at: ["tracks", "track:no/such.flac"]) }
        #expect(try await paged.search(.text("queen")) == (try await copied.search(.text("queen"))))

        // Its rows are marked as playing, and remotes hear of it.
        let heard = Mutex<[[String]]>([])
        let observation = paged.observe { change in
            if case .nowPlayingChanged(let paths) = change { heard.withLock { $0 += paths } }
        }
        defer { observation.cancel() }
        paged.nowPlayingIdentifiers = ["track:Queen/Hits/01.flac"]
        #expect(heard.withLock { $0 }.contains(queen))
        #expect(try paged.entry(at: queen).isNowPlaying)

        // Content limits apply to it as to any listing.
        paged.updateContext {
            $0.contentLimitsEnforced = true
            $0.enforcedContentItemsCount = 3
        }
        #expect(try await paged.listChildren(of: ["tracks"]).entries.count == 3)
        #expect(paged.entry(atIndexPath: [2, 5]) == nil)
        #expect(paged.entry(atIndexPath: [2, 1])?.path.first == "tracks")
        paged.updateContext { $0.contentLimitsEnforced = false }

        // A batch that changes it is announced, and the next page shows the change.
        let updated = Mutex<[[String]]>([])
        let updates = paged.observe { change in
            if case .containersUpdated(let paths) = change { updated.withLock { $0 += paths } }
        }
        defer { updates.cancel() }
        var retagged = Self.tracks
        retagged[0].title = "Dancing Queen (Live)"
        paged.beginUpdates()
        content.update(tracks: retagged, playlists: Self.playlists)
        paged.endUpdates()
        #expect(updated.withLock { $0 }.contains(["tracks"]))
        #expect(try await paged.listChildren(of: ["tracks"]).entries.contains { $0.item.title == "Dancing Queen (Live)" })
    }
}

extension LibraryContentTests {
    /// A large container of containers (the Albums tab) is served page by page too: its
    /// albums are copied only as a remote opens them, and everything a remote sees is what a
    /// manager copying it shows, updates included.
    @Test func aLargeContainerOfContainersIsServedPageByPage() async throws {
        let content = Self.makeContent()
        let paged = PlayableContentManager(dataSource: content, pagedContainerThreshold: 4)
        let copied = PlayableContentManager(dataSource: content, pagedContainerThreshold: 1_000)
        for (offset, maximum) in [(0, 3), (3, 3), (6, 10)] as [(Int, Int?)] {
            let page = try await paged.listChildren(of: ["albums"], offset: offset, maximum: maximum)
            #expect(page == (try await copied.listChildren(of: ["albums"], offset: offset, maximum: maximum)))
        }
        #expect(try await paged.listChildren(of: ["albums"], kind: .items).entries.isEmpty)
        #expect(try await paged.listChildren(of: ["albums"], kind: .containers) == (try await copied.listChildren(of: ["albums"], kind: .containers)))
        let arrival = ["albums", "album:ABBA\u{1F}Arrival"]
        #expect(try await paged.listChildren(of: arrival) == (try await copied.listChildren(of: arrival)))
        #expect(try paged.entry(at: arrival) == (try copied.entry(at: arrival)))
        #expect(try paged.entry(at: arrival + ["track:ABBA/Arrival/02.flac"]) == (try copied.entry(at: arrival + ["track:ABBA/Arrival/02.flac"])))
        #expect(throws: ContentError.self) { try paged.entry(at: ["albums", "album:nobody\u{1F}nothing"]) }
        // Search results below it are reached through the albums they are in.
        #expect(try await paged.search(.text("teacher"), below: ["albums"]) == (try await copied.search(.text("teacher"), below: ["albums"])))
        #expect(!(try await paged.search(.text("teacher"), below: ["albums"])).isEmpty)

        // A retagged track: the tab and the opened album it is in are announced.
        let updated = Mutex<Set<[String]>>([])
        let observation = paged.observe { change in
            if case .containersUpdated(let paths) = change { updated.withLock { $0.formUnion(paths) } }
        }
        defer { observation.cancel() }
        var retagged = Self.tracks
        retagged[1].title = "When I Kissed the Teacher (Remix)"
        paged.beginUpdates()
        content.update(tracks: retagged, playlists: Self.playlists)
        paged.endUpdates()
        #expect(updated.withLock { $0 }.isSuperset(of: [["albums"], arrival]), "\(updated.withLock { $0 })")
        #expect(try await paged.listChildren(of: arrival).entries.contains { $0.item.title == "When I Kissed the Teacher (Remix)" })
    }
}

extension LibraryContentTests {
    /// Wherever the tree says a container's children are all alike (so a manager may page it),
    /// each child is where `indexOfChild` says, and is of that kind.
    @Test func everyPageableContainerFindsEachOfItsRowsByIdentifier() {
        var checked = 0
        for path in [IndexPath()] + allIndexPaths() {
            guard let kind = content.uniformChildKind(at: path) else { continue }
            for index in 0..<content.numberOfChildItems(at: path) {
                let item = content.contentItem(at: path.appending(index))
                #expect(item?.isContainer == (kind == .containers), "\(Array(path)) row \(index)")
                #expect(
                    content.indexOfChild(withIdentifier: item?.identifier ?? "", inContainerAt: path) == index,
                    "\(Array(path)) row \(index) \(item?.identifier ?? "")")
                checked += 1
            }
            #expect(content.indexOfChild(withIdentifier: "track:no/such.flac", inContainerAt: path) == nil)
        }
        #expect(checked > 60)
    }
}

extension LibraryContentTests {
    /// The tree loads at once: a container a remote lists is read once, and the albums it
    /// shows are not read before a remote opens one.
    @Test func aContainerIsReadOnceWhenReachedAndItsChildrenWhenOpened() async throws {
        let source = CountingSource(Self.makeContent())
        let manager = PlayableContentManager(dataSource: source)
        #expect(source.loadsChildItemsAtOnce)
        let albums = try await manager.listChildren(of: ["albums"])
        let rows = source.rows.withLock { $0 }
        #expect(rows.filter { $0 == [1, 0] }.count == 1, "\(rows)")
        #expect(!rows.contains { $0.count == 3 }, "albums' tracks read before any was opened: \(rows)")
        let arrival = try #require(albums.entries.first { $0.item.title == "Arrival" })
        #expect(try await manager.listChildren(of: arrival.path).entries.count == 3)
        #expect(source.rows.withLock { $0 }.filter { $0.count == 3 }.count == 3)
    }
}

extension LibraryContentTests {
    /// A key a client made up below a paged container is refused from the data source's index,
    /// without reading the container's rows one by one.
    @Test func aMadeUpKeyBelowAPagedContainerReadsNoRows() throws {
        let source = CountingSource(Self.makeContent())
        let manager = PlayableContentManager(dataSource: source, pagedContainerThreshold: 4)
        _ = try manager.entry(at: ["tracks"])
        _ = try manager.entry(at: ["albums"])
        source.rows.withLock { $0 = [] }
        for key in ["track:made/up.flac", "album:nobody\u{1F}nothing", "anything"] {
            #expect(throws: ContentError.self) { try manager.entry(at: ["tracks", key]) }
            #expect(throws: ContentError.self) { try manager.entry(at: ["albums", key, "track:x"]) }
        }
        #expect(source.rows.withLock { $0 }.isEmpty, "\(source.rows.withLock { $0 })")
    }
}

/// A data source that forwards to another and records the containers whose children are counted.
final class CountingSource: PlayableContentDataSource {
    let inner: LibraryContent
    let reads = Mutex<[IndexPath]>([])
    /// Every row asked for.
    let rows = Mutex<[IndexPath]>([])
    init(_ inner: LibraryContent) { self.inner = inner }
    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        reads.withLock { $0.append(indexPath) }
        return inner.numberOfChildItems(at: indexPath)
    }
    func contentItem(at indexPath: IndexPath) -> ContentItem? {
        rows.withLock { $0.append(indexPath) }
        return inner.contentItem(at: indexPath)
    }
    var loadsChildItemsAtOnce: Bool { inner.loadsChildItemsAtOnce }
    func uniformChildKind(at indexPath: IndexPath) -> UniformChildKind? { inner.uniformChildKind(at: indexPath) }
    func indexOfChild(withIdentifier identifier: String, inContainerAt indexPath: IndexPath) -> Int? {
        inner.indexOfChild(withIdentifier: identifier, inContainerAt: indexPath)
    }
    func contentItem(forIdentifier identifier: String) async throws -> ContentItem? {
        try await inner.contentItem(forIdentifier: identifier)
    }
    func changedContainerIdentifiers() -> Set<String>? { inner.changedContainerIdentifiers() }
}
