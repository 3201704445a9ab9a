import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Every Core Data store in the corpus, read with Decant's own reader: metadata, the model (from the repository's
/// model bundle when it has one, else from `Z_MODELCACHE`), every object, and a convert through the record
/// stream whose output has Apple's schema and reads back equal.
@Suite("Corpus SQLite stores")
struct CorpusStoreTests {
    static let stores: [String] = Fixtures.corpusStores

    /// The parameterized tests here and in `CorpusStoreSchemaTests` run once per store: an empty list would pass.
    /// Ten in the corpus, one (RestKit's seed store, written with an Xcode 3 model) in the legacy corpus, thirty in
    /// the apps corpus.
    @Test func theCorpusHasItsFortyOneStores() {
        #expect(Self.stores.count == 41)
    }

    /// The model of `store`: decoded from its `Z_MODELCACHE`, or, for a store allow-listed as having none, the
    /// version of a model source in its repository whose hashes it has.
    static func model(of store: String, opened: SQLiteStore) throws -> ObjectModel {
        guard CorpusAllowList.storesWithoutModelCache[store] != nil else { return try opened.resolveModel(bundle: nil) }
        #expect(opened.cachedModel == nil, "\(store) is allow-listed as having no Z_MODELCACHE but has one")
        let hashes = opened.metadata.entityVersionHashes
        let bundle = try #require(
            bundles(besides: store).first { ModelMatch(storeHashes: hashes, bundle: $0).matched != nil },
            "no model source beside \(store) has its hashes")
        return try opened.resolveModel(bundle: bundle)
    }

    /// The model bundles in the same corpus repository as `store` (``CorpusStoreModels/bundles(besides:)``).
    static func bundles(besides store: String) -> [ModelBundle] { CorpusStoreModels.bundles(besides: store) }

    /// Every file of the store (database, -wal, -shm) with its bytes.
    static func snapshot(of store: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let path = store.path + suffix
            if let data = FileManager.default.contents(atPath: path) { files[path] = data }
        }
        return files
    }

    @Test("reads completely, with the model proven by hashes, and leaves the files untouched", arguments: stores)
    func readsCompletely(_ store: String) throws {
        let url = Fixtures.corpus(store)
        let before = Self.snapshot(of: url)
        do {
            let opened = try SQLiteStore(contentsOf: url)
            #expect(opened.metadata.storeType == "SQLite")
            // The cache decodes and its recomputed entity hashes equal the metadata's, bit for bit; a store without
            // one is read through its model source, whose hashes and identifiers must be the store's.
            let model = try Self.model(of: store, opened: opened)
            #expect(model.entityVersionHashes == opened.metadata.entityVersionHashes)
            if CorpusAllowList.versionIdentifiersChangedSince[store] == nil {
                #expect(model.versionIdentifiers == opened.metadata.versionIdentifiers)
            }
            if CorpusAllowList.storesWithoutModelCache[store] == nil {
                let cached = try #require(opened.cachedModel)
                #expect(cached.entityVersionHashes == opened.metadata.entityVersionHashes)
                #expect(cached.versionIdentifiers == opened.metadata.versionIdentifiers)
            }

            let reader = try SQLiteStoreReader(store: opened, model: model, batchSize: 7)
            var counts: [String: Int] = [:]
            var batch = try #require(RecordLayout(entity: model.entities[0].name, in: model)).emptyBatch()
            let read: Void? = try CorpusAllowList.readingRows(of: store) {
                while try reader.nextBatch(into: &batch) { counts[batch.layout.entityName, default: 0] += batch.count }
            }
            if read != nil {
                let expected = try opened.objectCounts(model: model)
                #expect(counts.filter { $0.value > 0 } == expected.filter { $0.value > 0 })
                #expect(expected.values.reduce(0, +) == counts.values.reduce(0, +))
            }
        }
        #expect(Self.snapshot(of: url) == before, "the store's files changed")
    }

    @Test("matches a version of the model bundle in its repository", arguments: stores)
    func matchesBundle(_ store: String) throws {
        let opened = try SQLiteStore(contentsOf: Fixtures.corpus(store))
        let stored = opened.metadata.entityVersionHashes
        let candidates = Self.bundles(besides: store).filter { bundle in
            bundle.versions.contains { Set($0.entityVersionHashes.keys) == Set(stored.keys) }
        }
        // A store with no model source in the corpus is allow-listed by name; its cache is checked above.
        if let reason = CorpusAllowList.storesWithoutModelSource[store] {
            #expect(candidates.isEmpty, "\(store) is allow-listed (\(reason)) but has a model source now")
            return
        }
        try #require(!candidates.isEmpty, "no model bundle in the repository has the entities of \(store)")
        let matches = candidates.compactMap { ModelMatch(storeHashes: stored, bundle: $0).matched }
        #expect(!matches.isEmpty, "no version of \(candidates.map(\.name)) matches \(store)")
        let resolved = try opened.resolveModel(bundle: try #require(candidates.first { ModelMatch(storeHashes: stored, bundle: $0).matched != nil }))
        #expect(resolved.entityVersionHashes == stored)
    }

    @Test("converts through the record stream into Apple's schema and reads back equal", arguments: stores)
    func converts(_ store: String) throws {
        let source = try SQLiteStore(contentsOf: Fixtures.corpus(store))
        let model = try Self.model(of: store, opened: source)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.sqlite")
        let style = SchemaStyle(frameworkVersion: source.metadata.frameworkVersion ?? 1344)
        var reader = try SQLiteStoreReader(store: source, model: model)
        var writer = try SQLiteStoreWriter(creating: output, model: model, journalMode: .delete, style: style)
        guard let report = try CorpusAllowList.readingRows(of: store, { try RecordTransfer.copy(from: &reader, to: &writer) })
        else { return }
        #expect(report.isReconciled)

        // SQLite finds nothing wrong with it.
        #expect(try Self.integrityCheck(output.path) == "ok")
        // Its schema is the schema of Apple's store (ancillary history tables aside).
        let ours = try SQLiteSchemaSnapshot(contentsOf: output.path)
        let copy = folder.appendingPathComponent("apple.sqlite")
        for (path, data) in Self.snapshot(of: Fixtures.corpus(store)) {
            let suffix = String(path.dropFirst(Fixtures.corpus(store).path.count))
            try data.write(to: URL(fileURLWithPath: copy.path + suffix))
        }
        let apple = try SQLiteSchemaSnapshot(contentsOf: copy.path).removingTables { $0.hasPrefix("A") }
        #expect(ours.tables == apple.tables, "\(ours.differences(from: apple))")
        #expect(Set(ours.indexes.values.map(\.columns)) == Set(apple.indexes.values.map(\.columns)))
        #expect(Set(try CorpusStoreSchemaTests.triggers(ofStoreAt: output)) == Set(try CorpusStoreSchemaTests.triggers(ofStoreAt: copy)))

        // It reads back: same metadata hashes, same objects with the same values and relationships.
        let written = try SQLiteStore(contentsOf: output)
        #expect(written.metadata.entityVersionHashes == source.metadata.entityVersionHashes)
        if source.cachedModel == nil {
            // Written in the style of a framework that kept no model cache, the copy keeps none either.
            #expect(written.cachedModel == nil)
        } else {
            #expect(try written.resolveModel(bundle: nil).entityVersionHashes == model.entityVersionHashes)
        }
        let back = try SQLiteStoreReader(store: written, model: model)
        let original = try SQLiteStoreReader(store: source, model: model)
        for entity in model.entities {
            #expect(try back.records(of: entity.name) == original.records(of: entity.name), "\(entity.name)")
        }
        #expect(try written.objectCounts() == source.objectCounts(model: model).filter { $0.value > 0 })
    }

    static func integrityCheck(_ path: String) throws -> String {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return "cannot open" }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK else { return "?" }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return "?" }
        return String(cString: text)
    }
}
