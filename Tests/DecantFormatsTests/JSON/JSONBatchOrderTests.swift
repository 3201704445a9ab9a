import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// The order in which the JSON reader hands out its batches: an object another one refers to goes out no later
/// than the batch of the one referring to it (so that a store writer finds it written and resolves the reference
/// from memory instead of staging it until the end), and the entities of one hierarchy, which share a table and
/// its keys, keep their order.
@Suite("JSON batch order")
struct JSONBatchOrderTests {
    /// Every batch `data` gives, as `Entity: id id …`.
    static func batches(
        _ data: Data, style: JSONRecordWriter.Style, options: FormatOptions, batchSize: Int, direct: Bool = true
    ) throws -> [String] {
        let reader = try JSONRecordReader(
            data: data, path: "in.ndjson", style: style, options: options, batchSize: batchSize)
        reader.readsLinesDirectly = direct
        var batch = RecordBatch(layout: try #require(reader.model.entities.first.flatMap {
            RecordLayout(entity: $0.name, in: reader.model)
        }))
        var result: [String] = []
        while try reader.nextBatch(into: &batch) {
            let ids = (0..<batch.count).map { "\(batch.id(at: $0))" }
            result.append("\(batch.layout.entityName): \(ids.joined(separator: " "))")
        }
        return result
    }

    /// One author nested in the first book and named by key in every other: with two books a batch, the author's
    /// batch (never full) goes out before the first full batch of books, not after every book.
    @Test(arguments: [true, false])
    func anObjectNamedByKeyGoesOutBeforeTheBatchNamingIt(direct: Bool) throws {
        var options = FormatOptions(bundle: JSONTesting.bundle(PlainJSONImportTests.model))
        options.entity = "Book"
        let lines =
            [#"{"title": "Dune", "author": {"id": 1, "name": "Frank Herbert"}}"#]
            + (2...5).map { #"{"title": "Book \#($0)", "author_id": 1}"# }
        let batches = try Self.batches(
            Data(lines.joined(separator: "\n").utf8), style: .lines, options: options, batchSize: 2, direct: direct)
        #expect(batches == ["Author: 1", "Book: #1 #2", "Book: #3 #4", "Book: #5"])
    }

    /// Items and sub-items share `ZITEM` and its keys: a full batch of items does not send the sub-items' partly
    /// filled batch ahead of it (which would change which object gets which key), while the folders' batch does go.
    @Test func entitiesOfOneHierarchyKeepTheirOrder() throws {
        var item = Entity(name: "Item")
        item.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        item.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "items")]
        var subItem = Entity(name: "SubItem", parentName: "Item")
        subItem.attributes = [Attribute(name: "extra", type: .string, isOptional: true)]
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "items", destination: "Item", inverse: "folder", toMany: true)]
        let model = ObjectModel(versionName: "Items", entities: [folder, item, subItem])
        let store = try JSONTesting.store(
            model,
            [
                "Folder": [Record(entity: "Folder", id: .primaryKey(1), values: [.string("f")], relationships: [.toMany([])])],
                "Item": [1, 3].map {
                    Record(entity: "Item", id: .primaryKey($0), values: [.string("i\($0)")], relationships: [.toOne(nil)])
                },
                "SubItem": [Record(
                    entity: "SubItem", id: .primaryKey(2), values: [.string("s"), .string("x")], relationships: [.toOne(nil)])],
            ])
        // Decant's own NDJSON, its object lines reordered: the folder, an item, the sub-item, the other item.
        let written = String(decoding: try JSONTesting.write(store, style: .lines), as: UTF8.self)
        let lines = written.split(separator: "\n").map(String.init)
        let header = try #require(lines.first)
        func line(_ id: String) throws -> String { try #require(lines.first { $0.hasPrefix(#"{"@id":"\#(id)""#) }) }
        let reordered = [header, try line("Folder/p1"), try line("Item/p1"), try line("SubItem/p2"), try line("Item/p3")]
        var options = FormatOptions(bundle: JSONTesting.bundle(model))
        options.entity = nil
        let batches = try Self.batches(
            Data(reordered.joined(separator: "\n").utf8), style: .lines, options: options, batchSize: 2)
        #expect(batches == ["Folder: p1", "Item: p1 p3", "SubItem: p2"])
    }
}
