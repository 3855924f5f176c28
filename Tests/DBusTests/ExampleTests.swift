import DBus
import DBusTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The DBus documentation's ten-line service ("The D-Bus layer"), run as its own process and driven by gdbus.
@Suite(.timeLimit(.minutes(1))) struct ExampleTests {
    @Test func theCounterExampleServesWhatItsArticleSays() async throws {
        try await PrivateBus.with { bus in
            let example = try bus.spawn("\(buildProductsFolder)/counter-example", [])
            defer { example.kill() }
            // Its output is a pipe, so block-buffered: wait for the name on the bus, not for the banner.
            let appeared = try await bus.run("gdbus", ["wait", "--session", "--timeout", "20", "org.example.Counter"])
            #expect(appeared.status == 0, "\(example.capturedStderr)")
            let call = ["call", "--session", "-d", "org.example.Counter", "-o", "/org/example/Counter", "-m"]
            #expect(try await bus.run("gdbus", call + ["org.example.Counter1.Add", "5"]).stdout == "(int64 5,)\n")
            #expect(try await bus.run("gdbus", call + ["org.example.Counter1.Add", "7"]).stdout == "(int64 12,)\n")
            let count = try await bus.run("gdbus", call + ["org.freedesktop.DBus.Properties.Get", "org.example.Counter1", "Count"])
            #expect(count.stdout == "(<int64 12>,)\n")
        }
    }
}
