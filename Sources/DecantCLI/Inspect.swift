import ArgumentParser
import Decant
import Foundation

extension DecantCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Describe a model, a store, a mapping model, a keyed archive or a property list.",
            discussion: """
                For a model (.xcdatamodeld, .xcdatamodel, .momd, .mom): its versions, the current version, and per \
                version the identifiers, the model checksum and every entity's version hash (base64) with its \
                attribute and relationship counts.

                For a Core Data SQLite store: its metadata, store UUID, object counts per entity, and the model \
                version it was written with: the version of --model whose hashes match, or without --model the \
                model the store keeps in Z_MODELCACHE. When no version matches, the nearest one and what differs \
                per entity, and the exit is 1 (with --model: a seed checked against the app's model must not pass). \
                The store's files are never modified.

                With a known model (the matching version of --model, or Z_MODELCACHE), a store's Transformable \
                attributes are audited: per attribute its value transformer (none named: Core Data's default, \
                NSKeyedUnarchiveFromData), how many values are nil, keyed archives, not archives or unreadable, the \
                archived classes with their counts, and whether NSSecureUnarchiveFromData with Foundation's default \
                allowed classes would decode every value, naming the classes that would fail and the first objects \
                holding them. An unreadable value (damaged, nested too deeply, cyclic, too large) is a warning naming \
                its entity, object and attribute.

                For an Xcode mapping model (.xcmappingmodel or .cdm): the source and destination versions it fits, \
                by their entities' version hashes and, with --model, by name; its entity mappings (kind, source → \
                destination, policy class); and the expressions that need the app's code (a policy's or another \
                class's method) or that Decant cannot run.

                For other inputs (a CSV file or folder, JSON, …): the format, the entities with their object counts, \
                and the model version a Decant-written input names. With --model (and --model-version for inputs \
                that do not name theirs), every object is read through the model, and what does not fit it stops \
                with the file, line, entity and property.

                For an NSKeyedArchiver archive (binary or XML property list): its classes with their object counts, \
                the coder keys of its app classes with the kinds of value seen under each, and a starting class \
                mapping (JSON) to edit and pass to `decant convert --class-mapping`.

                For a plain property list (binary or XML, .plist or told by its content): its top-level shape, the \
                arrays of dictionaries it holds (key path, count, keys with the kinds of value seen), the values \
                holding keyed archives decoded in place, and a starting mapping (JSON) to edit and pass to \
                `decant convert --plist-mapping`.
                """
        )

        @Argument(help: "The model, store, mapping model or keyed archive to describe.")
        var path: String

        @Option(name: .long, help: "The model bundle to match a store or a mapping model against (.xcdatamodeld, .momd, …).")
        var model: String?

        @Option(help: "Draw the model instead: mermaid (Markdown) or dot (Graphviz).")
        var diagram: ModelDiagram.Style?

        @Option(
            name: .customLong("model-version"),
            help: "With --diagram: the version to draw; for inputs without their version: the version they follow.")
        var modelVersion: String?

        @Option(name: .long, help: versionOrderHelp)
        var versionOrder: String?

        @OptionGroup var inputOptions: InputFormatOptions

        @OptionGroup var options: GlobalOptions

        /// A store inspected with `--model` that no version of it matches is a problem found (exit 1): a CI step
        /// that checks a seed against the app's model must not pass. The report, with the nearest version and what
        /// differs, is printed first.
        static func requireMatch(_ report: StoreReport, given bundle: ModelBundle?) throws {
            guard bundle != nil, report.model?.matchedVersion == nil else { return }
            throw ExitCode(1)
        }

        func run() throws {
            try reportingErrors(verbose: options.verbose, json: options.json) {
                let url = URL(fileURLWithPath: path)
                // --from names a format: the input is read as it, whatever its content: a store format's as a store,
                // a plain property list as one (its survey needs no model), any other as records.
                let kind = try inputOptions.from.map { InputKind(named: $0) } ?? InputKind(of: url)
                switch kind {
                case .model where diagram != nil:
                    let bundle = try loadBundle(path, versionOrder: versionOrder)
                    let model = try FormatOptions(bundle: bundle, version: modelVersion)
                        .modelForModelLessInput(at: Location(path: path))
                    printOut(ModelDiagram(model: model, style: diagram ?? .mermaid).text)
                case .model:
                    let report = ModelReport(bundle: try loadBundle(path, versionOrder: versionOrder), path: path)
                    printOut(options.json ? String(decoding: try report.jsonData(), as: UTF8.self) : report.text)
                case .records(let format):
                    var formatOptions = FormatOptions(
                        bundle: try model.map { try loadBundle($0, versionOrder: versionOrder) }, version: modelVersion)
                    formatOptions.missingExternalData = .keep
                    try inputOptions.apply(to: &formatOptions)
                    let report = try RecordsReport(input: url, format: format, options: formatOptions)
                    printOut(options.json ? String(decoding: try report.jsonDocument(), as: UTF8.self) : report.text)
                    printWarnings(report.transformables?.warnings ?? [])
                case .mappingModel:
                    let bundle = try model.map { try loadBundle($0, versionOrder: versionOrder) }
                    let report = MappingModelReport(
                        mapping: try XcodeMappingModel.load(contentsOf: url, bundle: bundle), path: path, bundle: bundle)
                    printOut(options.json ? String(decoding: try report.jsonDocument(), as: UTF8.self) : report.text)
                case .keyedArchive:
                    let report = try ArchiveReport(archive: url, path: path)
                    printOut(options.json ? String(decoding: try report.jsonData(), as: UTF8.self) : report.text)
                case .propertyList:
                    let report = try PropertyListReport(propertyList: url, path: path)
                    printOut(options.json ? String(decoding: try report.jsonData(), as: UTF8.self) : report.text)
                case .store(let format):
                    let bundle = try model.map { try loadBundle($0, versionOrder: versionOrder) }
                    let report = try StoreReport(store: url, path: path, bundle: bundle, format: format)
                    printOut(options.json ? String(decoding: try report.jsonData(), as: UTF8.self) : report.text)
                    printWarnings(report.transformables?.warnings ?? [])
                    try Self.requireMatch(report, given: bundle)
                }
            }
        }
    }
}
