// The DBus documentation's example ("The D-Bus layer"): a D-Bus service in ten lines.
// Try it: `Scripts/run`, then in another shell
//   gdbus call --session -d org.example.Counter -o /org/example/Counter -m org.example.Counter1.Add 5
import DBus

let bus = try await Connection.session()
let counter = Interface("org.example.Counter1")
let count = counter.property("Count", Int64(0))
counter.method("Add", arguments: ["amount"], results: ["total"]) { (amount: Int64) -> Int64 in
    count.update { $0 += amount }
    return count.value
}
try bus.export(counter, at: "/org/example/Counter")
_ = try await bus.requestName("org.example.Counter")
print("Serving org.example.Counter on \(bus.uniqueName). Try:")
print("  gdbus call --session -d org.example.Counter -o /org/example/Counter -m org.example.Counter1.Add 5")
await bus.waitUntilDisconnected()
