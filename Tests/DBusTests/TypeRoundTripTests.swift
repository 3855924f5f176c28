import DBus
import DBusTestSupport
import ProcessTestSupport
import Synchronization
import Testing

/// Every D-Bus type crosses the wire in both directions against peers that are not this code.
@Suite(.timeLimit(.minutes(1))) struct TypeRoundTripTests {
    @Test func pythonClientGetsEveryTypeBackFromTheSwiftServiceWithItsExactSignature() async throws {
        try await withTestService { fixture in
            let output = try await fixture.run("/usr/bin/python3", [pythonScript("echo_client.py")])
            #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
            #expect(output.stdout == "checked 41\n")
        }
    }

    @Test func swiftClientGetsEveryTypeBackFromAPythonServiceWithItsExactSignature() async throws {
        try await PrivateBus.with { bus in
            let service = try bus.spawn("/usr/bin/python3", [pythonScript("echo_service.py")])
            defer { service.kill() }
            #expect(await lines(of: service, until: { $0 == "READY" }).last == "READY")
            let client = try await Connection.connect(to: .address(bus.address))
            defer { client.close() }
            let python = Proxy(client, destination: "org.mprisbridge.PyEcho", path: "/py", interface: "org.mprisbridge.PyEcho1")
            for value in Self.everyType {
                let (signature, echoed): (String, Variant) = try await python.call("Describe", Variant(value))
                #expect(signature == Self.fullSignature(value), "python received another type for \(value)")
                #expect(echoed.value == value)
            }
            try await python.call("Quit") as Void
            #expect(await service.waitForExit() == 0)
        }
    }

    @Test func gdbusSendsAndReadsTheBasicTypesExactly() async throws {
        try await withTestService { fixture in
            let output = try await fixture.gdbusCall(
                "org.mprisbridge.Test1.EchoBasics",
                "byte 200", "true", "int16 -7", "uint16 7", "int32 -70000", "uint32 70000", "int64 -1099511627776",
                "uint64 18446744073709551615", "0.125", "'naïve ✓'", "objectpath '/o/p'", "signature 'a{sv}'")
            #expect(output.status == 0, "\(output.stderr)")
            #expect(
                output.stdout
                    == "(byte 0xc8, true, int16 -7, uint16 7, -70000, uint32 70000, int64 -1099511627776, uint64 18446744073709551615, 0.125, 'naïve ✓', objectpath '/o/p', signature 'a{sv}')\n"
            )
        }
    }

    @Test func thirtyTwoNestedArraysPassAndThirtyThreeAreRefusedWithAReason() async throws {
        var type = DBusType.string
        for _ in 0..<32 { type = .array(type) }
        #expect(try Signature([type]).rawValue == String(repeating: "a", count: 32) + "s")
        #expect(throws: DBusError.self) { try Signature([.array(type)]) }
        do {
            _ = try Signature(validating: String(repeating: "a", count: 33) + "s")
            Issue.record("33 nested arrays were accepted")
        } catch let error as DBusError {
            #expect(error.name == .invalidArgs)
            #expect(error.message.contains("more than 32 nested arrays"))
        }
    }

    @Test func valuesNestedDeeperThanTheWireAllowsAreRefusedBeforeSending() async throws {
        try await withTestService { fixture in
            var value = DBusValue.string("deep")
            for _ in 0..<70 { value = .variant(Variant(value)) }
            await #expect(throws: DBusError.self) {
                try await fixture.proxy.call("Echo", Variant(value)) as Variant
            }
            #expect(fixture.test.record.runs.load(ordering: .relaxed) == 0)
        }
    }

    @Test func unixFileDescriptorsAreRefusedWithAClearError() async throws {
        try await withTestService { fixture in
            let message = Message.methodCall(
                destination: TestService.busName, path: TestService.path, interface: TestService.name, member: "Echo",
                body: [.variant(Variant(.array(.unixFD, [])))])
            do {
                _ = try await fixture.client.call(message)
                Issue.record("a unix fd type was sent")
            } catch let error as DBusError {
                #expect(error.name == .notSupported)
                #expect(error.message.contains("Unix file descriptors"))
            }
        }
    }

    @Test func stringsWithNULAreRefusedBeforeSending() async throws {
        try await withTestService { fixture in
            do {
                _ = try await fixture.proxy.call("Echo", Variant("a\u{0}b")) as Variant
                Issue.record("a string with NUL was sent")
            } catch let error as DBusError {
                #expect(error.name == .invalidArgs)
                #expect(error.message.contains("NUL"))
            }
        }
    }

    /// The type of a value with the contents of variants spelled out, as python describes it.
    static func fullSignature(_ value: DBusValue) -> String {
        if case .variant(let inner) = value { return "v" + fullSignature(inner.value) }
        return value.type.description
    }

    /// One value of every type and shape, including the edge cases of each.
    static let everyType: [DBusValue] = {
        var nested = DBusValue.array(.string, [.string("leaf")])
        for _ in 1..<32 { nested = .array(nested.type, [nested]) }
        let metadata = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                .init(.string("xesam:title"), .variant(Variant(.string("Title")))),
                .init(.string("mpris:length"), .variant(Variant(.int64(5_000_000)))),
                .init(.string("xesam:artist"), .variant(Variant(.array(.string, [.string("A"), .string("B")])))),
            ])
        return [
            .byte(0), .byte(255), .boolean(true), .boolean(false),
            .int16(.min), .int16(.max), .uint16(.max), .int32(.min), .int32(.max), .uint32(.max),
            .int64(.min), .int64(.max), .uint64(.max),
            .double(0.1), .double(-1e308), .double(.infinity),
            .string(""), .string("héllo ✓ 日本 🎵 ' \" \\"),
            .objectPath(.root), .objectPath("/org/mpris/MediaPlayer2/Track_5f1"),
            .signature(.empty), .signature("a{sv}(iu)aay"),
            .array(.string, []), .array(.string, [.string("a"), .string("b")]),
            .array(.byte, (0...255).map { .byte(UInt8($0)) }), .array(.byte, []),
            .array(.array(.byte), [.array(.byte, [.byte(1)]), .array(.byte, [])]),
            .dictionary(key: .string, value: .variant, []),
            metadata,
            .dictionary(key: .uint32, value: .array(.string), [.init(.uint32(7), .array(.string, [.string("x")]))]),
            .dictionary(key: .objectPath, value: metadata.type, [.init(.objectPath("/a"), metadata)]),
            .structure([.int32(1), .string("x"), .double(2.5)]),
            .structure([.structure([.byte(1)]), .array(.structure([.string, .int64]), [.structure([.string("a"), .int64(1)])])]),
            .variant(Variant(.string("inside two variants"))),
            .array(.variant, [.variant(Variant(.int32(1))), .variant(Variant(.string("two")))]),
            nested,
        ]
    }()
}
