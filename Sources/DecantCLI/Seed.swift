import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Seed: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a default store in place on first run, safely.",
            discussion: """
                If STORE does not exist, copies SEED into place as one consistent set: a SQLite seed's -wal content \\
                included, its .<Name>_SUPPORT/_EXTERNAL_DATA folder beside it, nothing from another copy. The copy \\
                is built under a temporary name in STORE's folder, flushed to disk and renamed into place, under an \\
                advisory lock beside STORE: two seeders started together make one copy and both succeed, and a \\
                temporary copy left by a crashed run is removed. A JSON or CSV seed becomes a new SQLite store for \\
                --model. An existing STORE is never overwritten: a second run says "already seeded" and changes \\
                nothing. With --model, an existing STORE must be the model's current version; otherwise the run \\
                stops with what differs, and nothing is deleted.
                """
        )

        @Option(name: .customLong("default"), help: "The default store the app ships (any format Decant reads).")
        var seed: String

        @Option(name: .long, help: "Where the app keeps its store.")
        var store: String

        @Option(name: .long, help: "The model bundle the store must follow.")
        var model: String?

        @Option(name: .long, help: "For a JSON or CSV seed: the model version it follows (default: the current one).")
        var version: String?

        @Flag(name: .long, help: "Do not search the model's project for Xcode mapping models when migrating.")
        var noMappingSearch = false

        @Option(name: .long, help: "What to do with externally stored values whose file is missing when migrating (default: keep the reference, as Core Data does, and warn once).")
        var missingExternalData: MissingExternalDataArgument = .keep

        @OptionGroup var options: GlobalOptions

        func run() throws {
            try reportingErrors(verbose: options.verbose) {
                var formatOptions = FormatOptions(
                    bundle: try model.map { try ModelBundle.load(from: URL(fileURLWithPath: $0)) }, version: version)
                formatOptions.missingExternalData = missingExternalData.policy
                let report = try Seeding.seed(
                    default: URL(fileURLWithPath: seed), store: URL(fileURLWithPath: store), options: formatOptions,
                    modelURL: model.map { URL(fileURLWithPath: $0) }, searchesForMappings: !noMappingSearch)
                printWarnings(report.warnings)
                printOut(options.json ? String(decoding: try report.jsonDocument(), as: UTF8.self) : report.text)
            }
        }
    }
}
