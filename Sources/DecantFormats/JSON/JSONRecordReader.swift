public import DecantCore
import DecantCodecs
public import Foundation

/// Streams records out of JSON: Decant's own document or its NDJSON form (see ``JSONRecordWriter``), or plain
/// JSON — an array of objects of one entity, or NDJSON lines of them (see ``JSONFormat`` for how those are read).
///
/// Nothing is loaded whole: the input is read in chunks and parsed one object at a time, so memory holds one
/// object, the batches being filled and, for plain JSON, the keys seen (to resolve references by key); a
/// document's objects may refer to objects that come later. Any input that is not what it should be (broken
/// syntax, a truncated file, text that is not UTF-8, an unknown key, a value of the wrong type) throws
/// `.malformedInput` naming the file, line and column, and the entity and key when known.
///
/// ```swift
/// var reader = try JSONRecordReader(contentsOf: url, style: .document, options: FormatOptions(bundle: notes))
/// var writer = try SQLiteStoreWriter(creating: out, model: reader.model)
/// _ = try RecordTransfer.copy(from: &reader, to: &writer)
/// ```
public final class JSONRecordReader: EntityNamingReader {
    /// The model the records follow: the version the header's hashes match, or for plain JSON the version
    /// `FormatOptions.modelForModelLessInput` names.
    public let model: ObjectModel
    /// The entity `FormatOptions.entity` named, when the input holds objects of one unnamed entity.
    public private(set) var entityFromOptions: String?
    /// The header of Decant's document; nil for plain JSON.
    public let header: JSONDocumentHeader?
    /// Records per batch.
    public let batchSize: Int

    private let scanner: JSONScanner
    private let style: JSONRecordWriter.Style
    private var sink: BatchSink
    private var decoder: DocumentObjectDecoder?
    /// Decant's NDJSON lines of the usual form, read straight into batches (see ``DocumentLineDecoder``).
    private var lineDecoder: DocumentLineDecoder?
    /// Whether lines of Decant's form go to ``lineDecoder`` first, and plain lines to the importer's
    /// ``PlainObjectImporter/importLine(_:into:)`` (tests compare with it off).
    var readsLinesDirectly = true
    /// How many lines went straight into batches (for tests).
    var linesReadDirectly: Int { lineDecoder?.decodedLines ?? importer?.linesImportedDirectly ?? 0 }
    private var importer: PlainObjectImporter?
    /// Where the reader is in the input's outer structure.
    private enum Position {
        /// Inside the `"objects"` array of a document, or a top-level array of plain objects.
        case inArray(first: Bool, isDocument: Bool)
        /// NDJSON lines.
        case lines
        case finished
    }
    private var position: Position
    /// A plain NDJSON first line, read to tell plain from Decant's form, still to import.
    private var pendingLine: JSONNode?

    /// Opens `url`. `style` `.document` reads a JSON text (Decant's document or an array of plain objects),
    /// `.lines` reads NDJSON (Decant's header line then objects, or plain objects).
    /// - Throws: ``DecantError``: `.fileNotFound`, `.malformedInput` for a bad header, `.modelMismatch` when no
    ///   version of the bundle matches the header, `.usage` when plain JSON has no model or entity.
    public convenience init(
        contentsOf url: URL, style: JSONRecordWriter.Style, options: FormatOptions, batchSize: Int = 1024
    ) throws {
        try self.init(
            scanner: JSONScanner(url: url), reopen: { try JSONScanner(url: url) }, style: style, options: options,
            batchSize: batchSize)
    }

    /// Reads JSON from memory; `path` names it in messages.
    public convenience init(
        data: Data, path: String = "<data>", style: JSONRecordWriter.Style, options: FormatOptions,
        batchSize: Int = 1024
    ) throws {
        let bytes = Array(data)
        try self.init(
            scanner: JSONScanner(bytes: bytes, path: path), reopen: { try JSONScanner(bytes: bytes, path: path) },
            style: style, options: options, batchSize: batchSize)
    }

    /// `reopen` scans the input again from its start (for ``PlainObjectImporter``'s recall of keys).
    private init(
        scanner: JSONScanner, reopen: @escaping () throws -> JSONScanner, style: JSONRecordWriter.Style,
        options: FormatOptions, batchSize: Int
    ) throws {
        self.scanner = scanner
        self.style = style
        self.batchSize = max(1, batchSize)
        self.sink = BatchSink(batchSize: batchSize)
        let path = scanner.path
        var header: JSONDocumentHeader?
        switch style {
        case .document:
            try scanner.skipWhitespace()
            switch try scanner.peek() {
            case UInt8(ascii: "{"):
                scanner.advance()
                try scanner.skipWhitespace()
                let (key, line, column) = try scanner.parseKey()
                guard key == "decant" else {
                    throw DecantError(
                        .malformedInput,
                        "expected a Decant JSON document, whose first key is \"decant\", or an array of objects; "
                            + "found an object whose first key is \"\(key)\"",
                        at: Location(path: path, line: line, column: column))
                }
                header = try JSONDocumentHeader(node: scanner.parseValue(), path: path)
                position = try Self.openObjects(scanner)
            case UInt8(ascii: "["):
                scanner.advance()
                position = .inArray(first: true, isDocument: false)
            case nil:
                throw scanner.failure("the file is empty, expected a JSON document or an array of objects")
            default:
                throw try scanner.unexpected(
                    expected: "a Decant JSON document ({\"decant\": …}) or an array of objects")
            }
        case .lines:
            position = .lines
            let first = try Self.nextLine(scanner)
            if let first, let members = first.value.members, members.count == 1, members[0].key == "decant" {
                header = try JSONDocumentHeader(node: members[0].node, path: path)
            } else {
                pendingLine = first
            }
        }
        self.header = header
        if let header {
            model = try header.resolveModel(bundle: options.bundle, at: Location(path: path))
            decoder = DocumentObjectDecoder(model: model, path: path)
            if style == .lines { lineDecoder = DocumentLineDecoder(model: model) }
        } else {
            model = try options.modelForModelLessInput(at: Location(path: path))
            let entity = try Self.entity(for: model, options: options, path: path)
            entityFromOptions = options.entity
            importer = try PlainObjectImporter(
                model: model, entity: entity, options: options, path: path,
                reread: { count, body in try Self.rereadObjects(count, reopen(), style: style, body) })
        }
        sink.rootOf = { [model] name in model.entity(named: name).map { model.root(of: $0).name } ?? name }
    }

    deinit {
        scanner.close()
    }

    public func nextBatch(into batch: inout RecordBatch) throws -> Bool {
        while !sink.hasReady {
            if readsLinesDirectly, let lineDecoder, pendingLine == nil, case .lines = position {
                try scanner.skipWhitespace()
                if try scanner.peek() != nil,
                    try scanner.withBufferedLine({ lineDecoder.decode($0, into: &sink) })
                {
                    continue
                }
            }
            if readsLinesDirectly, importer != nil, pendingLine == nil, case .lines = position {
                try scanner.skipWhitespace()
                if try scanner.peek() != nil,
                    try scanner.withBufferedLine({ importer?.importLine($0, into: &sink) ?? false })
                {
                    continue
                }
            }
            guard let node = try nextObject() else {
                try importer?.verifyComplete()
                sink.flush()
                break
            }
            if let (record, layout) = try decoder?.decode(node) {
                sink.append(record, layout: layout)
            } else {
                try importer?.importTopLevel(node, into: &sink)
            }
        }
        guard let next = sink.popReady() else {
            scanner.close()
            return false
        }
        batch = next
        return true
    }

    // MARK: Structure

    /// After the header: `, "objects": [` (or the end of the document).
    private static func openObjects(_ scanner: JSONScanner) throws -> Position {
        try scanner.skipWhitespace()
        switch try scanner.peek() {
        case UInt8(ascii: "}"):
            scanner.advance()
            try expectEnd(scanner)
            return .finished
        case UInt8(ascii: ","):
            scanner.advance()
            try scanner.skipWhitespace()
            let (key, line, column) = try scanner.parseKey()
            guard key == "objects" else {
                throw DecantError(
                    .malformedInput, "unknown key \(key) in the document (expected \"objects\" after \"decant\")",
                    at: Location(path: scanner.path, line: line, column: column, keyPath: key))
            }
            try scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: "["), "'[' (the array of objects)")
            return .inArray(first: true, isDocument: true)
        default:
            throw try scanner.unexpected(expected: "',' or '}' after the header")
        }
    }

    private static func expectEnd(_ scanner: JSONScanner) throws {
        guard try scanner.isAtEnd() else {
            throw try scanner.unexpected(expected: "the end of the file after the JSON text")
        }
    }

    /// The next object of the input, or nil after the last.
    private func nextObject() throws -> JSONNode? {
        if let pending = pendingLine {
            pendingLine = nil
            return pending
        }
        switch position {
        case .finished:
            return nil
        case .lines:
            guard let node = try Self.nextLine(scanner) else {
                position = .finished
                return nil
            }
            return node
        case .inArray(let first, let isDocument):
            try scanner.skipWhitespace()
            if try scanner.peek() == UInt8(ascii: "]") {
                scanner.advance()
                if isDocument {
                    try scanner.skipWhitespace()
                    guard try scanner.peek() == UInt8(ascii: "}") else {
                        throw try scanner.unexpected(
                            expected: "'}' after the objects (a Decant document has only \"decant\" and \"objects\")")
                    }
                    scanner.advance()
                }
                try Self.expectEnd(scanner)
                position = .finished
                return nil
            }
            if !first {
                try scanner.expect(UInt8(ascii: ","), "',' or ']' after an object")
            }
            position = .inArray(first: false, isDocument: isDocument)
            return try scanner.parseValue()
        }
    }

    /// The next NDJSON line's value (blank lines skipped), or nil at the end.
    private static func nextLine(_ scanner: JSONScanner) throws -> JSONNode? {
        try scanner.skipWhitespace()
        guard try scanner.peek() != nil else { return nil }
        let line = scanner.line
        let node = try scanner.parseValue()
        guard scanner.line == line else {
            throw DecantError(
                .malformedInput,
                "the value starting on line \(line) spans several lines; NDJSON holds one JSON value per line",
                at: Location(path: scanner.path, line: line, column: node.column))
        }
        try scanner.skipBlanksOnLine()
        if let byte = try scanner.peek(), byte != 0x0A {
            throw try scanner.unexpected(expected: "the end of the line (NDJSON holds one JSON value per line)")
        }
        return node
    }

    /// Reads the first `count` objects of plain JSON again from `scanner` (an array of objects or NDJSON lines, as
    /// `style` says), handing each to `body`.
    private static func rereadObjects(
        _ count: Int, _ scanner: JSONScanner, style: JSONRecordWriter.Style, _ body: (JSONNode) throws -> Void
    ) throws {
        defer { scanner.close() }
        switch style {
        case .lines:
            for _ in 0..<count {
                guard let node = try nextLine(scanner) else { return }
                try body(node)
            }
        case .document:
            try scanner.skipWhitespace()
            try scanner.expect(UInt8(ascii: "["), "'[' (an array of objects)")
            for index in 0..<count {
                try scanner.skipWhitespace()
                if index > 0 {
                    try scanner.expect(UInt8(ascii: ","), "',' or ']' after an object")
                }
                try body(scanner.parseValue())
            }
        }
    }

    /// The entity plain JSON holds: `options.entity`, or the model's only concrete entity.
    private static func entity(for model: ObjectModel, options: FormatOptions, path: String) throws -> String {
        let concrete = model.entities.filter { !$0.isAbstract }.map(\.name)
        if let name = options.entity {
            guard model.entity(named: name) != nil else {
                throw DecantError(
                    .usage,
                    "--entity \(name): the model has no such entity (it has \(concrete.joined(separator: ", ")))",
                    at: Location(path: path))
            }
            return name
        }
        guard concrete.count == 1, let only = concrete.first else {
            throw DecantError(
                .usage,
                "plain JSON holds the objects of one entity: name it with --entity (one of "
                    + "\(concrete.joined(separator: ", ")))",
                at: Location(path: path))
        }
        return only
    }
}

@available(*, unavailable)
extension JSONRecordReader: Sendable {}
