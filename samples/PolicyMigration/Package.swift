// swift-tools-version: 6.2
// A runnable example of a custom migration with Decant's policy API: an Xcode mapping model names the policy class
// `NotesMigration.NoteToParagraphPolicy`, and this program registers a Swift policy under that name and runs it.
import PackageDescription

let package = Package(
    name: "PolicyMigration",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "Decant", path: "../..")],
    targets: [
        .executableTarget(
            name: "NotesMigration",
            dependencies: [.product(name: "Decant", package: "Decant")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
