// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "decant",
    platforms: [.macOS(.v13)],
    products: [
        // One product carries the whole library; `import Decant` re-exports the core, the formats and the SQLite
        // store, and adds the whole-job operations (inspect, convert).
        .library(name: "Decant", targets: ["Decant"]),
        .executable(name: "decant", targets: ["DecantCLI"]),
        // For users' test targets: fixture and in-memory stores, migrated and asked by property name.
        .library(name: "DecantTesting", targets: ["DecantTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // Model, hashes, records, the pipeline, output staging, diagnostics: no file-format code.
        .target(
            name: "DecantCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // Apple's file codecs: property lists, keyed archives, DEFLATE, model files, store metadata, Xcode mapping
        // models.
        .target(name: "DecantCodecs", dependencies: ["DecantCore", "CZlib"]),
        // The record formats: JSON, NDJSON, CSV, the XML and binary stores, archives and property lists as records,
        // mapping files.
        .target(name: "DecantFormats", dependencies: ["DecantCore", "DecantCodecs"]),
        // The Core Data SQLite store: schema, reader, writer.
        .target(
            name: "DecantSQLite",
            dependencies: [
                "DecantCore", "DecantCodecs", "DecantFormats", "CSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // YAML decoding of mapping files, and nothing else (the one target that depends on Yams).
        .target(name: "DecantYAML", dependencies: ["DecantCore", .product(name: "Yams", package: "Yams")]),
        // SwiftData models from Swift source (the one target that depends on swift-syntax).
        .target(
            name: "DecantSwiftData",
            dependencies: [
                "DecantCore",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        ),
        // The module users import: re-exports the others and holds the whole-job operations.
        .target(
            name: "Decant",
            dependencies: [
                "DecantCore", "DecantCodecs", "DecantFormats", "DecantSQLite", "DecantYAML", "DecantSwiftData",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Stores for users' Swift Testing / XCTest targets, built on the public API of Decant.
        .target(name: "DecantTesting", dependencies: ["Decant"]),
        .executableTarget(
            name: "DecantCLI",
            dependencies: [
                "Decant",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "DecantTestSupport",
            dependencies: ["DecantCore", "DecantCodecs", "DecantFormats"],
            path: "Tests/DecantTestSupport"
        ),
        .testTarget(
            name: "DecantCoreTests", dependencies: ["DecantCore", "DecantCodecs", "DecantFormats", "DecantTestSupport"]),
        .testTarget(
            name: "DecantFormatsTests",
            dependencies: ["DecantCore", "DecantCodecs", "DecantFormats", "DecantTestSupport"]),
        .testTarget(
            name: "DecantSQLiteTests",
            dependencies: ["DecantCore", "DecantCodecs", "DecantFormats", "DecantSQLite", "DecantTestSupport", "CSQLite"]
        ),
        .testTarget(name: "DecantTests", dependencies: ["Decant", "DecantTestSupport", "CSQLite"]),
        .testTarget(
            name: "DecantSwiftDataTests",
            dependencies: ["DecantSwiftData", "DecantCore", "DecantTestSupport"]
        ),
        .testTarget(name: "DecantTestingTests", dependencies: ["DecantTesting", "DecantTestSupport"]),
        // The sample migration test users copy (samples/MigrationTests), run with the others.
        .testTarget(name: "SampleMigrationTests", dependencies: ["DecantTesting"], path: "samples/MigrationTests"),
        .testTarget(
            name: "DecantCLITests",
            dependencies: [
                "DecantCLI", "Decant", "DecantTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)

let libraryTargets: Set<String> = [
    "DecantCore", "DecantCodecs", "DecantFormats", "DecantSQLite", "DecantYAML", "DecantSwiftData", "Decant", "DecantTesting",
]
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    if libraryTargets.contains(target.name) {
        settings.append(.treatWarning("ExplicitSendable", as: .error))
    }
    target.swiftSettings = settings
}
