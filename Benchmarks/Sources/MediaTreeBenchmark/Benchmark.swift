import BenchmarkSupport
import DBus
import DBusTestSupport
import Glibc
import ProcessTestSupport
import Synchronization

/// What the run is checked against. See Benchmarks/README.md.
enum Thresholds {
    private static let file = ThresholdFile(benchmark: "MediaTreeBenchmark")
    // The goals: reported as met or NOT MET, never gating (the README says why they are missed).
    /// A warm page of 100 from the 10,000-child Tracks container with every property (`*`), p50.
    static let tracksPageP50GoalMicroseconds = file["tracksPageP50GoalMicroseconds"]
    /// A walk of the whole tree from a fresh server.
    static let coldWalkGoalSeconds = file["coldWalkGoalSeconds"]

    // Gating: what the tree must get right.
    /// Rows a walk must see and did not, or saw as "loading": none.
    static let walkRowsMissing = file["walkRowsMissing"]
    /// `Updated` signals for a container already announced in the same batch: none.
    static let stormDuplicateSignals = file["stormDuplicateSignals"]
    /// Containers listing tracks that got no `Updated`, plus containers that got one and list none.
    static let stormWrongContainers = file["stormWrongContainers"]

    // Gating regression thresholds: about 1.5x the worst the reference machine (2 cores) measured,
    // pinned or not (`--no-pin`), +20 % for memory. See Benchmarks/README.md.
    /// Measured 4.52-4.59 ms pinned, 4.52-4.54 ms unpinned.
    static let tracksPageP50Microseconds = file["tracksPageP50Microseconds"]
    /// Measured 2.65-2.77 s pinned, 2.90-2.94 s unpinned.
    static let coldWalkSeconds = file["coldWalkSeconds"]
    /// The median storm, `Storm` call -> last `Updated` received. Measured 254-280 ms pinned,
    /// 216-258 ms unpinned.
    static let stormToLastSignalMilliseconds = file["stormToLastSignalMilliseconds"]
    /// The server's VmRSS after the cold walk. Measured 64.7-65.2 MiB.
    static let serverRSSAfterColdWalkMiB = file["serverRSSAfterColdWalkMiB"]
}

/// The round trips of the page measurement, interleaved.
enum PageRoundTrip: Int, CaseIterable {
    /// `org.freedesktop.DBus.GetId`, answered by the bus daemon itself: the floor.
    case busFloor
    /// `org.freedesktop.DBus.Peer.Ping` to the server, answered by libdbus in the server.
    case servicePing
    /// `ListChildren(offset, 100, ["*"])` on the Tracks container at a random offset.
    case everyProperty
    /// `ListChildren(offset, 100, ["DisplayName", "Path", "Type", "URLs"])`, the same way.
    case fewProperties

    var label: String {
        switch self {
        case .busFloor: "bus floor: GetId (bus daemon)"
        case .servicePing: "Peer.Ping to server (libdbus)"
        case .everyProperty: "ListChildren 100, filter *"
        case .fewProperties: "ListChildren 100, 4 properties"
        }
    }

    var key: String {
        switch self {
        case .busFloor: "busFloorGetId"
        case .servicePing: "servicePing"
        case .everyProperty: "listChildrenEveryProperty"
        case .fewProperties: "listChildrenFewProperties"
        }
    }
}

/// Part 1: a page of 100 from the Tracks container.
struct PageFigures {
    /// The first `ListChildren(0, 100, *)` on a fresh server: the container is read from the data source.
    var coldNanoseconds: UInt64 = 0
    /// Nanoseconds per warm round trip, by ``PageRoundTrip``.
    var samples: [[UInt64]] = []
    /// CPU per warm `ListChildren(*)`, in µs per process.
    var cpu = CPUFigures(client: 0, service: 0, daemon: 0)
    /// Properties of one row with `*` and with the small filter.
    var everyPropertyCount = 0
    var fewPropertyCount = 0
    /// `LibraryContent` built from 10,000 tracks in the server, before it went on the bus.
    var libraryBuildNanoseconds: UInt64 = 0
    /// One read of the Tracks tab's 10,000 rows from `LibraryContent` (`numberOfChildItems`,
    /// then `contentItem(at:)` for each), in the server, before it went on the bus.
    var tracksReadNanoseconds: UInt64 = 0
}

/// One walk of the whole tree.
struct WalkFigures {
    var nanoseconds: UInt64 = 0
    var calls = 0
    var nodes = 0
    var containers = 0
    /// Rows standing for children still loading: a listing that waited for the data source in vain.
    var loadingRows = 0
    /// The containers that listed at least one playable item (a track).
    var containersListingItems: Set<String> = []
    /// CPU for the whole walk, in µs per process.
    var cpu = CPUFigures(client: 0, service: 0, daemon: 0)
}

/// One batch changing every title.
struct StormFigures {
    var generation = 0
    /// `org.gnome.UPnP.MediaContainer2.Updated` signals received before the server's marker.
    var signals = 0
    var distinctContainers = 0
    /// Containers listing tracks (from the cold walk) that got no signal.
    var missing = 0
    /// Containers that got a signal and list no track.
    var extra = 0
    /// Other signals under the tree's root before the marker.
    var otherSignals = 0
    /// Call sent -> last `Updated` received.
    var toLastSignalNanoseconds: UInt64 = 0
    /// Call sent -> first `Updated` received.
    var toFirstSignalNanoseconds: UInt64 = 0
    /// Call sent -> reply received (the reply follows the marker).
    var toReplyNanoseconds: UInt64 = 0
    /// In the server: `LibraryContent.update` (building the new model) and `endUpdates`.
    var updateNanoseconds: UInt64 = 0
    var endUpdatesNanoseconds: UInt64 = 0
    /// Paths the manager announced to its observers, all and distinct.
    var announcedPaths = 0
    var announcedDistinct = 0
    var cpu = CPUFigures(client: 0, service: 0, daemon: 0)
    /// The server's memory after the storm.
    var memory: ResidentMemory?
}

/// Parts 2 and 3, against one fresh server.
struct TreeFigures {
    var coldWalk = WalkFigures()
    var warmWalks: [WalkFigures] = []
    /// One more warm walk asking only for `DisplayName`, `Path`, `Type` and `URLs`, as a client
    /// that names what it shows does: the cost of the properties against the cost of the calls.
    var fewPropertiesWalk = WalkFigures()
    var storms: [StormFigures] = []
    /// `Updated` signals received during the walks (none expected: nothing changed).
    var signalsDuringWalks = 0
    /// The server's memory: ready, after the cold walk, after the warm walks, after the storms.
    var memory: [(String, ResidentMemory)] = []
}

/// Closes `connection` unless `progress` moved in the last `interval`: a signal or reply that
/// never comes would otherwise wait forever; closing ends the streams and calls with an error.
final class Watchdog: Sendable {
    private final class Progress: Sendable {
        let count = Atomic<Int>(0)
    }
    private let progress = Progress()
    private let task: Task<Void, Never>

    init(closing connection: Connection, after interval: Duration = .seconds(30)) {
        let progress = self.progress
        task = Task {
            var last = -1
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                let now = progress.count.load(ordering: .relaxed)
                if now == last {
                    writeError("MediaTreeBenchmark: no progress in \(interval); closing the connection\n")
                    return connection.close()
                }
                last = now
            }
        }
    }

    func tick() { progress.count.add(1, ordering: .relaxed) }
    func cancel() { task.cancel() }
}

final class Benchmark {
    static let pageSize = 100
    static let container: InterfaceName = "org.gnome.UPnP.MediaContainer2"
    static let fewProperties = ["DisplayName", "Path", "Type", "URLs"]

    let options: Options
    private(set) var pinnedCPU: Int?
    private var servicePIDs: [Int32] = []

    init(options: Options) { self.options = options }

    /// Runs everything; returns the exit code: 0, 1 if a threshold is exceeded, 2 if the run failed.
    ///
    /// Two servers, each fresh on its own private bus: one for the pages (its Tracks container
    /// is read by the first listing), one for the walks and storms (the first walk reads every
    /// container).
    func run() async -> Int32 {
        let started = monotonicNanoseconds()
        var pages = PageFigures()
        var tree = TreeFigures()
        var status = await ServiceHarness.run(program: "MediaTreeBenchmark", pin: options.pin) { harness in
            pinnedCPU = harness.pinnedCPU
            servicePIDs.append(harness.service.pid)
            pages = try await measurePages(bus: harness.bus, service: harness.service)
            return 0
        }
        if status == 0 {
            status = await ServiceHarness.run(program: "MediaTreeBenchmark", pin: options.pin) { harness in
                servicePIDs.append(harness.service.pid)
                tree = try await measureTree(bus: harness.bus, service: harness.service)
                return 0
            }
        }
        for pid in servicePIDs { rmdir(Service.artworkDirectory(pid: pid)) }
        guard status == 0 else { return status }
        return report(pages: pages, tree: tree, totalSeconds: Double(monotonicNanoseconds() - started) / 1e9)
    }

    /// Connects and waits for the server's `ready BUILD_NANOSECONDS READ_NANOSECONDS`.
    private func connect(bus: PrivateBus, service: ChildProcess) async throws -> (
        Connection, build: UInt64, read: UInt64
    ) {
        let client = try await Connection.connect(to: .address(bus.address))
        let line = try await service.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("ready ") }
        let times = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard times.count == 2 else { throw BenchmarkFailure(description: "the server said '\(line)'") }
        return (client, times[0], times[1])
    }

    private func listChildren(
        _ client: Connection, _ path: ObjectPath, offset: Int, filter: [String]
    ) async throws -> [[String: Variant]] {
        let proxy = Proxy(
            client, destination: Service.busName, path: path, interface: Self.container, timeout: .seconds(30))
        return try await proxy.call("ListChildren", UInt32(offset), UInt32(Self.pageSize), filter)
    }

    // MARK: Part 1: a page of 100

    private func measurePages(bus: PrivateBus, service: ChildProcess) async throws -> PageFigures {
        let (client, built, read) = try await connect(bus: bus, service: service)
        defer { client.close() }
        var figures = PageFigures()
        figures.libraryBuildNanoseconds = built
        figures.tracksReadNanoseconds = read
        let tracks = Service.rootPath.appending("tracks")

        // Cold: the first call the server gets.
        let coldStart = monotonicNanoseconds()
        let first = try await listChildren(client, tracks, offset: 0, filter: ["*"])
        figures.coldNanoseconds = monotonicNanoseconds() - coldStart
        let few = try await listChildren(client, tracks, offset: 0, filter: Self.fewProperties)
        guard first.count == Self.pageSize, few.count == Self.pageSize,
            first.allSatisfy({ (try? $0["Type"]?.get(String.self)) == "music" }),
            Set(few[0].keys) == Set(Self.fewProperties)
        else {
            throw BenchmarkFailure(
                description: "the Tracks container's first page has \(first.count) rows (\(few.count) with "
                    + "\(Self.fewProperties)), expected \(Self.pageSize) tracks; the small filter returned "
                    + "\(few.first.map { $0.keys.sorted() } ?? [])")
        }
        figures.everyPropertyCount = first[0].count
        figures.fewPropertyCount = few[0].count

        let floor = Proxy(client, destination: .bus, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus")
        let ping = Proxy(
            client, destination: Service.busName, path: Service.rootPath, interface: "org.freedesktop.DBus.Peer")
        var random = SplitMix64(seed: 0x5EED)
        let offsets = UInt64(SyntheticLibrary.trackCount - Self.pageSize + 1)
        func roundTrip(_ kind: PageRoundTrip) async throws {
            switch kind {
            case .busFloor: let _: String = try await floor.call("GetId")
            case .servicePing: let _: () = try await ping.call("Ping")
            case .everyProperty, .fewProperties:
                let offset = Int(random.next() % offsets)
                let page = try await listChildren(
                    client, tracks, offset: offset, filter: kind == .everyProperty ? ["*"] : Self.fewProperties)
                guard page.count == Self.pageSize else {
                    throw BenchmarkFailure(description: "ListChildren(\(offset), 100) returned \(page.count) rows")
                }
            }
        }
        for _ in 0..<options.warmUp {
            for kind in PageRoundTrip.allCases { try await roundTrip(kind) }
        }
        figures.samples = try await interleavedSamples(
            kinds: PageRoundTrip.allCases.count, iterations: options.listings, batch: options.batch
        ) { try await roundTrip(PageRoundTrip(rawValue: $0)!) }

        let before = CPUFigures.now(service: service.pid, daemon: bus.daemonPID)
        for _ in 0..<options.cpuListings { try await roundTrip(.everyProperty) }
        figures.cpu = CPUFigures.now(service: service.pid, daemon: bus.daemonPID).since(
            before, per: options.cpuListings)
        return figures
    }

    // MARK: Parts 2 and 3: walks and storms

    private func measureTree(bus: PrivateBus, service: ChildProcess) async throws -> TreeFigures {
        let (client, _, _) = try await connect(bus: bus, service: service)
        defer { client.close() }
        var figures = TreeFigures()
        func noteMemory(_ label: String) throws {
            guard let memory = ResidentMemory(pid: service.pid) else {
                throw BenchmarkFailure(description: "cannot read /proc/\(service.pid)/status: the server is gone")
            }
            figures.memory.append((label, memory))
        }
        // Every signal under the tree's root, from before the first walk on.
        var signals = try await client.signals(
            matching: MatchRule(sender: Service.busName, pathNamespace: Service.rootPath)
        ).makeAsyncIterator()
        let watchdog = Watchdog(closing: client)
        defer { watchdog.cancel() }
        let control = Proxy(
            client, destination: Service.busName, path: Service.controlPath, interface: Service.controlInterface,
            timeout: .seconds(60))

        try noteMemory("ready (library built, nothing listed)")
        figures.coldWalk = try await walk(client, filter: ["*"], bus: bus, service: service, watchdog: watchdog)
        try noteMemory("after the cold walk")
        for _ in 0..<options.walks {
            figures.warmWalks.append(
                try await walk(client, filter: ["*"], bus: bus, service: service, watchdog: watchdog))
        }
        figures.fewPropertiesWalk = try await walk(
            client, filter: Self.fewProperties, bus: bus, service: service, watchdog: watchdog)
        try noteMemory("after \(options.walks + 1) warm walks")

        // Whatever the walks caused, up to a first marker.
        let _: () = try await control.call("Mark", UInt32(0))
        while let message = try await signals.next() {
            if message.member == Service.marker { break }
            if message.member == "Updated" { figures.signalsDuringWalks += 1 }
        }

        for generation in 1...options.storms {
            figures.storms.append(
                try await storm(
                    generation: generation, control: control, signals: &signals,
                    expected: figures.coldWalk.containersListingItems, bus: bus, service: service,
                    watchdog: watchdog))
        }
        try noteMemory("after \(options.storms) storm\(options.storms == 1 ? "" : "s")")
        return figures
    }

    /// Lists every container breadth-first, in pages of 100 with the properties `filter` names,
    /// one call at a time, from the root. A container's `ChildCount` (from its parent's listing,
    /// when the filter asks for it) says when its last page is reached; otherwise a short page does.
    private func walk(
        _ client: Connection, filter: [String], bus: PrivateBus, service: ChildProcess, watchdog: Watchdog
    ) async throws -> WalkFigures {
        var figures = WalkFigures()
        var queue: [(path: ObjectPath, childCount: Int?)] = [(Service.rootPath, nil)]
        var head = 0
        let cpuBefore = CPUFigures.now(service: service.pid, daemon: bus.daemonPID)
        let start = monotonicNanoseconds()
        while head < queue.count {
            let (path, childCount) = queue[head]
            head += 1
            figures.containers += 1
            var offset = 0
            var listsItems = false
            while true {
                let page = try await listChildren(client, path, offset: offset, filter: filter)
                watchdog.tick()
                figures.calls += 1
                for child in page {
                    figures.nodes += 1
                    guard let type = try child["Type"]?.get(String.self),
                        let childPath = try child["Path"]?.get(ObjectPath.self)
                    else { throw BenchmarkFailure(description: "a child of \(path) has no Type or Path") }
                    if try child["Loading"]?.get(Bool.self) == true {
                        figures.loadingRows += 1
                    } else if type == "container" {
                        if try child["Informative"]?.get(Bool.self) != true {
                            let count = try child["ChildCount"]?.get(UInt32.self)
                            queue.append((childPath, count.map(Int.init)))
                        }
                    } else {
                        listsItems = true
                    }
                }
                offset += page.count
                if page.count < Self.pageSize || offset >= (childCount ?? Int.max) { break }
            }
            if listsItems { figures.containersListingItems.insert(path.rawValue) }
        }
        figures.nanoseconds = monotonicNanoseconds() - start
        figures.cpu = CPUFigures.now(service: service.pid, daemon: bus.daemonPID).since(cpuBefore, per: 1)
        return figures
    }

    /// Asks the server to change every title in one batch, and counts the `Updated` signals that
    /// arrive before its marker.
    private func storm(
        generation: Int, control: Proxy, signals: inout AsyncThrowingStream<Message, any Error>.Iterator,
        expected: Set<String>, bus: PrivateBus, service: ChildProcess, watchdog: Watchdog
    ) async throws -> StormFigures {
        var figures = StormFigures()
        figures.generation = generation
        var received: [String] = []
        received.reserveCapacity(expected.count)
        let _: () = try await control.call("Prepare", UInt32(generation))
        let cpuBefore = CPUFigures.now(service: service.pid, daemon: bus.daemonPID)
        let start = monotonicNanoseconds()
        var first: UInt64?
        var last = start
        async let reply: (UInt64, UInt64, UInt32, UInt32) = control.call("Storm", UInt32(generation))
        while true {
            guard let message = try await signals.next() else {
                throw BenchmarkFailure(description: "the signal stream ended during storm \(generation)")
            }
            watchdog.tick()
            if message.member == Service.marker {
                let (serial) = try message.decode(as: UInt32.self)
                if serial == UInt32(generation) { break }
                continue
            }
            guard message.interface == Self.container, message.member == "Updated", let path = message.path else {
                figures.otherSignals += 1
                continue
            }
            last = monotonicNanoseconds()
            if first == nil { first = last }
            received.append(path.rawValue)
        }
        let (update, endUpdates, announced, distinct) = try await reply
        figures.toReplyNanoseconds = monotonicNanoseconds() - start
        figures.cpu = CPUFigures.now(service: service.pid, daemon: bus.daemonPID).since(cpuBefore, per: 1)
        let containers = Set(received)
        figures.signals = received.count
        figures.distinctContainers = containers.count
        figures.missing = expected.subtracting(containers).count
        figures.extra = containers.subtracting(expected).count
        figures.toFirstSignalNanoseconds = (first ?? start) - start
        figures.toLastSignalNanoseconds = last - start
        figures.updateNanoseconds = update
        figures.endUpdatesNanoseconds = endUpdates
        figures.announcedPaths = Int(announced)
        figures.announcedDistinct = Int(distinct)
        figures.memory = ResidentMemory(pid: service.pid)
        return figures
    }
}
