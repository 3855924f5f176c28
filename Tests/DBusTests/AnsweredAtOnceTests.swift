import DBus
import DBusTestSupport
import ProcessTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A method with an answer given at once (`Interface.method(_:inputs:outputs:annotations:atOnce:results:)`),
/// called by `gdbus` on a private bus.
@Suite(.timeLimit(.minutes(1))) struct AnsweredAtOnceTests {
    static let busName: BusName = "org.mprisbridge.AtOnceTest"
    static let concurrentPath: ObjectPath = "/org/mprisbridge/AtOnce"
    static let serialPath: ObjectPath = "/org/mprisbridge/Serial"

    /// `Echo(s) -> s`: `fast` is answered at once with the called path, `bad` refused at once,
    /// `wrong` answered at once with a result of the wrong type; any other text is left to the
    /// handler, which answers `handler` (after the gate opens, for `hold`).
    private static func interface(gate: Gate) -> Interface {
        let interface = Interface("org.mprisbridge.AtOnce1")
        interface.method(
            "Echo", inputs: [Argument("text", .string)], outputs: [Argument("reply", .string)],
            atOnce: { body -> MethodResults? in
                switch body.first {
                case .string("fast")?: return .values([.string("at once \(MethodCallContext.current?.path.rawValue ?? "-")")])
                case .string("bad")?: throw DBusError(.invalidArgs, "refused at once")
                case .string("wrong")?: return .values([.uint32(7)])
                case .string("slow")?:
                    // 4 ms of the connection's thread for each.
                    usleep(4_000)
                    return .values([.string("at once")])
                default: return nil
                }
            },
            results: { body -> MethodResults in
                if body.first == .string("hold") { await gate.wait() }
                return .values([.string("handler")])
            })
        return interface
    }

    private static func withService(_ body: (PrivateBus, Connection, Gate) async throws -> Void) async throws {
        try await withServiceAndClient { bus, service, client in
            let gate = Gate()
            defer { gate.open() }
            try service.export(interface(gate: gate), at: concurrentPath, ordering: .concurrent)
            try service.export(interface(gate: gate), at: serialPath, ordering: .serial)
            #expect(try await service.requestName(busName) == .primaryOwner)
            try await body(bus, client, gate)
        }
    }

    private static func echo(_ text: String, at path: ObjectPath, on bus: PrivateBus) async throws -> ProcessOutput {
        try await bus.run(
            "gdbus",
            ["call", "--session", "--dest", busName.rawValue, "--object-path", path.rawValue, "--method",
             "org.mprisbridge.AtOnce1.Echo", text])
    }

    @Test func anAnswerGivenAtOnceIsTheReplyAndNilLeavesTheCallToItsHandler() async throws {
        try await Self.withService { bus, _, _ in
            let fast = try await Self.echo("fast", at: Self.concurrentPath, on: bus)
            #expect(fast.status == 0 && fast.stdout == "('at once /org/mprisbridge/AtOnce',)\n", "\(fast)")
            let slow = try await Self.echo("other", at: Self.concurrentPath, on: bus)
            #expect(slow.status == 0 && slow.stdout == "('handler',)\n", "\(slow)")
            let bad = try await Self.echo("bad", at: Self.concurrentPath, on: bus)
            #expect(bad.status != 0 && bad.stderr.contains("org.freedesktop.DBus.Error.InvalidArgs") && bad.stderr.contains("refused at once"), "\(bad)")
            // Results that are not the declared outputs fail the call, as a handler's do.
            let wrong = try await Self.echo("wrong", at: Self.concurrentPath, on: bus)
            #expect(wrong.status != 0 && wrong.stderr.contains("produced results of signature 'u'"), "\(wrong)")
            // A serial object's calls keep their order: never answered ahead of the handler.
            let serial = try await Self.echo("fast", at: Self.serialPath, on: bus)
            #expect(serial.status == 0 && serial.stdout == "('handler',)\n", "\(serial)")
        }
    }

    @Test func anAnswerGivenAtOnceDoesNotWaitForTheObjectsEarlierCalls() async throws {
        try await Self.withService { bus, client, gate in
            let proxy = Proxy(client, destination: Self.busName, path: Self.concurrentPath, interface: "org.mprisbridge.AtOnce1")
            try await withThrowingTaskGroup(of: String.self) { group in
                // As many held calls as the object runs at once: a handler's call would wait its turn.
                for _ in 0..<CallOrdering.maximumConcurrentCalls {
                    group.addTask { try await proxy.call("Echo", "hold") as String }
                }
                var started = 0
                for await _ in gate.arrivals {
                    started += 1
                    if started == CallOrdering.maximumConcurrentCalls { break }
                }
                let fast = try await Self.echo("fast", at: Self.concurrentPath, on: bus)
                #expect(fast.status == 0 && fast.stdout == "('at once /org/mprisbridge/AtOnce',)\n", "\(fast)")
                gate.open()
                var answers: [String] = []
                for try await answer in group { answers.append(answer) }
                #expect(answers == Array(repeating: "handler", count: CallOrdering.maximumConcurrentCalls))
            }
        }
    }

    @Test func answersGivenAtOnceTakeAtMostHalfOfTheConnectionsThread() async throws {
        try await Self.withService { _, client, _ in
            let proxy = Proxy(client, destination: Self.busName, path: Self.concurrentPath, interface: "org.mprisbridge.AtOnce1")
            // 30 calls of 4 ms each sent together: 120 ms of the thread if all were answered at
            // once; 10 ms in every 20 may be, the rest go to the handler.
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<30 { group.addTask { try await proxy.call("Echo", "slow") as String } }
                var answers: [String] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            let atOnce = answers.filter { $0 == "at once" }.count
            #expect(atOnce >= 1 && answers.filter { $0 == "handler" }.count == 30 - atOnce, "\(answers)")
            #expect(atOnce < 20, "\(atOnce) of 30 answered at once")
        }
    }
}
