public import DecantCore
import DecantCodecs
public import Foundation

/// JSON as a ``RecordFormat`` (`json`): Decant's own lossless document, and, for reading, the plain JSON people
/// export from other tools.
///
/// **Decant's document** (what ``JSONRecordWriter`` writes, described by `schemas/document.schema.json`) carries its
/// model version's entity hashes, so it is read with the version of `--model` they match, like a store, and reads
/// back into exactly the objects, identities, values and relationships it was written from.
///
/// **Plain JSON** is an array of objects of one entity (`FormatOptions.entity`, or the model's only entity),
/// following `FormatOptions.modelForModelLessInput`:
/// ```json
/// [{"title": "Dune", "published_at": "1965-08-01T00:00:00-04:00", "author_id": 1,
///   "tags": [{"name": "classic"}]}]
/// ```
/// - Keys name attributes and relationships exactly, else ignoring case, else ignoring `_` and `-` (`published_at`
///   is `publishedAt`). A key that names nothing is an error naming it: nothing is dropped silently.
/// - A relationship holds a nested object (or an array of them), which becomes an object of its destination whose
///   inverse points back, or the key of an object (a scalar); `author_id` / `tag_ids` hold keys for `author` /
///   `tags`. An entity's key is `FormatOptions.keys[Entity]` (`--key Author=id`), else its one-attribute
///   uniqueness constraint; objects with a key are identified by it, and every key referred to must be defined
///   somewhere in the input.
/// - Dates are ISO 8601 with any offset, with or without a fraction of a second (without an offset, UTC), or
///   numbers of seconds since `JSONOptions.dateEpoch`. Numbers may be given as numeric strings; binary data is
///   base64.
///
/// ```swift
/// var options = FormatOptions(bundle: books)
/// options.entity = "Book"
/// options.keys = ["Author": "id"]
/// var reader = try JSONFormat().makeReader(at: url, options: options)
/// ```
public struct JSONFormat: RecordFormat {
    public let name = "json"
    public let fileExtensions = ["json"]

    /// The format.
    public init() {}

    /// A JSON text (`{` or `[` first) that is not NDJSON and is not named as NDJSON.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        guard !probe.isDirectory, let first = probe.firstNonBlankByte,
            first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        else { return false }
        return !NDJSONFormat.looksLikeLines(probe.header)
            && !NDJSONFormat().fileExtensions.contains(probe.url.pathExtension.lowercased())
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try JSONRecordReader(contentsOf: url, style: .document, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try JSONRecordWriter(writingAt: url, model: model, style: .document, options: options.json)
    }
}

/// NDJSON (newline-delimited JSON, JSON Lines) as a ``RecordFormat`` (`ndjson`): one JSON object per line.
///
/// Decant's form puts the document header alone on the first line, `{"decant": {…}}`, then one object per line
/// in the shape of the JSON document's objects, so a file can be read, filtered (`grep`, `jq -c`) and written
/// line by line without ever holding it whole. Without that header line, every line is a plain object of one
/// entity, read as ``JSONFormat`` reads plain JSON.
/// ```
/// {"decant":{"formatVersion":1,"model":{…},"metadata":{…}}}
/// {"@id":"Note/p1","date":"2024-05-19T18:14:06.84Z","text":"milk","title":null,"folder":"Folder/p1"}
/// ```
/// ```swift
/// var writer = try NDJSONFormat().makeWriter(at: url, model: model, options: FormatOptions())
/// ```
public struct NDJSONFormat: RecordFormat {
    public let name = "ndjson"
    public let fileExtensions = ["ndjson", "jsonl"]

    /// The format.
    public init() {}

    /// A first line that is Decant's header line, or a complete JSON object followed by another line of JSON; or a
    /// `{` first in a file named `.ndjson` or `.jsonl`.
    public func recognizes(_ probe: FormatProbe) -> Bool {
        guard !probe.isDirectory else { return false }
        if Self.looksLikeLines(probe.header) { return true }
        return probe.firstNonBlankByte == UInt8(ascii: "{")
            && fileExtensions.contains(probe.url.pathExtension.lowercased())
    }

    public func makeReader(at url: URL, options: FormatOptions) throws -> any RecordReader {
        try JSONRecordReader(contentsOf: url, style: .lines, options: options)
    }

    public func makeWriter(at url: URL, model: ObjectModel, options: FormatOptions) throws -> any RecordWriter {
        try JSONRecordWriter(writingAt: url, model: model, style: .lines, options: options.json)
    }

    /// Whether the first bytes of a file are NDJSON: a first line that is one whole JSON value, and either Decant's
    /// header line or followed by a line that starts another value.
    static func looksLikeLines(_ header: Data) -> Bool {
        var bytes = header[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        guard let start = bytes.firstIndex(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
            bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "["),
            let end = bytes[start...].firstIndex(of: 0x0A)
        else { return false }
        guard let scanner = try? JSONScanner(bytes: Array(bytes[start..<end]), path: ""),
            let node = try? scanner.parseValue(), (try? scanner.isAtEnd()) == true
        else { return false }
        if let members = node.value.members, members.count == 1, members[0].key == "decant" { return true }
        let rest = bytes[(end + 1)...].drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return rest.first == UInt8(ascii: "{") || rest.first == UInt8(ascii: "[")
    }
}
