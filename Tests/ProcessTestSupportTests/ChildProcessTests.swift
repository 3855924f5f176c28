import Glibc
import ProcessTestSupport
import Testing

/// Number of open descriptors of the test process.
func openDescriptorCount() -> Int {
    guard let entries = directoryEntries("/proc/self/fd") else { return -1 }
    return entries.count - 1  // the directory stream's own descriptor
}

@Suite("ChildProcess", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    @Test func runCapturesStdoutStderrAndExitStatus() async throws {
        let output = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(output.status == 3)
        #expect(output.stdout == "out\n")
        #expect(output.stderr == "err\n")
        #expect(!output.succeeded)
    }

    @Test func checkThrowsWithCommandStatusAndStderr() async throws {
        let output = try await ChildProcess.run("/bin/sh", ["-c", "echo broken pipe dream >&2; exit 3"])
        let error = #expect(throws: ChildProcessError.self) { try output.check() }
        let description = String(describing: try #require(error))
        #expect(description.contains("/bin/sh -c 'echo broken pipe dream >&2; exit 3'"))
        #expect(description.contains("status 3"))
        #expect(description.contains("broken pipe dream"))

        let success = try await ChildProcess.run("/bin/sh", ["-c", "echo fine"])
        #expect(try success.check().stdout == "fine\n")
    }

    @Test func runFindsExecutableInPATHOfTheGivenEnvironment() async throws {
        let output = try await ChildProcess.run(
            "env", [], environment: ["PATH": "/usr/bin:/bin", "GREETING": "hello world"])
        // The environment is exactly the one given.
        #expect(output.stdout.split(separator: "\n").sorted() == ["GREETING=hello world", "PATH=/usr/bin:/bin"])
    }

    @Test func runThrowsForMissingExecutable() async throws {
        let error = await #expect(throws: ChildProcessError.self) {
            try await ChildProcess.run("no-such-command-xyz", [])
        }
        guard case .executableNotFound(let name, _) = try #require(error) else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(name == "no-such-command-xyz")
    }

    @Test func runFeedsInputToStdin() async throws {
        let small = try await ChildProcess.run("cat", [], input: "line 1\nline 2\n")
        #expect(small.stdout == "line 1\nline 2\n")

        // Larger than any pipe buffer in both directions: needs concurrent writing and reading.
        let line = String(repeating: "0123456789abcdef", count: 63) + "\n"
        let big = String(repeating: line, count: 1024)
        let output = try await ChildProcess.run("cat", [], input: big)
        #expect(output.stdout.utf8.count == big.utf8.count)
        #expect(output.stdout == big)
    }

    @Test func childStartsWithNoBlockedOrIgnoredSignals() async throws {
        // Swift test worker threads block SIGTERM and SIGCHLD; children must not inherit that.
        let status = try await ChildProcess.run("cat", ["/proc/self/status"]).check().stdout
        func mask(_ field: String) -> UInt64? {
            let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":\t") }
            return line.flatMap { UInt64($0.dropFirst(field.count + 2), radix: 16) }
        }
        #expect(mask("SigBlk") == 0)
        // Signals 1...31 only: glibc's posix_spawn leaves its own internal signals 32 and 33
        // ignored, on purpose.
        #expect(try #require(mask("SigIgn")) & 0x7fff_ffff == 0)

        let terminated = try await ChildProcess.run("/bin/sh", ["-c", "kill -TERM $$; echo survived"])
        #expect(terminated.status == 128 + SIGTERM)
        #expect(terminated.stdout == "")
    }

    @Test func timeoutKillsChildAndReportsCapturedOutput() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: ChildProcessError.self) {
            try await ChildProcess.run(
                "/bin/sh", ["-c", "echo started; echo warming up >&2; exec sleep 30"],
                timeout: .seconds(1))
        }
        // By the timeout, not after the child's 30 s: a loaded machine may take seconds more.
        #expect(clock.now - start < .seconds(15))
        guard case .timedOut(_, let pid, _, let stdout, let stderr) = try #require(error) else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(stdout == "started\n")
        #expect(stderr == "warming up\n")
        #expect(processIsGone(pid))
    }

    @Test func timeoutAlsoKillsWhatTheChildStarted() async throws {
        // The background sleep keeps stdout open, so only killing the process group ends this.
        let error = await #expect(throws: ChildProcessError.self) {
            try await ChildProcess.run("/bin/sh", ["-c", "sleep 30 & echo $!; wait"], timeout: .seconds(1))
        }
        guard case .timedOut(_, let pid, _, let stdout, _) = try #require(error) else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(processIsGone(pid))
        let sleeper = try #require(Int32(stdout.split(separator: "\n").first ?? ""))
        // Its parent died with it, so it may linger as a zombie of pid 1; it must not run.
        #expect(await processEnds(sleeper))
    }

    @Test func spawnDeliversStdoutLinesAsTheyArrive() async throws {
        // The second line depends on input sent after the first line was received.
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "echo first; read reply; echo \"second $reply\"; printf tail"])
        var lines = child.stdoutLines.makeAsyncIterator()
        #expect(await lines.next() == "first")
        child.write("hello\n")
        #expect(await lines.next() == "second hello")
        #expect(await lines.next() == "tail")
        #expect(await lines.next() == nil)
        #expect(await child.waitForExit() == 0)
        #expect(processIsGone(child.pid))
    }

    @Test func closeStdinDeliversEndOfFile() async throws {
        let child = try ChildProcess.spawn("cat", [])
        child.write("echoed\n")
        #expect(try await child.waitForLine { $0 == "echoed" } == "echoed")
        child.closeStdin()
        #expect(try await child.waitForExit(timeout: .seconds(10)) == 0)
        child.write("ignored after close\n")  // must neither crash nor raise SIGPIPE
    }

    @Test func killStopsSpawnedChildByPid() async throws {
        let child = try ChildProcess.spawn("sleep", ["30"])
        #expect(!processIsGone(child.pid))
        child.kill()
        #expect(await child.waitForExit() == 128 + SIGKILL)
        #expect(processIsGone(child.pid))
        child.kill()  // idempotent, and must not signal a reused pid
        #expect(await child.waitForExit() == 128 + SIGKILL)
    }

    @Test func writingToAChildThatExitedDoesNotCrash() async throws {
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "exec 0<&-; echo closed; sleep 1"])
        _ = try await child.waitForLine { $0 == "closed" }
        child.write(String(repeating: "x", count: 200_000))  // EPIPE on the pump thread, no SIGPIPE
        #expect(try await child.waitForExit(timeout: .seconds(10)) == 0)
    }

    @Test func waitForLineTimesOutAndKills() async throws {
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "echo not it; exec sleep 30"])
        let error = await #expect(throws: ChildProcessError.self) {
            try await child.waitForLine(timeout: .seconds(1)) { $0 == "never printed" }
        }
        guard case .timedOut(_, _, _, let stdout, _) = try #require(error) else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(stdout == "not it\n")
        #expect(processIsGone(child.pid))
    }

    @Test func waitForLineReportsEndOfOutput() async throws {
        let child = try ChildProcess.spawn("/bin/sh", ["-c", "echo one; echo two"])
        let error = await #expect(throws: ChildProcessError.self) {
            try await child.waitForLine { $0 == "three" }
        }
        guard case .outputEnded(_, _, let stdout, _) = try #require(error) else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(stdout == "one\ntwo\n")
        #expect(await child.waitForExit() == 0)
    }

    @Test func waitForExitTimeoutKills() async throws {
        let child = try ChildProcess.spawn("sleep", ["30"])
        await #expect(throws: ChildProcessError.self) {
            try await child.waitForExit(timeout: .milliseconds(200))
        }
        #expect(processIsGone(child.pid))
    }

    @Test func releasingASpawnedChildKillsIt() async throws {
        // The child holds the write end of a FIFO; the watcher sees end of file when it dies.
        let directory = try TemporaryDirectory(prefix: "child-process-test")
        defer { directory.remove() }
        let fifo = directory.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let watcher = try ChildProcess.spawn("/bin/sh", ["-c", "cat \"$0\" >/dev/null; echo gone", fifo])
        var child: ChildProcess? = try ChildProcess.spawn("/bin/sh", ["-c", "exec 3>\"$0\"; echo ready; exec sleep 30", fifo])
        let pid = try #require(child?.pid)
        _ = try await child?.waitForLine { $0 == "ready" }
        #expect(!processIsGone(pid))
        child = nil
        #expect(try await watcher.waitForLine(timeout: .seconds(10)) { $0 == "gone" } == "gone")
    }
}

/// The process's descriptors are counted whole, so this runs alone (`Scripts/test` runs suites
/// named `…AloneTests` after the others, one test at a time): beside the other suites, whose
/// servers and clients open descriptors in the same process, it once counted 1,445 more after
/// than before.
@Suite(.timeLimit(.minutes(1)))
struct ChildProcessAloneTests {
    @Test func manyRunsLeakNoDescriptors() async throws {
        let before = openDescriptorCount()
        for index in 0..<300 {
            let output = try await ChildProcess.run("/bin/sh", ["-c", "echo $0"], input: index.isMultiple(of: 2) ? "in" : nil)
            #expect(output.status == 0)
        }
        for _ in 0..<100 {
            let child = try ChildProcess.spawn("sleep", ["30"])
            child.kill()
            _ = await child.waitForExit()
        }
        let after = openDescriptorCount()
        // Each child uses 8 descriptors while it runs; leaking even one on one path of the
        // above would show at least 100.
        #expect(before > 0)
        #expect(after - before < 100, "descriptors before: \(before), after: \(after)")
    }
}
