import DBus
import DBusTestSupport
import ProcessTestSupport
import Testing

/// The files in `dbus/` are the contract: what the running service introspects must match them.
@Suite(.timeLimit(.minutes(1))) struct ContractTests {
    @Test func theTestServiceServesExactlyItsContract() async throws {
        try await withTestService { fixture in
            let output = try await fixture.run(
                "/usr/bin/python3",
                ["\(repositoryRoot)/Scripts/check-contract.py", TestService.busName.rawValue, TestService.path.rawValue,
                 "\(repositoryRoot)/dbus/test/org.mprisbridge.Test1.xml"])
            #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
            #expect(output.stdout == "match 18 members\n")
        }
    }

    @Test func theComparisonNoticesAMissingOrChangedMember() async throws {
        try await PrivateBus.with { bus in
            let service = try await Connection.connect(to: .address(bus.address))
            defer { service.close() }
            let partial = Interface(TestService.name)
            partial.method("Add", arguments: ["a", "b"], results: ["sum"]) { (a: Int32, b: Int32) in a + b }
            try service.export(partial, at: TestService.path)
            _ = try await service.requestName(TestService.busName)
            let output = try await bus.run(
                "/usr/bin/python3",
                ["\(repositoryRoot)/Scripts/check-contract.py", TestService.busName.rawValue, TestService.path.rawValue,
                 "\(repositoryRoot)/dbus/test/org.mprisbridge.Test1.xml"])
            #expect(output.status == 1)
            #expect(output.stdout.contains("org.mprisbridge.Test1 method Add: contract ('in=xx', 'out=x'), served ('in=ii', 'out=i')"))
            #expect(output.stdout.contains("org.mprisbridge.Test1 method Echo: contract ('in=v', 'out=v'), served None"))
        }
    }
}
