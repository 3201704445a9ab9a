import DecantCore
import DecantCodecs
import DecantFormats
import Foundation

/// Helpers for the keyed-archive format tests.
enum ArchiveTesting {
    /// Every record a reader yields, per entity, in order.
    static func readAll(_ reader: inout some RecordReader) throws -> [String: [Record]] {
        var records: [String: [Record]] = [:]
        var batch = RecordBatch(layout: try layout(of: reader.model.entities[0].name, in: reader.model))
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count {
                records[batch.layout.entityName, default: []].append(batch.record(at: row))
            }
        }
        return records
    }

    static func layout(of entity: String, in model: ObjectModel) throws -> RecordLayout {
        guard let layout = RecordLayout(entity: entity, in: model) else {
            throw DecantError(.usage, "no entity \(entity)")
        }
        return layout
    }

    /// Reads `data` with `options` and returns every record per entity.
    static func records(_ data: Data, options: FormatOptions) throws -> [String: [Record]] {
        var reader = try ArchiveReader(data: data, path: "test.archive", options: options)
        return try readAll(&reader)
    }

    /// The value of attribute `name` of `record`, by the model's layout.
    static func value(_ name: String, of record: Record, in model: ObjectModel) -> Value? {
        guard let layout = RecordLayout(entity: record.entity, in: model),
            let index = layout.attributeIndex(name)
        else { return nil }
        return record.values[index]
    }

    /// The value of relationship `name` of `record`.
    static func relationship(_ name: String, of record: Record, in model: ObjectModel)
        -> RelationshipValue?
    {
        guard let layout = RecordLayout(entity: record.entity, in: model),
            let index = layout.relationshipIndex(name)
        else { return nil }
        return record.relationships[index]
    }

    /// A one-version bundle of `model`.
    static func bundle(_ model: ObjectModel) -> ModelBundle {
        ModelBundle(
            name: "Test", versions: [model], currentVersionName: model.versionName,
            sourceKind: .xcdatamodeld)
    }

    /// A model with one entity `Shape` holding an attribute of each listed type.
    static func shapeModel(_ attributes: [(String, AttributeType)]) -> ObjectModel {
        var shape = Entity(name: "Shape")
        shape.attributes = attributes.map { Attribute(name: $0.0, type: $0.1, isOptional: true) }
        return ObjectModel(versionName: "Shapes", entities: [shape])
    }

    /// An archive whose root is one `Shape` object with `fields` (built by `body`).
    static func shapeArchive(
        _ body: (inout KeyedArchiveWriter) -> PropertyListDictionary
    ) throws -> Data {
        var writer = KeyedArchiveWriter()
        let shape = writer.reserveObject()
        let fields = body(&writer)
        writer.setObject(shape, className: "MyApp.Shape", fields: fields)
        return try writer.encodedData(root: shape)
    }
}
