// swift-tools-version: 6.0
// The benchmark commands for the D-Bus layer, the MPRIS service, the media tree and the daemon: run them with Scripts/benchmark.
// A separate package so that the root package's `swift build` and `swift test` never build it.
import PackageDescription

let package = Package(
    name: "Benchmarks",
    dependencies: [
        // Named explicitly: a path dependency's identity would otherwise be the checkout's folder name.
        .package(name: "mpris-bridge", path: ".."),
        // Allocation counting: libMallocInterposerSwift.so, preloaded with LD_PRELOAD by Scripts/benchmark.
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        // The benchmarks' command lines; the same requirement as the root package's.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // What the benchmarks share: CPU pinning and CPU time, the private bus and service child,
        // interleaved timing, percentiles, the report's formatting and JSON, the daemon started on
        // a private bus and what /proc tells about it, files for generated media and the
        // generated library of tagged tracks (ScaleLibrary).
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
                .product(name: "AudioTags", package: "mpris-bridge"),
            ]
        ),
        // The D-Bus layer: round trips, signal throughput, allocations.
        .executableTarget(
            name: "DBusBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
        // The daemon in a real audio session (a private PulseAudio): call -> Paused latency, the
        // gap of an output switch while playing.
        .executableTarget(
            name: "AudioSessionBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "SoundServerTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
            ]
        ),
        // The MPRIS service: GetAll(Player) against the bus floor from the library's own
        // client and from python3-dbus (Python/mpris_roundtrips.py), PlayPause -> PropertiesChanged latency.
        .executableTarget(
            name: "MPRISBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
                .product(name: "MediaRemote", package: "mpris-bridge"),
                .product(name: "MPRIS", package: "mpris-bridge"),
            ]
        ),
        // What Apple's MediaPlayer API adds over MediaRemote: GetAll and PlayPause -> PropertiesChanged
        // of an iOS-style app beside a native one, as ratios.
        .executableTarget(
            name: "MediaPlayerBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "MediaRemote", package: "mpris-bridge"),
                .product(name: "MPRIS", package: "mpris-bridge"),
                .product(name: "MediaPlayer", package: "mpris-bridge"),
            ]
        ),
        // The media tree (MediaServer2): a page of 100 from a 10,000-child container, a walk of a
        // 10,000-track LibraryContent tree, and a batch changing every title -> Updated signals.
        .executableTarget(
            name: "MediaTreeBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
                .product(name: "MediaRemote", package: "mpris-bridge"),
                .product(name: "MPRIS", package: "mpris-bridge"),
                .product(name: "MusicLibrary", package: "mpris-bridge"),
            ]
        ),
        // The mpris-bridge daemon, its release build run as a user runs it: indexing,
        // exec -> bus name and ready, memory idle and playing, idle wake-ups, play -> first buffer.
        .executableTarget(
            name: "DaemonBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
                .product(name: "GStreamerPlayback", package: "mpris-bridge"),
            ]
        ),
        // The daemon's MPD face beside the real mpd 0.23 on the same generated library, with one
        // socket client for both: status + currentsong round trips, listings, idle wakes, memory
        // with 100 idle clients.
        .executableTarget(
            name: "MPDBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
            ]
        ),
        // The daemon beside its peers (VLC, mpd + mpDris2, Mopidy + mopidy-mpris, mpv + mpv-mpris),
        // each in turn on one private bus and one private PulseAudio, measured by the same client:
        // exec -> bus name, GetAll/Ping, PlayPause -> signal, RSS paused, CPU and context switches
        // while playing, the sound server's CPU, PlayPause bursts.
        .executableTarget(
            name: "PeerBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "SoundServerTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
            ]
        ),
        // libdbus-1 for the C clients below.
        .systemLibrary(name: "CLibDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // A head unit's walk of the media tree with as little client work as libdbus allows (C), so
        // that ScaleBenchmark's walk time is the service's and the bus's, one call at a time or
        // several in flight.
        .executableTarget(name: "WalkClient", dependencies: ["CLibDBus"]),
        // A desktop shell watching a player (C, libdbus, a process of its own): when each
        // PlaybackStatus change reaches a client that sent no call, for PeerBenchmark.
        .executableTarget(name: "SignalWatcher", dependencies: ["CLibDBus"]),
        // GIO's GDBus for the C client below (libglib2.0-dev, which the package needs already).
        .systemLibrary(name: "CGio", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // A desktop shell's media widget clicked (C, GDBus from a main loop): PlayPause → the
        // PlaybackStatus signal at a caller built on the client library most of a desktop uses.
        .executableTarget(name: "ShellCaller", dependencies: ["CGio"]),
        // The daemon on a large generated library (50,000 tracks by default): indexing, start and
        // restart, memory, a head unit's walk of the tree, search, track changes, added files.
        .executableTarget(
            name: "ScaleBenchmark",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AudioTags", package: "mpris-bridge"),
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "ProcessTestSupport", package: "mpris-bridge"),
                .product(name: "TestMedia", package: "mpris-bridge"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// As in the root package: existential types spelled `any`, members visible only where their
// module is imported.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
