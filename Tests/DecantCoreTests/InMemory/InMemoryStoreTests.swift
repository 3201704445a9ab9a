import DecantCore
import DecantTestSupport
import Foundation
import Testing

/// The in-memory store as a source and a sink of the record pipeline.
@Suite("In-memory store")
struct InMemoryStoreTests {
    static func filled() throws -> InMemoryStore {
        var store = InMemoryStore(model: LibraryFixture.model)
        for entity in LibraryFixture.records.keys.sorted() {
            for record in LibraryFixture.records[entity] ?? [] { try store.insert(record) }
        }
        return store
    }

    @Test func recordsComeBackAsInserted() throws {
        let store = try Self.filled()
        for (entity, records) in LibraryFixture.records {
            #expect(store.records(of: entity) == records, "\(entity)")
        }
        #expect(store.counts == LibraryFixture.records.mapValues(\.count))
    }

    @Test func aDecimalIsKeptExactly() throws {
        var tag = Entity(name: "Price")
        tag.attributes = [Attribute(name: "amount", type: .decimal, isOptional: true)]
        var store = InMemoryStore(model: ObjectModel(entities: [tag]))
        let exact = try #require(Decimal(string: "3.14159265358979323846264338327950288"))
        try store.insert(Record(entity: "Price", id: .primaryKey(1), values: [.decimal(exact)]))
        #expect(store.records(of: "Price").first?.values == [.decimal(exact)])
    }

    @Test func theReaderYieldsEntitiesInModelOrderInSlices() throws {
        let store = try Self.filled()
        var reader = store.makeReader(batchSize: 1)
        var batch = try store.layout(of: "Shelf").emptyBatch()
        var seen: [String] = []
        while try reader.nextBatch(into: &batch) {
            #expect(batch.count == 1)
            seen.append(batch.layout.entityName)
        }
        #expect(
            seen == [
                "Shelf", "Shelf", "Book", "Book", "EBook", "Author", "Author", "Tag", "Tag", "Tag", "Reading",
                "Reading",
            ])
    }

    @Test func aCopyThroughTheWriterIsExact() throws {
        let store = try Self.filled()
        var reader = store.makeReader(batchSize: 2)
        var writer = InMemoryStore.Writer(model: store.model)
        let report = try RecordTransfer.copy(from: &reader, to: &writer)
        #expect(report.isReconciled)
        var original = store.makeReader()
        var copied = writer.store.makeReader()
        #expect(try RecordDump.cells(of: &copied) == RecordDump.cells(of: &original))
    }

    @Test func abandonEmptiesAndFinishCloses() throws {
        let store = try Self.filled()
        var writer = InMemoryStore.Writer(model: store.model)
        var reader = store.makeReader()
        var batch = try store.layout(of: "Shelf").emptyBatch()
        _ = try reader.nextBatch(into: &batch)
        try writer.write(batch)
        writer.abandon()
        #expect(writer.store.counts.isEmpty)
        #expect(throws: DecantError.self) { try writer.write(batch) }
    }

    @Test func foreignLayoutsAndEntitiesAreRefused() throws {
        var store = InMemoryStore(model: LibraryFixture.model)
        let error = #expect(throws: DecantError.self) {
            try store.insert(Record(entity: "Magazine", id: .primaryKey(1), values: []))
        }
        #expect(error?.code == .usage)
        #expect(throws: DecantError.self) { try store.insert(Record(entity: "Tag", id: .primaryKey(1), values: [])) }
        var other = LibraryFixture.model
        other.entities[4].attributes.append(Attribute(name: "colour", type: .string))
        var batch = try #require(RecordLayout(entity: "Tag", in: other)).emptyBatch()
        batch.append(Record(entity: "Tag", id: .primaryKey(1), values: ["a", "red"]))
        #expect(throws: DecantError.self) { try store.insert(batch) }
    }
}
