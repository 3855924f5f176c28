import MPD
import Testing

@Suite struct RequestTests {
    @Test func quotedArgumentsKeepTheirSpacesAndEscapes() throws {
        let request = try MPDRequest.parse(Array(#"find "(Artist == \"AC/DC\")" sort Title"#.utf8))
        #expect(request == MPDRequest(name: "find", arguments: [#"(Artist == "AC/DC")"#, "sort", "Title"]))
        #expect(try MPDRequest.parse(Array("status\r".utf8)) == MPDRequest(name: "status"))
    }

    @Test func badLinesAnswerAnErrorNamingTheProblem() {
        #expect(throws: MPDError(.argument, "Missing closing '\"'")) { try MPDRequest.parse(Array(#"add "a"#.utf8)) }
        #expect(throws: MPDError(.argument, "the line is not valid UTF-8")) { try MPDRequest.parse([0x61, 0xFF]) }
        #expect(throws: MPDError(.unknown, "No command given")) { try MPDRequest.parse(Array("  ".utf8)) }
        #expect(throws: MPDError(.argument, "too many arguments")) {
            try MPDRequest.parse(Array(("add" + String(repeating: " x", count: 65)).utf8))
        }
    }

    @Test func anErrorIsOneLineWhateverItQuotes() {
        let error = MPDError(.noExist, "no such song\n\"OK\"", command: "play\nOK", listIndex: 3)
        #expect(error.line == "ACK [50@3] {play?OK} no such song?\"OK\"\n")
    }

    @Test func aValueCannotForgeALine() throws {
        var response = MPDResponse()
        try response.add("Title", "a\nOK\n")
        #expect(String(decoding: response.bytes, as: UTF8.self) == "Title: a OK \n")
        var small = MPDResponse(limit: 10)
        #expect(throws: MPDError.self) { try small.add("Title", "0123456789") }
        #expect(small.isEmpty)
    }

    @Test func aChangeWaitsForTheNextIdleOfEachClient() async {
        let changes = MPDChanges()
        let first = changes.subscribe()
        let second = changes.subscribe()
        changes.post([.player, .mixer])
        #expect(await first.next(in: .player) == .player)
        #expect(await first.next(in: .all) == .mixer)
        #expect(await second.next(in: .all) == [.player, .mixer])
        async let woken = second.next(in: .playlist)
        changes.post(.options)
        changes.post(.playlist)
        #expect(await woken == .playlist)
        #expect(await second.next(in: .all) == .options)
    }
}
