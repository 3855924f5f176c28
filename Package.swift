// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "mpris-bridge",
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "DBusTestSupport", targets: ["DBusTestSupport"]),
        .library(name: "MediaRemote", targets: ["MediaRemote"]),
        .library(name: "MPRIS", targets: ["MPRIS"]),
    ],
    targets: [
        // libdbus-1, imported through a shim header (see Sources/CDBus/shim.h).
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // A general Swift D-Bus library: values, connection, client, serving. Knows nothing of MPRIS.
        .target(name: "DBus", dependencies: ["CDBus"]),
        // Apple's remote-command and now-playing model, in pure Swift: no D-Bus, no GStreamer.
        .target(name: "MediaRemote"),
        .testTarget(name: "MediaRemoteTests", dependencies: ["MediaRemote"]),
        // MediaRemote's D-Bus face: MPRIS 2.2 and the project's extension interface.
        .target(name: "MPRIS", dependencies: ["DBus", "MediaRemote"]),
        .testTarget(
            name: "MPRISTests", dependencies: ["MPRIS", "MediaRemote", "DBus", "DBusTestSupport"],
            exclude: ["Python"]),
        // The README's ten-line service.
        .executableTarget(name: "counter-example", dependencies: ["DBus"], path: "Examples/CounterExample"),
        // The README's adoption example: an in-memory player controlled over MPRIS.
        .executableTarget(
            name: "now-playing-example", dependencies: ["DBus", "MPRIS", "MediaRemote"],
            path: "Examples/NowPlayingExample"),
        // Private bus fixture and real-client runners shared by every test target.
        .target(name: "DBusTestSupport"),
        .testTarget(name: "DBusTestSupportTests", dependencies: ["DBusTestSupport"]),
        .testTarget(
            name: "DBusTests", dependencies: ["DBus", "DBusTestSupport"],
            // Python clients and services run by the tests with /usr/bin/python3.
            exclude: ["Python"]),
    ],
    swiftLanguageModes: [.v6]
)
