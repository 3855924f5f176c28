import BenchmarkSupport
import Glibc
import ProcessTestSupport

/// One kind of timed request: what is sent in one `write`, and how many `OK`s end its answer.
struct TimedRequest: Sendable {
    var label: String
    var bytes: [UInt8]
    var responses: Int

    init(_ label: String, _ text: String, responses: Int) {
        self.label = label
        bytes = Array(text.utf8)
        self.responses = responses
    }

    /// Both commands in one write, read until the second `OK` (as a client that pipelines).
    static let pipelined = TimedRequest("status + currentsong, pipelined", "status\ncurrentsong\n", responses: 2)
    /// Both in a command list, read until its one `OK` (as libmpdclient's clients send them).
    static let commandList = TimedRequest(
        "status + currentsong, command list", "command_list_ok_begin\nstatus\ncurrentsong\ncommand_list_end\n",
        responses: 1)
    static let playlistInfo = TimedRequest("playlistinfo (1,000 entries)", "playlistinfo\n", responses: 1)
    static let listAlbums = TimedRequest("list album group albumartist", "list album group albumartist\n", responses: 1)
}

/// Everything one run measured; nanoseconds unless named otherwise. Per server: index 0 is mpd,
/// 1 the daemon (or the second mpd).
struct MPDFigures: Sendable {
    struct RoundTrips: Sendable {
        var request: TimedRequest
        var transport: Transport
        /// Per server.
        var samples: [[UInt64]]
        /// Per server: its processor time per request (every thread), µs, and its context
        /// switches per request, over a separate untimed run of requests.
        var serverMicroseconds: [Double]
        var serverSwitches: [Double]
    }

    struct Wakes: Sendable {
        var transport: Transport
        /// Per server: send of `pause` -> `changed: player` at the idle client.
        var samples: [[UInt64]]
        /// Per server: send of `pause` -> its `OK` at the connection that sent it (whichever of
        /// the two comes first is read first).
        var replies: [[UInt64]]
        /// Per server: idles that returned before the command was sent (a change still pending
        /// from the round before), dropped and parked again.
        var stale: [Int]
    }

    struct Memory: Sendable {
        var clients: Int
        /// Per server, kB.
        var before: [ResidentMemory]
        var with: [ResidentMemory]
    }

    var servers: [String]
    var greetings: [String]
    var library = ScaleLibrary.Outcome(generated: false, seconds: 0, albums: 0, artists: 0, bytes: 0)
    var roundTrips: [RoundTrips] = []
    var listings: [RoundTrips] = []
    /// Per listing timed, per server: entries in playlistinfo's answer, albums in list's.
    var listingRows: [[Int]] = []
    /// Listings left out, each with who refused it and how.
    var refusedListings: [String] = []
    var wakes: [Wakes] = []
    var memory = Memory(clients: 0, before: [], with: [])
    /// The CPU that the benchmark and both servers share, if pinned.
    var pinnedCPU: Int?
    var totalSeconds = 0.0
}

final class Benchmark {
    let options: Options

    init(options: Options) { self.options = options }

    /// Runs everything; returns the exit code: 0, 1 if a threshold is exceeded, 2 if the run failed.
    func run() async -> Int32 {
        let started = monotonicNanoseconds()
        let library = ScaleLibrary(folder: options.libraryFolder, tracks: options.tracks)
        let outcome: ScaleLibrary.Outcome
        do {
            outcome = try await library.prepare { writeError("MPDBenchmark: \($0)\n") }
        } catch {
            writeError("MPDBenchmark: cannot generate the library: \(error)\n")
            return 2
        }
        let folder: TemporaryDirectory
        do { folder = try TemporaryDirectory(prefix: "mpd-benchmark") } catch {
            writeError("MPDBenchmark: \(error)\n")
            return 2
        }
        defer { folder.remove() }
        // Before the servers start, so that they inherit it.
        var pinnedCPU: Int?
        if options.pin, let cpu = System.allowedCPUs().last {
            if System.pinProcess(to: cpu) { pinnedCPU = cpu } else { writeError("MPDBenchmark: could not pin to CPU \(cpu)\n") }
        }
        let starter = ServerStarter(options: options, library: library, folder: folder.path)
        var servers: [ServerUnderTest] = []
        var status: Int32 = 2
        do {
            writeError("MPDBenchmark: starting mpd and \(options.mpdTwice ? "a second mpd" : "mpris-bridge")...\n")
            servers.append(try await starter.startMPD(name: "mpd", tag: "mpd"))
            servers.append(
                options.mpdTwice ? try await starter.startMPD(name: "mpd (2nd)", tag: "mpd2") : try await starter.startDaemon())
            var figures = try await measure(servers, library: library)
            figures.library = outcome
            figures.pinnedCPU = pinnedCPU
            figures.totalSeconds = Double(monotonicNanoseconds() - started) / 1e9
            status = MPDReport(options: options, figures: figures).emit()
        } catch {
            writeError("MPDBenchmark: \(error)\n")
        }
        for server in servers {
            if let complaint = await server.stop() {
                writeError("MPDBenchmark: \(complaint)\n")
                status = 2
            }
        }
        return status
    }

    private func measure(_ servers: [ServerUnderTest], library: ScaleLibrary) async throws -> MPDFigures {
        let queue = try queueURIs(library)
        var greetings: [String] = []
        for server in servers {
            let client = try MPDConnection(server.tcp)
            // "OK MPD 0.23.5": the protocol version each speaks.
            greetings.append("protocol " + client.greeting.dropFirst("OK MPD ".count))
            try load(queue, into: client, server: server)
        }
        var figures = MPDFigures(servers: servers.map(\.name), greetings: greetings)
        writeError("MPDBenchmark: round trips...\n")
        figures.roundTrips = try timeRequests(
            [(.pipelined, .tcp), (.pipelined, .unix), (.commandList, .tcp)], on: servers, rounds: options.rounds,
            warmUp: options.warmUp, batch: options.batch)
        writeError("MPDBenchmark: listings...\n")
        // A listing either server refuses is left out of the report, with the reason.
        var listings: [(TimedRequest, Transport)] = []
        for request in [TimedRequest.playlistInfo, .listAlbums] {
            var refusals: [String] = []
            var rows: [Int] = []
            for server in servers {
                let client = try MPDConnection(server.tcp)
                do {
                    let text = try client.command(String(decoding: request.bytes, as: UTF8.self))
                    rows.append(count(request.label == TimedRequest.playlistInfo.label ? "file: " : "Album: ", in: text))
                } catch { refusals.append("\(server.name): \(error)") }
            }
            if refusals.isEmpty {
                listings.append((request, .tcp))
                figures.listingRows.append(rows)
            } else {
                figures.refusedListings.append("\(request.label): " + refusals.joined(separator: "; "))
            }
        }
        if !listings.isEmpty {
            figures.listings = try timeRequests(
                listings, on: servers, rounds: options.listings, warmUp: options.listingWarmUp,
                batch: min(10, options.listings))
        }
        writeError("MPDBenchmark: idle wakes...\n")
        for transport in Transport.allCases {
            figures.wakes.append(try timeWakes(on: servers, transport: transport))
        }
        writeError("MPDBenchmark: memory with \(options.clients) idle clients...\n")
        figures.memory = try await measureMemory(of: servers)
        return figures
    }

    /// The queue: the library's first `queueLength` tracks by path, as URIs relative to the music
    /// folder (what mpd names them, and what the daemon's MPD face accepts).
    private func queueURIs(_ library: ScaleLibrary) throws -> [String] {
        var found: [String] = []
        func walk(_ relative: String) {
            let path = relative.isEmpty ? library.music : library.music + "/" + relative
            for name in (directoryEntries(path) ?? []).sorted() {
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard stat(library.music + "/" + child, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR {
                    walk(child)
                } else if name.hasSuffix(".ogg") {
                    found.append(child)
                }
            }
        }
        walk("")
        guard found.count >= options.queueLength else {
            throw BenchmarkFailure(description: "\(library.music) holds \(found.count) tracks, fewer than \(options.queueLength)")
        }
        return found.sorted().prefix(options.queueLength).map { $0 }
    }

    /// Replaces the server's queue with `uris` (one command list), plays the first and pauses it;
    /// waits until it says so.
    private func load(_ uris: [String], into client: MPDConnection, server: ServerUnderTest) throws {
        var request = "command_list_begin\nclear\n"
        for uri in uris { request += "add \"" + uri.replacingAll("\\", "\\\\").replacingAll("\"", "\\\"") + "\"\n" }
        request += "command_list_end\n"
        _ = try client.command(request)
        _ = try client.command("play 0\n")
        _ = try client.command("pause 1\n")
        for _ in 0..<500 {
            let status = try client.command("status\n")
            if value(of: "state", in: status) == "pause", value(of: "song", in: status) == "0" {
                guard value(of: "playlistlength", in: status) == String(uris.count) else {
                    throw BenchmarkFailure(description: "\(server.name) queued not \(uris.count) tracks:\n\(status)")
                }
                let song = try client.command("currentsong\n")
                guard value(of: "file", in: song) == uris[0] else {
                    throw BenchmarkFailure(description: "\(server.name)'s current song is not \(uris[0]):\n\(song)")
                }
                return
            }
            usleep(10_000)
        }
        throw BenchmarkFailure(description: "\(server.name) is not paused on its first track after 5 s")
    }

    /// Times each (request, transport) on each server: one connection per server and transport,
    /// batches of `batch` of one kind in turn, the order rotating every round.
    private func timeRequests(
        _ kinds: [(TimedRequest, Transport)], on servers: [ServerUnderTest], rounds: Int, warmUp: Int, batch: Int
    ) throws -> [MPDFigures.RoundTrips] {
        var connections: [Transport: [MPDConnection]] = [:]
        for transport in Set(kinds.map(\.1)) {
            connections[transport] = try servers.map { try MPDConnection($0.address(transport)) }
        }
        // Every (kind, server) pair as one kind of the interleaving.
        let pairs = kinds.indices.flatMap { kind in servers.indices.map { (kind, $0) } }
        func roundTrip(_ pair: Int) throws {
            let (kind, server) = pairs[pair]
            let (request, transport) = kinds[kind]
            let connection = connections[transport]![server]
            try connection.send(request.bytes)
            try connection.readResponses(request.responses)
        }
        // A wrong answer must not be timed: each kind's first answer is checked.
        for (kind, server) in pairs {
            let (request, transport) = kinds[kind]
            let text = try connections[transport]![server].command(
                String(decoding: request.bytes, as: UTF8.self), responses: request.responses)
            if request.label == TimedRequest.pipelined.label || request.label == TimedRequest.commandList.label {
                guard value(of: "state", in: text) == "pause", value(of: "file", in: text) != nil else {
                    throw BenchmarkFailure(description: "\(servers[server].name) answered \(request.label) with:\n\(text)")
                }
            }
        }
        for _ in 0..<warmUp {
            for pair in pairs.indices { try roundTrip(pair) }
        }
        var samples = pairs.map { _ in [UInt64]() }
        var round = 0
        while samples[0].count < rounds {
            let count = min(batch, rounds - samples[0].count)
            for offset in pairs.indices {
                let pair = (offset + round) % pairs.count
                for _ in 0..<count {
                    let start = monotonicNanoseconds()
                    try roundTrip(pair)
                    samples[pair].append(monotonicNanoseconds() - start)
                }
            }
            round += 1
        }
        // What each request costs the server: read from /proc around a run of its own, so that
        // the reads never fall between timed requests.
        var microseconds = pairs.map { _ in 0.0 }
        var switches = pairs.map { _ in 0.0 }
        let costed = max(1, min(rounds, 1_000))
        for pair in pairs.indices {
            let probe = ProcessProbe(pid: servers[pairs[pair].1].pid)
            let before = probe.sample()
            for _ in 0..<costed { try roundTrip(pair) }
            let window = ActivityWindow(from: before, to: probe.sample())
            microseconds[pair] = window.cpuMicroseconds / Double(costed)
            switches[pair] = Double(window.switches) / Double(costed)
        }
        return kinds.indices.map { kind in
            let indices = servers.indices.map { server in pairs.firstIndex { $0 == (kind, server) }! }
            return MPDFigures.RoundTrips(
                request: kinds[kind].0, transport: kinds[kind].1, samples: indices.map { samples[$0] },
                serverMicroseconds: indices.map { microseconds[$0] }, serverSwitches: indices.map { switches[$0] })
        }
    }

    /// Pause and resume by one connection, timed to the `changed: player` of another parked in
    /// `idle player`, alternating between the servers in batches. Before each command the idle
    /// client is given 2 ms to park; an idle that has already returned by then (a change left
    /// from the round before) is dropped and parked again, so that no wake is timed early.
    private func timeWakes(on servers: [ServerUnderTest], transport: Transport) throws -> MPDFigures.Wakes {
        let idlers = try servers.map { try MPDConnection($0.address(transport)) }
        let commanders = try servers.map { try MPDConnection($0.address(transport)) }
        let changedPlayer = Array("changed: player".utf8)
        let pause = Array("pause 1\n".utf8)
        let resume = Array("pause 0\n".utf8)
        var paused = servers.map { _ in true }
        var samples = servers.map { _ in [UInt64]() }
        var replies = servers.map { _ in [UInt64]() }
        var stale = servers.map { _ in 0 }
        var done = servers.map { _ in 0 }
        let total = options.wakeWarmUp + options.wakes
        func wake(_ server: Int) throws {
            let (idler, commander) = (idlers[server], commanders[server])
            var attempts = 0
            while true {
                try idler.send(Array("idle player\n".utf8))
                usleep(2_000)
                guard try idler.isReadable() else { break }
                try idler.readResponses()
                stale[server] += 1
                attempts += 1
                guard attempts < 100 else {
                    throw BenchmarkFailure(description: "\(servers[server].name) keeps reporting player changes with nothing changing")
                }
            }
            let start = monotonicNanoseconds()
            try commander.send(paused[server] ? resume : pause)
            var woken: UInt64?
            var replied: UInt64?
            while woken == nil || replied == nil {
                let ready = try MPDConnection.firstReadable([idler, commander].filter { $0 === idler ? woken == nil : replied == nil })
                if ready === idler {
                    woken = try idler.readResponse(timingLineContaining: changedPlayer)
                } else {
                    try commander.readResponses()
                    replied = commander.lastFillAt
                }
            }
            paused[server].toggle()
            if done[server] >= options.wakeWarmUp {
                samples[server].append(woken! - start)
                replies[server].append(replied! - start)
            }
            done[server] += 1
        }
        var round = 0
        while done.contains(where: { $0 < total }) {
            for offset in servers.indices {
                let server = (offset + round) % servers.count
                for _ in 0..<min(options.wakeBatch, total - done[server]) { try wake(server) }
            }
            round += 1
        }
        for server in servers.indices where !paused[server] { _ = try commanders[server].command("pause 1\n") }
        return MPDFigures.Wakes(transport: transport, samples: samples, replies: replies, stale: stale)
    }

    /// Each server's resident memory with no client of this benchmark's connected, then with
    /// `clients` connected over TCP, each greeted, having run `status` once and parked in `idle`;
    /// both read after a second's rest. The servers are measured one after the other.
    private func measureMemory(of servers: [ServerUnderTest]) async throws -> MPDFigures.Memory {
        var memory = MPDFigures.Memory(clients: options.clients, before: [], with: [])
        for server in servers {
            try await Task.sleep(for: .seconds(1))
            guard let before = server.memory() else { throw BenchmarkFailure(description: "\(server.name) is gone") }
            var clients: [MPDConnection] = []
            for _ in 0..<options.clients {
                let client = try MPDConnection(server.tcp)
                _ = try client.command("status\n")
                try client.send(Array("idle\n".utf8))
                clients.append(client)
            }
            try await Task.sleep(for: .seconds(1))
            guard let with = server.memory() else { throw BenchmarkFailure(description: "\(server.name) is gone") }
            // Every client still connected and parked: none was closed by a limit.
            for client in clients where try client.isReadable() {
                throw BenchmarkFailure(description: "\(server.name) answered or closed an idle client of \(options.clients)")
            }
            memory.before.append(before)
            memory.with.append(with)
            clients.removeAll()
        }
        return memory
    }

    private func count(_ prefix: String, in response: String) -> Int {
        response.split(separator: "\n").reduce(0) { $0 + ($1.hasPrefix(prefix) ? 1 : 0) }
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement`, without Foundation.
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
