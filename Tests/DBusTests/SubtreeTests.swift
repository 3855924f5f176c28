import DBus
import DBusTestSupport
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
}
