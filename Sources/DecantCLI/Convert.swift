import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a store or CSV into a new store or CSV of the same model version.",
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

                CSV (--to csv, or an output ending in .csv for one entity) is a folder with a file per entity, join \
                files for to-many relationships and _decant.json (the model version), read back with --model. \
                --delimiter and --null choose the field separator and the text for nil (by default an empty \
                unquoted field; "" is the empty string).

                A keyed archive (NSKeyedArchiver, binary or XML; read only) needs --model: each object of an app \
                class becomes an object of the entity --class Class=Entity or --class-mapping names (else the entity \
                named like the class), its coder keys filling the properties they name (exactly, in any case, or \
                snake_case for camelCase).
                """
        )

        @Argument(help: "The store or CSV to read.")
        var input: String

        @Argument(help: "The store or CSV to write (replaced if it exists; a folder only if Decant wrote it).")
        var output: String

        @Option(name: .long, help: "The model bundle whose matching version the store follows.")
        var model: String?

        @Option(
            name: .long, help: "The input's format (sqlite, csv, archive); told by its content or extension otherwise.")
        var from: String?

        @Option(
            name: .long, help: "The output's format (sqlite, csv); told by its extension otherwise, sqlite by default.")
        var to: String?

        @Option(name: .long, help: "For inputs without their model version (CSV): the version of --model to follow.")
        var version: String?

        @Option(name: .long, help: "For CSV: the field delimiter, one ASCII character (\\t or tab for a tab).")
        var delimiter: DelimiterArgument?

        @Option(
            name: .customLong("null"),
            help: "For CSV: the text that stands for nil (an empty unquoted field by default).")
        var nullMarker: String?

        @Option(
            name: .customLong("class"), parsing: .singleValue,
            help: ArgumentHelp(
                "For keyed archives: the entity an archived class becomes (repeatable).", valueName: "Class=Entity"))
        var classEntities: [String] = []

        @Option(
            name: .long,
            help: ArgumentHelp(
                "For keyed archives: a JSON class mapping (as `decant inspect ARCHIVE` prints).", valueName: "file"))
        var classMapping: String?

        @Option(name: .long, help: "The output's journal mode.")
        var journal: JournalModeArgument = .wal

        @Option(
            name: .customLong("entity"), parsing: .upToNextOption,
            help: "Only these entities (comma-separated or repeated); for a single CSV file, the entity it holds.")
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
                formatOptions.version = version
                formatOptions.delimiter = delimiter?.character
                formatOptions.nullMarker = nullMarker
                try ArchiveMapping.options(
                    file: classMapping.map { URL(fileURLWithPath: $0) }, classes: classEntities, into: &formatOptions)
                let progress = ProgressLine(quiet: options.quiet, json: options.json)
                defer { progress.finish() }
                var selection = RecordSelection()
                let names = entities.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
                if !names.isEmpty { selection.entities = Set(names) }
                if names.count == 1 { formatOptions.entity = names[0] }
                selection.predicate = try predicate.map { try ObjectPredicate(parsing: $0) }
                selection.sort = try sort.map { try SortKey.list(parsing: $0) } ?? []
                let report = try StoreConversion.convert(
                    from: URL(fileURLWithPath: input), to: URL(fileURLWithPath: output), inputFormat: from,
                    outputFormat: to, options: formatOptions, selection: selection,
                    logger: options.makeLogger(label: "decant.convert"), progress: progress.update)
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

/// `--delimiter C`: one character, or `\t` / `tab` for a tab.
struct DelimiterArgument: ExpressibleByArgument {
    var character: Character

    init?(argument: String) {
        switch argument {
        case "\\t", "tab": character = "\t"
        default:
            guard argument.count == 1, let first = argument.first else { return nil }
            character = first
        }
    }
}

/// `--missing-external-data fail|keep|null`.
enum MissingExternalDataArgument: String, ExpressibleByArgument, CaseIterable {
    case fail
    case keep
    case null

    var policy: MissingExternalDataPolicy { MissingExternalDataPolicy(rawValue: rawValue) ?? .fail }
}
