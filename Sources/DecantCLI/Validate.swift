import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every object of a store against its model's rules.",
            discussion: """
                Checks required values, minimum and maximum (numbers, string lengths, dates), string patterns, \
                uniqueness constraints, relationship counts and references to objects that do not exist, against \
                the version of --model the store matches (or the model the store keeps in Z_MODELCACHE).

                Without --rejects the first failing object stops the run (exit 1) naming the object, the property \
                and the rule. With --rejects FILE every failing object is listed there as NDJSON (entity, object, \
                property, rule, value) and the run goes on; it exits 1 when there was any.

                Several stores run as a batch (--jobs, --shard I/N, --junit FILE, as for migrate); the exit code is 0 \
                only when every store is valid. With --output-dir DIR, each store's failing objects are listed in \
                DIR/NAME.rejects.ndjson (NAME: the store's file name) and every object is checked.
                """
        )

        @Argument(help: "The store to check; several make a batch.")
        var stores: [String]

        @OptionGroup(title: "Model") var modelOptions: ModelOptions

        @Option(name: .long, help: "List failing objects in this NDJSON file and go on.")
        var rejects: String?

        @Option(name: .long, help: "What to do with externally stored values whose file is missing (default: check the reference as it is and warn once).")
        var missingExternalData: MissingExternalDataPolicy = .keep

        @OptionGroup var inputOptions: InputFormatOptions

        @OptionGroup var batch: BatchOptions

        @OptionGroup var options: GlobalOptions

        func validate() throws {
            guard !stores.isEmpty else { throw ValidationError("name the store to check") }
            try inputOptions.requireOneEntity()
            if batch.outputDir != nil && rejects != nil {
                throw ValidationError("--rejects names one file; --output-dir lists each store's rejects in that folder")
            }
            if batch.isBatch(stores: stores) && rejects != nil { throw ValidationError("--rejects takes one store") }
        }

        func run() throws {
            try reportingErrors(verbose: options.verbose, json: options.json) {
                var settings = StoreValidation.Options(
                    bundle: try modelOptions.bundle()
                )
                settings.formatOptions.missingExternalData = missingExternalData
                settings.inputFormat = inputOptions.from
                try inputOptions.apply(to: &settings.formatOptions)
                settings.rejects = rejects.map { URL(fileURLWithPath: $0) }
                // A JSON report that finds problems is the whole report: every failure counted, not the first.
                settings.countsEveryFailure = options.json
                if batch.isBatch(stores: stores) {
                    let outputDir = try batch.prepareOutputs()
                    try batch.run(stores: stores, suite: "decant validate", json: options.json) { [settings] store in
                        var settings = settings
                        // Each store's failing objects in its own rejects file, and the run goes on.
                        settings.rejects = outputDir?.appendingPathComponent("\(store.lastPathComponent).rejects.ndjson")
                        let report = try StoreValidation.validate(store: store, options: settings)
                        let failing = report.failures.values.reduce(0, +)
                        let summary = "\(objects(report.objects.values.reduce(0, +))) checked against \(modelName(report.modelVersion))"
                        guard report.isValid else {
                            throw DecantError(
                                .validationFailed, summary + ", \(failing) failures: "
                                    + report.failures.keys.sorted().map { "\($0) \(report.failures[$0] ?? 0)" }
                                    .joined(separator: ", "), at: Location(path: store.displayPath))
                        }
                        return BatchRun.Completion(summary + ", all valid", warnings: report.warnings)
                    }
                    return
                }
                let store = stores[0]
                let progress = ProgressLine(quiet: options.quiet, json: options.json)
                defer { progress.finish() }
                let report = try StoreValidation.validate(
                    store: URL(fileURLWithPath: store), options: settings, progress: progress.update)
                progress.finish()
                printWarnings(report.warnings)
                if options.json {
                    printOut(String(decoding: try report.jsonDocument(), as: UTF8.self))
                } else {
                    let total = report.objects.values.reduce(0, +)
                    let failing = report.failures.values.reduce(0, +)
                    printOut(
                        "\(store): \(objects(total)) checked against \(modelName(report.modelVersion)), "
                            + (failing == 0 ? "all valid" : "\(failing) failures")
                    )
                    for key in report.failures.keys.sorted() { printOut("  \(key): \(report.failures[key] ?? 0)") }
                    if let file = report.rejectsFile, failing > 0 { printOut("listed in \(file)") }
                }
                if !report.isValid { throw ExitCode(1) }
            }
        }
    }
}
