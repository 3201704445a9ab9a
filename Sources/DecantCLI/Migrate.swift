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

                The versions are ordered by Xcode's numbering (the version named like the bundle first, then numbers \
                compared as numbers), or as --version-order A,B,C (or a file, one name a line) gives them. The store \
                goes hop by hop through the versions between; where a hop cannot be inferred, or the order is \
                unknown (names that follow no common scheme: the current version is the newest), it takes the single \
                step Core Data's automatic migration infers, straight to the destination, when that one can run \
                (`plan` says which and why). A store newer than the current version is refused; name an older \
                version with --to-version to map it down as Core Data would.

                With --output the store is only read and OUT is written beside its destination and moved into place \
                when complete (its format follows its extension or --to, SQLite by default; --delimiter, --null and \
                --journal apply as in convert). With --in-place the migrated store replaces STORE only after it is \
                complete; the original is kept at --backup (default \
                STORE.backup) unless --no-backup. A store already at the destination version is copied to OUT, or \
                left alone in place, and the output says so.

                A SQLite store migrated into a SQLite store whose hops only keep, rename, widen, default or drop \
                attributes and entities (and keep to-one and many-to-many relationships) runs inside SQLite, as \
                Core Data's lightweight migration does (INSERT … SELECT from the attached store); every other \
                migration runs through the record stream. Both write the same store; the output says which ran, \
                and why the stream did.

                An object that breaks the destination's rules (a required value that is nil) stops the run with exit \
                1 and nothing is written, unless --rejects FILE: then such objects are listed there (NDJSON) and the \
                run goes on; a run that rejected objects writes its output and exits 1, with the counts per entity \
                on standard error. A violation an object already had at the source version (same object, property \
                and rule) is carried over in an inferred hop, as Core Data's lightweight migration does, with a \
                warning per entity, property and rule; --strict refuses those too. A plan that cannot run exits 1 \
                with the reason per entity and property.

                Several stores (fixture stores from every released version) run as a batch: with --output-dir (each \
                output under its store's name) or --in-place, --jobs N at a time, --shard I/N taking one slice of the \
                sorted list (for a CI matrix or Kubernetes Jobs), --junit FILE writing a JUnit XML report with one \
                test case per store. The exit code is 0 only when every store passed.
                """
        )

        @Argument(help: "The store to migrate; several make a batch.")
        var stores: [String]

        @Option(name: .long, help: "Write the migrated store here.")
        var output: String?

        @Flag(name: .long, help: "Replace STORE with the migrated store.")
        var inPlace = false

        @Option(name: .long, help: "With --in-place: where to keep the original (default STORE.backup).")
        var backup: String?

        @Flag(name: .long, help: "With --in-place: keep no backup.")
        var noBackup = false

        @OptionGroup var migration: MigrationOptions

        @OptionGroup var inputOptions: InputFormatOptions

        @OptionGroup var outputOptions: OutputFormatOptions

        @OptionGroup var batch: BatchOptions

        @OptionGroup var options: GlobalOptions

        func validate() throws {
            guard !stores.isEmpty else { throw ValidationError("name the store to migrate") }
            guard migration.modelOptions.model != nil else { throw ValidationError("give the model with --model") }
            try inputOptions.requireOneEntity()
            if batch.isBatch(stores: stores) {
                guard (batch.outputDir != nil) != inPlace, output == nil else {
                    throw ValidationError("with several stores, give either --output-dir DIR or --in-place")
                }
                guard migration.rejects == nil, backup == nil else {
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
            try reportingErrors(verbose: options.verbose, json: options.json) {
                let settings = try migration.settings(input: inputOptions, output: outputOptions)
                if batch.isBatch(stores: stores) {
                    // One mapping search for every store of the batch.
                    let settings = settings.searchingMappingsOnce()
                    let outputDir = try batch.prepareOutputs()
                    let noBackup = self.noBackup
                    try batch.run(stores: stores, suite: "decant migrate", json: options.json) { [settings] store in
                        let target: StoreMigration.Target = outputDir.map {
                            .file($0.appendingPathComponent(store.lastPathComponent))
                        } ?? .inPlace(backup: noBackup ? nil : URL(fileURLWithPath: store.path + ".backup"))
                        let report = try StoreMigration.migrate(store: store, to: target, options: settings)
                        // The line starts with the store: its path is not repeated, only an output of its own.
                        let output = report.output == store.displayPath ? "" : ", into \(report.output)"
                        return BatchRun.Completion(
                            "\(report.action) \(report.sourceVersion) → \(report.destinationVersion), "
                                + "\(report.written.values.reduce(0, +)) objects\(output)", warnings: report.warnings)
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
                // Rejecting objects is a problem found: the output and the rejects file are complete, the exit is 1.
                defer { if report.foundProblems { reportProblems(report) } }
                if options.json {
                    printOut(String(decoding: try report.jsonDocument(), as: UTF8.self))
                    if report.foundProblems { throw ExitCode(1) }
                    return
                }
                switch report.action {
                case .unchanged:
                    printOut("\(store): already at \(report.destinationVersion); nothing to do, no backup written")
                case .copied:
                    printOut("\(report.output): the store is already at \(report.destinationVersion); copied unchanged")
                default:
                    printOut("\(report.output): migrated \(report.sourceVersion) → \(report.destinationVersion)")
                }
                if let choice = report.sourceChoice { printOut(choice) }
                if !report.hops.isEmpty { printOut("hops: " + report.hops.joined(separator: ", ")) }
                if let reason = report.singleStepReason {
                    printOut("single step (as Core Data's automatic migration): \(reason)")
                }
                if let note = settings.environment.registry.inStoreMigratingFormat(of: report.engine)?.inStoreRunNote {
                    printOut(note)
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
                if report.foundProblems { throw ExitCode(1) }
            }
        }

        /// Writes what a run that rejected objects (or kept dangling references) found to standard error.
        private func reportProblems(_ report: StoreMigration.Report) {
            reportRejected(
                report.rejected, perEntity: report.rejectedPerEntity, dangling: report.dangling, version: report.destinationVersion,
                listedIn: report.rejectsFile)
        }
    }
}
