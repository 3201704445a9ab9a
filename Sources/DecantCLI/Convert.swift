import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy every object of a store or file into a new one of the same model version.",
            discussion: """
                Reads every object of IN through the record stream and writes OUT in the same model version. The \
                formats are told by --from and --to, else IN's by its content and extension and OUT's by its \
                extension (a SQLite store when it names none): sqlite, json (Decant's JSON document; as input also \
                a plain array of objects), ndjson (one object per line). A SQLite OUT has the schema, bookkeeping \
                tables and metadata Core Data creates for the version, so an app built with it opens OUT without \
                migrating. The version is the one of --model whose hashes match IN (a store, or Decant's JSON), or \
                without --model the model a store keeps in Z_MODELCACHE; plain JSON carries no model, so it follows \
                --model at --model-version (default: the current version). IN is never modified; OUT is written beside \
                its destination and moved into place only when complete. --journal delete leaves a single \
                self-contained file, the form to bundle as an app's seed store.

                Records (JSON, CSV, property lists, archives) written into a Core Data store (SQLite, XML, binary) \
                meet the model's rules, as Core Data's save makes an app's inserted objects meet them: required \
                values, bounds, patterns, uniqueness, relationship counts, references. The first object that breaks \
                one stops the run (exit 1, OUT not written); with --rejects FILE such objects are listed there \
                (NDJSON, as migrate lists them) and left out, OUT is written without them, and the exit is 1 with the \
                counts per entity; --no-validate writes them as they are. An attribute the input does not mention (a \
                missing key or column) takes the model's default value; one it gives, null included, is kept. A \
                store-to-store copy is not checked: it carries what the store holds, as migratePersistentStore does.

                Plain JSON holds the objects of one entity (--entity, unless the model has only one). Keys name \
                attributes and relationships exactly, ignoring case, or in snake_case; a nested object becomes a \
                related object; author_id-style keys and scalars under a relationship refer to objects by key: \
                --key Entity=attribute (repeatable), else the entity's one-attribute uniqueness constraint. Dates are \
                ISO 8601 (any offset), or numbers of seconds since --date-epoch (unix, the default, or reference, \
                2001-01-01). An unknown key, a value of the wrong type or broken JSON stops the run (exit 65) naming \
                the line, column and key.

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

                Transformable values go to JSON and NDJSON as the base64 of their archive's bytes. With \
                --decode-transformables, a value whose NSKeyedArchiver archive holds only Foundation's plain values \
                (NSDictionary with string keys, NSArray, NSSet, NSString, NSNumber, NSDate, NSData, NSURL, NSUUID, \
                NSNull, nested) is written as {"archived": value} (docs/USAGE.md gives the spelling); the others (app \
                classes, damaged archives, another transformer's bytes) stay base64 and are counted in one warning per \
                attribute. Reading JSON into a store, {"archived": value} is archived again as NSKeyedArchiver lays it \
                out.

                CSV (--to csv, or an output ending in .csv for one entity) is a folder with a file per entity, join \
                files for to-many relationships and _decant.json (the model version), read back with --model. \
                --delimiter and --null choose the field separator and the text for nil (by default an empty \
                unquoted field; "" is the empty string).

                Core Data's XML store (--to xml, or an .xml file whose root is <database>) reads without --model \
                (the model the file declares) or with it (the version its hashes match); the binary store (--to \
                binary, Apple's layout) reads with --model.

                A keyed archive (NSKeyedArchiver, binary or XML; read only) needs --model: each object of an app \
                class becomes an object of the entity --class Class=Entity or --class-mapping names (else the entity \
                named like the class), its coder keys filling the properties they name (exactly, in any case, or \
                snake_case for camelCase).

                A plain property list (binary or XML; read only) needs --model: the dictionaries of one array (the \
                top-level one, the only one, or --key-path's) become objects of --entity (else the model's only \
                entity, else the entity named after the array), their keys filling the properties they name; \
                dictionaries under a relationship's key become related objects, and Data holding a keyed archive \
                decodes to its value. --plist-mapping takes the mapping `decant inspect FILE.plist` prints.
                """
        )

        @Argument(help: "The store, file or folder to read.")
        var input: String

        @Argument(help: "The store, file or folder to write (replaced if it exists; a folder only if Decant wrote it).")
        var output: String

        @Option(name: .long, help: "The model bundle whose matching version the input follows.")
        var model: String?

        @Option(
            name: .customLong("model-version"),
            help: "For inputs without their model version (CSV, plain JSON): the version of --model to follow.")
        var modelVersion: String?

        @OptionGroup var inputOptions: InputFormatOptions

        @OptionGroup var outputOptions: OutputFormatOptions

        @Option(
            name: .customLong("where"),
            help: ArgumentHelp(
                "Only objects matching this predicate, in NSPredicate format syntax.",
                valueName: "predicate"))
        var predicate: String?

        @Option(help: ArgumentHelp("The order within each entity: key[:desc],…", valueName: "keys"))
        var sort: String?

        @Option(name: .long, help: "What to do with externally stored values whose file is missing.")
        var missingExternalData: MissingExternalDataPolicy = .fail

        @OptionGroup var validation: RulesOptions

        @OptionGroup var options: GlobalOptions

        func run() throws {
            try reportingErrors(verbose: options.verbose, json: options.json) {
                var formatOptions = FormatOptions(
                    bundle: try model.map { try ModelBundle.load(modelOrStore: URL(fileURLWithPath: $0)) },
                    version: modelVersion)
                formatOptions.missingExternalData = missingExternalData
                try inputOptions.apply(to: &formatOptions)
                outputOptions.apply(to: &formatOptions)
                let progress = ProgressLine(quiet: options.quiet, json: options.json)
                defer { progress.finish() }
                var selection = RecordSelection()
                let names = inputOptions.entityNames
                if !names.isEmpty { selection.entities = Set(names) }
                selection.predicate = try predicate.map { try ObjectPredicate(parsing: $0) }
                selection.sort = try sort.map { try SortKey.list(parsing: $0) } ?? []
                let report = try StoreConversion.convert(
                    from: URL(fileURLWithPath: input), to: URL(fileURLWithPath: output), inputFormat: inputOptions.from,
                    outputFormat: outputOptions.to, options: formatOptions, selection: selection,
                    validation: validation.settings, logger: options.makeLogger(label: "decant.convert"),
                    progress: progress.update)
                progress.finish()
                printWarnings(report.warnings)
                // Objects left out by the model's rules are a problem found: the output is complete without them.
                defer {
                    if report.foundProblems {
                        reportRejected(
                            report.rejected.values.reduce(0, +), perEntity: report.rejected, dangling: report.dangling,
                            version: report.modelVersion, listedIn: report.rejectsFile)
                    }
                }
                if options.json {
                    printOut(String(decoding: try report.jsonDocument(), as: UTF8.self))
                } else {
                    let total = report.written.values.reduce(0, +)
                    printOut(
                        "\(output): \(objects(total)) written ("
                            + (report.modelVersion == "Z_MODELCACHE" ? "" : "model ") + "\(modelName(report.modelVersion)))")
                    for name in Set(report.written.keys).union(report.filteredOut.keys).sorted() {
                        let left = report.filteredOut[name].map { ", \($0) filtered out" } ?? ""
                        printOut("  \(name)  \(report.written[name] ?? 0)\(left)")
                    }
                }
                if report.foundProblems { throw ExitCode(1) }
            }
        }
    }
}
