import BenchmarkSupport
import Glibc

/// What the run is checked against (Benchmarks/Thresholds/MPDBenchmark.json).
enum Thresholds {
    private static let file = ThresholdFile(benchmark: "MPDBenchmark")
    // The MPD face's goals: reported as met or NOT MET, never gating.
    /// status + currentsong p50 of the daemon over mpd's, each kind (pipelined over TCP and unix,
    /// a command list over TCP): no slower than mpd, within what the harness tells apart (two
    /// identical mpds measure 0.994-1.005).
    static let statusCurrentsongOverMPDP50Goal = file["statusCurrentsongOverMPDP50Goal"]
    /// pause -> `changed: player` at an idle client, p90 of the daemon, ms, each transport.
    static let idleWakeP90GoalMilliseconds = file["idleWakeP90GoalMilliseconds"]
    /// Resident memory (VmRSS) the daemon gains with 100 idle clients, MiB.
    static let hundredClientsGoalMegabytes = file["hundredClientsGoalMegabytes"]
    // Gating regression thresholds, above the worst the reference machine measured (3 pinned
    // runs and 1 unpinned of the first daemon with an MPD face: round trips 3.4-4.7, playlistinfo
    // 6.0-13.2, list 43-99, idle wake p90 2.3-9.6 ms, 100 clients 0.15-0.91 MiB).
    static let statusCurrentsongOverMPDP50 = file["statusCurrentsongOverMPDP50"]
    /// playlistinfo of the 1,000-entry queue, p50 over mpd's.
    static let playlistInfoOverMPDP50 = file["playlistInfoOverMPDP50"]
    /// list album group albumartist, p50 over mpd's.
    static let listAlbumsOverMPDP50 = file["listAlbumsOverMPDP50"]
    static let idleWakeP90Milliseconds = file["idleWakeP90Milliseconds"]
    static let hundredClientsMegabytes = file["hundredClientsMegabytes"]
}

/// The figures as a report beside the goals and thresholds, and as JSON.
struct MPDReport {
    let options: Options
    let figures: MPDFigures

    /// Prints the report and writes the JSON; returns the exit status: 0, 1 if a regression
    /// threshold is exceeded, 2 if the JSON cannot be written.
    func emit() -> Int32 {
        let peer = figures.servers[1]
        var checks: [ThresholdCheck] = []
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let placement = figures.pinnedCPU.map { "all pinned to CPU \($0) of \(cores)" } ?? "unpinned, \(cores) CPUs"
        var lines = [
            "",
            "The MPD face: \(figures.servers[0]) (\(figures.greetings[0])) beside \(peer) (\(figures.greetings[1])); "
                + "both running, same client (\(placement))",
            "Library: \(grouped(options.tracks)) tagged Ogg tracks, \(figures.library.albums) albums, "
                + "\(figures.library.artists) artists (\(figures.library.generated ? "generated" : "cached") in \(options.libraryFolder)); "
                + "queue: its first \(grouped(options.queueLength)) by path, paused on the first",
            "",
            "\(options.rounds) timed round trips of each kind and server after \(options.warmUp), interleaved in batches of \(options.batch); "
                + "one write per request, read until the last OK",
            "(CPU: the server's processor time per request, every thread, µs; switches: its context switches per request; "
                + "both over a separate untimed run)",
            Summary.tableHeader("Round trip (µs)") + pad("CPU", 8) + pad("switches", 9) + pad("ratio p50", 11)
                + pad("ratio p90", 11),
        ]
        /// Listings take milliseconds: shown in ms, so that their columns stay apart.
        func milliseconds(_ samples: [UInt64]) -> Summary {
            let summary = Summary(nanoseconds: samples)
            return Summary(
                count: summary.count, p50: summary.p50 / 1000, p90: summary.p90 / 1000, p99: summary.p99 / 1000,
                mean: summary.mean / 1000, min: summary.min / 1000, max: summary.max / 1000)
        }
        func addRoundTrips(
            _ kinds: [MPDFigures.RoundTrips], inMilliseconds: Bool = false, goal: Double?,
            gate: (MPDFigures.RoundTrips) -> Double, name: (MPDFigures.RoundTrips) -> String
        ) {
            for kind in kinds {
                let mpd = inMilliseconds ? milliseconds(kind.samples[0]) : Summary(nanoseconds: kind.samples[0])
                let other = inMilliseconds ? milliseconds(kind.samples[1]) : Summary(nanoseconds: kind.samples[1])
                let ratio = other.p50 / mpd.p50
                lines.append("\(kind.request.label), \(kind.transport.label)")
                func costs(_ server: Int) -> String {
                    pad(fixed(kind.serverMicroseconds[server], 1), 8) + pad(fixed(kind.serverSwitches[server], 2), 9)
                }
                lines.append(mpd.tableRow("  " + figures.servers[0]) + costs(0))
                lines.append(
                    other.tableRow("  " + peer) + costs(1) + pad(fixed(ratio, 3) + "x", 11)
                        + pad(fixed(other.p90 / mpd.p90, 3) + "x", 11)
                        + (goal.map { "   goal <= \(fixed($0, 2))x: " + (ratio <= $0 ? "met" : "NOT MET") } ?? ""))
                if let goal { checks.append(ThresholdCheck(name: name(kind), limit: goal, value: ratio, gating: false)) }
                checks.append(ThresholdCheck(name: name(kind), limit: gate(kind), value: ratio, gating: true))
            }
        }
        addRoundTrips(
            figures.roundTrips, goal: Thresholds.statusCurrentsongOverMPDP50Goal, gate: { _ in Thresholds.statusCurrentsongOverMPDP50 }
        ) { kind in
            (kind.request.label == TimedRequest.commandList.label ? "commandList" : "pipelined") + kind.transport.name + "OverMPDP50"
        }
        lines += [
            "",
            "\(options.listings) timed listings of each kind and server after \(options.listingWarmUp), interleaved in batches of 10",
            Summary.tableHeader("Listing (ms; CPU in µs)") + pad("CPU", 8) + pad("switches", 9) + pad("ratio p50", 11)
                + pad("ratio p90", 11),
        ]
        func isPlaylistInfo(_ kind: MPDFigures.RoundTrips) -> Bool { kind.request.label == TimedRequest.playlistInfo.label }
        addRoundTrips(
            figures.listings, inMilliseconds: true, goal: nil,
            gate: { isPlaylistInfo($0) ? Thresholds.playlistInfoOverMPDP50 : Thresholds.listAlbumsOverMPDP50 }
        ) { kind in
            (kind.request.label == TimedRequest.playlistInfo.label ? "playlistInfo" : "listAlbums") + "OverMPDP50"
        }
        for (kind, rows) in zip(figures.listings, figures.listingRows) {
            lines.append(
                "(\(kind.request.label): \(rows.map(String.init).joined(separator: " / ")) "
                    + (kind.request.label == TimedRequest.playlistInfo.label ? "entries" : "albums") + ")")
        }
        for refused in figures.refusedListings { lines.append("Left out, refused: \(refused)") }
        lines += [
            "",
            "pause 1 / pause 0 by one connection -> 'changed: player' at another parked in 'idle player': "
                + "\(options.wakes) of each server after \(options.wakeWarmUp), in alternating batches of \(options.wakeBatch)",
            pad("Wake (µs)", 32, right: false) + pad("n", 6) + pad("p50", 8) + pad("p90", 8) + pad("p99", 8) + pad("max", 9)
                + pad("stale", 7) + pad("OK p50", 8) + pad("OK p90", 8),
        ]
        for wakes in figures.wakes {
            lines.append(wakes.transport.label)
            for server in figures.servers.indices {
                let summary = Summary(nanoseconds: wakes.samples[server])
                var row = pad("  " + figures.servers[server], 32, right: false) + pad(String(summary.count), 6)
                row += pad(fixed(summary.p50, 0), 8) + pad(fixed(summary.p90, 0), 8) + pad(fixed(summary.p99, 0), 8)
                let reply = Summary(nanoseconds: wakes.replies[server])
                row += pad(fixed(summary.max, 0), 9) + pad(String(wakes.stale[server]), 7)
                row += pad(fixed(reply.p50, 0), 8) + pad(fixed(reply.p90, 0), 8)
                if server == 1 {
                    let p90 = summary.p90 / 1000
                    row += "   p90 goal <= \(fixed(Thresholds.idleWakeP90GoalMilliseconds, 1)) ms: "
                        + (p90 <= Thresholds.idleWakeP90GoalMilliseconds ? "met" : "NOT MET")
                    let name = "idleWake\(wakes.transport.name)P90Ms"
                    checks.append(ThresholdCheck(name: name, limit: Thresholds.idleWakeP90GoalMilliseconds, value: p90, gating: false))
                    checks.append(ThresholdCheck(name: name, limit: Thresholds.idleWakeP90Milliseconds, value: p90, gating: true))
                }
                lines.append(row)
            }
        }
        let memory = figures.memory
        lines += [
            "('stale': idles that had already returned when the command was due, dropped and parked again; "
                + "'OK': send -> the command's own OK at the connection that sent it)",
            "",
            "Resident memory, no clients of ours -> \(memory.clients) clients over TCP (each greeted, one status, parked in idle), after 1 s",
            pad("Memory (MiB)", 20, right: false) + pad("VmRSS", 9) + pad("with", 9) + pad("+", 8) + pad("RssAnon +", 11)
                + pad("threads", 10) + pad("per client (kB)", 17),
        ]
        for server in figures.servers.indices {
            let (before, with) = (memory.before[server], memory.with[server])
            let growth = Double(with.resident - before.resident) / 1024
            var row = pad(figures.servers[server], 20, right: false) + pad(fixed(Double(before.resident) / 1024, 1), 9)
            row += pad(fixed(Double(with.resident) / 1024, 1), 9) + pad(fixed(growth, 2), 8)
            row += pad(fixed(Double(with.anonymous - before.anonymous) / 1024, 2), 11)
            row += pad("\(before.threads) -> \(with.threads)", 10)
            row += pad(fixed(Double(with.resident - before.resident) / Double(memory.clients), 1), 17)
            if server == 1 {
                row += "   goal < \(fixed(Thresholds.hundredClientsGoalMegabytes, 0)) MiB: "
                    + (growth < Thresholds.hundredClientsGoalMegabytes ? "met" : "NOT MET")
                checks.append(
                    ThresholdCheck(name: "clientsRSSGrowthMiB", limit: Thresholds.hundredClientsGoalMegabytes, value: growth, gating: false))
                checks.append(
                    ThresholdCheck(name: "clientsRSSGrowthMiB", limit: Thresholds.hundredClientsMegabytes, value: growth, gating: true))
            }
            lines.append(row)
        }
        let passed = checks.allSatisfy { $0.passed || !$0.gating }
        lines += [
            "",
            "Run: \(fixed(figures.totalSeconds, 1)) s in all",
            "Regression thresholds (exit status 1 if one is exceeded):",
        ]
        lines += ThresholdCheck.reportLines(checks, nameWidth: 32)
        print(lines.joined(separator: "\n"))
        if let path = options.jsonPath {
            func requests(_ kinds: [MPDFigures.RoundTrips]) -> JSON {
                .array(
                    kinds.map { kind in
                        .object(
                            [("request", .string(kind.request.label)), ("transport", .string(kind.transport.label))]
                                + figures.servers.indices.map {
                                    (
                                        figures.servers[$0],
                                        .object([
                                            ("latency", Summary(nanoseconds: kind.samples[$0]).json),
                                            ("serverCPUMicroseconds", .number(kind.serverMicroseconds[$0])),
                                            ("serverContextSwitches", .number(kind.serverSwitches[$0])),
                                        ])
                                    )
                                }
                                + [
                                    (
                                        "p50Ratio",
                                        .number(Summary(nanoseconds: kind.samples[1]).p50 / Summary(nanoseconds: kind.samples[0]).p50)
                                    )
                                ])
                    })
            }
            let json = JSON.object([
                ("benchmark", .string("mpd-face")),
                ("schemaVersion", .integer(1)),
                ("passed", .bool(passed)),
                ("servers", .array(figures.servers.map { .string($0) })),
                ("pinnedCPU", figures.pinnedCPU.map { .integer($0) } ?? .null),
                ("tracks", .integer(options.tracks)),
                ("queueLength", .integer(options.queueLength)),
                ("roundTrips", requests(figures.roundTrips)),
                ("listings", requests(figures.listings)),
                ("listingRows", .array(figures.listingRows.map { .array($0.map { .integer($0) }) })),
                ("refusedListings", .array(figures.refusedListings.map { .string($0) })),
                (
                    "idleWakes",
                    .array(
                        figures.wakes.map { wakes in
                            .object(
                                [("transport", .string(wakes.transport.label))]
                                    + figures.servers.indices.map {
                                        (
                                            figures.servers[$0],
                                            .object([
                                                ("latency", Summary(nanoseconds: wakes.samples[$0]).json),
                                                ("reply", Summary(nanoseconds: wakes.replies[$0]).json),
                                                ("stale", .integer(wakes.stale[$0])),
                                            ])
                                        )
                                    })
                        })
                ),
                (
                    "memory",
                    .object(
                        [("clients", .integer(memory.clients))]
                            + figures.servers.indices.map {
                                (
                                    figures.servers[$0],
                                    .object([("before", memory.before[$0].json), ("withClients", memory.with[$0].json)])
                                )
                            })
                ),
                ("thresholds", .array(checks.map(\.json))),
                ("totalSeconds", .number(figures.totalSeconds)),
            ])
            guard json.writeFigures(to: path, benchmark: "MPDBenchmark") else { return 2 }
        }
        return passed ? 0 : 1
    }
}
