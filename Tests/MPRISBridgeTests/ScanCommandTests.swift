import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// `mpris-bridge scan`, the daemon's rescan child: the index reads with TagLib and is given
/// GStreamer's discoverer only for what TagLib cannot read, so a scan of files TagLib reads
/// never starts GStreamer (whose start-up loads its plugin registry, a cost per rescan).
@Suite(.timeLimit(.minutes(1))) struct ScanCommandTests {
    @Test func aScanOfFilesTagLibReadsNeverStartsGStreamer() async throws {
        let library = try await GeneratedLibrary.make(seconds: 1)
        defer { library.remove() }
        // GStreamer writes its registry where this says as it starts (the file is new here):
        // whether the file exists tells whether the child started GStreamer.
        let registry = library.folder.path + "/gstreamer-registry.bin"
        var environment = ProcessInfo.processInfo.environment
        environment["GST_REGISTRY"] = registry
        func scan() async throws -> String {
            let output = try await ChildProcess.run(
                daemonExecutable,
                ["scan", "--no-notify", "--library", library.path, "--cache-dir", library.folder.path + "/cache"],
                environment: environment)
            #expect(output.status == 0, "\(output)")
            return output.stdout
        }

        #expect(try await scan().contains(": 3 tracks,"))
        #expect(access(registry, F_OK) != 0, "the scan started GStreamer")

        // Vorbis in Matroska, which TagLib has no reader for: now GStreamer reads it.
        try await ChildProcess.run(
            "gst-launch-1.0",
            [
                "-q", "audiotestsrc", "num-buffers=10", "!", "audioconvert", "!", "vorbisenc", "!", "matroskamux", "!",
                "filesink", "location=\(library.path)/Artist/Generated/04 Tone 4.mka",
            ], timeout: .seconds(60)
        ).check()
        #expect(try await scan().contains(": 4 tracks,"))
        #expect(access(registry, F_OK) == 0, "the discoverer did not start GStreamer")
    }
}
