import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Migrate a store to the current (or a named) version of its model.",
            discussion: """
                Finds the version STORE was written with among the versions of --model (by its entity hashes) and \
                migrates it hop by hop, each hop inferred by Core Data's lightweight rules, taken from a mapping \
                file (--mapping, one per hop), or from an Xcode mapping model (.xcmappingmodel or .cdm, or a folder \
                of them: each is used for the hop its entity hashes fit); the Xcode mapping models of the project that \
                holds --model are found without --mapping, as Core Data finds them in the app's bundle \
                (--no-mapping-search turns that off). Mapping models whose policy classes or \
                functions are app code need a Swift program that registers them; without one the run exits 1 \
                naming them. The output carries the destination version's schema and metadata, so \
                an app built with that version opens it without migrating.

                With --output the store is only read and OUT is written beside its destination and moved into place \
                when complete (its format follows its extension, SQLite by default). With --in-place the migrated \
                store replaces STORE only after it is complete; the original is kept at --backup (default \
                STORE.backup) unless --no-backup. A store already at the destination version is copied to OUT, or \
                left alone in place, and the output says so.

                A SQLite store migrated into a SQLite store whose hops only keep, rename, widen, default or drop \
                attributes and entities (and keep to-one relationships) runs inside SQLite, as Core Data's \
                lightweight migration does (INSERT … SELECT from the attached store); every other migration runs \
                through the record stream. Both write the same store; the output says which ran, and why the \
                stream did.

                An object that breaks the destination's rules (a required value that is nil) stops the run with exit \
                1 and nothing is written, unless --rejects FILE: then such objects are listed there (NDJSON) and the \
                run goes on. A plan that cannot run exits 1 with the reason per entity and property.

                Several stores (fixture stores from every released version) run as a batch: with --output-dir (each \
                output under its store's name) or --in-place, --jobs N at a time, --shard I/N taking one slice of the \
                sorted list (for a CI matrix or Kubernetes Jobs), --junit FILE writing a JUnit XML report with one \
                test case per store. The exit code is 0 only when every store passed.
                """
        )

        @Argument(help: "The store to migrate; several make a batch.")
        var stores: [String]

        @Option(name: .long, help: "The model bundle (.xcdatamodeld or .momd) with every version.")
        var model: String

        @Option(name: .customLong("to"), help: "The destination version's name (default: the current version).")
        var destinationVersion: String?

        @Option(name: .long, help: "A Decant mapping file (YAML or JSON), an Xcode .xcmappingmodel or .cdm, or a folder of them; repeat for several hops.")
        var mapping: [String] = []

        @Flag(name: .long, help: "Do not search the model's project for Xcode mapping models (use only --mapping).")
        var noMappingSearch = false

        @Option(name: .long, help: "Write the migrated store here.")
        var output: String?

        @Flag(name: .long, help: "Replace STORE with the migrated store.")
        var inPlace = false

        @Option(name: .long, help: "With --in-place: where to keep the original (default STORE.backup).")
        var backup: String?

        @Flag(name: .long, help: "With --in-place: keep no backup.")
        var noBackup = false

        @Option(name: .long, help: "List objects that break a rule in this NDJSON file and go on.")
        var rejects: String?

        @Option(name: .long, help: "What to do with externally stored values whose file is missing (default: keep the reference, as Core Data does, and warn once).")
        var missingExternalData: MissingExternalDataArgument = .keep

        @OptionGroup var batch: BatchOptions

        @OptionGroup var options: GlobalOptions

        func validate() throws {
            guard !stores.isEmpty else { throw ValidationError("name the store to migrate") }
            if batch.isBatch(stores: stores) {
                guard (batch.outputDir != nil) != inPlace, output == nil else {
                    throw ValidationError("with several stores, give either --output-dir DIR or --in-place")
                }
                guard rejects == nil, backup == nil else {
                    throw ValidationError("--rejects and --backup take one store (a batch keeps STORE.backup)")
                }
            } else {
                guard (output != nil) != inPlace else {
                    throw ValidationError("give either --output OUT or --in-place")
                }
            }
            if !inPlace && (backup != nil || noBackup) {
                throw ValidationError("--backup and --no-backup go with --in-place")
            }
            if backup != nil && noBackup { throw ValidationError("--backup and --no-backup contradict each other") }
        }

        func run() throws {
            try reportingErrors(verbose: options.verbose) {
                var settings = try migrationOptions(
                    model: model,
                    destinationVersion: destinationVersion,
                    mappings: mapping,
                    searchesForMappings: !noMappingSearch
                )
                settings.formatOptions.missingExternalData = missingExternalData.policy
                settings.rejects = rejects.map { URL(fileURLWithPath: $0) }
                if batch.isBatch(stores: stores) {
                    let outputDir = batch.outputDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
                    if let outputDir { try FileManager.default.createDirectory(at: outputDir, withIntermediateDirectories: true) }
                    let noBackup = self.noBackup
                    try batch.run(stores: stores, suite: "decant migrate", json: options.json) { [settings] store in
                        let target: StoreMigration.Target = outputDir.map {
                            .file($0.appendingPathComponent(store.lastPathComponent))
                        } ?? .inPlace(backup: noBackup ? nil : URL(fileURLWithPath: store.path + ".backup"))
                        let report = try StoreMigration.migrate(store: store, to: target, options: settings)
                        return "\(report.action) \(report.sourceVersion) → \(report.destinationVersion), "
                            + "\(report.written.values.reduce(0, +)) objects, \(report.output)"
                    }
                    return
                }
                let store = stores[0]
                let storeURL = URL(fileURLWithPath: store)
                let target: StoreMigration.Target
                if let output {
                    target = .file(URL(fileURLWithPath: output))
                } else {
                    target = .inPlace(backup: noBackup ? nil : URL(fileURLWithPath: backup ?? store + ".backup"))
                }
                let progress = ProgressLine(quiet: options.quiet, json: options.json)
                defer { progress.finish() }
                let report = try StoreMigration.migrate(
                    store: storeURL,
                    to: target,
                    options: settings,
                    logger: options.makeLogger(label: "decant.migrate"),
                    progress: progress.update
                )
                progress.finish()
                printWarnings(report.warnings)
                if options.json {
                    printOut(String(decoding: try report.jsonDocument(), as: UTF8.self))
                    return
                }
                switch report.action {
                case "unchanged":
                    printOut("\(store): already at \(report.destinationVersion); nothing to do")
                case "copied":
                    printOut("\(report.output): the store is already at \(report.destinationVersion); copied unchanged")
                default:
                    printOut("\(report.output): migrated \(report.sourceVersion) → \(report.destinationVersion)")
                }
                if !report.hops.isEmpty { printOut("hops: " + report.hops.joined(separator: ", ")) }
                if report.engine == "sqlite" {
                    printOut("run inside SQLite, as Core Data's lightweight migration does (INSERT … SELECT)")
                } else if let reason = report.streamReason {
                    printOut("run through the record stream: \(reason)")
                }
                for ledger in report.ledgers {
                    printOut("\(ledger.hop):")
                    for (entity, row) in ledger.rows.sorted(by: { $0.key < $1.key }) {
                        printOut(
                            "  \(entity)  read \(row.read), written \(row.written), rejected \(row.rejected), "
                                + "removed \(row.removed), created \(row.created)"
                        )
                    }
                }
                if report.ledgers.isEmpty {
                    for name in report.written.keys.sorted() { printOut("  \(name)  \(report.written[name] ?? 0)") }
                }
                if let file = report.rejectsFile { printOut("\(report.rejected) objects rejected, listed in \(file)") }
                if let backup = report.backup { printOut("original kept at \(backup)") }
            }
        }
    }
}

/// The migration options every migration command builds from `--model`, `--to`, `--mapping` and
/// `--no-mapping-search`.
func migrationOptions(
    model: String, destinationVersion: String?, mappings: [String], searchesForMappings: Bool
) throws -> StoreMigration.Options {
    let modelURL = URL(fileURLWithPath: model)
    let bundle = try ModelBundle.load(from: modelURL)
    var options = StoreMigration.Options(bundle: bundle, destinationVersion: destinationVersion)
    options.modelURL = modelURL
    options.searchesForMappings = searchesForMappings
    try options.loadMappings(from: mappings.map { URL(fileURLWithPath: $0) })
    return options
}
