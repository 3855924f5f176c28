import DBusTestSupport
import Foundation
import ProcessTestSupport
import Testing

/// One figure of `Budgets.json`: it fails when the measured value exceeds `expected + margin`.
private struct Budget: Decodable {
    var expected: Double
    var margin: Double
    var limit: Double { expected + margin }
}

private struct Budgets: Decodable {
    var rssPausedMiB: Budget
    var startWorkMilliseconds: Budget
    var switchesPausedPerSecond: Budget

    static func load() throws -> Budgets {
        let path = repositoryRoot + "/Tests/MPRISBridgeTests/Budgets.json"
        return try JSONDecoder().decode(Budgets.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

private struct Figures: Decodable {
    var execToNameMilliseconds: [Double]
    var execToHelpExitMilliseconds: [Double]
    var rssPausedKiB: Double
    var switchesPausedPerSecond: Double
}

/// The least of several timings: noise (another process on the core) only ever adds to one.
private func fastest(_ values: [Double]) -> Double { values.min() ?? .infinity }

/// The regression check of the cheap figures: resident memory while paused, exec → bus name,
/// and wake-ups while paused, held to `Budgets.json`. Start-up is held as the daemon's own part
/// of it: exec → bus name less exec → exit of `mpris-bridge --help` (the same executable loaded,
/// its libraries linked and the runtime started), which moves with the machine's speed. The benchmarks measure them properly
/// (release build, beside the peers); this catches a change that costs 5 MB or 10 ms the day
/// it lands. Named `RealTimeTests` so that `Scripts/test` runs it alone, on a quiet machine.
@Suite struct BudgetRealTimeTests {
    @Test func memoryStartUpAndWakeUpsWhilePausedStayWithinTheirBudgets() async throws {
        let budgets = try Budgets.load()
        let library = try await GeneratedLibrary.make(seconds: 30)
        defer { library.remove() }
        try await PrivateBus.with { bus in
            let scan = try await DaemonFixture.scan(library)
            #expect(scan.succeeded, "\(scan)")
            let folder = library.folder.path
            let daemon = [
                daemonExecutable, "--library", library.path, "--cache-dir", folder + "/cache", "--state-dir",
                folder + "/state", "--audio-sink", "fakesink sync=true", "--mpd-port", "0", "--mpd-socket",
                folder + "/mpd.socket",
            ]
            let output = try await bus.run(
                PrivateBus.systemPython, [pythonScript("budget_probe.py"), "7", DaemonFixture.busName] + daemon,
                timeout: .seconds(180))
            try #require(output.succeeded, "\(output)")
            let figures = try JSONDecoder().decode(Figures.self, from: Data(output.stdout.utf8))
            let toName = fastest(figures.execToNameMilliseconds)
            let toHelpExit = fastest(figures.execToHelpExitMilliseconds)
            let startWork = toName - toHelpExit
            let rss = figures.rssPausedKiB / 1024
            print(
                "budgets: RSS paused \(rss) MiB (limit \(budgets.rssPausedMiB.limit)); exec → name at best \(toName) ms "
                    + "of \(figures.execToNameMilliseconds), exec → --help's exit at best \(toHelpExit) ms, the start's own work "
                    + "\(startWork) ms (limit \(budgets.startWorkMilliseconds.limit)); context switches while paused "
                    + "\(figures.switchesPausedPerSecond)/s (limit \(budgets.switchesPausedPerSecond.limit))")
            #expect(rss <= budgets.rssPausedMiB.limit, "RSS paused \(rss) MiB")
            #expect(
                startWork <= budgets.startWorkMilliseconds.limit,
                "exec → bus name \(toName) ms, \(startWork) ms more than exec → --help's exit")
            #expect(
                figures.switchesPausedPerSecond <= budgets.switchesPausedPerSecond.limit,
                "\(figures.switchesPausedPerSecond) context switches a second while paused")
        }
    }
}
