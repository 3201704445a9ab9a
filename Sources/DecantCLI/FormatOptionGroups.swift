public import ArgumentParser
import Decant
import Foundation

/// The options of every command that reads records from an input of any format (`convert`, `migrate`, `seed`,
/// `plan`, `validate`, `inspect`): the input's format, and each format's own settings. Each format takes what
/// concerns it (``FormatOptions``): `--delimiter` and `--null` CSV, `--date-epoch` plain JSON, `--class` keyed
/// archives, `--key-path` and `--plist-mapping` plain property lists, `--entity` and `--key` every model-less input.
struct InputFormatOptions: ParsableArguments {
    @Option(name: .long, help: "The input's format (\(FormatRegistry.builtIn.names.joined(separator: ", "))), when its content and extension do not tell it.")
    var from: String?

    @Option(
        name: .customLong("entity"), parsing: .singleValue,
        help: "For plain JSON or a single CSV file: the entity it holds (convert: only these entities, comma-separated or repeated).")
    var entities: [String] = []

    @Option(name: .long, help: "The attribute identifying an entity's objects in references (Entity=attribute, repeatable).")
    var key: [String] = []

    @OptionGroup(title: "JSON input") var json: JSONInputOptions
    @OptionGroup(title: "CSV input and output") var csv: CSVInputOptions
    @OptionGroup(title: "Keyed archive input") var archive: ArchiveInputOptions
    @OptionGroup(title: "Property list input") var propertyList: PropertyListInputOptions

    /// The entity names `--entity` gives (comma-separated or repeated).
    var entityNames: [String] {
        entities.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    func validate() throws {
        _ = try keys()
    }

    /// `--key Entity=attribute` options, by entity.
    func keys() throws -> [String: String] {
        var keys: [String: String] = [:]
        for pair in key {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--key takes Entity=attribute, not \(pair)")
            }
            guard keys[parts[0]] == nil else { throw ValidationError("--key names \(parts[0]) twice") }
            keys[parts[0]] = parts[1]
        }
        return keys
    }

    /// Puts these settings into `options`: the shared ones (entity, keys) and each format's own. `--entity` names the
    /// input's entity only when it names one.
    func apply(to options: inout FormatOptions) throws {
        options.keys = try keys()
        let names = entityNames
        if names.count == 1 { options.entity = names[0] }
        options.json.dateEpoch = json.dateEpoch
        options.csv.delimiter = csv.delimiter?.character
        options.csv.nullMarker = csv.nullMarker
        try ArchiveMapping.options(
            file: archive.classMapping.map { URL(fileURLWithPath: $0) }, classes: archive.classEntities, into: &options)
        try PropertyListMapping.options(
            file: propertyList.plistMapping.map { URL(fileURLWithPath: $0) }, keyPath: propertyList.keyPath,
            into: &options)
    }

    /// Refuses several `--entity` names where they can only name the entity of the input (every command but
    /// `convert`, which copies only the entities named).
    func requireOneEntity() throws {
        guard entityNames.count <= 1 else {
            throw ValidationError("--entity names the one entity a plain JSON array or a single CSV file holds")
        }
    }
}

/// Plain JSON's own input settings.
struct JSONInputOptions: ParsableArguments {
    @Option(name: .long, help: "For plain JSON: what numbers in Date attributes count seconds from.")
    var dateEpoch: JSONOptions.DateEpoch = .unix
}

/// CSV's own settings, for reading and writing.
struct CSVInputOptions: ParsableArguments {
    @Option(name: .long, help: "For CSV: the field delimiter, one ASCII character (\\t or tab for a tab).")
    var delimiter: DelimiterArgument?

    @Option(
        name: .customLong("null"),
        help: "For CSV: the text that stands for nil (an empty unquoted field by default).")
    var nullMarker: String?
}

/// Keyed archives' own input settings: which entity each archived class becomes.
struct ArchiveInputOptions: ParsableArguments {
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
}

/// Plain property lists' own input settings: where the records are and how they map.
struct PropertyListInputOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "For plain property lists: the array of dictionaries to convert, as dictionary keys joined by '.'.",
            valueName: "key.path"))
    var keyPath: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "For plain property lists: a JSON mapping (as `decant inspect FILE.plist` prints).", valueName: "file"))
    var plistMapping: String?
}

/// The options of every command that writes records to an output of any format (`convert`, `migrate`): the
/// output's format, the SQLite store's journal mode and JSON's `--decode-transformables`. CSV output takes
/// `--delimiter` and `--null` from ``InputFormatOptions``' CSV group.
struct OutputFormatOptions: ParsableArguments {
    @Option(name: .long, help: "The output's format (\(FormatRegistry.builtIn.names.joined(separator: ", "))), when its extension does not tell it.")
    var to: String?

    @Option(name: .long, help: "For a SQLite output: its journal mode (delete leaves one self-contained file).")
    var journal: SQLiteOptions.JournalMode = .wal

    @Flag(
        name: .customLong("decode-transformables"),
        help: """
            For JSON and NDJSON output: write Transformable values whose archives hold only Foundation's plain values as {"archived": value}, not base64 (the others stay base64, counted in a warning).
            """)
    var decodeTransformables = false

    /// Puts these settings into `options`.
    func apply(to options: inout FormatOptions) {
        options.sqlite.journalMode = journal
        options.json.decodesTransformables = decodeTransformables
    }
}

// Library enums are arguments as they are: no CLI copies to keep in step.
extension JSONOptions.DateEpoch: ExpressibleByArgument {}
extension SQLiteOptions.JournalMode: ExpressibleByArgument {}
extension MissingExternalDataPolicy: ExpressibleByArgument {}
extension ModelDiagram.Style: ExpressibleByArgument {}

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
