import DBus
import DBusTestSupport
import ProcessTestSupport
import Synchronization
import Testing

/// Properties as an outside client sees them: reads, writes, and `PropertiesChanged`.
@Suite(.timeLimit(.minutes(1))) struct PropertiesTests {
    @Test func propertiesChangedCarriesOnlyWhatChangedOneSignalPerBatchAndFollowsEachPolicy() async throws {
        try await withTestService { fixture in
            let watcher = try await fixture.watchSignals()
            defer { watcher.kill() }
            let test = fixture.test

            test.title.value = "A"  // one change: one signal with the value
            test.title.value = "A"  // no change: no signal
            test.interface.batch {  // three writes, two changes: one signal with both
                test.title.value = "B"
                test.rate.value = 2.0
                test.flag.value = false
            }
            test.revision.update { $0 += 1 }  // invalidates: the name without its value
            test.identity.value = "renamed"  // const: never announced
            test.position.changed()  // emits-changed false: never announced
            test.interface.batch {  // nested batches still make one signal
                test.title.value = "C"
                test.interface.batch { test.revision.update { $0 += 1 } }
            }
            test.ticked.emit(7)
            test.done.emit()

            let seen = await lines(of: watcher, until: { $0.hasPrefix("Done") || $0 == "TIMEOUT" })
            #expect(
                seen == [
                    #"PropertiesChanged org.mprisbridge.Test1 {"Title": "A"} {"Title": "s"} []"#,
                    #"PropertiesChanged org.mprisbridge.Test1 {"Rate": 2.0, "Title": "B"} {"Rate": "d", "Title": "s"} []"#,
                    #"PropertiesChanged org.mprisbridge.Test1 {} {} ["Revision"]"#,
                    #"PropertiesChanged org.mprisbridge.Test1 {"Title": "C"} {"Title": "s"} ["Revision"]"#,
                    "Ticked [7]",
                    "Done []",
                ])
        }
    }

    @Test func aChangeMadeByAMethodHandlerIsOneSignalAndThePropertyReadsBackTheNewValues() async throws {
        try await withTestService { fixture in
            let watcher = try await fixture.watchSignals()
            defer { watcher.kill() }
            let call = try await fixture.gdbusCall("org.mprisbridge.Test1.SetValues", "'from gdbus'", "0.5", "true")
            #expect(call.status == 0, "\(call.stderr)")
            fixture.test.done.emit()
            let seen = await lines(of: watcher, until: { $0.hasPrefix("Done") || $0 == "TIMEOUT" })
            #expect(
                seen == [
                    #"PropertiesChanged org.mprisbridge.Test1 {"Flag": true, "Rate": 0.5, "Title": "from gdbus"} {"Flag": "b", "Rate": "d", "Title": "s"} []"#,
                    "Done []",
                ])
            let all = try await fixture.gdbusCall("org.freedesktop.DBus.Properties.GetAll", "org.mprisbridge.Test1")
            #expect(
                all.stdout
                    == "({'Title': <'from gdbus'>, 'Rate': <0.5>, 'Flag': <true>, 'Revision': <uint32 1>, 'Identity': <'mpris-bridge tests'>, 'Position': <int64 42000000>},)\n"
            )
        }
    }

    @Test func aClientWriteGoesThroughTheSetterIsSnappedAndAnnounced() async throws {
        try await withTestService { fixture in
            let watcher = try await fixture.watchSignals()
            defer { watcher.kill() }
            let set = try await fixture.gdbusCall(
                "org.freedesktop.DBus.Properties.Set", "org.mprisbridge.Test1", "Rate", "<1.4>")
            #expect(set.status == 0, "\(set.stderr)")
            let read = try await fixture.gdbusCall("org.freedesktop.DBus.Properties.Get", "org.mprisbridge.Test1", "Rate")
            #expect(read.stdout == "(<1.5>,)\n")
            #expect(fixture.test.rate.value == 1.5)
            fixture.test.done.emit()
            let seen = await lines(of: watcher, until: { $0.hasPrefix("Done") || $0 == "TIMEOUT" })
            #expect(seen == [#"PropertiesChanged org.mprisbridge.Test1 {"Rate": 1.5} {"Rate": "d"} []"#, "Done []"])
        }
    }

    @Test func badWritesAreRefusedWithTheStandardErrorAndChangeNothing() async throws {
        try await withTestService { fixture in
            let cases: [(property: String, value: String, error: String, message: String)] = [
                ("Rate", "<nan>", "org.freedesktop.DBus.Error.InvalidArgs", "Rate must be a positive finite number, not nan"),
                ("Rate", "<int32 2>", "org.freedesktop.DBus.Error.InvalidArgs", "has type 'd', not 'i'"),
                ("Title", "<'x'>", "org.freedesktop.DBus.Error.PropertyReadOnly", "Property 'Title' of 'org.mprisbridge.Test1' is read-only"),
                ("Nope", "<'x'>", "org.freedesktop.DBus.Error.UnknownProperty", "Interface 'org.mprisbridge.Test1' has no property 'Nope'"),
            ]
            for bad in cases {
                let output = try await fixture.gdbusCall(
                    "org.freedesktop.DBus.Properties.Set", "org.mprisbridge.Test1", bad.property, bad.value)
                #expect(output.status != 0)
                #expect(output.stderr.contains(bad.error), "\(bad.property) = \(bad.value): \(output.stderr)")
                #expect(output.stderr.contains(bad.message), "\(output.stderr)")
            }
            let unknownInterface = try await fixture.gdbusCall(
                "org.freedesktop.DBus.Properties.GetAll", "org.example.Nothing")
            #expect(unknownInterface.stderr.contains("org.freedesktop.DBus.Error.UnknownInterface"))
            #expect(fixture.test.rate.value == 1.0)
            #expect(fixture.test.title.value == "initial")
        }
    }

    @Test func theSwiftClientReadsAndWritesPropertiesTyped() async throws {
        try await withTestService { fixture in
            let proxy = fixture.proxy
            #expect(try await proxy.property("Position", as: Int64.self) == 42_000_000)
            try await proxy.setProperty("Flag", to: true)
            #expect(try await proxy.property("Flag", as: Bool.self) == true)
            let all = try await proxy.allProperties()
            #expect(all.keys.sorted() == ["Flag", "Identity", "Position", "Rate", "Revision", "Title"])
            #expect(try all["Revision"]?.get(UInt32.self) == 1)
            await #expect(throws: DBusError.self) { try await proxy.property("Position", as: String.self) }
        }
    }

    /// `GetAll` is written from bytes kept between calls; `Get` still goes value by value through
    /// libdbus's iterators: both must read the same, for every type and shape.
    @Test func getAllFromKeptBytesEqualsEachGetForEveryTypeAndFollowsChanges() async throws {
        try await withServiceAndClient { _, service, client in
            let values = TypeRoundTripTests.everyType
            let every = Interface("org.mprisbridge.Every1")
            for (index, value) in values.enumerated() { try every.constantProperty(MemberName(validating: "P\(index)"), value) }
            let reads = Atomic<Int64>(0)
            _ = every.computedProperty("Reads", as: Int64.self) { reads.add(1, ordering: .relaxed).newValue }
            let title = every.property("Title", "first")
            let broken = Interface("org.mprisbridge.Broken1")
            _ = broken.property("Text", "a\0b")
            try service.export([every, broken], at: "/every")
            let proxy = Proxy(client, destination: service.uniqueName, path: "/every", interface: "org.mprisbridge.Every1")

            let all = try await proxy.allProperties()
            #expect(all.count == values.count + 2)
            for (index, value) in values.enumerated() {
                #expect(all["P\(index)"]?.value == value, "GetAll read P\(index) otherwise")
                let get = Message.methodCall(
                    destination: service.uniqueName, path: "/every", interface: "org.freedesktop.DBus.Properties",
                    member: "Get", body: [.string("org.mprisbridge.Every1"), .string("P\(index)")])
                let one = try await client.call(get).body.first
                #expect(one == .variant(Variant(value)), "Get read P\(index) otherwise")
            }
            // A computed property is read at each call; a stored one as it is now.
            let first = try #require(try all["Reads"]?.get(Int64.self))
            title.value = "second"
            let again = try await proxy.allProperties()
            #expect(try again["Reads"]?.get(Int64.self) == first + 1)
            #expect(try again["Title"]?.get(String.self) == "second")
            // A value that cannot go on the wire is refused as before, with a reply.
            let brokenProxy = Proxy(client, destination: service.uniqueName, path: "/every", interface: "org.mprisbridge.Broken1")
            await #expect(throws: DBusError.self) { try await brokenProxy.allProperties() }
        }
    }
}
