import DBus
import DBusTestSupport
import ProcessTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Replies written in wire format by this library go to the socket without libdbus reading
/// them again; the stream must stay whole messages in the order they were sent, even when a
/// reply is larger than the socket takes at once and other messages follow it.
@Suite(.timeLimit(.minutes(1))) struct WrittenReplyTests {
    static let path: ObjectPath = "/org/mprisbridge/Rows"

    /// One row of `Rows`: every kind of value a row may hold, multi-byte text and a
    /// noncharacter included (`written_replies_client.py` checks each).
    static func row(_ index: Int, into row: inout PropertyRows.Row) {
        row.add("Index", .uint32(UInt32(index)))
        row.add("Name", .string("row \(index) — naïve café 🎵 \u{FFFE}"))
        row.add("Path", .objectPath(path.appending("r\(index)")))
        row.add("Even", .boolean(index % 2 == 0))
        row.add("Size", .int64(-(Int64(index) << 33)))
        row.add("Ratio", .double(Double(index) / 8))
        row.add("Tags", .array(.string, [.string("a"), .string("b\(index)")]))
        row.add("Pair", .structure([.string("x"), .int32(Int32(index))]))
        row.add("Padding", .string(String(repeating: "p", count: index % 700)))
    }

    static func rowsInterface() -> Interface {
        let rows = Interface("org.mprisbridge.Rows1")
        _ = rows.property("Title", "Rows ✓", changes: .const)
        _ = rows.property("Count", Int32(42), changes: .const)
        let echoed = rows.signal("Echoed", of: String.self)
        rows.method(
            "Rows", inputs: [Argument("count", .uint32)],
            outputs: [Argument("rows", .array(.dictionary(key: .string, value: .variant)))]
        ) { body in
            guard case .uint32(let count) = body[0] else { throw DBusError(.invalidArgs, "Expected a count") }
            var written = PropertyRows(capacity: Int(count) * 700)
            for index in 0..<Int(count) { written.appendRow { Self.row(index, into: &$0) } }
            guard let results = written.finishResults(fallback: { throw DBusError(.failed, "not written") }) else {
                throw DBusError(.failed, "PropertyRows refused a row")
            }
            return .encoded(results)
        }
        rows.method("Echo", arguments: ["text"], results: ["text"]) { (text: String) -> String in
            echoed.emit(text)
            return text
        }
        return rows
    }

    @Test func aReplyLargerThanTheSocketTakesAtOnceArrivesWholeAndWhatFollowsItKeepsItsOrder() async throws {
        try await withTestService { fixture in
            try fixture.service.export(Self.rowsInterface(), at: Self.path)
            // 12,000 rows are about 7 MB: the socket takes a few hundred KB at a time, so the
            // signal and the reply that follow each such reply are sent while it is still being
            // written, and wait behind it.
            let output = try await fixture.run("/usr/bin/python3", [pythonScript("written_replies_client.py"), "12000", "25"])
            #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
            #expect(output.stdout.hasPrefix("checked 13 messages"), "\(output.stdout)")
        }
    }

    @Test func aBusThatStopsReadingNeverBlocksTheConnectionsThreadAndItsLossIsReported() async throws {
        try await withServiceAndClient { bus, service, client in
            // 0 until the handler stops the bus, then 1 if it stopped, 2 if `kill` failed.
            let busStop = Atomic<Int>(0)
            let busPID = bus.daemonPID
            let rows = Interface("org.mprisbridge.Rows1")
            rows.method(
                "Rows", inputs: [], outputs: [Argument("rows", .array(.dictionary(key: .string, value: .variant)))]
            ) { _ in
                var written = PropertyRows()
                for index in 0..<20_000 { written.appendRow { Self.row(index, into: &$0) } }
                let results = written.finishResults(fallback: { [] })!
                // Stopped before the reply, about 12 MB, is written: the bus reads none of it,
                // and the socket fills.
                busStop.store(kill(busPID, SIGSTOP) == 0 ? 1 : 2, ordering: .releasing)
                return .encoded(results)
            }
            try service.export(rows, at: Self.path)
            let message = Message.methodCall(
                destination: service.uniqueName, path: Self.path, interface: "org.mprisbridge.Rows1", member: "Rows")
            let call = Task { try await client.call(message) }
            while busStop.load(ordering: .acquiring) == 0 { await Task.yield() }
            #expect(busStop.load(ordering: .acquiring) == 1)
            // Work for the connection's thread still runs, before and after the reply is queued
            // there: the thread waits for the socket in `poll`, never in a write (a write that
            // blocked would hold one of these hops until the suite's time limit fails the test).
            // Counted, not timed: a loaded machine runs them slowly, but runs them.
            for _ in 0..<20 { await withTaskExecutorPreference(service.executor) {} }
            #expect(kill(bus.daemonPID, SIGKILL) == 0)
            await service.waitUntilDisconnected()
            #expect(!service.isConnected)
            await #expect(throws: DBusError.self) { _ = try await call.value }
        }
    }

    @Test func rowsThatNoSignatureMayHoldAreRefusedAndTheReplyIsMadeTheOrdinaryWay() {
        var refused = PropertyRows()
        refused.appendRow { row in
            row.add("Empty", .structure([]))
        }
        #expect(refused.finishResults(fallback: { [] }) == nil)
        var deep = DBusValue.string("leaf")
        for _ in 0..<40 { deep = .array(deep.type, [deep]) }
        var tooDeep = PropertyRows()
        tooDeep.appendRow { row in row.add("Deep", deep) }
        #expect(tooDeep.finishResults(fallback: { [] }) == nil)
        var emptyDeep = PropertyRows()
        var type = DBusType.string
        for _ in 0..<40 { type = .array(type) }
        emptyDeep.appendRow { row in row.add("EmptyButDeep", .array(type, [])) }
        #expect(emptyDeep.finishResults(fallback: { [] }) == nil)
        var fine = PropertyRows()
        fine.appendRow { row in row.add("Nested", .array(.array(.string), [.array(.string, [.string("a")])])) }
        #expect(fine.finishResults(fallback: { [] }) != nil)
    }
}
