// swift-tools-version: 6.2
import PackageDescription

/// The same Swift settings for every target: Swift 6 mode with strict concurrency, and
/// `any` spelled out for existentials.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Courier",
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .library(name: "CourierPostgres", targets: ["CourierPostgres"]),
        .executable(name: "courier", targets: ["courier"]),
        .executable(name: "courier-bench", targets: ["courier-bench"]),
    ],
    targets: [
        .target(name: "Courier", dependencies: ["CCourierPlatformFixes", "CourierSupport"], swiftSettings: swiftSettings),
        // What the library, the test server and the command lines share (the lock box, JSON
        // strings), as `package` symbols: visible to this package's targets only (Docs/PublicAPI.md).
        .target(name: "CourierSupport", swiftSettings: swiftSettings),
        // The platform kit: C wrappers put in front of FoundationNetworking's libcurl calls
        // (Docs/PlatformFixes.md). Part of the Courier product; no libcurl headers needed.
        .target(name: "CCourierPlatformFixes"),
        .target(name: "CourierTestServer", dependencies: ["CourierSupport"], swiftSettings: swiftSettings),
        // The download queue's PostgreSQL store (Docs/DownloadQueue.md, "A fleet"): libpq is bound at
        // run time with dlopen, so building needs no libpq and no package beyond the toolchain.
        .target(name: "CourierPostgres", dependencies: ["Courier", "CourierSupport"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "courier",
            dependencies: ["Courier", "CourierPostgres", "CourierTestServer", "CourierSupport"],
            swiftSettings: swiftSettings
        ),
        // Benchmarks Courier against a raw delegate-based URLSession; meant to be built in release.
        .executableTarget(
            name: "courier-bench",
            // The test server is the capped server of `segmented`.
            dependencies: ["Courier", "CourierTestServer", "CourierSupport"],
            swiftSettings: swiftSettings
        ),
        // Test-only commands the tests run as child processes (the journal's append loop; the network
        // monitor, waiting requests and the queue inside a network namespace the test made; a fleet worker).
        // Not a product: the shipped `courier` has no hidden test command (Docs/PublicAPI.md).
        .executableTarget(
            name: "courier-test-hooks",
            dependencies: ["Courier", "CourierPostgres", "CourierTestServer", "CourierSupport"],
            swiftSettings: swiftSettings
        ),
        // Small helpers the test targets share (a thread-safe box and counter, a seeded generator).
        .target(name: "CourierTestSupport", path: "Tests/CourierTestSupport", swiftSettings: swiftSettings),
        // The library's tests, in folders named as Sources/Courier's. The journal's crash tests
        // run `courier-test-hooks` as a child process; the reachability tests run it and `courier`
        // inside network namespaces they make.
        .testTarget(
            name: "CourierTests",
            dependencies: ["Courier", "CourierSupport", "CourierTestServer", "CourierTestSupport", "courier-test-hooks", "courier"],
            swiftSettings: swiftSettings
        ),
        // The `courier` command's tests: its pure parts (option parsing, progress formatting)
        // through `@testable import courier`, and the built executable run as people run it.
        .testTarget(
            name: "CourierCLITests",
            dependencies: ["Courier", "CourierSupport", "CourierTestServer", "CourierTestSupport", "courier"],
            swiftSettings: swiftSettings
        ),
        // `courier-bench`'s tests: option parsing, RESULT lines, and the built executable.
        .testTarget(
            name: "CourierBenchTests",
            dependencies: ["Courier", "CourierSupport", "CourierTestServer", "courier-bench"],
            swiftSettings: swiftSettings
        ),
        // The PostgreSQL store against a throwaway server (initdb in a temporary directory, a Unix
        // socket only); skipped with a message where PostgreSQL's binaries are absent. Fleet
        // workers run as `courier-test-hooks fleet-worker` child processes.
        .testTarget(
            name: "CourierPostgresTests",
            dependencies: ["Courier", "CourierPostgres", "CourierSupport", "CourierTestServer", "CourierTestSupport", "courier-test-hooks"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTestServerTests",
            dependencies: ["CourierTestServer", "CourierSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
