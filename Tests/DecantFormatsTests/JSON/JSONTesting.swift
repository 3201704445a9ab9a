import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Writing stores to JSON and reading JSON back, in memory and in temporary folders.
enum JSONTesting {
    /// A store holding `records`.
    static func store(_ model: ObjectModel, _ records: [String: [Record]]) throws -> InMemoryStore {
        var store = InMemoryStore(model: model)
        for entity in records.keys.sorted() {
            for record in records[entity] ?? [] { try store.insert(record) }
        }
        return store
    }

    /// The bundle of one model version.
    static func bundle(_ model: ObjectModel) -> ModelBundle {
        ModelBundle(
            name: model.versionName ?? "Model", versions: [model], currentVersionName: model.versionName,
            sourceKind: .xcdatamodeld)
    }

    /// What the JSON writer makes of `store`.
    static func write(_ store: InMemoryStore, style: JSONRecordWriter.Style) throws -> Data {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent(style == .document ? "out.json" : "out.ndjson")
        var reader = store.makeReader(batchSize: 3)
        var writer = try JSONRecordWriter(creating: url, model: store.model, style: style)
        let report = try RecordTransfer.copy(from: &reader, to: &writer)
        #expect(report.isReconciled)
        return try Data(contentsOf: url)
    }

    /// Every batch `reader` gives, record ids, cells and bytes (for comparing two ways of reading one input);
    /// `entity` names a layout to start the batch with.
    static func dump(_ reader: JSONRecordReader, entity: String) throws -> String {
        var dump = ""
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: entity, in: reader.model)))
        while try reader.nextBatch(into: &batch) {
            dump += "batch \(batch.layout.entityName) \(batch.count) \(batch.entityNames)\n"
            for row in 0..<batch.count {
                dump += "\(batch.id(at: row)) \(batch.isAnonymous(at: row))\n"
            }
            for cell in batch.identities + batch.cells + [RecordBatch.Cell(kind: .null)] + batch.references {
                dump += "\(cell.kind) \(cell.integer) \(cell.length) \(cell.entity)\n"
            }
            dump += "\(batch.bytes)\n"
        }
        return dump
    }

    /// The objects `data` holds.
    static func read(
        _ data: Data, style: JSONRecordWriter.Style, options: FormatOptions, batchSize: Int = 4
    ) throws -> InMemoryStore {
        var reader = try JSONRecordReader(
            data: data, path: "in.json", style: style, options: options, batchSize: batchSize)
        var writer = InMemoryStore.Writer(model: reader.model)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        return writer.store
    }

    /// Plain JSON text for `entity` of `model`, read.
    static func importPlain(
        _ text: String, model: ObjectModel, entity: String?, configure: (inout FormatOptions) -> Void = { _ in }
    ) throws -> InMemoryStore {
        var options = FormatOptions(bundle: bundle(model))
        options.entity = entity
        configure(&options)
        return try read(Data(text.utf8), style: .document, options: options)
    }

    /// The error reading `text` throws.
    static func readError(
        _ text: String, style: JSONRecordWriter.Style = .document, options: FormatOptions
    ) -> DecantError? {
        #expect(throws: DecantError.self) { _ = try read(Data(text.utf8), style: style, options: options) }
    }

    /// Every record of `store`, cell by cell.
    static func cells(_ store: InMemoryStore) throws -> [String: [String]] {
        var reader = store.makeReader()
        return try RecordDump.cells(of: &reader)
    }
}
