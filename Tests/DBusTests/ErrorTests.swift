import DBus
import DBusTestSupport
import ProcessTestSupport
import Synchronization
import Testing

/// Malformed calls get the standard D-Bus error before any handler runs, and
/// handler errors reach the client with their name and message.
@Suite(.timeLimit(.minutes(1))) struct ErrorTests {
    @Test func malformedCallsGetTheStandardErrorAndNoHandlerRuns() async throws {
        try await withTestService { fixture in
            let destination = "--dest=\(TestService.busName)"
            let cases: [(arguments: [String], error: String, message: String)] = [
                ([destination, "/org/mprisbridge/Test", "org.mprisbridge.Test1.Nope"],
                 "org.freedesktop.DBus.Error.UnknownMethod", "Interface 'org.mprisbridge.Test1' has no method 'Nope'"),
                ([destination, "/org/mprisbridge/Test", "org.example.Missing.Add", "int64:1", "int64:2"],
                 "org.freedesktop.DBus.Error.UnknownInterface", "Object '/org/mprisbridge/Test' has no interface 'org.example.Missing'"),
                ([destination, "/org/mprisbridge/Test", "org.mprisbridge.Test1.Add", "string:x", "int64:2"],
                 "org.freedesktop.DBus.Error.InvalidArgs", "takes arguments of signature 'xx', got 'sx'"),
                ([destination, "/org/mprisbridge/Test", "org.mprisbridge.Test1.Add", "int64:1"],
                 "org.freedesktop.DBus.Error.InvalidArgs", "takes arguments of signature 'xx', got 'x'"),
                ([destination, "/org/mprisbridge/Nothing", "org.mprisbridge.Test1.Add", "int64:1", "int64:2"],
                 "org.freedesktop.DBus.Error.UnknownObject", "No object at path '/org/mprisbridge/Nothing'"),
                ([destination, "/org/mprisbridge/Test", "org.freedesktop.DBus.Properties.Get", "string:org.mprisbridge.Test1"],
                 "org.freedesktop.DBus.Error.InvalidArgs", "takes arguments of signature 'ss', got 's'"),
                ([destination, "/org/mprisbridge/Test", "org.freedesktop.DBus.Properties.Get", "string:org.mprisbridge.Test1", "string:Nope"],
                 "org.freedesktop.DBus.Error.UnknownProperty", "has no property 'Nope'"),
                ([destination, "/org/mprisbridge/Test", "org.freedesktop.DBus.Introspectable.Introspect", "string:x"],
                 "org.freedesktop.DBus.Error.InvalidArgs", "takes arguments of signature '', got 's'"),
            ]
            for bad in cases {
                let output = try await fixture.run("dbus-send", ["--print-reply"] + bad.arguments)
                #expect(output.status != 0)
                #expect(output.stderr.contains("Error \(bad.error): "), "\(bad.arguments): \(output.stderr)")
                #expect(output.stderr.contains(bad.message), "\(bad.arguments): \(output.stderr)")
            }
            #expect(fixture.test.record.runs.load(ordering: .relaxed) == 0)
        }
    }

    @Test func aHandlersNamedErrorReachesTheClientWithItsNameAndMessage() async throws {
        try await withTestService { fixture in
            let output = try await fixture.gdbusCall(
                "org.mprisbridge.Test1.Fail", "'org.mprisbridge.Error.NoSuchContent'", "'Nothing is queued'")
            #expect(output.status != 0)
            #expect(output.stderr.contains("org.mprisbridge.Error.NoSuchContent: Nothing is queued"), "\(output.stderr)")
            do {
                try await fixture.proxy.call("Fail", "org.mprisbridge.Error.CommandFailed", "The sink went away") as Void
                Issue.record("no error was thrown")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.mprisbridge.Error.CommandFailed")
                #expect(error.message == "The sink went away")
            }
        }
    }

    @Test func anyOtherThrownErrorBecomesFailedWithItsDescription() async throws {
        try await withTestService { fixture in
            let plain = try await fixture.gdbusCall("org.mprisbridge.Test1.FailPlain")
            #expect(plain.stderr.contains("org.freedesktop.DBus.Error.Failed: a plain Swift error"), "\(plain.stderr)")
            let badName = try await fixture.gdbusCall("org.mprisbridge.Test1.Fail", "'not a name'", "'x'")
            #expect(badName.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs: Invalid error name 'not a name'"), "\(badName.stderr)")
        }
    }

    /// Peer is answered on every path, with its arguments checked like any method's.
    @Test func peerCallsTakeNoArgumentsAndAnswerOnEveryPath() async throws {
        try await withTestService { fixture in
            let destination = "--dest=\(TestService.busName)"
            let ping = try await fixture.run(
                "dbus-send", ["--print-reply", destination, "/no/object/here", "org.freedesktop.DBus.Peer.Ping"])
            #expect(ping.succeeded, "\(ping)")
            let id = try await fixture.run(
                "dbus-send", ["--print-reply", destination, "/", "org.freedesktop.DBus.Peer.GetMachineId"])
            // libdbus's own tool reads the id from the same files as the service.
            let machineID = try await fixture.run("dbus-uuidgen", ["--get"]).stdout.split(separator: "\n").first ?? "?"
            #expect(id.stdout.contains("string \"\(machineID)\""), "\(id)")
            for (member, arguments) in [("Ping", ["string:x"]), ("GetMachineId", ["int32:1", "int32:2"])] {
                let output = try await fixture.run(
                    "dbus-send",
                    ["--print-reply", destination, "/org/mprisbridge/Test", "org.freedesktop.DBus.Peer.\(member)"]
                        + arguments)
                #expect(output.stderr.contains("Error org.freedesktop.DBus.Error.InvalidArgs: "), "\(output)")
            }
            let unknown = try await fixture.run(
                "dbus-send", ["--print-reply", destination, "/", "org.freedesktop.DBus.Peer.Nope"])
            #expect(unknown.stderr.contains("Error org.freedesktop.DBus.Error.UnknownMethod: "), "\(unknown)")
        }
    }

    /// An error quoting what a client sent stays short, however large the input.
    @Test func messagesQuoteAtMostAShortPartOfTheInput() async throws {
        try await withTestService { fixture in
            let longPath = "/org/" + String(repeating: "x", count: 60_000)
            let output = try await fixture.run(
                "dbus-send", ["--print-reply", "--dest=\(TestService.busName)", longPath, "org.mprisbridge.Test1.Add"])
            #expect(output.stderr.contains("Error org.freedesktop.DBus.Error.UnknownObject: No object at path '/org/xxx"))
            #expect(output.stderr.utf8.count < 300, "\(output.stderr.utf8.count) bytes")
            let property = try await fixture.gdbusCall(
                "org.freedesktop.DBus.Properties.Get", "org.mprisbridge.Test1", String(repeating: "P", count: 60_000))
            #expect(property.stderr.contains("org.freedesktop.DBus.Error.UnknownProperty"), "\(property.stderr.prefix(200))")
            #expect(property.stderr.utf8.count < 400, "\(property.stderr.utf8.count) bytes")
            do {
                try await fixture.proxy.call("Fail", "org.mprisbridge.Error.CommandFailed", String(repeating: "é", count: 40_000))
                    as Void
                Issue.record("no error was thrown")
            } catch let error as DBusError {
                #expect(error.message.utf8.count <= DBusError.maximumMessageLength)
                #expect(error.message.hasSuffix("é…"))
            }
        }
        #expect(DBusError.excerpt("short") == "short")
        #expect(DBusError.excerpt(String(repeating: "ab", count: 100), maximumBytes: 10) == "abababa…")
    }

    /// A call holding more values, or more bytes of strings, than the service reads is refused
    /// with `LimitsExceeded` before any handler runs; one value fewer goes through, and the
    /// service answers after.
    @Test func aCallWithTooManyValuesIsRefusedBeforeItIsRead() async throws {
        try await withTestService { fixture in
            // Echo's body is a variant holding an array: two values besides the elements.
            let most = Message.maximumValueCount - 2
            let script = """
                import dbus, sys
                test = dbus.Interface(dbus.SessionBus().get_object("org.mprisbridge.Test", "/org/mprisbridge/Test"), "org.mprisbridge.Test1")
                values = {"s": "x", "d": 0.5, "long": "x" * 100000}
                for kind, count in (("s", \(most + 1)), ("d", 1000000), ("long", 90), ("s", \(most))):
                    signature = "d" if kind == "d" else "s"
                    try:
                        print(kind, count, len(test.Echo(dbus.Array([values[kind]] * count, signature=signature, variant_level=1))), flush=True)
                    except dbus.DBusException as error:
                        print(kind, count, error.get_dbus_name(), error.get_dbus_message(), flush=True)
                """
            let output = try await fixture.bus.python(script)
            let lines = output.stdout.split(separator: "\n")
            #expect(lines.count == 4, "\(output.stdout) \(output.stderr)")
            let refusal = "org.freedesktop.DBus.Error.LimitsExceeded The message holds more than"
            #expect(lines.first?.hasPrefix("s \(most + 1) \(refusal) 131072 values") == true, "\(output.stdout)")
            #expect(lines.dropFirst().first?.hasPrefix("d 1000000 \(refusal) 131072 values") == true, "\(output.stdout)")
            #expect(lines.dropFirst(2).first?.hasPrefix("long 90 \(refusal) 8 MiB of strings") == true, "\(output.stdout)")
            #expect(lines.last == "s \(most) \(most)", "\(output.stdout)")
            #expect(fixture.test.record.runs.load(ordering: .relaxed) == 1)
        }
    }

    @Test func callingANameNobodyOwnsThrowsServiceUnknown() async throws {
        try await withTestService { fixture in
            let nobody = Proxy(fixture.client, destination: "org.example.Nobody", path: "/", interface: "org.example.X")
            do {
                try await nobody.call("Anything") as Void
                Issue.record("no error was thrown")
            } catch let error as DBusError {
                #expect(error.name == .serviceUnknown)
            }
        }
    }

    @Test func invalidNamesAreRefusedWithAReason() throws {
        let cases: [(make: () throws -> Void, reason: String)] = [
            ({ _ = try ObjectPath(validating: "org/x") }, "must start with '/'"),
            ({ _ = try ObjectPath(validating: "/org/") }, "only the root path '/' may end with '/'"),
            ({ _ = try ObjectPath(validating: "/org//x") }, "empty element"),
            ({ _ = try ObjectPath(validating: "/org/a-b") }, "character '-' at offset 6 is not one of [A-Za-z0-9_]"),
            ({ _ = try InterfaceName(validating: "org") }, "at least two elements"),
            ({ _ = try InterfaceName(validating: "org.9x") }, "starts with a digit"),
            ({ _ = try InterfaceName(validating: "org..x") }, "empty element"),
            ({ _ = try InterfaceName(validating: String(repeating: "a.", count: 128) + "a") }, "the limit is 255"),
            ({ _ = try MemberName(validating: "Play.Pause") }, "character '.'"),
            ({ _ = try MemberName(validating: "") }, "it is empty"),
            ({ _ = try BusName(validating: "org.mpris.MediaPlayer2.vlc-2") }, ""),
            ({ _ = try BusName(validating: "org.2mpris") }, "starts with a digit"),
            ({ _ = try ErrorName(validating: "Failed") }, "at least two elements"),
            ({ _ = try Signature(validating: "a{vs}") }, "a dictionary key must be a basic type, found 'v'"),
            ({ _ = try Signature(validating: "(") }, "is not closed"),
            ({ _ = try Signature(validating: "()") }, "is empty"),
            ({ _ = try Signature(validating: "a") }, "a type is missing"),
            ({ _ = try Signature(validating: "{ss}") }, "only allowed right after 'a'"),
            ({ _ = try Signature(validating: "a{sss}") }, "exactly two types"),
            ({ _ = try Signature(validating: "z") }, "'z' at offset 0 is not a type code"),
            ({ _ = try Signature(validating: String(repeating: "s", count: 256)) }, "the limit is 255"),
        ]
        for (make, reason) in cases {
            if reason.isEmpty {
                #expect(throws: Never.self) { try make() }
                continue
            }
            do {
                try make()
                Issue.record("accepted, expected: \(reason)")
            } catch let error as DBusError {
                #expect(error.name == .invalidArgs)
                #expect(error.message.contains(reason), "\(error.message)")
            }
        }
    }

    @Test func anyStringEscapesToAValidPathElementAndBack() throws {
        for identifier in ["", "_", "track 1", "spotify:track:4uLU6hMCjMI75M1A2tKUQC", "日本語/🎵", "a_5fb", "/", "0"] {
            let path = ObjectPath("/org/mprisbridge/Track").appending(identifier)
            #expect(try ObjectPath(validating: path.rawValue) == path)
            #expect(ObjectPath.unescapeElement(path.elements.last!) == identifier)
        }
        #expect(ObjectPath.escapeElement("a b_c") == "a_20b_5fc")
        #expect(ObjectPath.unescapeElement("a_zz") == nil)
    }
}
