import DBusTestSupport
import Foundation
import Glibc
import ProcessTestSupport
import Testing


// Rygel 0.42 as a real UPnP consumer of a MediaServer2 provider on a private bus: its External
// plugin turns every `org.gnome.UPnP.MediaServer2.*` name into a UPnP MediaServer, and a test
// browses that server over SOAP. Rygel runs only inside a network namespace that has nothing but
// loopback, so no UPnP traffic can leave the machine; the private bus listens on a unix path,
// which the namespace reaches like any file, so the bus and the provider stay outside it.

/// Why Rygel could not be run or asked.
enum RygelError: Error, CustomStringConvertible {
    /// A program the harness needs is not on PATH.
    case notInstalled(program: String, package: String)
    /// Rygel's output, when it never announced the provider.
    case providerNotSeen(provider: String, output: String, reason: String)
    /// No MediaServer answered the SSDP search inside the namespace.
    case notDiscovered(ProcessOutput)
    /// `upnp_browse.py` failed: a SOAP fault, a timeout or an unreadable answer.
    case requestFailed(ProcessOutput, rygelOutput: String)
    /// A listing line that is not DEPTH KIND ID PARENT CLASS TITLE CHILDCOUNT RES….
    case unreadableListing(String)

    var description: String {
        switch self {
        case .notInstalled(let program, let package):
            return "\(program) is not installed (package \(package)): run Scripts/setup"
        case .providerNotSeen(let provider, let output, let reason):
            return "Rygel never announced New plugin \(provider) (\(reason)); its output:\n\(output)"
        case .notDiscovered(let output):
            return "no MediaServer answered an SSDP search on loopback: \(output)"
        case .requestFailed(let output, let rygelOutput):
            return "\(output)\n--- Rygel ---\n\(rygelOutput)"
        case .unreadableListing(let line):
            return "unreadable listing line: \(line)"
        }
    }
}

/// One DIDL-Lite object of a ContentDirectory answer, as `upnp_browse.py` prints it.
struct DIDLObject: Sendable, Equatable, CustomStringConvertible {
    /// One `<res>`: how to get the object (`http-get:*:audio/ogg:…`, `internal:*:…`) and where.
    struct Resource: Sendable, Equatable {
        var protocolInfo: String
        var url: String
    }

    /// 0 for the children of the browsed object, one more for each container below.
    var depth: Int
    var isContainer: Bool
    /// The DIDL `id`: `0` for the provider's root, else the object's D-Bus path.
    var id: String
    var parentID: String
    /// `upnp:class`, e.g. `object.container` or `object.item.audioItem.musicTrack`.
    var upnpClass: String
    /// `dc:title`: the provider's `DisplayName`.
    var title: String
    /// A container's `childCount`; nil for items.
    var childCount: Int?
    var resources: [Resource]

    /// Parses one tab-separated listing line.
    init(listingLine line: String) throws {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 7, let depth = Int(fields[0]), ["container", "item"].contains(fields[1]) else {
            throw RygelError.unreadableListing(line)
        }
        self.depth = depth
        isContainer = fields[1] == "container"
        id = fields[2]
        parentID = fields[3]
        upnpClass = fields[4]
        title = fields[5]
        childCount = Int(fields[6])
        resources = try fields.dropFirst(7).map { field in
            guard let bar = field.firstIndex(of: "|") else { throw RygelError.unreadableListing(line) }
            return Resource(protocolInfo: String(field[..<bar]), url: String(field[field.index(after: bar)...]))
        }
    }

    /// The URL of the first resource whose protocolInfo starts with `scheme` (`http-get`, `internal`).
    func url(for scheme: String) -> String? {
        resources.first { $0.protocolInfo.hasPrefix(scheme + ":") }?.url
    }

    var description: String { "\(isContainer ? "container" : "item") \(id) \"\(title)\"" }
}

/// A running Rygel, alone in a loopback-only network namespace, serving one provider.
struct RygelSession: Sendable {
    /// Rygel's process id; its network namespace is `/proc/<pid>/ns/net`.
    var pid: Int32 { process.pid }
    /// The HTTP port Rygel serves on, inside the namespace.
    let port: Int
    /// The device description URL that the SSDP search found.
    let descriptionURL: String
    let process: ChildProcess

    /// Everything Rygel logged so far.
    var output: String { process.capturedStdout + process.capturedStderr }

    /// Runs a program to completion inside Rygel's network namespace.
    func runInNamespace(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30))
        async throws -> ProcessOutput
    {
        try await ChildProcess.run(
            "nsenter", ["--net=/proc/\(pid)/ns/net", executable] + arguments,
            environment: RygelSession.clientEnvironment, timeout: timeout)
    }

    /// `upnp_browse.py --location <descriptionURL> arguments…` inside the namespace; its stdout
    /// lines, or ``RygelError/requestFailed(_:rygelOutput:)``.
    func client(_ arguments: [String]) async throws -> [Substring] {
        let output = try await runInNamespace(
            PrivateBus.systemPython, [pythonScript("upnp_browse.py"), "--location", descriptionURL] + arguments)
        guard output.succeeded else { throw RygelError.requestFailed(output, rygelOutput: self.output) }
        return output.stdout.split(separator: "\n")
    }

    /// Browses the children of `id` (BrowseDirectChildren, `0` is the root), then every container
    /// below, depth first, one SOAP request per container and page; each request times out after
    /// 5 s (Rygel leaves some unanswered).
    func browse(from id: String = "0") async throws -> [DIDLObject] {
        try await client(["browse", id]).map { try DIDLObject(listingLine: String($0)) }
    }

    /// The object `id` itself (BrowseMetadata).
    func metadata(of id: String) async throws -> DIDLObject? {
        try await client(["metadata", id]).first.map { try DIDLObject(listingLine: String($0)) }
    }

    /// The objects below `id` that match `criteria`, e.g. `dc:title contains "x"` (Search).
    func search(in id: String = "0", _ criteria: String) async throws -> [DIDLObject] {
        try await client(["search", id, criteria]).map { try DIDLObject(listingLine: String($0)) }
    }

    /// GETs `url` inside the namespace into `file` and returns the HTTP status.
    func fetch(_ url: String, into file: String) async throws -> Int {
        let line = try await client(["fetch", url, file]).first ?? ""
        return Int(line.split(separator: " ").first ?? "") ?? 0
    }

    /// The environment of programs run inside the namespace: nothing of the test process but
    /// PATH, with the sbin folders (`ip` is in /usr/sbin, which a test runner's PATH may lack).
    static var clientEnvironment: [String: String] {
        ["PATH": searchPath + ":/usr/sbin:/sbin", "LANG": "C.UTF-8"]
    }
}

/// The HTTP port Rygel listens on. Every Rygel has a namespace of its own, so they can share it.
private let rygelPort = 8200

/// Rygel's configuration. Rygel 0.42 ignores `-c` and fills every key left out here from
/// `/etc/rygel.conf`, which shares the user's media on every interface: so every plugin but
/// External is disabled by name, and the general keys that matter are all set.
private func rygelConfiguration(port: Int) -> String {
    var text = """
        [general]
        interface=lo
        port=\(port)
        ipv6=false
        enable-transcoding=false
        allow-upload=false
        allow-deletion=false
        acl-fallback-policy=true
        media-engine=librygel-media-engine-gst.so
        log-level=*:4

        [External]
        enabled=true

        """
    for plugin in ["MediaExport", "Tracker", "Tracker3", "LMS", "Playbin", "GstLaunch", "MPRIS", "Ruih"] {
        text += "\n[\(plugin)]\nenabled=false\n"
    }
    return text
}

/// Starts Rygel on the bus at `address` in a fresh loopback-only network namespace, waits until
/// it announces the provider `org.gnome.UPnP.MediaServer2.<provider>` and answers an SSDP search,
/// runs `body`, and stops Rygel (SIGKILL to its process group, then reaped) even when `body`
/// throws. The namespace ends with Rygel, its last process.
///
/// The provider may be on the bus before or after Rygel starts. Rygel keeps its configuration,
/// cache and device descriptions in a temporary folder, removed at the end. Should the test
/// process die without stopping it, Rygel exits when its bus does (PrivateBus's watchdog kills the
/// bus).
///
/// Throws ``RygelError/notInstalled(program:package:)`` when rygel, unshare, nsenter or ip is
/// missing, so that a machine without them fails with the fix instead of passing.
func withRygel<Result>(
    bus address: String, provider: String, startupTimeout: Duration = .seconds(15),
    _ body: (RygelSession) async throws -> Result
) async throws -> Result {
    let rygel = try requireProgram("rygel", package: "rygel")
    for (program, package) in [("unshare", "util-linux"), ("nsenter", "util-linux"), ("ip", "iproute2")] {
        _ = try requireProgram(program, package: package)
    }
    let folder = try TemporaryDirectory(prefix: "rygel")
    defer { folder.remove() }
    for name in ["home", "config", "cache", "data", "runtime"] { mkdir(folder.path + "/" + name, 0o700) }
    try Data(rygelConfiguration(port: rygelPort).utf8).write(to: URL(filePath: folder.path + "/config/rygel.conf"))

    var environment = RygelSession.clientEnvironment
    environment["HOME"] = folder.path + "/home"
    environment["XDG_CONFIG_HOME"] = folder.path + "/config"
    environment["XDG_CACHE_HOME"] = folder.path + "/cache"
    environment["XDG_DATA_HOME"] = folder.path + "/data"
    environment["XDG_RUNTIME_DIR"] = folder.path + "/runtime"
    // The private bus for both, so that nothing reaches the machine's buses.
    environment["DBUS_SESSION_BUS_ADDRESS"] = address
    environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
    environment["GSETTINGS_BACKEND"] = "memory"
    // The GStreamer registry the other tests use: a fresh one costs Rygel 300 ms at each start.
    environment["GST_REGISTRY"] = sharedGStreamerRegistry()

    // unshare and sh exec, so the child is Rygel itself: its pid names the namespace, and its
    // log (on stderr) comes on stdout where the plugin line is awaited.
    let namespaceSetup = "ip link set lo up && ip link set lo multicast on && ip route add 239.0.0.0/8 dev lo"
    let process = try ChildProcess.spawn(
        "unshare",
        ["--net", "/bin/sh", "-c", namespaceSetup + " && exec \"$0\" \"$@\" 2>&1", rygel,
         "-n", "lo", "-p", "\(rygelPort)", "-d", "MediaExport"],
        environment: environment)
    do {
        let service = "org.gnome.UPnP.MediaServer2." + provider
        do {
            _ = try await process.waitForLine(timeout: startupTimeout) { line in
                line.contains("New plugin") && line.contains(service) && !followsAsNamePart(service, in: line)
            }
        } catch let error as ChildProcessError {
            throw RygelError.providerNotSeen(
                provider: service, output: process.capturedStdout + process.capturedStderr, reason: "\(error)")
        }
        let discovery = try await ChildProcess.run(
            "nsenter",
            ["--net=/proc/\(process.pid)/ns/net", PrivateBus.systemPython, pythonScript("upnp_browse.py"),
             "--port", "\(rygelPort)", "--timeout", "10", "discover"],
            environment: RygelSession.clientEnvironment)
        guard discovery.succeeded, let location = discovery.stdout.split(separator: "\n").first else {
            throw RygelError.notDiscovered(discovery)
        }
        let session = RygelSession(port: rygelPort, descriptionURL: String(location), process: process)
        let result = try await body(session)
        process.kill()
        _ = await process.waitForExit()
        return result
    } catch {
        process.kill()
        _ = await process.waitForExit()
        throw error
    }
}

/// The absolute path of `program` on PATH, or ``RygelError/notInstalled(program:package:)``.
private func requireProgram(_ program: String, package: String) throws -> String {
    for folder in (searchPath + ":/usr/sbin:/sbin").split(separator: ":") {
        let candidate = "\(folder)/\(program)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    throw RygelError.notInstalled(program: program, package: package)
}

/// The test process's PATH.
private var searchPath: String { getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin" }

/// True when `name` appears in `line` only as the start of a longer name (`…Stub` in `…Stub2`).
private func followsAsNamePart(_ name: String, in line: String) -> Bool {
    guard let range = line.range(of: name) else { return true }
    guard let next = line[range.upperBound...].first else { return false }
    return next.isLetter || next.isNumber || next == "_" || next == "."
}

/// GStreamer's default registry file for this user and machine: `$XDG_CACHE_HOME` (or
/// `~/.cache`) `/gstreamer-1.0/registry.<machine>.bin`.
private func sharedGStreamerRegistry() -> String {
    let cache = getenv("XDG_CACHE_HOME").map { String(cString: $0) }
        ?? (getenv("HOME").map { String(cString: $0) } ?? "/root") + "/.cache"
    var names = utsname()
    uname(&names)
    let machine = withUnsafeBytes(of: names.machine) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
    return "\(cache)/gstreamer-1.0/registry.\(machine).bin"
}
