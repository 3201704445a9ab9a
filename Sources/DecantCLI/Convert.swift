import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a store into a new store of the same model version.",
            discussion: """
                Reads every object of IN through the record stream and writes OUT with the schema, bookkeeping \
                tables and metadata Core Data creates for the same model version, so an app built with that \
                version opens OUT without migrating. The version is the one of --model whose hashes match IN, or \
                without --model the model IN keeps in Z_MODELCACHE. IN is never modified; OUT is written beside its \
                destination and moved into place only when complete. --journal delete leaves a single \
                self-contained file, the form to bundle as an app's seed store.

                An externally stored value whose file is missing from the store's .<Name>_SUPPORT/_EXTERNAL_DATA \
                folder stops the run (exit 65) naming the object, attribute and file, unless \
                --missing-external-data keep (the output keeps the same reference) or null (the value becomes nil); \
                either way every affected object is reported as a warning.

                --entity, --where and --sort select what is copied. --where takes NSPredicate format syntax: \
                comparisons (==, !=, <, <=, >, >=), BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES with [c] and [d], \
                IN {…}, BETWEEN {lo, hi}, AND, OR, NOT, nil, key paths through to-one relationships, and \
                CAST("2020-01-01", "NSDate"). Reading a SQLite store, what SQL expresses exactly runs inside SQLite; \
                the rest is evaluated in the stream. Objects left out are counted per entity, and references to them \
                are written as nil and reported.
                """
        )

        @Argument(help: "The store to read.")
        var input: String

        @Argument(help: "The store to write (replaced if it exists).")
        var output: String

        @Option(name: .long, help: "The model bundle whose matching version the store follows.")
        var model: String?

        @Option(name: .long, help: "The output's journal mode.")
        var journal: JournalModeArgument = .wal

        @Option(
            name: .customLong("entity"), parsing: .upToNextOption,
            help: "Only these entities (comma-separated or repeated).")
        var entities: [String] = []

        @Option(
            name: .customLong("where"),
            help: ArgumentHelp(
                "Only objects matching this predicate, in NSPredicate format syntax.",
                valueName: "predicate"))
        var predicate: String?

        @Option(help: ArgumentHelp("The order within each entity: key[:desc],…", valueName: "keys"))
        var sort: String?

        @Option(name: .long, help: "What to do with externally stored values whose file is missing.")
        var missingExternalData: MissingExternalDataArgument = .fail

        @OptionGroup var options: GlobalOptions

        func run() throws {
            try reportingErrors(verbose: options.verbose) {
                var formatOptions = FormatOptions(bundle: try model.map { try ModelBundle.load(from: URL(fileURLWithPath: $0)) })
                formatOptions.missingExternalData = missingExternalData.policy
                formatOptions.selfContained = journal == .delete
                let progress = ProgressLine(quiet: options.quiet, json: options.json)
                defer { progress.finish() }
                var selection = RecordSelection()
                let names = entities.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
                if !names.isEmpty { selection.entities = Set(names) }
                selection.predicate = try predicate.map { try ObjectPredicate(parsing: $0) }
                selection.sort = try sort.map { try SortKey.list(parsing: $0) } ?? []
                let report = try StoreConversion.convert(
                    from: URL(fileURLWithPath: input), to: URL(fileURLWithPath: output), options: formatOptions,
                    selection: selection, logger: options.makeLogger(label: "decant.convert"),
                    progress: progress.update)
                progress.finish()
                printWarnings(report.warnings)
                if options.json {
                    printOut(String(decoding: try report.jsonDocument(), as: UTF8.self))
                } else {
                    let total = report.written.values.reduce(0, +)
                    printOut("\(output): \(total) objects written (model \(report.modelVersion))")
                    for name in Set(report.written.keys).union(report.filteredOut.keys).sorted() {
                        let left = report.filteredOut[name].map { ", \($0) filtered out" } ?? ""
                        printOut("  \(name)  \(report.written[name] ?? 0)\(left)")
                    }
                }
            }
        }
    }
}

/// `--journal wal|delete`.
enum JournalModeArgument: String, ExpressibleByArgument, CaseIterable {
    case wal
    case delete

}

/// `--missing-external-data fail|keep|null`.
enum MissingExternalDataArgument: String, ExpressibleByArgument, CaseIterable {
    case fail
    case keep
    case null

    var policy: MissingExternalDataPolicy { MissingExternalDataPolicy(rawValue: rawValue) ?? .fail }
}
