import MPD
import ProcessTestSupport
import Testing

/// MPD's filters, read and applied as mpd 0.23.12 does (each expectation was checked against it
/// where mpd has an answer), on a few songs.
@Suite struct FilterTests {
    static let alpha = MPDSong(
        uri: "Dir1/a.ogg",
        tags: [(.artist, "Foo Bar"), (.artist, "Guest"), (.title, "Alpha"), (.album, "One"), (.genre, "Rock")],
        lastModified: 1_700_000_000)
    static let beta = MPDSong(
        uri: "Dir1/b.ogg", tags: [(.artist, "Other"), (.albumArtist, "Foo"), (.title, "Beta"), (.album, "One")],
        lastModified: 1_600_000_000)
    static let gamma = MPDSong(uri: "Dir2/Sub/c.ogg", tags: [(.title, "Gamma")], lastModified: 1_500_000_000)
    static let songs = [alpha, beta, gamma]

    /// The URIs of the songs `arguments` finds (`find` when case-sensitive, else `search`).
    func found(_ arguments: String..., caseSensitive: Bool = true) throws -> [String] {
        let (filter, rest) = try MPDFilter.parse(arguments[...], caseSensitive: caseSensitive)
        #expect(rest.isEmpty)
        return Self.songs.filter(filter.matches).map(\.uri)
    }

    func searched(_ arguments: String...) throws -> [String] {
        let (filter, _) = try MPDFilter.parse(arguments[...], caseSensitive: false)
        return Self.songs.filter(filter.matches).map(\.uri)
    }

    func refusal(_ arguments: String..., caseSensitive: Bool = true) -> String? {
        do {
            _ = try MPDFilter.parse(arguments[...], caseSensitive: caseSensitive)
            return nil
        } catch {
            #expect(error.code == .argument)
            return error.message
        }
    }

    @Test func eachOperatorComparesAsItsNameSays() throws {
        #expect(try found("(Artist == 'Foo Bar')") == ["Dir1/a.ogg"])
        #expect(try found("(Artist == 'Foo')") == [])
        #expect(try found("(Artist contains 'oo B')") == ["Dir1/a.ogg"])
        #expect(try found("(Title starts_with 'Ga')") == ["Dir2/Sub/c.ogg"])
        #expect(try found("(Title =~ 'l.h')") == ["Dir1/a.ogg"])
        #expect(try found("(Title =~ '^[AB]')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("(Title !~ 'mm')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("(file == 'Dir1/b.ogg')") == ["Dir1/b.ogg"])
        #expect(try found("(filename contains 'Sub/')") == ["Dir2/Sub/c.ogg"])
        #expect(try found("(any == 'One')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        // `any` is the tags' values, not the URI (mpd 0.23).
        #expect(try found("(any contains 'Dir1')") == [])
        #expect(try found("(base 'Dir2')") == ["Dir2/Sub/c.ogg"])
        #expect(try found("(base 'Dir2/Sub/')") == ["Dir2/Sub/c.ogg"])
        #expect(try found("(base 'Dir')") == [])
        #expect(try found("(base '')").count == 3)
        #expect(try found("(modified-since '1600000000')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("(modified-since '2020-09-13T12:26:40Z')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("(modified-since '2020-09-13T14:26:41+02:00')") == ["Dir1/a.ogg"])
        #expect(try found("(modified-since '2023-11-14')") == ["Dir1/a.ogg"])
    }

    @Test func aTagWithSeveralValuesMatchesWhenOneDoesAndNegationsNegateTheWhole() throws {
        #expect(try found("(Artist == 'Guest')") == ["Dir1/a.ogg"])
        // `!=` is "no value equals": mpd 0.23.12 gives the song without an artist too.
        #expect(try found("(Artist != 'Guest')") == ["Dir1/b.ogg", "Dir2/Sub/c.ogg"])
        #expect(try found("(Artist == '')") == ["Dir2/Sub/c.ogg"])
        #expect(try found("(Artist != '')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("(Genre != 'Rock')") == ["Dir1/b.ogg", "Dir2/Sub/c.ogg"])
        #expect(try found("(Artist contains '')").count == 3)
        #expect(try found("(Artist =~ '')").count == 3)
        #expect(try found("(any == '')") == [])
        #expect(try searched("(Artist != 'foo bar')") == ["Dir1/b.ogg", "Dir2/Sub/c.ogg"])
    }

    @Test func tagsFallBackAsMPDsDo() throws {
        // AlbumArtist falls back to Artist only when the song has no album artist.
        #expect(try found("(AlbumArtist == 'Foo Bar')") == ["Dir1/a.ogg"])
        #expect(try found("(AlbumArtist == 'Other')") == [])
        #expect(try found("(ArtistSort == 'Other')") == ["Dir1/b.ogg"])
        #expect(try found("(AlbumArtistSort == 'Foo')") == ["Dir1/b.ogg"])
        #expect(try found("(AlbumArtistSort == 'Foo Bar')") == ["Dir1/a.ogg"])
        let sorted = MPDSong(uri: "d.ogg", tags: [(.artist, "X"), (.artistSort, "XS")])
        #expect(try MPDFilter.parse(["(AlbumArtistSort == 'X')"], caseSensitive: true).filter.matches(sorted))
        #expect(try !MPDFilter.parse(["(AlbumArtistSort == 'XS')"], caseSensitive: true).filter.matches(sorted))
        #expect(try found("(AlbumSort == 'One')") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("(Title == 'Alpha')") == ["Dir1/a.ogg"])
    }

    @Test func andNotAndNestingCombine() throws {
        #expect(try found("((Album == 'One') AND (Title == 'Beta'))") == ["Dir1/b.ogg"])
        #expect(try found("((Album == 'One') AND (!(Title == 'Beta')) AND (base 'Dir1'))") == ["Dir1/a.ogg"])
        #expect(try found("(!(Artist == 'Foo Bar'))") == ["Dir1/b.ogg", "Dir2/Sub/c.ogg"])
        #expect(try found("( ! ( Artist  ==  'Foo Bar' ) )") == ["Dir1/b.ogg", "Dir2/Sub/c.ogg"])
        #expect(try found("((Artist == 'Foo Bar'))") == ["Dir1/a.ogg"])
        #expect(try found("(!(!(Title=='Gamma')))") == ["Dir2/Sub/c.ogg"])
        // Arguments combine with AND, expressions and pairs alike.
        #expect(try found("(Album == 'One')", "Title", "Alpha") == ["Dir1/a.ogg"])
        #expect(try found("Title", "Alpha", "(Album == 'Two')") == [])
        let nested = String(repeating: "(!", count: 15) + "(Title == 'Gamma')" + String(repeating: ")", count: 15)
        #expect(try found(nested) == ["Dir1/a.ogg", "Dir1/b.ogg"])
    }

    @Test func valuesAreQuotedEitherWayWithBackslashEscapes() throws {
        let song = MPDSong(uri: "x.ogg", tags: [(.title, #"It's "quoted" \ here"#)])
        for expression in [#"(Title == 'It\'s "quoted" \\ here')"#, #"(Title == "It's \"quoted\" \\ here")"#] {
            let (filter, _) = try MPDFilter.parse([expression], caseSensitive: true)
            #expect(filter.matches(song), "\(expression)")
        }
    }

    @Test func findComparesExactlyAndSearchIgnoresCase() throws {
        #expect(try found("(artist == 'foo bar')") == [])
        #expect(try searched("(artist == 'foo bar')") == ["Dir1/a.ogg"])
        #expect(try searched("(Title =~ '^a')") == ["Dir1/a.ogg"])
        #expect(try searched("(Title =~ '^[a]')") == ["Dir1/a.ogg"])
        #expect(try searched("(file == 'DIR1/A.OGG')") == ["Dir1/a.ogg"])
        // The pairs: `find` is whole and exact, `search` "contains, any case".
        #expect(try found("Artist", "Foo Bar") == ["Dir1/a.ogg"])
        #expect(try found("artist", "oo b") == [])
        #expect(try searched("artist", "oo b") == ["Dir1/a.ogg"])
        #expect(try searched("filename", "dir1") == ["Dir1/a.ogg", "Dir1/b.ogg"])
        #expect(try found("any", "Alpha") == ["Dir1/a.ogg"])
        #expect(try found("base", "Dir1", "Title", "Beta") == ["Dir1/b.ogg"])
        #expect(try found("modified-since", "1600000001") == ["Dir1/a.ogg"])
        // Keywords read in any case, but `AND` only in capitals.
        #expect(try found("(Title CONTAINS 'lph')") == ["Dir1/a.ogg"])
    }

    @Test func whatFollowsTheFilterIsLeftToTheCommand() throws {
        let arguments = ["(Artist == 'x')", "Title", "y", "sort", "Title", "window", "0:1"]
        let (_, rest) = try MPDFilter.parse(arguments[...], caseSensitive: true)
        #expect(Array(rest) == ["sort", "Title", "window", "0:1"])
        let (_, grouped) = try MPDFilter.parse(["Artist", "sort", "group", "Album"], caseSensitive: true)
        #expect(Array(grouped) == ["group", "Album"])
    }

    @Test func theBaseFolderIsToldToNarrowTheRead() throws {
        #expect(try MPDFilter.parse(["(base 'A/B')"], caseSensitive: true).filter.basePath == "A/B")
        #expect(try MPDFilter.parse(["((Title == 'x') AND (base 'A'))"], caseSensitive: true).filter.basePath == "A")
        #expect(try MPDFilter.parse(["Title", "x", "base", "A"], caseSensitive: true).filter.basePath == "A")
        #expect(try MPDFilter.parse(["(!(base 'A'))"], caseSensitive: true).filter.basePath == nil)
        #expect(try MPDFilter.parse(["(Title == 'x')"], caseSensitive: true).filter.basePath == nil)
    }

    @Test func everyMalformedFilterIsRefusedWithMPDsMessage() {
        #expect(refusal() == "Incorrect number of filter arguments")
        #expect(refusal("Artist") == "Incorrect number of filter arguments")
        #expect(refusal("Artist", "x", "Title") == "Incorrect number of filter arguments")
        #expect(refusal(" (Title == 'x')") == "Incorrect number of filter arguments")
        #expect(refusal("sort", "Title") == "Incorrect number of filter arguments")
        #expect(refusal("Bogus", "x") == "Unknown filter type")
        #expect(refusal("(Bogus == 'x')") == "Unknown filter type: Bogus")
        // Every tag of mpd 0.23 is known, indexed or not (mpc enables Performer).
        #expect(refusal("(Performer == 'x')") == nil)
        #expect(refusal("(added-since '0')") == "Unknown filter type: added-since")
        #expect(refusal("(prio >= 3)") == "Unknown filter type: prio")
        #expect(refusal("(AudioFormat == '44100:16:2')") == "AudioFormat filters are not supported")
        #expect(refusal("(Artist === 'x')") == "Quoted string expected")
        #expect(refusal("(Artist == x)") == "Quoted string expected")
        #expect(refusal("(Artist eq_cs 'x')") == "'==' or '!=' expected")
        #expect(refusal("(Title contains'x')") == "'==' or '!=' expected")
        #expect(refusal("(Artist == 'x'") == "')' expected")
        #expect(refusal("(Artist == 'x") == "Closing quote not found")
        #expect(refusal("(Artist == 'x\\") == "Closing quote not found")
        #expect(refusal("(Artist == 'x') junk") == "Unparsed garbage after expression")
        #expect(refusal("(Artist == 'x') AND (Title == 'y')") == "Unparsed garbage after expression")
        #expect(refusal("((Artist == 'x') (Title == 'y'))") == "Word expected")
        #expect(refusal("((Artist == 'x') and (Title == 'y'))") == "'AND' expected")
        #expect(refusal("((Artist == 'x') AND (Title == 'y')") == "Word expected")
        #expect(refusal("(!Artist == 'x')") == "'(' expected")
        #expect(refusal("()") == "Word expected")
        #expect(refusal("(") == "Word expected")
        #expect(refusal("(base '/etc')") == "Bad URI")
        #expect(refusal("base", "a/../b") == "Bad URI")
        #expect(refusal("(modified-since 'yesterday')") == "Failed to parse date")
        #expect(refusal("(modified-since '2024-13-01')") == "Failed to parse date")
        #expect(refusal("(Title =~ '(')") == "Error in regex at offset 1: missing closing parenthesis")
        #expect(refusal("(Title =~ 'a)')") == "Error in regex at offset 1: unmatched closing parenthesis")
        #expect(refusal("(Title =~ '[a')") == "Error in regex at offset 2: missing terminating ] for character class")
        #expect(
            refusal("(Title =~ '*a')") == "Error in regex at offset 1: quantifier does not follow a repeatable item")
        #expect(refusal(#"(Title =~ '(a)\\1')"#) == #"Error in regex at offset 5: \1 is not supported"#)
        #expect(refusal("(Title =~ '(?=a)')") == "Error in regex at offset 1: only (?: groups are supported")
        #expect(refusal("(Title =~ 'a{1,1000}')") == "Error in regex: a repetition count is over 100 or out of order")
    }

    @Test func sizesAreBounded() {
        let deep = String(repeating: "(!", count: MPDFilter.maximumDepth) + "(Title == 'x')"
            + String(repeating: ")", count: MPDFilter.maximumDepth)
        #expect(refusal(deep) == "the filter is nested more than 16 levels deep")
        let terms =
            "(" + Array(repeating: "(Title == 'x')", count: MPDFilter.maximumTerms + 1).joined(separator: " AND ") + ")"
        #expect(refusal(terms) == "the filter has more than 64 terms")
        let pairs = Array(repeating: ["Title", "x"], count: MPDFilter.maximumTerms + 1).flatMap { $0 }
        #expect(refusal(pairs) == "the filter has more than 64 terms")
        let long = String(repeating: "a", count: 257)
        #expect(refusal("(Title =~ '\(long)')") == "Error in regex: longer than 256 bytes")
        #expect(refusal("(Title =~ '((((a{100}){100}){100}){100})')") == "Error in regex: the pattern is too complex")
    }

    func refusal(_ arguments: [String]) -> String? {
        do {
            _ = try MPDFilter.parse(arguments[...], caseSensitive: true)
            return nil
        } catch {
            return error.message
        }
    }

    /// Patterns that take a backtracking engine (PCRE, Swift's Regex) exponential or high
    /// polynomial time on a value that almost matches finish at once here: the work is bounded by
    /// the value's length times the program's.
    @Test func catastrophicPatternsStayFast() throws {
        let value = String(repeating: "a", count: 4_000) + "!"
        let song = MPDSong(uri: "x.ogg", tags: [(.title, value)])
        let clock = ContinuousClock()
        for pattern in ["(a+)+$", "(a|aa)*b", "(a*)*b", ".*.*.*.*.*.*.*.*b", "^(a|a?)+$", "^(a+a+)+b"] {
            let (filter, _) = try MPDFilter.parse(["(Title =~ '\(pattern)')"], caseSensitive: false)
            let start = clock.now
            #expect(!filter.matches(song), "\(pattern)")
            let elapsed = clock.now - start
            #expect(elapsed < .seconds(2), "\(pattern) took \(elapsed)")
        }
    }

    /// Random runs of the grammar's pieces never crash: each is read or refused, and a filter read
    /// is applied to every song.
    @Test func randomFiltersAreReadOrRefusedWithoutCrashing() {
        let expressionPieces = [
            "(", ")", "(", ")", "!", " ", "'", "\"", "\\", "Artist", "any", "file", "base", "modified-since",
            "==", "!=", "=~", "!~", "contains ", "starts_with ", " AND ", "'x'", "'Alpha'", "''", "'1600000000'",
        ]
        let regexPieces = [
            "a", "(", ")", "|", "*", "+", "?", "{2}", "{1,", "}", "[", "]", "^", "$", ".", "\\", "-", "(?:", "\\b",
        ]
        var generator = SplitMix64(seed: 42)
        var read = 0
        for round in 0..<20_000 {
            let pieces = round % 2 == 0 ? expressionPieces : regexPieces
            var text = ""
            for _ in 0..<Int(generator.next() % 16) { text += pieces[Int(generator.next() % UInt64(pieces.count))] }
            let argument = round % 2 == 0 ? "(" + text : "(Title =~ '" + text + "')"
            guard let (filter, _) = try? MPDFilter.parse([argument], caseSensitive: round % 4 < 2) else { continue }
            read += 1
            _ = Self.songs.map(filter.matches)
        }
        #expect(read > 100)
    }

    /// What a filter costs over 50,000 songs of seven tags each: prints each filter's time.
    @Test func fiftyThousandSongsAreFilteredInLinearTime() throws {
        let songs = (0..<50_000).map { index in
            MPDSong(
                uri: "Artist \(index % 500)/Album \(index / 500 % 10)/\(index) Song.flac",
                tags: [
                    (.artist, "Artist \(index % 500)"), (.albumArtist, "Artist \(index % 500)"),
                    (.album, "Album \(index / 500 % 10)"), (.title, "Song number \(index)"), (.genre, "Rock"),
                    (.date, "2001"), (.track, "\(index % 20 + 1)"),
                ], lastModified: 1_700_000_000 + Int64(index))
        }
        let clock = ContinuousClock()
        var figures: [String] = []
        let cases: [(arguments: [String], caseSensitive: Bool, expected: Int)] = [
            (["(Artist == 'Artist 7')"], true, 100),
            (["(Artist == 'ARTIST 7')"], false, 100),
            (["any", "number 4999"], false, 11),
            (["(Title =~ 'number [0-9]*7$')"], true, 5_000),
            (["(Title =~ '^song.*(12|34)$')"], false, 1_000),
            (["((base 'Artist 7') AND (!(Title contains '9')) AND (modified-since '0'))"], true, 90),
        ]
        for (arguments, caseSensitive, expected) in cases {
            let (filter, _) = try MPDFilter.parse(arguments[...], caseSensitive: caseSensitive)
            let start = clock.now
            let matched = songs.count { filter.matches($0) }
            figures.append("\(arguments.joined(separator: " ")) \(clock.now - start)")
            #expect(matched == expected, "\(arguments)")
        }
        print("MPDFilter over 50,000 songs: " + figures.joined(separator: ", "))
    }

    @Test func regularExpressionsMatchAsPCREDoes() throws {
        func matches(_ pattern: String, _ value: String, foldsCase: Bool = false) throws -> Bool {
            // The expression's quoting takes a backslash of its own, as a client's does.
            let quoted = String(pattern.flatMap { $0 == "\\" ? ["\\", "\\"] : [$0] })
            let (filter, _) = try MPDFilter.parse(["(Title =~ '\(quoted)')"], caseSensitive: !foldsCase)
            return filter.matches(MPDSong(uri: "x", tags: [(.title, value)]))
        }
        #expect(try matches("b", "abc"))
        #expect(try !matches("^b", "abc"))
        #expect(try matches("c$", "abc"))
        #expect(try matches("^a.c$", "abc"))
        #expect(try matches(#"^\d{4}-\d\d$"#, "2024-05"))
        #expect(try !matches(#"^\d{4}-\d\d$"#, "2024-5"))
        #expect(try matches("^(ab|cd){2,3}$", "abcdab"))
        #expect(try !matches("^(ab|cd){2,3}$", "ab"))
        #expect(try matches("^a{2,}$", "aaaa"))
        #expect(try matches("^x{1}y?$", "x"))
        #expect(try matches("a{,2}", "a{,2}"))  // not a quantifier: literal, as PCRE reads it
        #expect(try matches(#"\bcat\b"#, "the cat sat"))
        #expect(try !matches(#"\bcat\b"#, "concatenate"))
        #expect(try matches("[^a-c]", "abcd"))
        #expect(try !matches("^[^a-c]+$", "abcd"))
        #expect(try matches(#"[\d.]+"#, "1.5"))
        #expect(try matches(#"a\.b"#, "a.b"))
        #expect(try !matches(#"a\.b"#, "axb"))
        #expect(try matches("(?:é|e)t", "ÉTÉ", foldsCase: true))
        #expect(try matches("[A-Z]lpha", "alpha", foldsCase: true))
        #expect(try matches("^$", ""))
        #expect(try matches("a*?b", "aab"))
    }
}
