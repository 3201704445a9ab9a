import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// A copy that fails part-way must neither crash nor leave anything behind: the writer is abandoned (rolled back,
/// statements finalized, connection closed, files deleted, in that order) whether the reader, the writer or the
/// caller gives up, under the overlapped and the plain copy, many times over.
@Suite("Abandoned copies", .serialized)
struct AbandonedCopyTests {
    /// Reads `batches` batches from a real reader, then throws: a store whose next entity fails.
    struct FailingReader<Base: RecordReader>: RecordReader {
        var base: Base
        var remaining: Int
        var model: ObjectModel { base.model }

        mutating func nextBatch(into batch: inout RecordBatch) throws -> Bool {
            guard remaining > 0 else {
                throw DecantError(.malformedInput, "reader failed on purpose", at: Location(path: "failing"))
            }
            remaining -= 1
            return try base.nextBatch(into: &batch)
        }
    }

    /// Counts the batches it hands out, so a test can see that the caller's reader advanced.
    struct CountingReader: RecordReader {
        let model: ObjectModel
        var batches: [[DecantCore.Record]]
        var handedOut = 0

        mutating func nextBatch(into batch: inout RecordBatch) throws -> Bool {
            guard handedOut < batches.count else { return false }
            let records = batches[handedOut]
            handedOut += 1
            guard let first = records.first, let layout = RecordLayout(entity: first.entity, in: model) else { return false }
            batch.removeAll(newLayout: layout)
            for record in records { batch.append(record) }
            return true
        }
    }

    /// A fresh library store (every relationship kind) in its own folder, with small batches so copies take
    /// several steps.
    static func source() throws -> (folder: URL, store: SQLiteStore) {
        var store: SQLiteStore?
        let folder = try Fixtures.temporaryDirectory { folder in
            let url = folder.appendingPathComponent("Library.sqlite")
            try StoreFeatureTests.writeLibrary(to: url)
            store = try SQLiteStore(contentsOf: url)
        }
        return (folder, try #require(store))
    }

    /// The files in `folder` besides the source store.
    static func leftovers(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "Library.sqlite" }.sorted()
    }

    @Test("a reader that throws after N batches abandons the output", arguments: [true, false])
    func readerFailure(overlapping: Bool) throws {
        let (folder, store) = try Self.source()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try store.resolveModel(bundle: nil)
        let output = folder.appendingPathComponent("Out.sqlite")
        for run in 0..<200 {
            let base = try SQLiteStoreReader(store: store, model: model, batchSize: 1)
            var reader = FailingReader(base: base, remaining: run % 9)
            var writer = try SQLiteStoreWriter(creating: output, model: model)
            let error = #expect(throws: DecantError.self) {
                try RecordTransfer.copy(from: &reader, to: &writer, overlapping: overlapping)
            }
            #expect(error?.message == "reader failed on purpose")
            #expect(try Self.leftovers(in: folder) == [], "run \(run)")
        }
    }

    @Test("a writer abandoned before finish() or released unfinished leaves nothing", arguments: [true, false])
    func writerAbandoned(explicitly: Bool) throws {
        let (folder, store) = try Self.source()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try store.resolveModel(bundle: nil)
        let output = folder.appendingPathComponent("Out.sqlite")
        try Data("an older file that must survive".utf8).write(to: output)
        for run in 0..<200 {
            let reader = try SQLiteStoreReader(store: store, model: model, batchSize: 1)
            var writer: SQLiteStoreWriter? = try SQLiteStoreWriter(creating: output, model: model)
            var batch = RecordBatch(layout: try #require(RecordLayout(entity: model.entities[0].name, in: model)))
            // Write part of the store, mid-transaction, with prepared statements alive.
            for _ in 0..<(run % 7) {
                guard try reader.nextBatch(into: &batch) else { break }
                try writer?.write(batch)
            }
            if explicitly { writer?.abandon() }
            writer = nil
            #expect(try Self.leftovers(in: folder) == ["Out.sqlite"], "run \(run)")
            #expect(try String(contentsOf: output, encoding: .utf8) == "an older file that must survive")
        }
    }

    @Test("a writer that fails mid-copy is abandoned", arguments: [true, false])
    func writerFailure(overlapping: Bool) throws {
        // The destination model lacks an entity the source has: the writer throws on its first batch of it.
        let (folder, store) = try Self.source()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try store.resolveModel(bundle: nil)
        var smaller = model
        smaller.entities.removeAll { $0.name == "Tag" }
        for entity in smaller.entities.indices {
            smaller.entities[entity].relationships.removeAll { $0.destinationEntity == "Tag" }
        }
        let output = folder.appendingPathComponent("Out.sqlite")
        for run in 0..<200 {
            var reader = try SQLiteStoreReader(store: store, model: model, batchSize: 1 + run % 3)
            var writer = try SQLiteStoreWriter(creating: output, model: smaller)
            let error = #expect(throws: DecantError.self) {
                try RecordTransfer.copy(from: &reader, to: &writer, overlapping: overlapping)
            }
            #expect(error?.location?.entity != nil)
            #expect(try Self.leftovers(in: folder) == [], "run \(run)")
        }
    }

    @Test("the caller's reader is the one that advances", arguments: [true, false])
    func readerHandOver(overlapping: Bool) throws {
        let model = StoreFeatureTests.library
        let tags = try #require(StoreFeatureTests.records["Tag"])
        var reader = CountingReader(model: model, batches: tags.map { [$0] })
        var writer = InMemoryWriter()
        let report = try RecordTransfer.copy(from: &reader, to: &writer, overlapping: overlapping)
        #expect(reader.handedOut == tags.count)
        #expect(report.read == ["Tag": tags.count])
        #expect(writer.records.map(\.id) == tags.map(\.id))
        #expect(writer.finished)
    }

    @Test("a transform's rejects, removals and creations reconcile")
    func transformReconciles() throws {
        struct DropEmptyNames: RecordTransform {
            mutating func transform(_ batch: RecordBatch, into output: inout TransformOutput) throws {
                var kept = RecordBatch(layout: batch.layout, entityNames: batch.entityNames)
                for row in 0..<batch.count {
                    let record = batch.record(at: row)
                    if record.values.first == .string("new") {
                        output.reject(Reject(entity: record.entity, object: "\(record.entity)/\(record.id)", property: "name", rule: "test", value: "new"))
                    } else {
                        kept.append(record)
                    }
                }
                output.emit(kept)
            }
        }
        let model = StoreFeatureTests.library
        let tags = try #require(StoreFeatureTests.records["Tag"])
        var reader = CountingReader(model: model, batches: [tags])
        var writer = InMemoryWriter()
        let report = try RecordTransfer.copy(from: &reader, through: DropEmptyNames(), to: &writer)
        #expect(report.read == ["Tag": 3])
        #expect(report.written == ["Tag": 2])
        #expect(report.rejected == ["Tag": 1])
        #expect(report.rejects.map(\.object) == ["Tag/p2"])
        #expect(report.isReconciled)
        var broken = report
        broken.written["Tag"] = 3
        #expect(!broken.isReconciled)
    }
}

/// Collects records in memory.
struct InMemoryWriter: RecordWriter {
    var records: [DecantCore.Record] = []
    var finished = false
    var abandoned = false

    mutating func write(_ batch: RecordBatch) throws {
        records += (0..<batch.count).map { batch.record(at: $0) }
    }

    mutating func finish() throws { finished = true }
    mutating func abandon() { abandoned = true }
}
