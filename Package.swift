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
        .executable(name: "courier", targets: ["courier"]),
        .executable(name: "courier-bench", targets: ["courier-bench"]),
    ],
    targets: [
        .target(name: "Courier", dependencies: ["CCourierPlatformFixes"], swiftSettings: swiftSettings),
        // The platform kit: C wrappers put in front of FoundationNetworking's libcurl calls
        // (Docs/PlatformFixes.md). Part of the Courier product; no libcurl headers needed.
        .target(name: "CCourierPlatformFixes"),
        .target(name: "CourierTestServer", swiftSettings: swiftSettings),
        .executableTarget(
            name: "courier",
            dependencies: ["Courier", "CourierTestServer"],
            swiftSettings: swiftSettings
        ),
        // Benchmarks Courier against a raw delegate-based URLSession; meant to be built in release.
        .executableTarget(
            name: "courier-bench",
            dependencies: ["Courier"],
            swiftSettings: swiftSettings
        ),
        // Test-only commands the crash tests run as child processes (the journal's append loop).
        // Not a product: the shipped `courier` has no hidden test command (Docs/PublicAPI.md).
        .executableTarget(
            name: "courier-test-hooks",
            dependencies: ["Courier"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTests",
            // `courier` and `courier-bench` for unit tests of the command lines' pure parts
            // (progress formatting, option parsing, RESULT lines); CLI/ and Bench/ tests also run
            // the built executables, and the journal's crash tests run `courier-test-hooks`.
            dependencies: ["Courier", "CourierTestServer", "courier", "courier-bench", "courier-test-hooks"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTestServerTests",
            dependencies: ["CourierTestServer"],
            swiftSettings: swiftSettings
        ),
    ]
)
