import BenchmarkSupport
import Glibc

extension Benchmark {
    /// Prints the report, writes the JSON if asked; returns 0, or 1 when a threshold is exceeded
    /// (2 if the JSON cannot be written).
    func report(pages: PageFigures, tree: TreeFigures, totalSeconds: Double) -> Int32 {
        let summaries = pages.samples.map { Summary(nanoseconds: $0) }
        let floor = summaries[PageRoundTrip.busFloor.rawValue]
        let ping = summaries[PageRoundTrip.servicePing.rawValue]
        let every = summaries[PageRoundTrip.everyProperty.rawValue]
        let few = summaries[PageRoundTrip.fewProperties.rawValue]
        let cold = tree.coldWalk
        let warm = tree.warmWalks.map { Double($0.nanoseconds) }.sorted()
        let warmMedian = warm.isEmpty ? 0 : warm[(warm.count - 1) / 2]
        let walkMissing = Double(
            ([cold, tree.fewPropertiesWalk] + tree.warmWalks).reduce(0) {
                $0 + max(0, SyntheticLibrary.nodes - $1.nodes) + $1.loadingRows
            })
        let duplicates = tree.storms.reduce(0) { $0 + $1.signals - $1.distinctContainers }
        let wrong = tree.storms.reduce(0) { $0 + $1.missing + $1.extra }

        let stormTimes = tree.storms.map { Double($0.toLastSignalNanoseconds) / 1e6 }.sorted()
        let stormMedian = stormTimes.isEmpty ? 0 : stormTimes[(stormTimes.count - 1) / 2]
        let afterColdWalk = tree.memory.count > 1 ? Double(tree.memory[1].1.resident) / 1024 : 0
        let coldSeconds = Double(cold.nanoseconds) / 1e9
        let pageGoal = ThresholdCheck(
            name: "tracksPageP50Microseconds", limit: Thresholds.tracksPageP50GoalMicroseconds, value: every.p50,
            gating: false)
        let walkGoal = ThresholdCheck(
            name: "coldWalkSeconds", limit: Thresholds.coldWalkGoalSeconds, value: coldSeconds, gating: false)
        let checks = [
            pageGoal, walkGoal,
            ThresholdCheck(
                name: "walkRowsMissing", limit: Thresholds.walkRowsMissing, value: walkMissing, gating: true),
            ThresholdCheck(
                name: "stormDuplicateSignals", limit: Thresholds.stormDuplicateSignals, value: Double(duplicates),
                gating: true),
            ThresholdCheck(
                name: "stormWrongContainers", limit: Thresholds.stormWrongContainers, value: Double(wrong),
                gating: true),
            ThresholdCheck(
                name: "tracksPageP50Microseconds", limit: Thresholds.tracksPageP50Microseconds, value: every.p50,
                gating: true),
            ThresholdCheck(
                name: "coldWalkSeconds", limit: Thresholds.coldWalkSeconds, value: coldSeconds, gating: true),
            ThresholdCheck(
                name: "stormToLastSignalMs", limit: Thresholds.stormToLastSignalMilliseconds, value: stormMedian,
                gating: true),
            ThresholdCheck(
                name: "serverRSSAfterColdWalkMiB", limit: Thresholds.serverRSSAfterColdWalkMiB, value: afterColdWalk,
                gating: true),
        ]
        let passed = checks.allSatisfy { $0.passed || !$0.gating }
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let placement = pinnedCPU.map { "all pinned to CPU \($0) of \(cores)" } ?? "unpinned, \(cores) CPUs"
        func ms(_ nanoseconds: UInt64) -> String { fixed(Double(nanoseconds) / 1e6, 1) }
        func verdict(_ check: ThresholdCheck, _ reason: String) -> String {
            check.passed ? "met" : "NOT MET (\(reason))"
        }

        var lines = [
            "",
            "Media tree benchmark: private dbus-daemon; MediaTreeService over PlayableContentManager over "
                + "LibraryContent in a separate process (\(placement))",
            "Library: \(grouped(SyntheticLibrary.trackCount)) tracks (\(SyntheticLibrary.artists) artists × "
                + "\(SyntheticLibrary.albumsPerArtist) albums × \(SyntheticLibrary.tracksPerAlbum) tracks, folders "
                + "artist/album/), \(SyntheticLibrary.playlists) playlists × \(SyntheticLibrary.playlistLength); "
                + "LibraryContent built in \(ms(pages.libraryBuildNanoseconds)) ms",
            "",
            "1. A page of \(Self.pageSize) from the Tracks container "
                + "(\(grouped(SyntheticLibrary.trackCount)) children)",
            "  cold: the fresh server's first call, ListChildren(0, \(Self.pageSize), *): "
                + "\(ms(pages.coldNanoseconds)) ms "
                + "(one read of the \(grouped(SyntheticLibrary.trackCount)) rows from LibraryContent, in the server: "
                + "\(ms(pages.tracksReadNanoseconds)) ms)",
            "  warm: \(options.listings) timed round trips of each kind at random offsets, interleaved in batches of "
                + "\(options.batch), after \(options.warmUp) of each; a row has \(pages.everyPropertyCount) properties "
                + "with *, \(pages.fewPropertyCount) with \(Self.fewProperties.joined(separator: ","))",
            Summary.tableHeader("Round trip (µs)"),
        ]
        for kind in PageRoundTrip.allCases { lines.append(summaries[kind.rawValue].tableRow(kind.label)) }
        lines += [
            "  ListChildren(*) p50 \(fixed(every.p50, 1)) µs: goal <= \(fixed(pageGoal.limit, 0)) "
                + "µs \(verdict(pageGoal, "see the CPU split; the README says where it goes")); "
                + "\(fixed(every.p50 / floor.p50, 1))x the floor, "
                + "\(fixed(every.p50 - ping.p50, 1)) µs over Ping; 4 properties \(fixed(few.p50, 1)) µs",
            "  CPU µs per ListChildren(*): client \(fixed(pages.cpu.client, 1)), "
                + "server \(fixed(pages.cpu.service, 1)), "
                + "daemon \(fixed(pages.cpu.daemon, 1)) (\(options.cpuListings) calls)",
            "",
            "2. A walk of the whole tree: breadth-first, ListChildren of every container in pages of "
                + "\(Self.pageSize) with *, one call at a time",
            pad("walk", 12, right: false) + pad("ms", 9) + pad("calls", 8) + pad("nodes", 9) + pad("containers", 12)
                + pad("loading", 9) + pad("CPU ms: client", 16) + pad("server", 8) + pad("daemon", 8),
        ]
        func walkRow(_ label: String, _ walk: WalkFigures) -> String {
            pad(label, 12, right: false) + pad(ms(walk.nanoseconds), 9) + pad(grouped(walk.calls), 8)
                + pad(grouped(walk.nodes), 9) + pad(grouped(walk.containers), 12) + pad(String(walk.loadingRows), 9)
                + pad(fixed(walk.cpu.client / 1000, 1), 16) + pad(fixed(walk.cpu.service / 1000, 1), 8)
                + pad(fixed(walk.cpu.daemon / 1000, 1), 8)
        }
        lines.append(walkRow("cold", cold))
        for (index, walk) in tree.warmWalks.enumerated() { lines.append(walkRow("warm \(index + 1)", walk)) }
        lines.append(walkRow("warm, 4 pr.", tree.fewPropertiesWalk))
        lines += [
            "  expected: \(grouped(SyntheticLibrary.calls(pageSize: Self.pageSize))) calls, "
                + "\(grouped(SyntheticLibrary.nodes)) nodes, \(grouped(SyntheticLibrary.containers)) containers",
            "  cold walk \(fixed(Double(cold.nanoseconds) / 1e9, 3)) s: goal <= \(fixed(walkGoal.limit, 1)) s "
                + "\(verdict(walkGoal, "every row costs as in a page")); "
                + "per call \(fixed(Double(cold.nanoseconds) / Double(max(cold.calls, 1)) / 1000, 1)) µs "
                + "cold, \(fixed(warmMedian / Double(max(cold.calls, 1)) / 1000, 1)) µs warm (median walk); "
                + "'4 pr.' asks only for \(Self.fewProperties.joined(separator: ","))",
            "  server memory (kB)          VmRSS   VmHWM  RssAnon  RssFile",
        ]
        for (label, memory) in tree.memory {
            lines.append(
                "    " + pad(label, 38, right: false) + pad(grouped(memory.resident), 8) + pad(grouped(memory.peak), 8)
                    + pad(grouped(memory.anonymous), 9) + pad(grouped(memory.file), 9))
        }
        lines += [
            "",
            "3. A storm: one batch (beginUpdates, LibraryContent.update with every title changed, endUpdates) after "
                + "the walks, times from the Storm call; Updated signals counted until the server's marker",
            "  Updated signals during the walks (nothing changed): \(tree.signalsDuringWalks)",
            pad("storm", 7, right: false) + pad("signals", 9) + pad("distinct", 10) + pad("expected", 10)
                + pad("missing", 9) + pad("extra", 7) + pad("update ms", 11) + pad("endUpdates ms", 15)
                + pad("->first ms", 12) + pad("->last ms", 11) + pad("->reply ms", 12) + pad("VmRSS kB", 10),
        ]
        for storm in tree.storms {
            lines.append(
                pad(String(storm.generation), 7, right: false) + pad(grouped(storm.signals), 9)
                    + pad(grouped(storm.distinctContainers), 10) + pad(grouped(cold.containersListingItems.count), 10)
                    + pad(String(storm.missing), 9) + pad(String(storm.extra), 7) + pad(ms(storm.updateNanoseconds), 11)
                    + pad(ms(storm.endUpdatesNanoseconds), 15) + pad(ms(storm.toFirstSignalNanoseconds), 12)
                    + pad(ms(storm.toLastSignalNanoseconds), 11) + pad(ms(storm.toReplyNanoseconds), 12)
                    + pad(storm.memory.map { grouped($0.resident) } ?? "-", 10))
        }
        if let storm = tree.storms.last {
            lines += [
                "  the manager announced \(grouped(storm.announcedPaths)) paths (\(grouped(storm.announcedDistinct)) "
                    + "distinct); other signals before the marker: \(storm.otherSignals); expected one Updated per "
                    + "container listing tracks (\(grouped(SyntheticLibrary.containersListingTracks)))",
                "  CPU ms for the last storm: client \(fixed(storm.cpu.client / 1000, 1)), server "
                    + "\(fixed(storm.cpu.service / 1000, 1)), daemon \(fixed(storm.cpu.daemon / 1000, 1))",
            ]
        }
        lines += [
            "",
            "Run: \(fixed(totalSeconds, 1)) s in all",
            "Regression thresholds (exit status 1 if one is exceeded):",
        ]
        lines += ThresholdCheck.reportLines(checks, nameWidth: 26)
        print(lines.joined(separator: "\n"))

        if let path = options.jsonPath {
            let json = JSON.object([
                ("benchmark", .string("media-tree")),
                ("schemaVersion", .integer(1)),
                ("passed", .bool(passed)),
                (
                    "configuration",
                    .object([
                        ("tracks", .integer(SyntheticLibrary.trackCount)),
                        ("artists", .integer(SyntheticLibrary.artists)),
                        ("albumsPerArtist", .integer(SyntheticLibrary.albumsPerArtist)),
                        ("tracksPerAlbum", .integer(SyntheticLibrary.tracksPerAlbum)),
                        ("playlists", .integer(SyntheticLibrary.playlists)),
                        ("playlistLength", .integer(SyntheticLibrary.playlistLength)),
                        ("pageSize", .integer(Self.pageSize)), ("listings", .integer(options.listings)),
                        ("warmUp", .integer(options.warmUp)), ("batch", .integer(options.batch)),
                        ("warmWalks", .integer(options.walks)), ("storms", .integer(options.storms)),
                        ("cores", .integer(cores)), ("pinnedCPU", pinnedCPU.map { .integer($0) } ?? .null),
                    ])
                ),
                (
                    "pages",
                    .object([
                        ("libraryBuildMilliseconds", .number(Double(pages.libraryBuildNanoseconds) / 1e6)),
                        ("coldMilliseconds", .number(Double(pages.coldNanoseconds) / 1e6)),
                        ("tracksReadMilliseconds", .number(Double(pages.tracksReadNanoseconds) / 1e6)),
                        ("roundTrips", .object(PageRoundTrip.allCases.map { ($0.key, summaries[$0.rawValue].json) })),
                        ("everyPropertyOverFloorP50", .number(every.p50 / floor.p50)),
                        ("propertiesPerRow", .integer(pages.everyPropertyCount)),
                        ("cpuPerEveryPropertyListing", pages.cpu.json),
                    ])
                ),
                (
                    "walks",
                    .object([
                        (
                            "expected",
                            .object([
                                ("calls", .integer(SyntheticLibrary.calls(pageSize: Self.pageSize))),
                                ("nodes", .integer(SyntheticLibrary.nodes)),
                                ("containers", .integer(SyntheticLibrary.containers)),
                            ])
                        ),
                        ("cold", walkJSON(cold)),
                        ("warm", .array(tree.warmWalks.map(walkJSON))),
                        ("warmMedianMilliseconds", .number(warmMedian / 1e6)),
                        ("warmFewProperties", walkJSON(tree.fewPropertiesWalk)),
                        (
                            "serverMemory",
                            .array(tree.memory.map { .object([("state", .string($0.0)), ("memory", $0.1.json)]) })
                        ),
                    ])
                ),
                (
                    "storms",
                    .object([
                        ("updatedDuringWalks", .integer(tree.signalsDuringWalks)),
                        ("expectedContainers", .integer(cold.containersListingItems.count)),
                        ("runs", .array(tree.storms.map(stormJSON))),
                    ])
                ),
                ("thresholds", .array(checks.map(\.json))),
                ("totalSeconds", .number(totalSeconds)),
            ])
            guard json.writeFigures(to: path, benchmark: "MediaTreeBenchmark") else { return 2 }
        }
        return passed ? 0 : 1
    }

    private func walkJSON(_ walk: WalkFigures) -> JSON {
        .object([
            ("milliseconds", .number(Double(walk.nanoseconds) / 1e6)), ("calls", .integer(walk.calls)),
            ("nodes", .integer(walk.nodes)), ("containers", .integer(walk.containers)),
            ("loadingRows", .integer(walk.loadingRows)),
            ("containersListingItems", .integer(walk.containersListingItems.count)),
            ("cpuMicroseconds", walk.cpu.json),
        ])
    }

    private func stormJSON(_ storm: StormFigures) -> JSON {
        func milliseconds(_ nanoseconds: UInt64) -> JSON { .number(Double(nanoseconds) / 1e6) }
        let counts: [(String, JSON)] = [
            ("generation", .integer(storm.generation)), ("updatedSignals", .integer(storm.signals)),
            ("distinctContainers", .integer(storm.distinctContainers)), ("missing", .integer(storm.missing)),
            ("extra", .integer(storm.extra)), ("otherSignals", .integer(storm.otherSignals)),
            ("announcedPaths", .integer(storm.announcedPaths)),
            ("announcedDistinct", .integer(storm.announcedDistinct)),
        ]
        let times: [(String, JSON)] = [
            ("updateMilliseconds", milliseconds(storm.updateNanoseconds)),
            ("endUpdatesMilliseconds", milliseconds(storm.endUpdatesNanoseconds)),
            ("toFirstSignalMilliseconds", milliseconds(storm.toFirstSignalNanoseconds)),
            ("toLastSignalMilliseconds", milliseconds(storm.toLastSignalNanoseconds)),
            ("toReplyMilliseconds", milliseconds(storm.toReplyNanoseconds)),
            ("cpuMicroseconds", storm.cpu.json),
            ("serverMemoryAfter", storm.memory?.json ?? .null),
        ]
        return .object(counts + times)
    }
}
