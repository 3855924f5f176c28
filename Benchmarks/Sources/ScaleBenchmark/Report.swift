import BenchmarkSupport

/// A goal a figure is held to: at most (or, for a rate, at least) `limit`, in the row's unit.
struct Goal: Sendable {
    var limit: Double
    var atLeast = false

    func isMet(by value: Double) -> Bool { atLeast ? value >= limit : value <= limit }
}

/// One line of the report: a figure, its value and the goal it is held to, if any.
struct ReportRow: Sendable {
    /// A short name for the JSON (`coldIndexFilesPerSecond`).
    var key: String
    var label: String
    var value: Double
    var unit: String
    var digits: Int
    var goal: Goal?

    var met: Bool? { goal.map { $0.isMet(by: value) } }
    var valueText: String { (digits == 0 ? grouped(Int(value.rounded())) : fixed(value, digits)) + " " + unit }
    var goalText: String {
        guard let goal else { return "" }
        let limit = goal.limit >= 1000 && goal.limit.rounded() == goal.limit ? grouped(Int(goal.limit)) : fixed(goal.limit, digits == 0 ? 0 : 1)
        return (goal.atLeast ? ">= " : "<= ") + limit + " " + unit
    }
}

/// The goals, from the daemon's scale targets. They are stated for a library of 50,000 tracks and
/// hold as they are up to that size. Past it only the memory target changes (under 150 MB at
/// 200,000 tracks, for every RSS figure); goals for work that grows with the whole library (the
/// walk, the restart) are not stated there, so such rows are reported without one.
enum ScaleGoals {
    private static let file = ThresholdFile(benchmark: "ScaleBenchmark")
    static let statedFor = Int(file["statedFor"])
    static let coldFilesPerSecond = Goal(limit: file["coldFilesPerSecond"], atLeast: true)
    static let idleMegabytes = file["idleMegabytes"]
    static let afterWalkMegabytes = file["afterWalkMegabytes"]
    static let restartMegabytes = file["restartMegabytes"]
    static let largeLibraryMegabytes = file["largeLibraryMegabytes"]
    static let writtenPerTrackChangeKilobytes = file["writtenPerTrackChangeKilobytes"]
    static let walkSeconds = file["walkSeconds"]
    static let pageMedianMilliseconds = file["pageMedianMilliseconds"]
    static let pageWorstMilliseconds = file["pageWorstMilliseconds"]
    static let restartToTreeReadySeconds = file["restartToTreeReadySeconds"]
    /// The daemon's processor time for the walk over the bus's for the same messages.
    static let walkDaemonToBusCPU = file["walkDaemonToBusCPU"]
    /// The daemon's processor time for one full page of 100 tracks with every property.
    static let pageDaemonCPUMilliseconds = file["pageDaemonCPUMilliseconds"]
    /// A window of the queue around the current track, not the whole queue.
    static let trackListIDs = file["trackListIDs"]
    static let addedVisibleSeconds = file["addedVisibleSeconds"]
    /// A page of a sorted listing once the container was sorted, and the first sort of the
    /// Tracks tab (keys computed and the tab sorted).
    static let sortedPageMedianMilliseconds = file["sortedPageMedianMilliseconds"]
    static let sortedFirstPageMilliseconds = file["sortedFirstPageMilliseconds"]
    static let sortedSearchMedianMilliseconds = file["sortedSearchMedianMilliseconds"]
}

/// The figures as a table beside their goals, and as JSON. Measuring is ``ScaleBenchmark``'s.
struct ScaleReport {
    let figures: ScaleFigures
    let settings: Settings
    let rows: [ReportRow]

    init(figures: ScaleFigures, settings: Settings) {
        self.figures = figures
        self.settings = settings
        rows = Self.rows(figures)
    }

    var allGoalsMet: Bool { rows.allSatisfy { $0.met ?? true } }

    private static func rows(_ figures: ScaleFigures) -> [ReportRow] {
        let small = figures.tracks <= ScaleGoals.statedFor
        /// A memory goal: the 50,000-track one up to that size, 150 MB past it.
        func memory(_ limit: Double?) -> Goal? {
            small ? limit.map { Goal(limit: $0) } : Goal(limit: ScaleGoals.largeLibraryMegabytes)
        }
        func megabytes(_ memory: ResidentMemory?) -> Double { Double(memory?.resident ?? 0) / 1024 }
        func anonymous(_ memory: ResidentMemory?) -> Double { Double(memory?.anonymous ?? 0) / 1024 }
        func milliseconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }
        func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }
        let cold = figures.cold
        let walk = figures.walk
        let changing = figures.changingWalks
        return [
            ReportRow(
                key: "coldIndexFilesPerSecond", label: "cold index", value: figures.coldFilesPerSecond, unit: "files/s",
                digits: 0, goal: ScaleGoals.coldFilesPerSecond),
            ReportRow(
                key: "coldIndexSeconds", label: "cold index, wall time", value: seconds(cold?.wall ?? 0), unit: "s",
                digits: 2),
            ReportRow(
                key: "unchangedIndexSeconds", label: "unchanged index (mpris-bridge scan)",
                value: seconds(figures.unchanged?.wall ?? 0), unit: "s", digits: 2),
            ReportRow(
                key: "freshExecToBusNameMilliseconds", label: "fresh start: exec -> bus name",
                value: milliseconds(figures.fresh.busName), unit: "ms", digits: 1),
            ReportRow(
                key: "freshExecToReadySeconds", label: "fresh start: exec -> ready: (queue filled)",
                value: seconds(figures.fresh.ready), unit: "s", digits: 2),
            ReportRow(
                key: "freshExecToTreeServedSeconds", label: "fresh start: exec -> tree served (its bus name)",
                value: seconds(figures.fresh.treeServed), unit: "s", digits: 2),
            ReportRow(
                key: "freshExecToScanShownSeconds", label: "fresh start: exec -> start-up scan shown",
                value: seconds(figures.fresh.scanShown), unit: "s", digits: 2),
            ReportRow(
                key: "restartExecToBusNameMilliseconds", label: "restart: exec -> bus name",
                value: milliseconds(figures.restart.busName), unit: "ms", digits: 1),
            ReportRow(
                key: "restartExecToReadySeconds", label: "restart: exec -> ready: (queue restored)",
                value: seconds(figures.restart.ready), unit: "s", digits: 2),
            ReportRow(
                key: "restartExecToTreeServedSeconds", label: "restart: exec -> tree served (its bus name)",
                value: seconds(figures.restart.treeServed), unit: "s", digits: 2,
                goal: small ? Goal(limit: ScaleGoals.restartToTreeReadySeconds) : nil),
            ReportRow(
                key: "restartExecToRootListedSeconds", label: "restart: exec -> the root lists its tabs",
                value: seconds(figures.restart.rootListed), unit: "s", digits: 2,
                goal: small ? Goal(limit: ScaleGoals.restartToTreeReadySeconds) : nil),
            ReportRow(
                key: "restartExecToScanShownSeconds", label: "restart: exec -> start-up scan shown",
                value: seconds(figures.restart.scanShown), unit: "s", digits: 2),
            ReportRow(
                key: "idleMegabytes", label: "RSS idle, whole library queued", value: megabytes(figures.idle),
                unit: "MB", digits: 1, goal: memory(ScaleGoals.idleMegabytes)),
            ReportRow(
                key: "idleAnonymousMegabytes", label: "  of which anonymous (RssAnon)", value: anonymous(figures.idle),
                unit: "MB", digits: 1),
            ReportRow(
                key: "afterWalkMegabytes", label: "RSS after the walk", value: megabytes(figures.afterWalk),
                unit: "MB", digits: 1, goal: memory(ScaleGoals.afterWalkMegabytes)),
            ReportRow(
                key: "afterWalkAnonymousMegabytes", label: "  of which anonymous", value: anonymous(figures.afterWalk),
                unit: "MB", digits: 1),
            ReportRow(
                key: "playingMegabytes", label: "RSS playing", value: megabytes(figures.playing), unit: "MB", digits: 1,
                goal: memory(nil)),
            ReportRow(
                key: "afterRestartMegabytes", label: "RSS idle after the restart", value: megabytes(figures.afterRestart),
                unit: "MB", digits: 1, goal: memory(ScaleGoals.restartMegabytes)),
            ReportRow(
                key: "afterRestartAnonymousMegabytes", label: "  of which anonymous",
                value: anonymous(figures.afterRestart), unit: "MB", digits: 1),
            ReportRow(
                key: "writtenPerTrackChangeKilobytes", label: "written per track change (wchar)",
                value: figures.writtenPerTrackChange / 1024, unit: "KB", digits: 1,
                goal: Goal(limit: ScaleGoals.writtenPerTrackChangeKilobytes)),
            ReportRow(
                key: "walkSeconds", label: "walk: pages of 100, filter *, this benchmark's client",
                value: seconds(walk.nanoseconds), unit: "s", digits: 2),
            ReportRow(key: "walkCalls", label: "  ListChildren calls", value: Double(walk.pages.count), unit: "", digits: 0),
            ReportRow(
                key: "walkContainers", label: "  containers", value: Double(walk.containers), unit: "", digits: 0),
            ReportRow(key: "walkItems", label: "  item rows", value: Double(walk.items), unit: "", digits: 0),
            ReportRow(
                key: "walkDaemonCPUSeconds", label: "  CPU: the daemon", value: walk.daemonCPUSeconds, unit: "s",
                digits: 2),
            ReportRow(
                key: "walkBusCPUSeconds", label: "  CPU: dbus-daemon", value: walk.busCPUSeconds, unit: "s", digits: 2),
            ReportRow(
                key: "walkDaemonToBusCPU", label: "  CPU: the daemon / dbus-daemon",
                value: walk.daemonCPUSeconds / max(0.01, walk.busCPUSeconds), unit: "x", digits: 2,
                goal: small ? Goal(limit: ScaleGoals.walkDaemonToBusCPU) : nil),
            ReportRow(
                key: "pageDaemonCPUMilliseconds", label: "a full page of 100 tracks, *: daemon CPU per page",
                value: figures.pageCPU.daemonMillisecondsPerPage, unit: "ms", digits: 2,
                goal: Goal(limit: ScaleGoals.pageDaemonCPUMilliseconds)),
            ReportRow(
                key: "pageBusCPUMilliseconds", label: "  dbus-daemon CPU per page",
                value: figures.pageCPU.busMillisecondsPerPage, unit: "ms", digits: 2),
            ReportRow(
                key: "pageCPUPages", label: "  pages (one call at a time)", value: Double(figures.pageCPU.pages), unit: "",
                digits: 0),
        ] + figures.leanWalks.flatMap { lean -> [ReportRow] in
            let key = lean.inFlight == 1 ? "leanWalk" : "leanWalk\(lean.inFlight)InFlight"
            let calls = lean.inFlight == 1 ? "one call at a time" : "\(lean.inFlight) calls in flight"
            return [
                ReportRow(
                    key: key + "Seconds", label: "walk by WalkClient (C, libdbus), \(calls)", value: lean.seconds,
                    unit: "s", digits: 2, goal: small && lean.inFlight == 1 ? Goal(limit: ScaleGoals.walkSeconds) : nil),
                ReportRow(
                    key: key + "DaemonCPUSeconds", label: "  CPU: the daemon", value: lean.daemonCPUSeconds, unit: "s",
                    digits: 2),
                ReportRow(
                    key: key + "BusCPUSeconds", label: "  CPU: dbus-daemon", value: lean.busCPUSeconds, unit: "s",
                    digits: 2),
                ReportRow(
                    key: key + "DaemonToBusCPU", label: "  CPU: the daemon / dbus-daemon",
                    value: lean.daemonCPUSeconds / max(0.01, lean.busCPUSeconds), unit: "x", digits: 2),
                ReportRow(
                    key: key + "ClientCPUSeconds", label: "  CPU: WalkClient", value: lean.clientCPUSeconds, unit: "s",
                    digits: 2),
            ]
        } + [
            ReportRow(
                key: "pageMedianMilliseconds", label: "a page of 100, median",
                value: milliseconds(walk.pages.isEmpty ? 0 : walk.medianPage), unit: "ms", digits: 2,
                goal: Goal(limit: ScaleGoals.pageMedianMilliseconds)),
            ReportRow(
                key: "pageWorstMilliseconds", label: "a page of 100, worst", value: milliseconds(walk.worstPage),
                unit: "ms", digits: 1, goal: Goal(limit: ScaleGoals.pageWorstMilliseconds)),
            ReportRow(
                key: "searchFirstMilliseconds", label: "search, first call", value: milliseconds(figures.search.first),
                unit: "ms", digits: 1),
            ReportRow(
                key: "searchMedianMilliseconds", label: "search, median of the others",
                value: milliseconds(figures.search.median), unit: "ms", digits: 1),
            ReportRow(
                key: "sortedFirstPageMilliseconds", label: "ListItemsEx sorted, first page",
                value: milliseconds(figures.sorted.pageFirst), unit: "ms", digits: 1,
                goal: Goal(limit: ScaleGoals.sortedFirstPageMilliseconds)),
            ReportRow(
                key: "sortedPageMedianMilliseconds", label: "ListItemsEx sorted, next pages median",
                value: milliseconds(medianOf(figures.sorted.pageLater)), unit: "ms", digits: 2,
                goal: Goal(limit: ScaleGoals.sortedPageMedianMilliseconds)),
            ReportRow(
                key: "sortedIndexFieldsFirstMilliseconds", label: "  by date and number, first page",
                value: milliseconds(figures.sorted.indexFieldsFirst), unit: "ms", digits: 1),
            ReportRow(
                key: "sortedIndexFieldsMedianMilliseconds", label: "  by date and number, next pages median",
                value: milliseconds(medianOf(figures.sorted.indexFieldsLater)), unit: "ms", digits: 2),
            ReportRow(
                key: "sortedSearchFirstMilliseconds", label: "SearchObjectsEx sorted, first call",
                value: milliseconds(figures.sorted.searchFirst), unit: "ms", digits: 1),
            ReportRow(
                key: "sortedSearchMedianMilliseconds", label: "SearchObjectsEx sorted, median",
                value: milliseconds(medianOf(figures.sorted.searchLater)), unit: "ms", digits: 1,
                goal: Goal(limit: ScaleGoals.sortedSearchMedianMilliseconds)),
            ReportRow(
                key: "sortedEverythingMedianMilliseconds", label: "SearchObjectsEx(*) sorted, median",
                value: milliseconds(medianOf(figures.sorted.everything)), unit: "ms", digits: 1),
            ReportRow(
                key: "afterSortingMegabytes", label: "RSS after the sorted calls",
                value: megabytes(figures.sorted.afterSorting), unit: "MB", digits: 1,
                goal: memory(ScaleGoals.afterWalkMegabytes)),
            ReportRow(
                key: "trackListIDs", label: "TrackList.Tracks", value: Double(figures.trackListLength), unit: "ids",
                digits: 0, goal: Goal(limit: ScaleGoals.trackListIDs)),
            ReportRow(
                key: "addedToUpdatedSeconds", label: "1,000 added: rename -> Updated",
                value: seconds(figures.added.toUpdated), unit: "s", digits: 2),
            ReportRow(
                key: "addedToVisibleSeconds", label: "1,000 added: rename -> in the tree",
                value: seconds(figures.added.toVisible), unit: "s", digits: 2,
                goal: Goal(limit: ScaleGoals.addedVisibleSeconds)),
            ReportRow(
                key: "removedToVisibleSeconds", label: "  removed again -> gone from the tree",
                value: seconds(figures.added.removalToVisible), unit: "s", digits: 2),
            ReportRow(
                key: "rescanSeconds", label: "Rescan over D-Bus, unchanged library", value: seconds(figures.rescan),
                unit: "s", digits: 2),
            ReportRow(
                key: "changingWalksCompleted",
                label: "\(ChangingWalkFigures.walkers) walks at once, artists moving: completed",
                value: Double(changing.completed), unit: "", digits: 0,
                goal: Goal(limit: Double(ChangingWalkFigures.walkers), atLeast: true)),
            ReportRow(
                key: "changingWalksMoves", label: "  moves out and back (a Rescan each)", value: Double(changing.moves),
                unit: "", digits: 0),
            ReportRow(
                key: "changingWalksCalls", label: "  ListChildren calls", value: Double(changing.calls), unit: "", digits: 0),
            ReportRow(
                key: "changingWalksRefused", label: "  refused (the artist away)", value: Double(changing.refused),
                unit: "", digits: 0),
            ReportRow(
                key: "changingWalksSeconds", label: "  the longest walk", value: changing.seconds, unit: "s", digits: 1),
            ReportRow(
                key: "changingWalksDaemonServing", label: "  the daemon still serving after them",
                value: changing.daemonServing ? 1 : 0, unit: "", digits: 0, goal: Goal(limit: 1, atLeast: true)),
            ReportRow(key: "stopSeconds", label: "SIGTERM -> exit", value: seconds(figures.stop), unit: "s", digits: 2),
        ]
    }

    var text: String {
        let figures = self.figures
        var lines: [String] = []
        lines.append("")
        lines.append("mpris-bridge with \(grouped(figures.tracks)) tracks (\(settings.daemon))")
        let library = figures.library
        lines.append(
            "library: \(grouped(library.albums)) albums, \(grouped(library.artists)) artists, "
                + "\(ScaleLibrary.playlistCount) playlists, \(fixed(Double(library.bytes) / 1e6, 0)) MB in \(settings.folder)"
                + (library.generated ? "; generated in \(fixed(library.seconds, 1)) s" : "; reused"))
        lines.append(
            "cold index with the page cache "
                + (figures.pageCacheDropped ? "dropped" : "warm (not allowed to drop it)")
                + "; the daemon as a user runs it (start-up scan, folder followed), fakesink sync=true")
        lines.append(
            "queue: \(grouped(figures.fresh.queued)) entries on the fresh start, \(grouped(figures.restart.queued)) "
                + (figures.restart.restored ? "restored" : "NOT restored (filled again)") + " on the restart")
        lines.append(
            "search: SearchObjects(\(JSON.quote(figures.search.query)), 0, 100, *) on the root, "
                + "\(figures.search.rows) rows")
        lines.append(
            "sorted: ListItemsEx(\(grouped(figures.sorted.pageOffset)), \(SortedFigures.pageSize), *, "
                + "\(JSON.quote(SortedFigures.order))) on the Tracks tab, \(figures.sorted.pageRows) rows, then the next pages; "
                + "SearchObjectsEx of the search above sorted by +DisplayName: TotalItems \(grouped(figures.sorted.searchTotal)); "
                + "SearchObjectsEx(\"*\") sorted: TotalItems \(grouped(figures.sorted.everythingTotal))")
        lines.append(
            "1,000 added: \(grouped(figures.added.tracksBefore)) -> \(grouped(figures.added.tracksAfter)) in the Tracks tab, "
                + "\(figures.added.updates) Updated before they showed")
        if figures.walk.loadingRows > 0 { lines.append("walk: \(figures.walk.loadingRows) rows still loading") }
        for failure in figures.changingWalks.failures { lines.append("a walk while artists moved failed: \(failure)") }
        lines.append("")
        let labelWidth = max(40, rows.map(\.label.count).max() ?? 0)
        let valueWidth = 16
        let goalWidth = 18
        lines.append(
            pad("figure", labelWidth, right: false) + pad("value", valueWidth) + pad("goal", goalWidth) + "  met")
        lines.append(String(repeating: "-", count: labelWidth + valueWidth + goalWidth + 9))
        for row in rows {
            let met = row.met.map { $0 ? "met" : "NOT MET" } ?? ""
            lines.append(
                pad(row.label, labelWidth, right: false) + pad(row.valueText, valueWidth) + pad(row.goalText, goalWidth)
                    + "  " + met)
        }
        let missed = rows.filter { $0.met == false }
        lines.append("")
        lines.append(
            missed.isEmpty
                ? "Every goal met."
                : "GOALS NOT MET: \(missed.count) of \(rows.filter { $0.goal != nil }.count) ("
                    + missed.map(\.key).joined(separator: ", ") + ")")
        lines.append("Total time \(fixed(figures.totalSeconds, 0)) s.")
        return lines.joined(separator: "\n")
    }

    var json: JSON {
        let figures = self.figures
        func memory(_ value: ResidentMemory?) -> JSON { value?.json ?? .null }
        return .object([
            (
                "configuration",
                .object([
                    ("tracks", .integer(figures.tracks)), ("folder", .string(settings.folder)),
                    ("daemon", .string(settings.daemon)), ("pageCacheDropped", .bool(figures.pageCacheDropped)),
                    ("trackChanges", .integer(figures.trackChanges)), ("searchQuery", .string(figures.search.query)),
                ])
            ),
            (
                "library",
                .object([
                    ("generated", .bool(figures.library.generated)),
                    ("generationSeconds", .number(figures.library.seconds)), ("albums", .integer(figures.library.albums)),
                    ("artists", .integer(figures.library.artists)), ("bytes", .integer(figures.library.bytes)),
                ])
            ),
            (
                "figures",
                .array(
                    rows.map { row in
                        .object(
                            [("name", .string(row.key)), ("label", .string(row.label)), ("value", .number(row.value)),
                                ("unit", .string(row.unit))]
                                + (row.goal.map { goal in
                                    [("goal", .number(goal.limit)), ("atLeast", .bool(goal.atLeast)), ("met", .bool(row.met!))]
                                } ?? []))
                    })
            ),
            ("coldIndex", figures.cold?.json ?? .null), ("unchangedIndex", figures.unchanged?.json ?? .null),
            (
                "memory",
                .object([
                    ("idle", memory(figures.idle)), ("afterWalk", memory(figures.afterWalk)),
                    ("playing", memory(figures.playing)), ("afterRestart", memory(figures.afterRestart)),
                ])
            ),
            (
                "queue",
                .object([
                    ("freshQueued", .integer(figures.fresh.queued)), ("restartQueued", .integer(figures.restart.queued)),
                    ("restartRestored", .bool(figures.restart.restored)),
                ])
            ),
            ("searchRows", .integer(figures.search.rows)), ("sortedSearchTotal", .integer(figures.sorted.searchTotal)),
            ("sortedEverythingTotal", .integer(figures.sorted.everythingTotal)), ("walkLoadingRows", .integer(figures.walk.loadingRows)),
            ("addedUpdates", .integer(figures.added.updates)),
            ("passed", .bool(allGoalsMet)), ("totalSeconds", .number(figures.totalSeconds)),
        ])
    }
}
