import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing

// The daemon's output written into a named pipe (Snapcast's pipe stream, or any program
// reading raw PCM): the pipe must not lose its writer at track changes, or the reader sees
// end of file, closes, and a writer that reopened meanwhile writes into a pipe without a reader
// (the track fails and is skipped).
@Suite struct PipeOutputTests {
    @Test func trackChangesNeverLeaveThePipeWithoutAWriter() async throws {
        let pipes = try TemporaryDirectory(prefix: "pipe-output")
        defer { pipes.remove() }
        let fifo = pipes.path + "/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        try await DaemonFixture.with(arguments: ["--audio-sink", snapcastAudioSink(fifo: fifo)]) { daemon in
            let reader = try ChildProcess.spawn(PrivateBus.systemPython, [pythonScript("fifo_reader.py"), fifo])
            defer { reader.kill() }
            _ = try await reader.waitForLine { $0 == "started" }
            _ = try await daemon.playerctl("play")
            _ = try await reader.waitForLine { $0 == "data" }
            #expect(try await daemon.playerctl("metadata", "title") == "Tone 1")

            // Each change loads a new item: the pipeline goes to NULL and its filesink closes.
            for (command, title) in [("next", "Tone 2"), ("next", "Tone 3"), ("previous", "Tone 2"), ("previous", "Tone 1")] {
                _ = try await daemon.playerctl(command)
                let shown = try await eventually { try await daemon.playerctl("metadata", "title") == title }
                #expect(shown, "\(command) did not show \(title): \(daemon.process.capturedStdout)")
                #expect(try await daemon.playerctl("status") == "Playing")
            }

            kill(reader.pid, SIGUSR1)
            let report = try await reader.waitForLine { $0.hasPrefix("report") }
            #expect(report.hasPrefix("report eof=0 "), "the reader saw its writers go: \(reader.capturedStdout)")
        }
    }
}
