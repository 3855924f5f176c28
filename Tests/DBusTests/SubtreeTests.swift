import DBus
import ProcessTestSupport
import Synchronization
import Testing

/// One handler serves a whole path prefix: 100,000 objects that cost nothing until called.
@Suite(.timeLimit(.minutes(1))) struct SubtreeTests {
    static let size = 100_000

    /// A virtual node's interface, built only when the node is called.
    static func node(_ index: Int) -> Interface {
        let node = Interface("org.mprisbridge.Node1")
        _ = node.property("Label", "Node \(index)", changes: .const)
        node.method("Index", results: ["index"]) { () in UInt32(index) }
        return node
    }

    @Test func aHundredThousandNodeSubtreeIsListedAndCalledByAPythonClient() async throws {
        try await withTestService { fixture in
            let resolved = Atomic<Int>(0)
            let root: ObjectPath = "/org/mprisbridge/Tree"
            try fixture.service.exportSubtree(
                at: root,
                children: { path in path == root ? (0..<Self.size).map { "n\($0)" } : [] },
                object: { path in
                    resolved.add(1, ordering: .relaxed)
                    if path == root { return [Interface("org.mprisbridge.Tree1")] }
                    guard path.parent == root, let last = path.elements.last, last.first == "n",
                        let index = Int(last.dropFirst()), index < Self.size
                    else { return nil }
                    return [Self.node(index)]
                })
            let output = try await fixture.run("/usr/bin/python3", [pythonScript("subtree_client.py")])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(
                output.stdout.split(separator: "\n") == [
                    "children 100000 n0 n99999",
                    "root interfaces ['org.mprisbridge.Tree1']",
                    "parent lists ['Test', 'Tree']",
                    "node 0 0 Node 0",
                    "node 54321 54321 Node 54321",
                    "node 99999 99999 Node 99999",
                    "leaf org.mprisbridge.Node1 0",
                    "missing org.freedesktop.DBus.Error.UnknownObject",
                ])
            // Only the objects that were called were ever built: the root and a leaf
            // introspected, 3 nodes called and read, one missing node.
            #expect(resolved.load(ordering: .relaxed) == 9)
        }
    }

    @Test func anExactObjectInsideASubtreeTakesPrecedenceAndUnexportingRemovesIt() async throws {
        try await withTestService { fixture in
            let root: ObjectPath = "/org/mprisbridge/Tree"
            try fixture.service.exportSubtree(at: root, children: { _ in [] }, object: { _ in [Self.node(1)] })
            try fixture.service.export(Self.node(2), at: "/org/mprisbridge/Tree/special")
            let special = Proxy(fixture.client, destination: TestService.busName, path: "/org/mprisbridge/Tree/special", interface: "org.mprisbridge.Node1")
            let virtual = Proxy(fixture.client, destination: TestService.busName, path: "/org/mprisbridge/Tree/other", interface: "org.mprisbridge.Node1")
            #expect(try await special.call("Index") as UInt32 == 2)
            #expect(try await virtual.call("Index") as UInt32 == 1)
            fixture.service.unexportSubtree(at: root)
            await #expect(throws: DBusError.self) { try await virtual.call("Index") as UInt32 }
            #expect(throws: DBusError.self) { try fixture.service.export(Self.node(3), at: "/org/mprisbridge/Tree/special") }
        }
    }

    /// An interface declared once serves every object of a subtree: each object's properties
    /// are its own, one it lacks is absent, its methods know which object was called, and a
    /// per-object change is announced as each property's policy says.
    @Test func anInterfaceDeclaredOnceServesEachObjectItsOwnValues() async throws {
        try await withTestService { fixture in
            let root: ObjectPath = "/org/mprisbridge/Shelf"
            let shared = Interface("org.mprisbridge.Shelf1")
            shared.objectProperties(
                [("Label", .string, .emitsValue), ("Weight", .uint32, .invalidates), ("Colour", .string, .none)],
                values: { path in
                    guard let last = path.elements.last, let index = UInt32(last.dropFirst()) else { return [:] }
                    // An object that went away after the call found it.
                    if index == 13 { return nil }
                    var values: [String: DBusValue] = ["Label": .string("Box \(index)"), "Colour": .string("red")]
                    if index.isMultiple(of: 2) { values["Weight"] = .uint32(index * 10) }
                    return values
                })
            shared.method("Which", results: ["path"]) { () -> ObjectPath in MethodCallContext.current?.path ?? "/" }
            try fixture.service.exportSubtree(at: root, children: { _ in [] }, object: { _ in [shared] })
            func box(_ index: Int) -> Proxy {
                Proxy(fixture.client, destination: TestService.busName, path: root.appending("b\(index)"), interface: "org.mprisbridge.Shelf1")
            }
            #expect(try await box(7).property("Label", as: String.self) == "Box 7")
            #expect(try await box(4).property("Weight", as: UInt32.self) == 40)
            await #expect(throws: DBusError.self) { try await box(7).property("Weight", as: UInt32.self) }
            #expect(Set(try await box(7).allProperties().keys) == ["Label", "Colour"])
            #expect(Set(try await box(4).allProperties().keys) == ["Label", "Weight", "Colour"])
            #expect(try await box(3).call("Which") as ObjectPath == root.appending("b3"))
            // Gone since it was found: UnknownObject for Get and GetAll, never an empty answer.
            let gone = box(13)
            do {
                _ = try await gone.allProperties()
                Issue.record("GetAll of a vanished object answered")
            } catch let error as DBusError {
                #expect(error.name == .unknownObject, "\(error)")
            }
            do {
                _ = try await gone.property("Label", as: String.self)
                Issue.record("Get of a vanished object answered")
            } catch let error as DBusError {
                #expect(error.name == .unknownObject, "\(error)")
            }

            let changes = try await fixture.client.signals(
                matching: MatchRule(path: root.appending("b4"), interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
            try fixture.service.emitPropertiesChanged(at: root.appending("b4"), interface: shared, changed: ["Colour"])
            try fixture.service.emitPropertiesChanged(
                at: root.appending("b4"), interface: shared, changed: ["Label", "Weight", "Colour"])
            var iterator = changes.makeAsyncIterator()
            let message = try #require(try await iterator.next())
            let (interface, changed, invalidated) = try message.decode(as: String.self, [String: Variant].self, [String].self)
            #expect(interface == "org.mprisbridge.Shelf1")
            #expect(changed.keys.sorted() == ["Label"])
            #expect(try changed["Label"]?.get(String.self) == "Box 4")
            #expect(invalidated == ["Weight"])
        }
    }
}
