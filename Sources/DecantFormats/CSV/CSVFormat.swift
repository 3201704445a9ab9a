public import DecantCore
import DecantCodecs
public import Foundation

/// CSV (RFC 4180) as a ``RecordFormat``: one file holding one entity, or a folder with a file per entity.
///
/// **Files.** A folder holds `Entity.csv` for each entity with objects (its concrete objects only; a sub-entity has
/// its own file with the inherited columns too), `Entity.relationship.csv` for each to-many relationship whose
/// members are listed, and `_decant.json`, the model version (name and entity hashes, so a folder reads back with
/// the version it was written for) and dialect. A single file's entity is its name (`Note.csv`) or
/// `FormatOptions.entity`. Input is UTF-8, with or without a byte-order mark.
///
/// **Columns.** `_id` is the object's id: `p12` (primary key 12, kept by a store) or the source's own id. Then the
/// attributes and the to-one relationships; a header finds its property exactly, then ignoring case, then as
/// snake_case for camelCase. A to-one column holds the destination: `Folder/p3` (the entity may be left out when
/// the destination has no sub-entities), or its key value when the destination is identified by a key
/// (`FormatOptions.keys`, else a uniqueness constraint on one attribute) and its file has no `_id` column. A join
/// file has `owner`, `member` and, for an ordered relationship, `position` (from 1). A one-to-many whose members
/// each name their owner in a to-one column needs no join file.
///
/// **Values.** nil is an empty unquoted field and `""` the empty string, unless a null marker is set
/// (``CSVDialect``). Integers in decimal; booleans `true`/`false`; doubles as their shortest round-trip text;
/// decimals exactly; dates in ISO 8601 UTC with the fractional digits their double needs
/// (`2024-05-01T09:30:00.25Z`); binary and transformable values in base64; UUIDs canonical; a missing externally
/// stored file as `_EXTERNAL_DATA/<name>`. Every value reads back bit for bit. The writer quotes a field when it
/// contains the delimiter, a quote or a line break, starts or ends with white space, is empty, or equals the null
/// marker; records end with CRLF.
///
/// ```swift
/// let csv = CSVFormat()
/// var reader = try csv.makeReader(at: folder, options: FormatOptions(bundle: notes))
/// var writer = try csv.makeWriter(at: output, model: reader.model, options: FormatOptions())
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public struct CSVFormat: RecordFormat {
    public let name = "csv"
    /// A CSV output is a folder: a file per entity, join files and `_decant.json`.
    public var writesFolder: Bool { true }
    public let fileExtensions = ["csv"]

    /// The format.
    public init() {}

    /// A folder with `_decant.json` or a `.csv` file; files go by their extension.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        guard probe.isDirectory else { return false }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: probe.url.path)) ?? []
        return names.contains {
            $0 == CSVFolderMetadata.fileName || (!$0.hasPrefix(".") && $0.lowercased().hasSuffix(".csv"))
        }
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try CSVReader(contentsOf: url, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try CSVWriter(writingAt: url, model: model, dialect: CSVDialect(options: options))
    }
}
