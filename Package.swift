// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "decant",
    platforms: [.macOS(.v13)],
    products: [
        // One product carries the whole library: the core, the file formats and the SQLite store.
        .library(name: "Decant", targets: ["Decant", "DecantFormats", "DecantSQLite"]),
        .executable(name: "decant", targets: ["DecantCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .target(
            name: "Decant",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "DecantFormats", dependencies: ["Decant", "CZlib"]),
        .target(
            name: "DecantSQLite",
            dependencies: [
                "Decant", "DecantFormats", "CSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "DecantCLI",
            dependencies: [
                "Decant", "DecantFormats", "DecantSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "DecantTestSupport",
            dependencies: ["Decant", "DecantFormats"],
            path: "Tests/DecantTestSupport"
        ),
        .testTarget(name: "DecantTests", dependencies: ["Decant", "DecantFormats", "DecantTestSupport"]),
        .testTarget(name: "DecantFormatsTests", dependencies: ["Decant", "DecantFormats", "DecantTestSupport"]),
        .testTarget(
            name: "DecantSQLiteTests",
            dependencies: ["Decant", "DecantFormats", "DecantSQLite", "DecantTestSupport", "CSQLite"]
        ),
        .testTarget(
            name: "DecantCLITests",
            dependencies: [
                "DecantCLI", "Decant", "DecantTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
