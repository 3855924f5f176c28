// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "mpris-bridge",
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "DBusTestSupport", targets: ["DBusTestSupport"]),
        .library(name: "ProcessTestSupport", targets: ["ProcessTestSupport"]),
        .library(name: "TestMedia", targets: ["TestMedia"]),
        .library(name: "SoundServerTestSupport", targets: ["SoundServerTestSupport"]),
        .library(name: "MediaRemote", targets: ["MediaRemote"]),
        .library(name: "MPRIS", targets: ["MPRIS"]),
        .library(name: "MediaPlayer", targets: ["MediaPlayer"]),
        .library(name: "Playback", targets: ["Playback"]),
        .library(name: "GStreamerPlayback", targets: ["GStreamerPlayback"]),
        .library(name: "MusicLibrary", targets: ["MusicLibrary"]),
        .library(name: "AudioTags", targets: ["AudioTags"]),
        .library(name: "MPD", targets: ["MPD"]),
        .executable(name: "mpris-bridge", targets: ["mpris-bridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Without its Foundation trait: the test support (and the benchmarks' services, which use it)
        // then link no Foundation, whose mapped pages would count in the memory they measure.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2", traits: []),
        // `swift package generate-documentation`: the DocC catalogs of the library products.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // The MPD protocol's sockets (loopback TCP and a Unix socket).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // libdbus-1, imported through a shim header (see Sources/CDBus/shim.h).
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // A general Swift D-Bus library: values, connection, client, serving. Knows nothing of MPRIS.
        .target(name: "DBus", dependencies: ["AsyncSupport", "CDBus", "CMalloc"]),
        // Async building blocks every layer shares: an executor for work that blocks its thread.
        .target(name: "AsyncSupport"),
        .testTarget(name: "AsyncSupportTests", dependencies: ["AsyncSupport"]),
        // Apple's remote-command and now-playing model, in pure Swift: no D-Bus, no GStreamer.
        .target(name: "MediaRemote", dependencies: ["AsyncSupport"]),
        .testTarget(name: "MediaRemoteTests", dependencies: ["AsyncSupport", "MediaRemote"]),
        // MediaRemote's D-Bus face: MPRIS 2.2 and the project's extension interface.
        .target(name: "MPRIS", dependencies: ["AsyncSupport", "DBus", "MediaRemote", "Digest"]),
        // Apple's MediaPlayer API (MPRemoteCommandCenter, MPNowPlayingInfoCenter,
        // MPPlayableContentManager) for iOS apps ported to Linux: a skin over MediaRemote + MPRIS.
        .target(name: "MediaPlayer", dependencies: ["AsyncSupport", "DBus", "MPRIS", "MediaRemote"]),
        .testTarget(
            name: "MediaPlayerTests",
            dependencies: [
                "MediaPlayer", "DBus", "DBusTestSupport", "MediaRemote", "ProcessTestSupport",
                // The example app, started by the tests as a user starts it.
                "ios-audio-app-example",
            ],
            exclude: ["Python"]),
        // SHA-256 for content-addressed files (artwork cache, the library's image store).
        // GLib, for its checksums (SHA-256 names of cached images); already loaded with GStreamer.
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .target(name: "Digest", dependencies: ["CGLib"]),
        .testTarget(
            name: "MPRISTests", dependencies: ["MPRIS", "MediaRemote", "DBus", "DBusTestSupport", "ProcessTestSupport", "Digest"],
            exclude: ["Python"]),
        // The DBus documentation's ten-line service.
        .executableTarget(name: "counter-example", dependencies: ["DBus"], path: "Examples/CounterExample"),
        // The adoption example (README, MPRIS documentation): an in-memory player controlled over MPRIS.
        .executableTarget(
            name: "now-playing-example", dependencies: ["DBus", "MPRIS", "MediaRemote"],
            path: "Examples/NowPlayingExample"),
        // An iOS audio app's delegate, data source and command targets, compiled unchanged against
        // MediaPlayer; LinuxUIKit.swift stands in for what UIKit gives it on iOS.
        .executableTarget(
            name: "ios-audio-app-example", dependencies: ["MediaPlayer"], path: "Examples/iOSAudioApp",
            resources: [.copy("Artwork.png")]),
        // GStreamer core and the discoverer from plugins-base, imported through a shim header, and
        // loaded on first use: the binary does not link them (Sources/CGStreamer/Loader.c), so a
        // start maps none of their libraries. Their headers are found through include/gst, a link
        // to /usr/include/gstreamer-1.0/gst (libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev),
        // GLib's through CGLib.
        .target(name: "CGStreamer", dependencies: ["CGLib", "CLazyLoading"], linkerSettings: [.linkedLibrary("dl")]),
        // The trampolines' assembler macros, shared by the targets of libraries loaded on first use.
        .target(name: "CLazyLoading"),
        // SQLite 3, for the music library's persisted index.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The player of any engine, in pure Swift (no C, no GStreamer): the engine protocol, the
        // play queue, the player that drives an engine from the command centre, its saved state.
        .target(
            name: "Playback",
            dependencies: ["AsyncSupport", "MediaRemote", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "PlaybackTests", dependencies: ["AsyncSupport", "Playback", "MediaRemote"]),
        // The engine on GStreamer's playbin, and tag discovery.
        .target(
            name: "GStreamerPlayback",
            dependencies: ["AsyncSupport", "CGStreamer", "Playback", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "GStreamerPlaybackTests",
            dependencies: ["GStreamerPlayback", "Playback", "DBusTestSupport", "ProcessTestSupport", "TestMedia"],
            // The HTTP server the streaming tests run with /usr/bin/python3.
            exclude: ["Python"]),
        // TagLib (C++), behind a C header of the few calls made: Swift needs no C++ interop.
        // Loaded on first use, as GStreamer is (Sources/CTagLib/Loader.cpp): only a scan reads tags.
        .target(name: "CTagLib", dependencies: ["CLazyLoading"], linkerSettings: [.linkedLibrary("dl")]),
        // Reads and writes audio files' tags, length and pictures with TagLib.
        .target(name: "AudioTags", dependencies: ["CTagLib"]),
        .testTarget(name: "AudioTagsTests", dependencies: ["AudioTags", "ProcessTestSupport", "TestMedia"]),
        // A music folder's index: tracks, albums, artwork and playlists, persisted in SQLite. It
        // links no player: what reads the files TagLib cannot is given to it (the daemon's is GStreamer's).
        .target(
            name: "MusicLibrary",
            dependencies: ["AudioTags", "CSQLite", "Digest", "MediaRemote"]),
        .testTarget(
            name: "MusicLibraryTests",
            dependencies: [
                "AsyncSupport", "MusicLibrary", "AudioTags", "GStreamerPlayback", "MediaRemote", "ProcessTestSupport",
                "TestMedia",
                // The daemon's discoverer, GStreamer's, which the library is given for what TagLib cannot read.
                "mpris-bridge",
            ]),
        // The MPD protocol over the same player, queue and library: mpc, phone apps, AGL's media
        // backend, Home Assistant and Snapcast reach the daemon as they reach mpd.
        .target(
            name: "MPD",
            dependencies: [
                "AsyncSupport", "MediaRemote", "MusicLibrary", "Playback",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // A command runs where its session runs (the connection's event loop) until it waits
            // for something of another's (the player, the library's reads): no hop to Swift's
            // shared threads and back for each command.
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]),
        .testTarget(
            name: "MPDTests",
            dependencies: [
                "MPD", "AsyncSupport", "MediaRemote", "MusicLibrary", "Playback", "ProcessTestSupport", "TestMedia",
            ],
            exclude: ["Python"]),
        // glibc's malloc extensions, for the daemon to give freed memory back.
        .systemLibrary(name: "CMalloc"),
        // The daemon: indexes a music folder, plays it and serves it over MPRIS.
        .executableTarget(
            name: "mpris-bridge",
            dependencies: [
                "AsyncSupport", "CMalloc", "DBus", "MPD", "MPRIS", "MediaRemote", "GStreamerPlayback", "MusicLibrary",
                "Playback",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]),
        // The daemon end to end, driven by real clients on a private bus.
        .testTarget(
            name: "MPRISBridgeTests",
            dependencies: [
                "AudioTags", "DBus", "DBusTestSupport", "MusicLibrary", "Playback", "ProcessTestSupport",
                "SoundServerTestSupport", "TestMedia", "mpris-bridge",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Budgets.json is read from the checkout by path, as data the test holds the daemon to.
            exclude: ["Python", "Budgets.json"]),
        // Running programs from tests and benchmarks (swift-subprocess), and temporary folders.
        .target(
            name: "ProcessTestSupport",
            dependencies: ["AsyncSupport", .product(name: "Subprocess", package: "swift-subprocess")]),
        .testTarget(name: "ProcessTestSupportTests", dependencies: ["ProcessTestSupport"]),
        // Generated audio files for tests and benchmarks (gst-launch).
        .target(name: "TestMedia", dependencies: ["ProcessTestSupport"]),
        // A private PulseAudio per test (null sinks, role corking, level meters on the outputs).
        .target(name: "SoundServerTestSupport", dependencies: ["ProcessTestSupport"]),
        // A private dbus-daemon per test, which never outlives the test process.
        .target(
            name: "DBusTestSupport",
            dependencies: ["ProcessTestSupport", .product(name: "Subprocess", package: "swift-subprocess")]),
        .testTarget(name: "DBusTestSupportTests", dependencies: ["DBusTestSupport", "ProcessTestSupport"]),
        .testTarget(
            name: "DBusTests", dependencies: ["AsyncSupport", "DBus", "DBusTestSupport", "ProcessTestSupport"],
            // Python clients and services run by the tests with /usr/bin/python3.
            exclude: ["Python"]),
    ],
    swiftLanguageModes: [.v6]
)

// Every Swift target: existential types spelled `any`, and a module's members visible only where
// the module is imported (as the Swift server packages build).
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
    // The iOS example keeps Apple's spelling (`Error?`), as an iOS app has it.
    if target.name != "ios-audio-app-example" {
        target.swiftSettings! += [.enableUpcomingFeature("ExistentialAny")]
    }
}
