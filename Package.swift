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
    ],
    targets: [
        .target(name: "Courier", swiftSettings: swiftSettings),
        .target(name: "CourierTestServer", swiftSettings: swiftSettings),
        .executableTarget(
            name: "courier",
            dependencies: ["Courier", "CourierTestServer"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTests",
            // `courier` for unit tests of the command line's pure parts (progress formatting,
            // option parsing); CLI/ tests also run the built executable.
            dependencies: ["Courier", "CourierTestServer", "courier"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CourierTestServerTests",
            dependencies: ["CourierTestServer"],
            swiftSettings: swiftSettings
        ),
    ]
)
