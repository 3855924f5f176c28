import BenchmarkSupport
import DBus
import GStreamerPlayback
import Glibc

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything one run measured.
struct DaemonFigures: Sendable {
    /// Where the generated media lives.
    var cache: String
    var indexing: [IndexingFigures]
    var largeRescans: [ScanRun]
    var starts: StartFigures
    var activity: ActivityFigures
    var plays: PlayFigures
    var totalSeconds: Double
}

/// The figures as a report beside the goals and thresholds, and as JSON. Measuring is
/// ``Benchmark``'s.
struct DaemonReport {
    let options: Options
    let figures: DaemonFigures


    /// Prints the report and writes the JSON; returns the exit status: 0, 1 if a regression
    /// threshold is exceeded, 2 if the JSON cannot be written.
    func emit() -> Int32 {
        let (cache, indexing, largeRescans, starts, activity, plays, totalSeconds) = (
            figures.cache, figures.indexing, figures.largeRescans, figures.starts, figures.activity, figures.plays,
            figures.totalSeconds
        )
        // Summaries are in µs; the report shows ms.
        func ms(_ samples: [UInt64]) -> Summary { Summary(nanoseconds: samples) }
        let direct = ms(starts.directBusName)
        let restoredName = ms(starts.restoredBusName)
        let restoredReady = ms(starts.restoredReady)
        let filledName = ms(starts.filledBusName)
        let filledReady = ms(starts.filledReady)
        let stops = ms(starts.stops)
        let load = ms(plays.load)
        let playCall = ms(plays.play)
        let loadAndPlay = ms(plays.loadAndPlay)
        let dbusPlay = ms(plays.dbusPlay)
        let noMP3 = indexing.first { $0.mix == .noMP3 }!
        let largeRescan = largeRescans.sorted { $0.wall < $1.wall }[(largeRescans.count - 1) / 2]
        let idleMB = activity.idle.residentMegabytes
        let scanningIdleMB = activity.scanningIdle.residentMegabytes
        let playingMB = activity.playing.residentMegabytes
        let pausedMB = activity.pausedMemory.residentMegabytes
        let smallPausedMB = activity.smallPaused.residentMegabytes

        let checks = [
            ThresholdCheck(
                name: "execToBusNameP50Ms", limit: Thresholds.execToBusNameGoalMilliseconds, value: direct.p50 / 1000,
                gating: false),
            ThresholdCheck(
                name: "idleRSSMiB", limit: Thresholds.idleResidentGoalMegabytes, value: idleMB, gating: false),
            ThresholdCheck(
                name: "idleRSSAfterScanMiB", limit: Thresholds.idleResidentGoalMegabytes, value: scanningIdleMB,
                gating: false),
            ThresholdCheck(
                name: "playingRSSMiB", limit: Thresholds.playingResidentGoalMegabytes, value: playingMB, gating: false),
            ThresholdCheck(
                name: "pausedSwitches", limit: Thresholds.quietGoal, value: Double(activity.paused.switches),
                gating: false),
            ThresholdCheck(
                name: "pausedCPUTicks", limit: Thresholds.quietGoal, value: Double(activity.paused.cpuTicks),
                gating: false),
            ThresholdCheck(
                name: "idleSwitches", limit: Thresholds.quietGoal, value: Double(activity.neverPlayed.switches),
                gating: false),
            ThresholdCheck(
                name: "idleCPUTicks", limit: Thresholds.quietGoal, value: Double(activity.neverPlayed.cpuTicks),
                gating: false),
            ThresholdCheck(
                name: "inProcessPlayP50Ms", limit: Thresholds.playGoalMilliseconds, value: loadAndPlay.p50 / 1000,
                gating: false),
            ThresholdCheck(
                name: "dbusPlayP50Ms", limit: Thresholds.playGoalMilliseconds, value: dbusPlay.p50 / 1000, gating: false),
            ThresholdCheck(
                name: "smallPausedRSSMiB", limit: Thresholds.pausedResidentGoalMegabytes, value: smallPausedMB,
                gating: false),
            // Gating.
            ThresholdCheck(
                name: "coldFilesPerSecondNoMP3", limit: Thresholds.coldFilesPerSecondNoMP3,
                value: noMP3.coldFilesPerSecond, gating: true, atLeast: true),
            ThresholdCheck(
                name: "unchangedRescanMs", limit: Thresholds.unchangedRescanMilliseconds,
                value: noMP3.medianRescan.wallMilliseconds, gating: true),
            ThresholdCheck(
                name: "execToBusNameP50Ms", limit: Thresholds.execToBusNameP50Milliseconds, value: direct.p50 / 1000,
                gating: true),
            ThresholdCheck(
                name: "execToReadyP50Ms", limit: Thresholds.execToReadyP50Milliseconds, value: restoredReady.p50 / 1000,
                gating: true),
            ThresholdCheck(name: "idleRSSMiB", limit: Thresholds.idleResidentMegabytes, value: idleMB, gating: true),
            ThresholdCheck(
                name: "playingRSSMiB", limit: Thresholds.playingResidentMegabytes, value: playingMB, gating: true),
            ThresholdCheck(
                name: "pausedRSSMiB", limit: Thresholds.pausedResidentMegabytes, value: pausedMB, gating: true),
            ThresholdCheck(
                name: "smallPausedRSSMiB", limit: Thresholds.smallPausedResidentMegabytes, value: smallPausedMB,
                gating: true),
            ThresholdCheck(
                name: "pausedOwnSwitches", limit: Thresholds.ownSwitchesWhileQuiet,
                value: Double(activity.paused.switchesBesidesDispatchManager), gating: true),
            ThresholdCheck(
                name: "idleOwnSwitches", limit: Thresholds.ownSwitchesWhileQuiet,
                value: Double(activity.neverPlayed.switchesBesidesDispatchManager), gating: true),
            ThresholdCheck(
                name: "inProcessPlayP50Ms", limit: Thresholds.inProcessPlayP50Milliseconds, value: loadAndPlay.p50 / 1000,
                gating: true),
            ThresholdCheck(
                name: "dbusPlayP50Ms", limit: Thresholds.dbusPlayP50Milliseconds, value: dbusPlay.p50 / 1000, gating: true),
        ]
        let passed = checks.allSatisfy { $0.passed || !$0.gating }
        func goal(_ index: Int, _ unit: String, notMet reason: String) -> String {
            let check = checks[index]
            return "goal \(check.comparison) \(fixed(check.limit, check.limit == 0 ? 0 : 1))\(unit): "
                + (check.passed ? "met" : "NOT MET (\(reason))")
        }
        func row(_ label: String, _ summary: Summary) -> String {
            pad(label, 46, right: false) + pad(String(summary.count), 4) + pad(fixed(summary.p50 / 1000, 2), 9)
                + pad(fixed(summary.p90 / 1000, 2), 9) + pad(fixed(summary.min / 1000, 2), 9)
                + pad(fixed(summary.max / 1000, 2), 9)
        }
        func header(_ title: String) -> String {
            pad(title, 46, right: false) + pad("n", 4) + pad("p50", 9) + pad("p90", 9) + pad("min", 9) + pad("max", 9)
        }
        func mib(_ kilobytes: Int) -> String { fixed(Double(kilobytes) / 1024, 1) }
        func memoryLine(_ label: String, _ snapshot: MemorySnapshot) -> String {
            let memory = snapshot.memory
            return pad(label, 46, right: false) + pad(mib(memory.resident), 8) + pad(mib(memory.peak), 8)
                + pad(mib(memory.anonymous), 8) + pad(mib(memory.file), 8) + pad(mib(memory.proportional), 8)
                + pad(mib(memory.unshared), 8) + pad(String(memory.threads), 8)
        }
        func activityLines(_ label: String, _ window: ActivityWindow) -> [String] {
            var lines = [
                "  \(label): \(window.cpuTicks) CPU ticks (utime+stime), \(fixed(window.cpuMicroseconds, 0)) µs on CPU "
                    + "(schedstat), \(window.switches) context switches (\(window.voluntarySwitches) voluntary) "
                    + "in \(fixed(window.seconds, 1)) s; \(window.switchesBesidesDispatchManager) besides libdispatch's "
                    + "manager thread; \(window.threadCount) threads, \(window.endedThreads) ended"
            ]
            for thread in window.activeThreads {
                lines.append(
                    "      thread \(thread.id) \"\(thread.name)\": \(thread.switches) switches, "
                        + "\(fixed(thread.cpuMicroseconds, 0)) µs on CPU"
                        + (thread.isDispatchManager ? " (libdispatch's manager: its 1 Hz workqueue monitor)" : ""))
            }
            return lines
        }
        func groupLines(_ snapshots: [(String, MemorySnapshot)]) -> [String] {
            var lines = [
                pad("  resident MiB by what is mapped", 48, right: false)
                    + snapshots.map { pad($0.0, 11) }.joined()
            ]
            let totals = snapshots.map { MappingGroup.totals($0.1.mappings) }
            for (index, group) in MappingGroup.allCases.enumerated() {
                lines.append(
                    pad("    " + group.rawValue, 48, right: false)
                        + totals.map { pad(mib($0[index].kilobytes), 11) }.joined())
            }
            return lines
        }
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))

        var lines = [
            "",
            "mpris-bridge daemon benchmark: \(options.daemon)",
            "(unpinned, \(cores) CPUs; generated media \(cache))",
            "",
            "1. Indexing with `mpris-bridge scan` (empty cache folder each cold scan; warm page cache)",
            "   \(GeneratedMedia.filesPerLibrary) files: copies of \(GeneratedMedia.tonesPerKind) tones per format, "
                + "1-2.5 s each, 20 artists x 10 albums, a cover.png per album",
            pad("  library", 62, right: false) + pad("cold ms", 9) + pad("files/s", 9) + pad("own f/s", 9)
                + pad("CPU s", 7) + pad("rescan ms", 10),
        ]
        for figures in indexing {
            let cold = figures.medianCold
            lines.append(
                pad("  " + figures.mix.label, 62, right: false) + pad(fixed(cold.wallMilliseconds, 0), 9)
                    + pad(fixed(figures.coldFilesPerSecond, 0), 9) + pad(fixed(figures.ownFilesPerSecond, 0), 9)
                    + pad(fixed(cold.cpuSeconds, 1), 7) + pad(fixed(figures.medianRescan.wallMilliseconds, 0), 10))
        }
        lines += [
            "  (medians of \(options.coldScans) cold scans and \(options.rescans) rescans; files/s from the command's "
                + "wall time, own f/s from the time the scan prints; CPU s = user + system of the scan process)",
            "  cold scans, ms: "
                + indexing.map { "\($0.mix.rawValue) " + $0.cold.map { fixed($0.wallMilliseconds, 0) }.joined(separator: " ") }
                .joined(separator: "; "),
            "  unchanged rescan of the \(GeneratedMedia.tracksInLargeLibrary)-file library: "
                + "\(fixed(largeRescan.wallMilliseconds, 0)) ms (median of \(largeRescans.count); "
                + "\(largeRescan.read) files read)",
            "",
            "2. Start with a \(GeneratedMedia.tracksInLargeLibrary)-track index (--no-scan), from just before the "
                + "spawn (ms); queue of \(starts.queued)",
            header("  "),
            row("  exec -> bus name owned (spawned directly)", direct),
            row("  exec -> bus name owned (via sh -c exec)", restoredName),
            row("  exec -> ready: queue restored (via sh)", restoredReady),
            row("  exec -> bus name, empty state (via sh)", filledName),
            row("  exec -> ready: queue filled from index (via sh)", filledReady),
            row("  SIGTERM -> exit", stops),
            "  exec -> bus name p50 \(fixed(direct.p50 / 1000, 2)) ms   "
                + goal(0, " ms", notMet: "see Benchmarks/README.md"),
            "  (NameOwnerChanged subscribed before each spawn; `ready:` needs the log on stdout, so those starts go "
                + "through `sh -c 'exec … 2>&1'`, which adds \(fixed((restoredName.p50 - direct.p50) / 1000, 2)) ms "
                + "to the bus-name p50)",
            "",
            "3. Resident memory, MiB (1024 kB as /proc counts): VmRSS, its peak VmHWM, anonymous and file-backed "
                + "parts; PSS shares out pages mapped by other processes too, private counts only the process's own",
            pad("  ", 46, right: false) + pad("VmRSS", 8) + pad("VmHWM", 8) + pad("anon", 8) + pad("file", 8)
                + pad("PSS", 8) + pad("private", 8) + pad("threads", 8),
            memoryLine("  idle, --no-scan, after ready:", activity.idle),
            memoryLine("  idle, default scan, after its child exited", activity.scanningIdle),
            memoryLine("  playing \(fixed(Double(options.playingTime.components.seconds), 0)) s, fakesink sync=true", activity.playing),
            memoryLine("  paused after playing", activity.pausedMemory),
        ]
        if let autoSink = activity.autoSinkPlaying {
            lines.append(memoryLine("  playing \(fixed(Double(options.playingTime.components.seconds), 0)) s, autoaudiosink", autoSink))
        } else {
            lines.append("  playing, autoaudiosink: \(activity.autoSinkOutcome)")
        }
        lines.append(memoryLine("  idle, \(activity.smallQueue) tracks", activity.smallIdle))
        lines.append(memoryLine("  playing, \(activity.smallQueue) tracks", activity.smallPlaying))
        lines.append(memoryLine("  paused, \(activity.smallQueue) tracks", activity.smallPaused))
        let perTrack =
            Double(activity.idle.memory.resident - activity.smallIdle.memory.resident)
            / Double(starts.queued - activity.smallQueue)
        lines.append(
            "  each queued track costs \(fixed(perTrack, 1)) kB of VmRSS (idle with \(starts.queued) against idle with "
                + "\(activity.smallQueue)); \(fixed(activity.smallIdle.residentMegabytes, 1)) MiB do not depend on the queue")
        lines += [
            "  idle \(fixed(idleMB, 1)) MiB   " + goal(1, " MiB", notMet: "see what is mapped below"),
            "  idle after the start-up scan \(fixed(scanningIdleMB, 1)) MiB   "
                + goal(2, " MiB", notMet: "see what is mapped below")
                + "; the scan child ran \(fixed(Double(activity.scanAfterReady) / 1e6, 0)) ms after ready:",
            "  playing \(fixed(playingMB, 1)) MiB (\(activity.playingStatus), \(activity.playingURL.split(separator: "/").last ?? ""))   "
                + goal(3, " MiB", notMet: "see what is mapped below"),
            "  paused \(fixed(pausedMB, 1)) MiB; paused with \(activity.smallQueue) tracks \(fixed(smallPausedMB, 1)) MiB   "
                + goal(10, " MiB", notMet: "see what is mapped below"),
        ]
        var snapshots = [
            ("idle", activity.idle), ("after scan", activity.scanningIdle), ("playing", activity.playing),
            ("paused", activity.pausedMemory),
        ]
        if let autoSink = activity.autoSinkPlaying { snapshots.append(("autoaudio", autoSink)) }
        snapshots += [("idle 10", activity.smallIdle), ("playing 10", activity.smallPlaying), ("paused 10", activity.smallPaused)]
        lines += groupLines(snapshots)
        lines.append("  largest mappings, idle:   " + topMappings(activity.idle))
        lines.append("  largest mappings, playing: " + topMappings(activity.playing))
        if let autoSink = activity.autoSinkPlaying {
            let withFakesink = Set(activity.playing.mappings.map(\.name))
            let added = autoSink.mappings.filter { !withFakesink.contains($0.name) && !$0.name.hasPrefix("[") }
            lines.append(
                "  autoaudiosink maps besides: "
                    + added.map { "\($0.name) \(fixed(Double($0.kilobytes) / 1024, 1))" }.joined(separator: ", "))
        }
        lines.append("  threads idle: " + threadList(activity.idle.threadNames))
        lines.append("  threads playing: " + threadList(activity.playing.threadNames))
        lines += [
            "",
            "4. Activity (CPU time, context switches summed over /proc/PID/task/*)",
        ]
        lines += activityLines("idle, never played", activity.neverPlayed)
        lines += activityLines("paused after playing (\(activity.pausedStatus))", activity.paused)
        func quietReason(_ window: ActivityWindow) -> String {
            let own = window.switchesBesidesDispatchManager
            return "\(window.switches - own) from libdispatch's 1 Hz workqueue monitor, \(own) from the daemon's threads"
        }
        lines += [
            "  paused: " + goal(4, " switches", notMet: quietReason(activity.paused)) + "; "
                + goal(5, " ticks", notMet: "threads above"),
            "  idle:   " + goal(6, " switches", notMet: quietReason(activity.neverPlayed)) + "; "
                + goal(7, " ticks", notMet: "threads above"),
            "",
            "5. \"play\" -> first buffer at the sink and PLAYING, a local file (ms)",
            header("  "),
            row("  a. in process: load(url) (= prerolled)", load),
            row("     play() (PAUSED -> PLAYING)", playCall),
            row("     load + play", loadAndPlay),
            row("  b. D-Bus Play -> reply (stopped, queue loaded)", dbusPlay),
            "  a: GStreamerEngine(audioSink: \"fakesink sync=true\"), stopped before each, alternating "
                + plays.files.map { String($0.split(separator: "/").last ?? "") }.joined(separator: " and ")
                + "; its first creation (gst_init) \(fixed(Double(plays.engineCreation) / 1e6, 1)) ms, not counted",
            "  b: \(plays.dbusPlayURL.split(separator: "/").last ?? ""), Stop after each; the daemon's first Play "
                + "(GStreamer initialised then) \(fixed(Double(plays.firstDBusPlay) / 1e6, 1)) ms, not counted",
            "  in process p50 \(fixed(loadAndPlay.p50 / 1000, 1)) ms   " + goal(8, " ms", notMet: ""),
            "  D-Bus p50 \(fixed(dbusPlay.p50 / 1000, 1)) ms   " + goal(9, " ms", notMet: ""),
            "",
            "Run: \(fixed(totalSeconds, 1)) s in all",
            "Regression thresholds (exit status 1 if one is exceeded):",
        ]
        lines += ThresholdCheck.reportLines(checks, nameWidth: 26)
        print(lines.joined(separator: "\n"))

        if let path = options.jsonPath {
            func milliseconds(_ summary: Summary) -> JSON {
                .object([
                    ("runs", .integer(summary.count)), ("p50Milliseconds", .number(summary.p50 / 1000)),
                    ("p90Milliseconds", .number(summary.p90 / 1000)), ("minMilliseconds", .number(summary.min / 1000)),
                    ("maxMilliseconds", .number(summary.max / 1000)),
                ])
            }
            let json = JSON.object([
                ("benchmark", .string("daemon")),
                ("schemaVersion", .integer(1)),
                ("passed", .bool(passed)),
                (
                    "configuration",
                    .object([
                        ("daemon", .string(options.daemon)), ("media", .string(options.mediaDirectory)),
                        ("cores", .integer(cores)), ("starts", .integer(options.starts)),
                        ("fillingStarts", .integer(options.fillingStarts)), ("coldScans", .integer(options.coldScans)),
                        ("rescans", .integer(options.rescans)), ("plays", .integer(options.plays)),
                        ("activityWindowSeconds", .number(Double(options.activityWindow.components.seconds))),
                        ("largeLibraryTracks", .integer(GeneratedMedia.tracksInLargeLibrary)),
                    ])
                ),
                (
                    "indexing",
                    .array(
                        indexing.map { figures in
                            .object([
                                ("library", .string(figures.mix.rawValue)), ("files", .integer(GeneratedMedia.filesPerLibrary)),
                                ("coldFilesPerSecond", .number(figures.coldFilesPerSecond)),
                                ("coldFilesPerSecondByScan", .number(figures.ownFilesPerSecond)),
                                ("cold", .array(figures.cold.map(\.json))), ("rescans", .array(figures.rescans.map(\.json))),
                                ("medianRescanMilliseconds", .number(figures.medianRescan.wallMilliseconds)),
                            ])
                        })
                ),
                ("largeLibraryRescans", .array(largeRescans.map(\.json))),
                (
                    "start",
                    .object([
                        ("queued", .integer(starts.queued)),
                        ("execToBusNameDirect", milliseconds(direct)), ("execToBusNameViaShell", milliseconds(restoredName)),
                        ("execToReadyRestored", milliseconds(restoredReady)),
                        ("execToBusNameEmptyState", milliseconds(filledName)),
                        ("execToReadyFilled", milliseconds(filledReady)), ("sigtermToExit", milliseconds(stops)),
                    ])
                ),
                (
                    "memory",
                    .object(
                        [
                            ("idleNoScan", activity.idle.json), ("idleAfterStartupScan", activity.scanningIdle.json),
                            ("startupScanAfterReadyMilliseconds", .number(Double(activity.scanAfterReady) / 1e6)),
                            ("playingFakesink", activity.playing.json), ("pausedFakesink", activity.pausedMemory.json),
                            ("playingURL", .string(activity.playingURL)), ("playingStatus", .string(activity.playingStatus)),
                            ("autoaudiosinkOutcome", .string(activity.autoSinkOutcome)),
                            ("smallLibraryTracks", .integer(activity.smallQueue)),
                            ("idleSmallLibrary", activity.smallIdle.json), ("playingSmallLibrary", activity.smallPlaying.json),
                            ("pausedSmallLibrary", activity.smallPaused.json),
                        ] + (activity.autoSinkPlaying.map { [("playingAutoaudiosink", $0.json)] } ?? []))
                ),
                (
                    "activity",
                    .object([("idleNeverPlayed", activity.neverPlayed.json), ("pausedAfterPlaying", activity.paused.json)])
                ),
                (
                    "play",
                    .object([
                        ("inProcessFiles", .array(plays.files.map { .string($0) })),
                        ("engineCreationMilliseconds", .number(Double(plays.engineCreation) / 1e6)),
                        ("inProcessLoad", milliseconds(load)), ("inProcessPlay", milliseconds(playCall)),
                        ("inProcessLoadAndPlay", milliseconds(loadAndPlay)),
                        ("dbusFirstPlayMilliseconds", .number(Double(plays.firstDBusPlay) / 1e6)),
                        ("dbusPlay", milliseconds(dbusPlay)), ("dbusPlayURL", .string(plays.dbusPlayURL)),
                    ])
                ),
                ("thresholds", .array(checks.map(\.json))),
                ("totalSeconds", .number(totalSeconds)),
            ])
            guard json.writeFigures(to: path, benchmark: "DaemonBenchmark") else { return 2 }
        }
        return passed ? 0 : 1
    }

    private func topMappings(_ snapshot: MemorySnapshot) -> String {
        snapshot.mappings.prefix(8).map { "\($0.name) \(fixed(Double($0.kilobytes) / 1024, 1))" }.joined(separator: ", ")
    }

    private func threadList(_ names: [String]) -> String {
        var counts: [(String, Int)] = []
        for name in names {
            if let index = counts.firstIndex(where: { $0.0 == name }) { counts[index].1 += 1 } else { counts.append((name, 1)) }
        }
        return "\(names.count): " + counts.map { $0.1 > 1 ? "\($0.0) x\($0.1)" : $0.0 }.joined(separator: ", ")
    }
}
