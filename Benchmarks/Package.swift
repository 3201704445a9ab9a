// swift-tools-version: 6.2
import PackageDescription

// Benchmarks live in their own package so their code never reaches users' dependency graphs.
let package = Package(
    name: "DecantBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "decant", path: "../")
    ],
    targets: [
        .target(
            name: "BenchmarkSupport",
            dependencies: [.product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "StoreCopyBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "FormatsBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "MigrationBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "ArchiveBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        // Writes the ArchiveBenchmark's input with Foundation's NSKeyedArchiver; named as the sample's script module,
        // so its class is archived as NotesApp.LegacyNote. No Decant in it.
        .executableTarget(name: "NotesApp"),
        .executableTarget(
            name: "OwedLinksBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "MappingSearchBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "PlanBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
        .executableTarget(
            name: "PredicateBenchmark",
            dependencies: ["BenchmarkSupport", .product(name: "Decant", package: "decant")]
        ),
    ]
)
