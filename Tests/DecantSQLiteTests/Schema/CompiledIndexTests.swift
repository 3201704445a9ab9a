import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// A model that went through compilation (a `.mom`, a store's `Z_MODELCACHE`) lists an indexed attribute also as a
/// fetch index named after it, and every fetch index again as a compound index. Its store schema must be exactly
/// the one of the source model: each index once.
@Suite("Indexes of compiled models")
struct CompiledIndexTests {
    static let source: ObjectModel = {
        var bookmark = Entity(name: "BookmarkEntity")
        var pending = Attribute(name: "isPendingDeletion", type: .boolean, isOptional: true)
        pending.isIndexed = true
        bookmark.attributes = [
            pending, Attribute(name: "title", type: .string, isOptional: true),
            Attribute(name: "created", type: .date, isOptional: true),
        ]
        bookmark.fetchIndexes = [
            FetchIndex(name: "byTitle", elements: [.init(property: "title")]),
            FetchIndex(name: "byTitleAndDate", elements: [.init(property: "title"), .init(property: "created", isAscending: false)]),
        ]
        return ObjectModel(versionName: "Bookmarks", entities: [bookmark], versionIdentifiers: ["1"])
    }()

    /// What the model compiler makes of `source`.
    static var compiled: ObjectModel {
        var model = source
        model.entities[0].fetchIndexes.append(FetchIndex(name: "isPendingDeletion", elements: [.init(property: "isPendingDeletion")]))
        model.entities[0].compoundIndexes = model.entities[0].fetchIndexes.map { $0.elements.compactMap(\.property) }
        return model
    }

    static func indexes(of model: ObjectModel) throws -> [String] {
        try StoreSchema(model: model).indexes.map { index in
            "\(index.name) ON \(index.table) (\(index.elements.map { "\($0.column) \($0.order ?? "")" }.joined(separator: ", ")))"
        }.sorted()
    }

    @Test func compiledModelGivesTheSourceIndexes() throws {
        let expected = try Self.indexes(of: Self.source)
        #expect(expected.count == 4)
        #expect(Set(expected).count == expected.count)
        #expect(try Self.indexes(of: Self.compiled) == expected)
        // Through the archive, as a store's Z_MODELCACHE carries it.
        for model in [Self.source, Self.compiled] {
            let decoded = try ArchivedModelDecoder.decode(ArchivedModelEncoder.encode(model))
            #expect(try Self.indexes(of: decoded) == expected)
        }
    }

    @Test func aStoreWrittenFromTheCompiledModelHasTheSourceSchema() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var snapshots: [SQLiteSchemaSnapshot] = []
        for (index, model) in [Self.source, Self.compiled].enumerated() {
            let url = folder.appendingPathComponent("\(index).sqlite")
            let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
            try writer.finish()
            snapshots.append(try SQLiteSchemaSnapshot(contentsOf: url.path))
        }
        #expect(snapshots[0].differences(from: snapshots[1]).isEmpty)
    }
}
