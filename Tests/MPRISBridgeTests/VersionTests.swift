import ProcessTestSupport
import Testing

/// `mpris-bridge --version` prints the version the Debian package is given: the one
/// `Scripts/package` reads from `Version.swift` (and checks against the changelog's top entry).
@Suite struct VersionTests {
    @Test func theBinaryPrintsTheVersionThePackageIsGiven() async throws {
        let printed = try await ChildProcess.run(daemonExecutable, ["--version"]).check()
        let packaged = try await ChildProcess.run(repositoryRoot + "/Scripts/package", ["--print-version"]).check()
        #expect(!packaged.stdout.isEmpty)
        #expect(printed.stdout == packaged.stdout, "binary: \(printed.stdout), package: \(packaged.stdout)")
    }
}
