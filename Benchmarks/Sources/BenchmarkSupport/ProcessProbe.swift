import Glibc
import ProcessTestSupport

/// What `/proc` tells about another process, read without disturbing it: memory, CPU time,
/// context switches per thread, child processes and which mappings hold its resident memory.
public struct ProcessProbe: Sendable {
    public let pid: Int32

    public init(pid: Int32) { self.pid = pid }

    /// Resident memory from `/proc/PID/status` (``ResidentMemory``) and `smaps_rollup`, in kB.
    public struct Memory: Sendable {
        /// Resident now (`VmRSS`).
        public var resident = 0
        /// The peak resident set (`VmHWM`).
        public var peak = 0
        /// Anonymous memory (heap, stacks, `mmap` without a file): `RssAnon`.
        public var anonymous = 0
        /// Pages of mapped files (code and data of the executable and its libraries): `RssFile`.
        public var file = 0
        /// Proportional set size (`/proc/PID/smaps_rollup` `Pss`): shared pages divided among
        /// the processes that map them.
        public var proportional = 0
        /// Pages no other process maps (`Private_Clean + Private_Dirty`): what this process alone costs.
        public var unshared = 0
        public var threads = 0

        public init() {}

        public var json: JSON {
            .object([
                ("vmRSSKilobytes", .integer(resident)), ("vmHWMKilobytes", .integer(peak)),
                ("rssAnonKilobytes", .integer(anonymous)), ("rssFileKilobytes", .integer(file)),
                ("pssKilobytes", .integer(proportional)), ("privateKilobytes", .integer(unshared)),
                ("threads", .integer(threads)),
            ])
        }
    }

    /// One thread's counters.
    public struct ThreadSample: Sendable {
        public var id: Int32
        public var name: String
        public var voluntarySwitches: Int
        public var involuntarySwitches: Int
        /// Time on a CPU (`/proc/PID/task/TID/schedstat`), in nanoseconds.
        public var cpuNanoseconds: UInt64
        /// Where the thread sleeps (`/proc/PID/task/TID/wchan`): `do_epoll_wait` is libdispatch's
        /// manager thread (its timers and file descriptors), `futex_do_wait` a worker or a lock.
        public var waitChannel: String

        /// libdispatch's manager thread, the only thread of the daemon that waits in epoll. On
        /// Linux it runs the workqueue's pool monitor, a 1 Hz timer, for as long as the process
        /// lives (swift-corelibs-libdispatch, `_dispatch_workq_monitor_pools`).
        public var isDispatchManager: Bool { waitChannel == "do_epoll_wait" }
    }

    /// Every thread's counters and the process's CPU clock ticks at one moment.
    public struct Sample: Sendable {
        public var threads: [ThreadSample]
        /// `utime + stime` from `/proc/PID/stat`, in clock ticks (threads that ended included).
        public var cpuTicks: Int
        public var taken: UInt64
    }

    /// Resident memory now, nil if the process is gone.
    public func memory() -> Memory? {
        guard let status = ResidentMemory(pid: pid) else { return nil }
        var memory = Memory()
        memory.resident = status.resident
        memory.peak = status.peak
        memory.anonymous = status.anonymous
        memory.file = status.file
        memory.threads = status.threads
        for line in (readWholeFile("/proc/\(pid)/smaps_rollup") ?? "").split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            switch parts[0] {
            case "Pss": memory.proportional = value
            case "Private_Clean", "Private_Dirty": memory.unshared += value
            default: break
            }
        }
        return memory
    }

    public func sample() -> Sample {
        var threads: [ThreadSample] = []
        for thread in threadIDs() {
            let base = "/proc/\(pid)/task/\(thread)"
            guard let status = readWholeFile(base + "/status") else { continue }
            var voluntary = 0
            var involuntary = 0
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") {
                    voluntary = Int(line.split(separator: "\t").last ?? "") ?? 0
                } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    involuntary = Int(line.split(separator: "\t").last ?? "") ?? 0
                }
            }
            let name = readWholeFile(base + "/comm").map { String($0.prefix { $0 != "\n" }) } ?? "?"
            let cpu = readWholeFile(base + "/schedstat").flatMap { $0.split(separator: " ").first }.flatMap {
                UInt64($0)
            }
            let waitChannel = readWholeFile(base + "/wchan").map { String($0.prefix { $0 != "\n" }) } ?? ""
            threads.append(
                ThreadSample(
                    id: thread, name: name, voluntarySwitches: voluntary, involuntarySwitches: involuntary,
                    cpuNanoseconds: cpu ?? 0, waitChannel: waitChannel))
        }
        return Sample(threads: threads, cpuTicks: cpuTicks(), taken: monotonicNanoseconds())
    }

    /// `utime + stime` of the whole process, in clock ticks.
    public func cpuTicks() -> Int {
        guard let text = readWholeFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return 0 }
        // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    /// The processes whose parent is this one (the daemon's scan child), from every `/proc/N/stat`.
    public func children() -> [Int32] {
        var result: [Int32] = []
        for name in directoryEntries("/proc") ?? [] {
            guard let candidate = Int32(name),
                let text = readWholeFile("/proc/\(candidate)/stat"), let close = text.lastIndex(of: ")")
            else { continue }
            let fields = text[text.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == pid { result.append(candidate) }
        }
        return result
    }

    /// Resident kB by mapping (`/proc/PID/smaps`): each file by its name, anonymous memory as
    /// `[heap]`, `[stack]` or `[anonymous]`, largest first.
    public func residentByMapping() -> [(name: String, kilobytes: Int)] {
        guard let text = readWholeFile("/proc/\(pid)/smaps") else { return [] }
        var totals: [String: Int] = [:]
        var current = "[anonymous]"
        for line in text.split(separator: "\n") {
            let firstField = line.prefix { $0 != " " }
            if firstField.contains("-"), firstField.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                // A mapping's header: address perms offset dev inode [path]
                let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
                let path = fields.count >= 6 ? fields[5].trimmingLeadingSpaces : ""
                if path.isEmpty {
                    current = "[anonymous]"
                } else {
                    current = path.hasPrefix("/") ? String(path.split(separator: "/").last ?? "") : String(path)
                }
            } else if line.hasPrefix("Rss:") {
                let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
                totals[current, default: 0] += value
            }
        }
        return totals.filter { $0.value > 0 }.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
    }

    private func threadIDs() -> [Int32] {
        (directoryEntries("/proc/\(pid)/task") ?? []).compactMap { Int32($0) }.sorted()
    }
}

/// What changed between two samples of a process.
public struct ActivityWindow: Sendable {
    public struct ThreadActivity: Sendable {
        public var id: Int32
        public var name: String
        public var switches: Int
        public var cpuMicroseconds: Double
        public var isDispatchManager: Bool
    }

    public var seconds: Double
    public var cpuTicks: Int
    public var cpuMicroseconds: Double
    public var voluntarySwitches: Int
    public var involuntarySwitches: Int
    public var switches: Int { voluntarySwitches + involuntarySwitches }
    /// Threads that switched or ran, by most switches; threads that appeared count from zero.
    public var activeThreads: [ThreadActivity]
    public var threadCount: Int
    /// Threads of the first sample gone by the second (idle libdispatch workers exit after a while).
    public var endedThreads: Int
    /// Switches of every thread but libdispatch's manager: the daemon's own wake-ups.
    public var switchesBesidesDispatchManager: Int {
        activeThreads.filter { !$0.isDispatchManager }.reduce(0) { $0 + $1.switches }
    }

    public init(from start: ProcessProbe.Sample, to end: ProcessProbe.Sample) {
        seconds = Double(end.taken - start.taken) / 1e9
        cpuTicks = end.cpuTicks - start.cpuTicks
        let before = Dictionary(start.threads.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var voluntary = 0
        var involuntary = 0
        var cpu: UInt64 = 0
        var active: [ThreadActivity] = []
        for thread in end.threads {
            let old = before[thread.id]
            let addedVoluntary = thread.voluntarySwitches - (old?.voluntarySwitches ?? 0)
            let addedInvoluntary = thread.involuntarySwitches - (old?.involuntarySwitches ?? 0)
            let addedCPU = thread.cpuNanoseconds - min(thread.cpuNanoseconds, old?.cpuNanoseconds ?? 0)
            voluntary += addedVoluntary
            involuntary += addedInvoluntary
            cpu += addedCPU
            if addedVoluntary + addedInvoluntary > 0 || addedCPU > 0 {
                active.append(
                    ThreadActivity(
                        id: thread.id, name: thread.name, switches: addedVoluntary + addedInvoluntary,
                        cpuMicroseconds: Double(addedCPU) / 1000, isDispatchManager: thread.isDispatchManager))
            }
        }
        voluntarySwitches = voluntary
        involuntarySwitches = involuntary
        cpuMicroseconds = Double(cpu) / 1000
        activeThreads = active.sorted { $0.switches > $1.switches }
        threadCount = end.threads.count
        let remaining = Set(end.threads.map(\.id))
        endedThreads = start.threads.filter { !remaining.contains($0.id) }.count
    }

    public var json: JSON {
        .object([
            ("seconds", .number(seconds)), ("cpuTicks", .integer(cpuTicks)),
            ("cpuMicroseconds", .number(cpuMicroseconds)), ("voluntaryContextSwitches", .integer(voluntarySwitches)),
            ("involuntaryContextSwitches", .integer(involuntarySwitches)),
            ("switchesBesidesDispatchManager", .integer(switchesBesidesDispatchManager)),
            ("threads", .integer(threadCount)), ("endedThreads", .integer(endedThreads)),
            (
                "activeThreads",
                .array(
                    activeThreads.map {
                        .object([
                            ("tid", .integer(Int($0.id))), ("name", .string($0.name)), ("switches", .integer($0.switches)),
                            ("cpuMicroseconds", .number($0.cpuMicroseconds)),
                            ("dispatchManager", .bool($0.isDispatchManager)),
                        ])
                    })
            ),
        ])
    }
}

extension Substring {
    fileprivate var trimmingLeadingSpaces: Substring { drop { $0 == " " } }
}

