import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// `store → CSV folder → store` keeps every object, value, relationship and order: on every corpus store, and on
/// the library model that has every attribute type and relationship kind, through the registry as
/// `decant convert` does it.
@Suite("Store to CSV and back")
struct CSVStoreRoundTripTests {
    static let stores: [String] = Fixtures.corpusStores

    /// The corpus round trips run once per store (`XMLStoreRoundTripTests` and `BinaryStoreTests` share this list).
    /// Ten in the corpus, one (RestKit's seed store, written with an Xcode 3 model) in the legacy corpus, thirty in
    /// the apps corpus.
    @Test func theCorpusHasItsFortyOneStores() {
        #expect(Self.stores.count == 41)
    }

    /// A private copy of a store (with its -wal and -shm) in a new temporary folder.
    static func copyStore(_ url: URL) throws -> URL {
        let directory = try Fixtures.temporaryDirectory()
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard FileManager.default.fileExists(atPath: source.path) else { continue }
            let target = directory.appendingPathComponent(source.lastPathComponent)
            try FileManager.default.copyItem(at: source, to: target)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        }
        return directory.appendingPathComponent(url.lastPathComponent)
    }

    /// Converts `store` to a CSV folder and back to a store beside it; returns the second store.
    static func roundTrip(_ store: URL, options: FormatOptions) throws -> (csv: URL, back: URL) {
        let folder = store.deletingLastPathComponent()
        let csv = folder.appendingPathComponent("csv")
        let back = folder.appendingPathComponent("back.sqlite")
        let out = try StoreConversion.convert(from: store, to: csv, outputFormat: "csv", options: options)
        #expect(out.outputFormat == "csv")
        // The store's own objects go back as they were, breaches of the model's rules included (see the JSON round trip).
        let home = try StoreConversion.convert(from: csv, to: back, options: options, validation: .none)
        #expect(home.inputFormat == "csv")
        #expect(home.read == out.written)
        #expect(home.written == out.read)
        return (csv, back)
    }

    /// Every object of every entity of `model`, read from `store` in primary-key order.
    static func records(
        of store: URL, model: ObjectModel, policy: MissingExternalDataPolicy = .fail
    ) throws
        -> [String: [Record]]
    {
        let reader = try SQLiteStoreReader(
            store: try SQLiteStore(contentsOf: store), model: model, missingExternalData: policy)
        var result: [String: [Record]] = [:]
        for entity in model.entities { result[entity.name] = try reader.records(of: entity.name) }
        return result
    }

    @Test("every corpus store goes to CSV and back unchanged", arguments: stores)
    func corpusStore(_ store: String) throws {
        let copy = try Self.copyStore(Fixtures.corpus(store))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let opened = try SQLiteStore(contentsOf: copy)
        let model = try opened.resolveModel(
            bundle: CorpusStoreModels.bundle(forStore: store, hashes: opened.metadata.entityVersionHashes))
        let bundle = ModelBundle(
            name: "Cache", versions: [model], currentVersionName: model.versionName, sourceKind: .storeCache)
        guard let (_, back) = try CorpusAllowList.readingRows(of: store, { try Self.roundTrip(copy, options: FormatOptions(bundle: bundle)) })
        else { return }
        let original = try Self.records(of: copy, model: model)
        let returned = try Self.records(of: back, model: model)
        // Every row the store holds was read (some real stores are empty fixtures).
        #expect(try original.values.map(\.count).reduce(0, +) == opened.objectCounts(model: model).values.reduce(0, +))
        for entity in model.entities {
            let before = original[entity.name] ?? []
            let after = returned[entity.name] ?? []
            #expect(before.count == after.count, "\(entity.name)")
            for (old, new) in zip(before, after) where old != new {
                Issue.record("\(entity.name)/\(old.id): \(old) became \(new)")
            }
        }
        #expect(try SQLiteStore(contentsOf: back).metadata.entityVersionHashes == model.entityVersionHashes)
    }

    @Test func libraryGoesToCSVAndBackUnchanged() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Library.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: LibraryFixture.model, journalMode: .delete)
        for batch in LibraryFixture.batches { try writer.write(batch) }
        try writer.finish()
        // A cover kept in a file that is missing: `keep` carries the reference through CSV into the new store.
        try Self.sqlite(store, "UPDATE ZBOOK SET ZCOVER = CAST(X'02' || 'AAAA-BBBB' || X'00' AS BLOB) WHERE Z_PK = 3")
        var options = FormatOptions(bundle: LibraryFixture.bundle)
        options.missingExternalData = .keep
        let (csv, back) = try Self.roundTrip(store, options: options)
        let before = try Self.records(of: store, model: LibraryFixture.model, policy: .keep)
        let after = try Self.records(of: back, model: LibraryFixture.model, policy: .keep)
        #expect(before == after)
        #expect(before["Book"]?.last?.values[1] == .externalDataReference("AAAA-BBBB"))
        let books = String(decoding: try Data(contentsOf: csv.appendingPathComponent("Book.csv")), as: UTF8.self)
        #expect(books.contains(",_EXTERNAL_DATA/AAAA-BBBB,"))
        // The one-to-many carried by Book.shelf needs no join file unless ordered; Shelf.books is ordered.
        let files = try FileManager.default.contentsOfDirectory(atPath: csv.path)
        #expect(files.contains("Shelf.books.csv"))
        #expect(
            try StoreFeatureQuery.rows(back, "SELECT Z_PK FROM ZBOOK WHERE ZSHELF = 1 ORDER BY Z_FOK_SHELF") == [
                "3", "1", "2",
            ])
        #expect(try StoreFeatureQuery.rows(back, "PRAGMA integrity_check") == ["ok"])
    }

    @Test func oneToManyThroughItsInverseNeedsNoJoinFile() throws {
        // Notes 3: Folder.notes ⇄ Note.folder, unordered: the store reads Folder.notes through the inverse.
        let bundle = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        let model = try #require(bundle.version(named: "Notes 3"))
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: model, journalMode: .delete)
        var folders = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        folders.append(Record(entity: "Folder", id: .primaryKey(1), values: ["Home"], relationships: [.viaInverse]))
        try writer.write(folders)
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        for key in 1...3 {
            notes.append(
                Record(
                    entity: "Note", id: .primaryKey(Int64(key)),
                    values: [
                        .date(Date(timeIntervalSinceReferenceDate: Double(key) / 3)), .string("text \(key)"), nil,
                    ],
                    relationships: [.toOne(key == 2 ? nil : ObjectReference(entity: "Folder", id: .primaryKey(1)))]))
        }
        try writer.write(notes)
        try writer.finish()
        let (csv, back) = try Self.roundTrip(store, options: FormatOptions(bundle: bundle, version: "Notes 3"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: csv.path).sorted() == [
                "Folder.csv", "Note.csv", "_decant.json",
            ])
        #expect(try Self.records(of: store, model: model) == Self.records(of: back, model: model))
        #expect(
            try StoreFeatureQuery.rows(back, "SELECT Z_PK, ZFOLDER FROM ZNOTE ORDER BY Z_PK") == [
                "1|1", "2|NULL", "3|1",
            ])
    }

    static func sqlite(_ url: URL, _ sql: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(url.path, &handle) == SQLITE_OK else {
            throw DecantError(.ioError, "cannot open \(url.path)")
        }
        defer { sqlite3_close(handle) }
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw DecantError(.ioError, String(cString: sqlite3_errmsg(handle)))
        }
    }
}

/// Rows of a query as `|`-joined text, through the C API.
enum StoreFeatureQuery {
    static func rows(_ url: URL, _ sql: String) throws -> [String] {
        var handle: OpaquePointer?
        guard sqlite3_open(url.path, &handle) == SQLITE_OK else { return [] }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            return ["error: " + String(cString: sqlite3_errmsg(handle))]
        }
        defer { sqlite3_finalize(statement) }
        var rows: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "NULL"
                }.joined(separator: "|"))
        }
        return rows
    }
}
