// swift-tools-version: 6.0
// The benchmark command for the D-Bus layer: run it with Scripts/benchmark.
// A separate package so that the root package's `swift build` and `swift test` never build it.
import PackageDescription

let package = Package(
    name: "Benchmarks",
    dependencies: [
        // Named explicitly: a path dependency's identity would otherwise be the checkout's folder name.
        .package(name: "mpris-bridge", path: ".."),
        // Allocation counting: libMallocInterposerSwift.so, preloaded with LD_PRELOAD by Scripts/benchmark.
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        .executableTarget(
            name: "DBusBenchmark",
            dependencies: [
                .product(name: "DBus", package: "mpris-bridge"),
                .product(name: "DBusTestSupport", package: "mpris-bridge"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
