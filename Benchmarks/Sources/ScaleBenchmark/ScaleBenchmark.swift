import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport
import Synchronization

/// exec -> bus name, -> the tree served, -> `ready:` and -> the start-up scan shown, of one start,
/// nanoseconds from just before the spawn.
struct StartFigures: Sendable {
    var busName: UInt64 = 0
    /// `ready: N entries queued`: the tree is published and the queue filled or restored.
    var ready: UInt64 = 0
    /// The tree's bus name owned: it serves the library as the index holds it, and a head unit
    /// browses it from then on.
    var treeServed: UInt64 = 0
    /// `the media tree shows the scan's N tracks`: the start-up scan is done and the tree shows it.
    var scanShown: UInt64 = 0
    /// The root's `ListChildren` answered with its tabs: asked as soon as the tree's name is owned,
    /// as a head unit browsing at once would.
    var rootListed: UInt64 = 0
    var queued = 0
    /// Whether the log said the queue was restored from the saved state.
    var restored = false
}

/// The whole tree listed in pages of 100 with every property.
struct WalkFigures: Sendable {
    var nanoseconds: UInt64 = 0
    var containers = 0
    var items = 0
    /// Each `ListChildren` call's round trip, nanoseconds.
    var pages: [UInt64] = []
    /// Rows still marked `Loading` (a container not built yet answers with one).
    var loadingRows = 0
    /// Processor time the daemon and `dbus-daemon` spent during the walk.
    var daemonCPUSeconds = 0.0
    var busCPUSeconds = 0.0

    var medianPage: UInt64 { medianOf(pages) }
    var worstPage: UInt64 { pages.max() ?? 0 }
}

/// The same walk by `WalkClient` (C, libdbus, reading only Type and Path of each row): the
/// service's and the bus's time without this benchmark's own decoding, with the CPU time each
/// of the three processes spent on it.
struct LeanWalkFigures: Sendable {
    var inFlight = 1
    var seconds = 0.0
    var calls = 0
    var items = 0
    var daemonCPUSeconds = 0.0
    var busCPUSeconds = 0.0
    var clientCPUSeconds = 0.0
}

/// Full pages of 100 tracks (`ListChildren(offset, 100, ["*"])` on the Tracks tab, offsets spread
/// over the tab), one call at a time: the daemon's processor time per page.
struct PageCPUFigures: Sendable {
    static let pages = 400
    var pages = 0
    var rows = 0
    var daemonCPUSeconds = 0.0
    var busCPUSeconds = 0.0
    var seconds = 0.0

    var daemonMillisecondsPerPage: Double { pages == 0 ? 0 : daemonCPUSeconds * 1000 / Double(pages) }
    var busMillisecondsPerPage: Double { pages == 0 ? 0 : busCPUSeconds * 1000 / Double(pages) }
}

/// `SearchObjects` on the root, a page of 100 results.
/// The median of round trips (the lower middle one of an even count); 0 when there are none.
func medianOf(_ values: [UInt64]) -> UInt64 { values.isEmpty ? 0 : values.sorted()[(values.count - 1) / 2] }

struct SearchFigures: Sendable {
    var query = ""
    var first: UInt64 = 0
    /// The calls after the first.
    var later: [UInt64] = []
    var rows = 0
    var median: UInt64 { later.isEmpty ? first : medianOf(later) }
}

/// dLeyna's sorted listings and counted search (the MediaContainer2 `…Ex` methods), as GENIVI's
/// media manager calls them, measured after the walk.
struct SortedFigures: Sendable {
    static let order = "-Artist,+DisplayName"
    /// Fields the tree does not keep, read from the index when first sorted by.
    static let indexOrder = "+Date,-TrackNumber"
    static let pageSize = 50
    /// `ListItemsEx(offset, 50, *, order)` on the Tracks tab from the middle of the tab: the first
    /// call (the sort keys computed, the tab sorted once) and the next pages.
    var pageOffset = 0
    var pageFirst: UInt64 = 0
    var pageLater: [UInt64] = []
    var pageRows = 0
    /// The same page sorted by ``indexOrder``, first call and the next pages.
    var indexFieldsFirst: UInt64 = 0
    var indexFieldsLater: [UInt64] = []
    /// `SearchObjectsEx(query, 0, 100, *, "+DisplayName")` on the root, with its `TotalItems`.
    var searchFirst: UInt64 = 0
    var searchLater: [UInt64] = []
    var searchTotal = 0
    /// `SearchObjectsEx("*", offset, 50, *, order)` on the root: every artist, album and track
    /// matched and sorted on each call.
    var everything: [UInt64] = []
    var everythingTotal = 0
    /// Memory once every sorted call was answered.
    var afterSorting: ResidentMemory?
}

/// 1,000 files renamed into the library and out again.
struct AddedFigures: Sendable {
    var tracksBefore = 0
    var tracksAfter = 0
    /// rename -> the Tracks tab's first `Updated`.
    var toUpdated: UInt64 = 0
    /// rename -> the tab's `ChildCount` and last page show the added tracks.
    var toVisible: UInt64 = 0
    /// `Updated` signals of the tab until then.
    var updates = 0
    /// The folder renamed out again -> the tab shows the library's tracks alone.
    var removalToVisible: UInt64 = 0
}

/// Everything one run measured.
struct ScaleFigures: Sendable {
    var tracks = 0
    var library = ScaleLibrary.Outcome(generated: false, seconds: 0, albums: 0, artists: 0, bytes: 0)
    var pageCacheDropped = false
    var cold: ScanRun?
    var unchanged: ScanRun?
    var fresh = StartFigures()
    var restart = StartFigures()
    var idle: ResidentMemory?
    var afterWalk: ResidentMemory?
    var playing: ResidentMemory?
    var afterRestart: ResidentMemory?
    var walk = WalkFigures()
    var pageCPU = PageCPUFigures()
    /// The walk by `WalkClient`, one call at a time, then with several in flight.
    var leanWalks: [LeanWalkFigures] = []
    var trackChanges = 0
    /// `wchar` of `/proc/PID/io` over the track changes.
    var writtenOverTrackChanges = 0
    var search = SearchFigures()
    var sorted = SortedFigures()
    var trackListLength = 0
    var added = AddedFigures()
    /// `org.mprisbridge.MediaRoot1.Rescan` of the unchanged library, call -> reply.
    var rescan: UInt64 = 0
    /// Walks of the tree while artists move out of the library and back.
    var changingWalks = ChangingWalkFigures()
    /// SIGTERM -> exit of the first daemon (it saves the queue).
    var stop: UInt64 = 0
    var totalSeconds = 0.0

    var coldFilesPerSecond: Double { cold.map { Double(tracks) / (Double($0.wall) / 1e9) } ?? 0 }
    var writtenPerTrackChange: Double { Double(writtenOverTrackChanges) / Double(max(1, trackChanges)) }
}

/// Generates (or reuses) the library, then measures the daemon on it. Every process it starts, the
/// bus and the daemons, is stopped by its pid, also when a step fails.
final class ScaleBenchmark: Sendable {
    static let playerName = "mprisbridge"
    static let container: InterfaceName = "org.gnome.UPnP.MediaContainer2"
    static let pageSize = 100
    /// What a UPnP renderer sends through Rygel. (`Type derivedfrom "audio"` would find no track:
    /// the tree's tracks are of type `music`, which is not derived from `audio` there.)
    static let searchQuery = "upnp:class derivedfrom \"object.item.audioItem\" and DisplayName contains \"love\""

    let settings: Settings
    let library: ScaleLibrary

    init(options: Settings) {
        settings = options
        library = ScaleLibrary(folder: options.folder, tracks: options.tracks)
    }

    /// Runs everything and prints the report; returns the exit status: 0 every goal met, 1 one
    /// missed, 2 the run failed.
    func run() async -> Int32 {
        let started = monotonicNanoseconds()
        guard access(settings.daemon, X_OK) == 0 else {
            writeError(
                "ScaleBenchmark: no executable at \(settings.daemon); build it with "
                    + "`swift build -c release --product mpris-bridge` or pass --daemon PATH\n")
            return 2
        }
        var figures = ScaleFigures()
        figures.tracks = settings.tracks
        do {
            figures.library = try await library.prepare(log: log)
            log(
                figures.library.generated
                    ? "generated \(grouped(settings.tracks)) tracks in \(fixed(figures.library.seconds, 1)) s"
                    : "reusing the library in \(library.folder)")
            try await measureIndexing(into: &figures)
            try await measureDaemon(into: &figures)
        } catch {
            writeError("ScaleBenchmark: \(error)\n")
            return 2
        }
        figures.totalSeconds = Double(monotonicNanoseconds() - started) / 1e9
        let report = ScaleReport(figures: figures, settings: settings)
        print(report.text)
        if let path = settings.jsonPath, !report.json.writeFigures(to: path, benchmark: "ScaleBenchmark") { return 2 }
        return report.allGoalsMet ? 0 : 1
    }

    private func log(_ text: String) { writeError("ScaleBenchmark: \(text)\n") }

    private var cache: String { library.folder + "/cache" }
    private var state: String { library.folder + "/state" }

    // MARK: Indexing

    /// `mpris-bridge scan` into an empty cache folder with the page cache dropped (when this
    /// process may), then again on the unchanged library.
    private func measureIndexing(into figures: inout ScaleFigures) async throws {
        removeTree(cache)
        removeTree(state)
        try makeDirectories(cache)
        sync()
        figures.pageCacheDropped = dropPageCache()
        log("indexing \(library.music) cold (page cache \(figures.pageCacheDropped ? "dropped" : "warm"))...")
        let cold = try await ScanRun.measure(
            daemon: settings.daemon, library: library.music, cache: cache, arguments: ["--no-notify"])
        guard cold.failed == 0, cold.read >= settings.tracks else {
            throw BenchmarkFailure(
                description: "the cold scan read \(cold.read) files with \(cold.failed) failures, expected "
                    + "\(settings.tracks) tracks and none")
        }
        figures.cold = cold
        let unchanged = try await ScanRun.measure(
            daemon: settings.daemon, library: library.music, cache: cache, arguments: ["--no-notify"])
        guard unchanged.read == 0 else {
            throw BenchmarkFailure(description: "the scan of the unchanged library read \(unchanged.read) files")
        }
        figures.unchanged = unchanged
    }

    /// Writes 3 to `/proc/sys/vm/drop_caches` (page cache, dentries and inodes); false when not allowed.
    private func dropPageCache() -> Bool {
        let fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "3\n", 2) == 2
    }

    // MARK: The daemon

    private func measureDaemon(into figures: inout ScaleFigures) async throws {
        let bus = try await PrivateBus.start()
        let connection: Connection
        do { connection = try await Connection.connect(to: .address(bus.address)) } catch {
            await bus.stop()
            throw error
        }
        let launch = DaemonLaunch(
            executable: settings.daemon, library: library.music, cacheDirectory: cache, stateDirectory: state,
            playerName: Self.playerName)
        let client = BusClient(connection: connection, busName: launch.busName)
        do {
            // As a user runs it: a start-up scan, then the folder followed.
            var serving = launch
            serving.scansAtStart = true
            log("starting mpris-bridge on a fresh state...")
            let first = try await timedStart(serving, bus: bus, client: client, into: &figures.fresh)
            do {
                try await measureRunning(first, launch: serving, bus: bus, client: client, into: &figures)
                figures.stop = try await first.stop()
                keepLog(of: first, as: "daemon-fresh.log")
            } catch {
                await first.kill()
                keepLog(of: first, as: "daemon-fresh.log")
                throw error
            }
            try await client.waitUntilNameIsFree()
            log("restarting it, the queue restored...")
            let second = try await timedStart(serving, bus: bus, client: client, into: &figures.restart)
            do {
                try await Task.sleep(for: settings.settleTime)
                figures.afterRestart = ResidentMemory(pid: second.process.pid)
                try await second.stop()
                keepLog(of: second, as: "daemon-restart.log")
            } catch {
                await second.kill()
                keepLog(of: second, as: "daemon-restart.log")
                throw error
            }
            connection.close()
            try await stop(bus)
        } catch {
            connection.close()
            await bus.stop()
            throw error
        }
        // The daemon queues the whole library up to its queue's bound (QueuePlayer's
        // maximumQueueLength): past it, the first 65,536 tracks.
        guard figures.fresh.queued == min(settings.tracks, Self.maximumQueueLength) else {
            throw BenchmarkFailure(
                description: "on a fresh state the daemon queued \(figures.fresh.queued) entries, expected the "
                    + "library's \(settings.tracks)")
        }
    }

    /// Keeps what the daemon logged beside the library, to read after a surprising figure.
    private func keepLog(of daemon: RunningDaemon, as name: String) {
        try? writeFile(library.folder + "/" + name, daemon.process.capturedStdout)
    }

    private func stop(_ bus: PrivateBus) async throws {
        await bus.stop()
        if kill(bus.daemonPID, 0) == 0 || errno != ESRCH {
            throw BenchmarkFailure(description: "the bus daemon (pid \(bus.daemonPID)) is still there")
        }
    }

    /// Spawns the daemon and waits until its tree is ready: exec -> bus name owned, -> `ready:`,
    /// -> the start-up scan shown in the tree. Kills it if it does not get there.
    private func timedStart(
        _ launch: DaemonLaunch, bus: PrivateBus, client: BusClient, into figures: inout StartFigures
    ) async throws -> RunningDaemon {
        let owners = try await client.ownerChanges()
        let treeOwners = try await client.ownerChanges(of: launch.treeName)
        let daemon = try launch.spawn(on: bus)
        do {
            async let owned = awaitOwned(owners, timeout: .seconds(120))
            async let treeOwned = awaitOwned(treeOwners, timeout: .seconds(120))
            async let rootListed = listRoot(launch, client: client)
            let ready = try await daemon.waitUntilReady(timeout: .seconds(600))
            let scanShown = try await daemon.waitForLog(
                containing: "the media tree shows the scan's", timeout: .seconds(600)
            ).at
            figures.busName = try await owned - daemon.spawnedAt
            figures.treeServed = try await treeOwned - daemon.spawnedAt
            figures.rootListed = try await rootListed - daemon.spawnedAt
            figures.ready = ready.at - daemon.spawnedAt
            figures.scanShown = scanShown - daemon.spawnedAt
            figures.queued = ready.entries
            figures.restored = daemon.process.capturedStdout.contains("restored a queue of")
            return daemon
        } catch {
            await daemon.kill()
            throw error
        }
    }

    /// Calls `ListChildren` on the tree's root until it answers with its tabs (the name is not
    /// owned yet: refused, asked again 1 ms later); when it did.
    private func listRoot(_ launch: DaemonLaunch, client: BusClient) async throws -> UInt64 {
        let root = container(launch.treeRoot, launch, client)
        let deadline = monotonicNanoseconds() + 120 * 1_000_000_000
        while monotonicNanoseconds() < deadline {
            if let rows: [[String: Variant]] = try? await root.call("ListChildren", UInt32(0), UInt32(Self.pageSize), ["*"]),
                !rows.isEmpty, try rows.allSatisfy({ try $0["Type"]?.get(String.self) == "container" && $0["Loading"]?.get(Bool.self) != true })
            {
                return monotonicNanoseconds()
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw BenchmarkFailure(description: "the tree's root did not list its tabs within 120 s")
    }

    /// What is measured while the first daemon runs, in the order a head unit would cause it.
    private func measureRunning(
        _ daemon: RunningDaemon, launch: DaemonLaunch, bus: PrivateBus, client: BusClient, into figures: inout ScaleFigures
    ) async throws {
        let pid = daemon.process.pid
        try await Task.sleep(for: settings.settleTime)
        figures.idle = ResidentMemory(pid: pid)

        log("walking the whole tree in pages of \(Self.pageSize)...")
        let (daemonProbe, busProbe) = (ProcessProbe(pid: pid), ProcessProbe(pid: bus.daemonPID))
        let (daemonBefore, busBefore) = (daemonProbe.cpuTicks(), busProbe.cpuTicks())
        figures.walk = try await walk(launch, client: client)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        figures.walk.daemonCPUSeconds = Double(daemonProbe.cpuTicks() - daemonBefore) / ticks
        figures.walk.busCPUSeconds = Double(busProbe.cpuTicks() - busBefore) / ticks
        try await Task.sleep(for: settings.settleTime)
        figures.afterWalk = ResidentMemory(pid: pid)
        log("\(PageCPUFigures.pages) full pages of the Tracks tab...")
        figures.pageCPU = try await pageCPU(launch, bus: bus, client: client, daemon: pid)
        for inFlight in [1, Self.leanWalkInFlight] {
            log("walking it again with WalkClient, \(inFlight) call\(inFlight == 1 ? "" : "s") in flight...")
            figures.leanWalks.append(try await leanWalk(launch, bus: bus, daemon: pid, inFlight: inFlight))
        }

        let root = Proxy(
            client.connection, destination: client.busName, path: "/org/mpris/MediaPlayer2",
            interface: "org.mpris.MediaPlayer2.TrackList")
        figures.trackListLength = try await root.property("Tracks", as: [ObjectPath].self).count

        figures.search = try await search(launch, client: client)
        log("sorted listings and searches (the Ex methods)...")
        figures.sorted = try await sorted(launch, client: client)
        try await Task.sleep(for: settings.settleTime)
        figures.sorted.afterSorting = ResidentMemory(pid: pid)

        log("playing...")
        let _: () = try await client.player.call("Play")
        try await waitForStatus("Playing", client: client)
        try await Task.sleep(for: settings.settleTime)
        let status = try await client.playbackStatus()
        guard status == "Playing" else {
            throw BenchmarkFailure(description: "\(settings.settleTime) after Play the daemon is \(status)")
        }
        figures.playing = ResidentMemory(pid: pid)
        let _: () = try await client.player.call("Stop")

        // Each change is saved (the resume point); the saves are coalesced, so the calls are
        // spaced as a listener's would be rather than sent at once.
        let before = try writtenBytes(pid)
        for _ in 0..<settings.trackChanges {
            let _: () = try await client.player.call("Next")
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .seconds(1))
        figures.writtenOverTrackChanges = try writtenBytes(pid) - before
        figures.trackChanges = settings.trackChanges

        log("adding \(ScaleLibrary.addedTrackCount) files to the library...")
        figures.added = try await addFiles(launch, client: client)

        let rescan = Proxy(
            client.connection, destination: launch.treeName, path: launch.treeRoot,
            interface: "org.mprisbridge.MediaRoot1", timeout: .seconds(600))
        let rescanStart = monotonicNanoseconds()
        let _: () = try await rescan.call("Rescan")
        figures.rescan = monotonicNanoseconds() - rescanStart

        log("walking it with \(ChangingWalkFigures.walkers) remotes at once while artists move out of the library and back...")
        figures.changingWalks = try await changingWalks(
            launch, bus: bus, client: client, daemon: pid, artists: max(1, figures.library.artists))
        guard figures.changingWalks.daemonServing else {
            throw BenchmarkFailure(
                description: "the daemon stopped answering while \(ChangingWalkFigures.walkers) walks ran and artists "
                    + "moved (\(figures.changingWalks.moves) moves; see daemon-fresh.log): "
                    + figures.changingWalks.failures.joined(separator: "; "))
        }
    }

    private func waitForStatus(_ wanted: String, client: BusClient) async throws {
        for _ in 0..<1000 {
            if try await client.playbackStatus() == wanted { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BenchmarkFailure(description: "PlaybackStatus is not \(wanted) after 10 s")
    }

    /// `wchar` of `/proc/PID/io`: bytes the process passed to write calls (files, sockets, pipes).
    private func writtenBytes(_ pid: Int32) throws -> Int {
        for line in (readWholeFile("/proc/\(pid)/io") ?? "").split(separator: "\n") where line.hasPrefix("wchar:") {
            if let value = Int(line.dropFirst(6).drop { $0 == " " }) { return value }
        }
        throw BenchmarkFailure(description: "cannot read wchar from /proc/\(pid)/io")
    }

    // MARK: The tree

    private func container(_ path: ObjectPath, _ launch: DaemonLaunch, _ client: BusClient) -> Proxy {
        Proxy(client.connection, destination: launch.treeName, path: path, interface: Self.container, timeout: .seconds(120))
    }

    /// Lists every container from the root, depth first, in pages of 100 with every property, one
    /// call at a time as a head unit does; a container's `ChildCount` (from its parent's row) says
    /// when its last page is reached, or else a short page does.
    /// The most entries the daemon's queue holds (`QueuePlayer.Configuration.maximumQueueLength`).
    static let maximumQueueLength = 65_536

    private func walk(_ launch: DaemonLaunch, client: BusClient) async throws -> WalkFigures {
        var figures = WalkFigures()
        var pending: [(path: ObjectPath, childCount: Int?)] = [(launch.treeRoot, nil)]
        let start = monotonicNanoseconds()
        while let next = pending.popLast() {
            let (path, childCount) = next
            figures.containers += 1
            let proxy = container(path, launch, client)
            var offset = 0
            while true {
                let before = monotonicNanoseconds()
                let page: [[String: Variant]] = try await proxy.call(
                    "ListChildren", UInt32(offset), UInt32(Self.pageSize), ["*"])
                figures.pages.append(monotonicNanoseconds() - before)
                for row in page {
                    guard let type = try row["Type"]?.get(String.self), let child = try row["Path"]?.get(ObjectPath.self)
                    else { throw BenchmarkFailure(description: "a child of \(path) has no Type or Path") }
                    if try row["Loading"]?.get(Bool.self) == true {
                        figures.loadingRows += 1
                    } else if type != "container" {
                        figures.items += 1
                    } else if try row["Informative"]?.get(Bool.self) != true {
                        pending.append((child, (try row["ChildCount"]?.get(UInt32.self)).map(Int.init)))
                    }
                }
                offset += page.count
                if page.count < Self.pageSize || offset >= (childCount ?? Int.max) { break }
            }
        }
        figures.nanoseconds = monotonicNanoseconds() - start
        return figures
    }

    /// Lists ``PageCPUFigures/pages`` full pages of the Tracks tab, every property, offsets spread
    /// over the tab, and reads the processor time the daemon and the bus spent on them.
    private func pageCPU(_ launch: DaemonLaunch, bus: PrivateBus, client: BusClient, daemon: Int32) async throws
        -> PageCPUFigures
    {
        let tracks = container(launch.treeRoot.appending("tracks"), launch, client)
        let count = Int(try await tracks.property("ChildCount", as: UInt32.self))
        let pages = max(1, count / Self.pageSize)
        var figures = PageCPUFigures()
        let (daemonProbe, busProbe) = (ProcessProbe(pid: daemon), ProcessProbe(pid: bus.daemonPID))
        let (daemonBefore, busBefore) = (daemonProbe.cpuTicks(), busProbe.cpuTicks())
        let start = monotonicNanoseconds()
        for index in 0..<PageCPUFigures.pages {
            // A stride prime to the pages' count: every page once before any twice.
            let offset = (index * 37 % pages) * Self.pageSize
            let rows: [[String: Variant]] = try await tracks.call("ListChildren", UInt32(offset), UInt32(Self.pageSize), ["*"])
            figures.rows += rows.count
            figures.pages += 1
        }
        figures.seconds = Double(monotonicNanoseconds() - start) / 1e9
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        figures.daemonCPUSeconds = Double(daemonProbe.cpuTicks() - daemonBefore) / ticks
        figures.busCPUSeconds = Double(busProbe.cpuTicks() - busBefore) / ticks
        return figures
    }

    /// The calls `WalkClient` keeps outstanding in its second walk.
    static let leanWalkInFlight = 4

    /// Runs `WalkClient` (built beside this benchmark) on the tree, `inFlight` calls at a time.
    private func leanWalk(_ launch: DaemonLaunch, bus: PrivateBus, daemon: Int32, inFlight: Int) async throws
        -> LeanWalkFigures
    {
        let benchmark = try System.executablePath()
        let walker = String(benchmark[..<(benchmark.lastIndex(of: "/") ?? benchmark.endIndex)]) + "/WalkClient"
        let daemonProbe = ProcessProbe(pid: daemon)
        let busProbe = ProcessProbe(pid: bus.daemonPID)
        let (daemonBefore, busBefore) = (daemonProbe.cpuTicks(), busProbe.cpuTicks())
        let output = try await bus.run(
            walker, [launch.treeName.rawValue, launch.treeRoot.rawValue, String(inFlight)], timeout: .seconds(600))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        // `walk SECONDS CALLS CONTAINERS ITEMS IN_FLIGHT CPU_SECONDS`
        let fields = output.stdout.split(whereSeparator: \.isWhitespace)
        guard output.status == 0, fields.count == 7, fields[0] == "walk", let seconds = Double(fields[1]),
            let calls = Int(fields[2]), let items = Int(fields[4]), let cpu = Double(fields[6])
        else { throw BenchmarkFailure(description: "WalkClient failed: \(output.stdout)\(output.stderr)") }
        var figures = LeanWalkFigures()
        figures.inFlight = inFlight
        figures.seconds = seconds
        figures.calls = calls
        figures.items = items
        figures.clientCPUSeconds = cpu
        figures.daemonCPUSeconds = Double(daemonProbe.cpuTicks() - daemonBefore) / ticks
        figures.busCPUSeconds = Double(busProbe.cpuTicks() - busBefore) / ticks
        return figures
    }

    private func search(_ launch: DaemonLaunch, client: BusClient) async throws -> SearchFigures {
        var figures = SearchFigures()
        figures.query = Self.searchQuery
        let root = container(launch.treeRoot, launch, client)
        for index in 0..<settings.searches {
            let start = monotonicNanoseconds()
            let rows: [[String: Variant]] = try await root.call(
                "SearchObjects", Self.searchQuery, UInt32(0), UInt32(Self.pageSize), ["*"])
            let took = monotonicNanoseconds() - start
            if index == 0 {
                figures.first = took
                figures.rows = rows.count
            } else {
                figures.later.append(took)
            }
        }
        return figures
    }

    private func sorted(_ launch: DaemonLaunch, client: BusClient) async throws -> SortedFigures {
        var figures = SortedFigures()
        let tracks = container(launch.treeRoot.appending("tracks"), launch, client)
        let count = Int(try await tracks.property("ChildCount", as: UInt32.self))
        figures.pageOffset = count / 2
        let page = UInt32(SortedFigures.pageSize)
        func timed<T>(_ body: () async throws -> T) async throws -> (T, UInt64) {
            let start = monotonicNanoseconds()
            let result = try await body()
            return (result, monotonicNanoseconds() - start)
        }
        for (order, first, later) in [
            (SortedFigures.order, \SortedFigures.pageFirst, \SortedFigures.pageLater),
            (SortedFigures.indexOrder, \SortedFigures.indexFieldsFirst, \SortedFigures.indexFieldsLater),
        ] {
            // A remote paging on from the middle: one sort, then a page per call.
            for index in 0..<(settings.searches * 4) {
                let offset = UInt32(figures.pageOffset + index * SortedFigures.pageSize)
                let (rows, took) = try await timed {
                    let rows: [[String: Variant]] = try await tracks.call("ListItemsEx", offset, page, ["*"], order)
                    return rows
                }
                if index == 0 {
                    figures[keyPath: first] = took
                    if order == SortedFigures.order { figures.pageRows = rows.count }
                } else {
                    figures[keyPath: later].append(took)
                }
            }
        }
        let root = container(launch.treeRoot, launch, client)
        for index in 0..<settings.searches {
            let ((_, total), took) = try await timed {
                let reply: ([[String: Variant]], UInt32) = try await root.call(
                    "SearchObjectsEx", Self.searchQuery, UInt32(0), UInt32(Self.pageSize), ["*"], "+DisplayName")
                return reply
            }
            if index == 0 {
                figures.searchFirst = took
                figures.searchTotal = Int(total)
            } else {
                figures.searchLater.append(took)
            }
        }
        for index in 0..<settings.searches {
            let ((_, total), took) = try await timed {
                let reply: ([[String: Variant]], UInt32) = try await root.call(
                    "SearchObjectsEx", "*", UInt32(figures.pageOffset + index * SortedFigures.pageSize), page, ["*"],
                    SortedFigures.order)
                return reply
            }
            figures.everything.append(took)
            figures.everythingTotal = Int(total)
        }
        return figures
    }

    // MARK: Added files

    /// Renames the staged album (1,000 tracks) into the library in one `rename(2)`, as a file
    /// manager moves a folder, and waits until the Tracks tab has sent `Updated` and lists them;
    /// then renames it out again and waits until the tab is back to the library's tracks.
    private func addFiles(_ launch: DaemonLaunch, client: BusClient) async throws -> AddedFigures {
        var figures = AddedFigures()
        let tab = launch.treeRoot.appending("tracks")
        let proxy = container(tab, launch, client)
        figures.tracksBefore = Int(try await proxy.property("ChildCount", as: UInt32.self))
        let expected = figures.tracksBefore + ScaleLibrary.addedTrackCount
        let updates = ArrivalTimes()
        let stream = try await client.connection.signals(
            matching: MatchRule(sender: launch.treeName, path: tab, interface: Self.container, member: "Updated"))
        let listener = Task {
            for try await _ in stream {
                updates.note()
            }
        }
        defer { listener.cancel() }
        // The signal subscription is in place once a round trip to the daemon has come back.
        _ = try await proxy.property("ChildCount", as: UInt32.self)

        /// Waits until `count` tracks show: after each `Updated`, the tab's ChildCount and its last page.
        func waitForCount(_ count: Int, since start: UInt64) async throws -> UInt64 {
            var checked = updates.count
            let deadline = start + 600 * 1_000_000_000
            while monotonicNanoseconds() < deadline {
                let received = updates.count
                if received > checked {
                    checked = received
                    let shown = Int(try await proxy.property("ChildCount", as: UInt32.self))
                    if shown == count {
                        let last: [[String: Variant]] = try await proxy.call(
                            "ListChildren", UInt32(count - 1), UInt32(Self.pageSize), ["Path"])
                        if last.count == 1 { return monotonicNanoseconds() }
                    }
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            throw BenchmarkFailure(description: "the Tracks tab did not show \(count) tracks within 600 s")
        }

        let addedAt = monotonicNanoseconds()
        try rename(library.stagedAlbum, to: library.addedAlbum)
        do {
            figures.toVisible = try await waitForCount(expected, since: addedAt) - addedAt
            let received = updates.all
            figures.toUpdated = (received.first ?? addedAt) - addedAt
            figures.updates = received.count
            figures.tracksAfter = expected
        } catch {
            try? rename(library.addedAlbum, to: library.stagedAlbum)
            throw error
        }
        let removedAt = monotonicNanoseconds()
        try rename(library.addedAlbum, to: library.stagedAlbum)
        figures.removalToVisible = try await waitForCount(figures.tracksBefore, since: removedAt) - removedAt
        return figures
    }
}

/// When each signal of a subscription arrived, noted by the task that receives them.
private final class ArrivalTimes: Sendable {
    private let times = Mutex<[UInt64]>([])

    func note() {
        let now = monotonicNanoseconds()
        times.withLock { $0.append(now) }
    }

    var count: Int { times.withLock { $0.count } }
    var all: [UInt64] { times.withLock { $0 } }
}
