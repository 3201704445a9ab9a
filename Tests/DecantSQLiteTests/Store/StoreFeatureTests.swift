import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Store features the corpus stores do not exercise, on a model built for them: inheritance with an entity-key
/// column, ordered one-to-many, many-to-many, to-many without inverse, external binary storage, every attribute
/// type; WAL content; stores without a model cache; the nearest version when none matches.
@Suite("SQLite store features")
struct StoreFeatureTests {
    /// The library model (every attribute type and relationship kind) and its records: shared with the other
    /// formats' round-trip tests through ``LibraryFixture``.
    static let library = LibraryFixture.model

    static func reference(_ entity: String, _ key: Int64) -> ObjectReference {
        LibraryFixture.reference(entity, key)
    }

    /// The records of the library, by entity, in primary-key order.
    static let records = LibraryFixture.records

    /// Writes the library records to a new store.
    static func writeLibrary(to url: URL, journal: SQLiteStoreWriter.JournalMode = .delete) throws {
        let writer = try SQLiteStoreWriter(creating: url, model: library, journalMode: journal)
        for (entity, list) in records.sorted(by: { $0.key < $1.key }) {
            var batch = try #require(RecordLayout(entity: entity, in: library)).emptyBatch()
            for record in list { batch.append(record) }
            try writer.write(batch)
        }
        try writer.finish()
    }

    @Test func layoutOrder() throws {
        let layout = try #require(RecordLayout(entity: "EBook", in: Self.library))
        #expect(layout.attributes.map(\.name) == [
            "available", "cover", "extra", "fileSize", "id", "link", "pages", "price", "published", "rating", "title",
        ])
        #expect(layout.relationships.map(\.name) == ["authors", "shelf", "tags"])
    }

    @Test func everyFeatureReadsBackEqual() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Library.sqlite")
        try Self.writeLibrary(to: url)
        let store = try SQLiteStore(contentsOf: url)
        let model = try store.resolveModel(bundle: nil)
        #expect(model.entityVersionHashes == Self.library.entityVersionHashes)
        let reader = try SQLiteStoreReader(store: store, model: model)
        for (entity, expected) in Self.records {
            let actual = try reader.records(of: entity)
            #expect(actual == expected, "\(entity)")
        }
        // The ordered one-to-many keeps its order in Z_FOK_SHELF; many-to-many rows sit in one join table.
        #expect(try Self.query(url, "SELECT Z_PK FROM ZBOOK WHERE ZSHELF = 1 ORDER BY Z_FOK_SHELF") == ["3", "1", "2"])
        #expect(try Self.query(url, "SELECT COUNT(*) FROM Z_1BOOKS") == ["3"])
        // Book (2) has a sub-entity, so Reading.book carries the destination's Z_ENT (EBook, 3) too.
        #expect(try Self.query(url, "SELECT Z2_BOOK FROM ZREADING WHERE Z_PK = 1") == ["3"])
        // Book.tags has no inverse: a hidden key on the tags, with the owner's Z_ENT because Book has a sub-entity.
        #expect(try Self.query(url, "SELECT Z_PK, Z2TAGS, Z2_2TAGS FROM ZTAG ORDER BY Z_PK") == ["1|1|2", "2|3|2", "3|2|3"])
        // External storage: inline values carry the 0x01 tag.
        #expect(try Self.query(url, "SELECT hex(substr(ZCOVER, 1, 2)) FROM ZBOOK WHERE Z_PK = 1") == ["0101"])
        #expect(try Self.query(url, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.query(url, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0 ORDER BY Z_ENT") == [
            "Author|2", "Book|3", "Reading|2", "Shelf|2", "Tag|3",
        ])
    }

    @Test func externallyStoredValuesAreRead() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Library.sqlite")
        try Self.writeLibrary(to: url)
        // What Core Data does for a large value: the bytes in a file, its name in the column after a 0x02 tag.
        let files = StoreFiles(database: url)
        try FileManager.default.createDirectory(at: files.externalDataFolder, withIntermediateDirectories: true)
        let payload = Data((0..<200_000).map { UInt8($0 % 251) })
        try payload.write(to: files.externalDataFolder.appendingPathComponent("5B3D0F2E-1111-4A4A-9C9C-000000000001"))
        _ = try Self.query(
            url, "UPDATE ZBOOK SET ZCOVER = CAST(X'02' || '5B3D0F2E-1111-4A4A-9C9C-000000000001' || X'00' AS BLOB) WHERE Z_PK = 3")
        let store = try SQLiteStore(contentsOf: url)
        let reader = try SQLiteStoreReader(store: store, model: try store.resolveModel(bundle: nil))
        let book = try #require(try reader.records(of: "Book").first { $0.id == .primaryKey(3) })
        #expect(book.values[1] == .data(payload))

        try FileManager.default.removeItem(at: files.externalDataFolder)
        let missing = #expect(throws: DecantError.self) { try reader.records(of: "Book") }
        #expect(missing?.code == .malformedInput)
        #expect(missing?.location?.keyPath == "cover")
        #expect(missing?.location?.object == "Book/p3")
    }

    @Test func externalIdentitiesSpillAndResolve() throws {
        // Records from a source with its own ids (an XML store's z102…): references may come first, and the identity
        // map spills to disk past its bound.
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Spill.sqlite")
        let writer = try SQLiteStoreWriter(creating: url, model: Self.library, journalMode: .delete, identityMapBound: 2)
        var readings = try #require(RecordLayout(entity: "Reading", in: Self.library)).emptyBatch()
        for index in 0..<20 {
            readings.append(Record(
                entity: "Reading", id: .external("r\(index)"), values: [nil],
                relationships: [.toOne(ObjectReference(entity: "Book", id: .external("b\(index % 5)")))]))
        }
        try writer.write(readings)
        var books = try #require(RecordLayout(entity: "Book", in: Self.library)).emptyBatch()
        for index in 0..<5 {
            books.append(Record(
                entity: "Book", id: .external("b\(index)"),
                values: Array(repeating: .null, count: 9) + [.string("book \(index)")],
                relationships: [.toMany([]), .toOne(nil), .toMany([])]))
        }
        try writer.write(books)
        try writer.finish()
        #expect(try Self.query(
            url, "SELECT b.ZTITLE, COUNT(*) FROM ZREADING r JOIN ZBOOK b ON b.Z_PK = r.ZBOOK GROUP BY b.ZTITLE ORDER BY b.ZTITLE"
        ) == ["book 0|4", "book 1|4", "book 2|4", "book 3|4", "book 4|4"])
        #expect(try Self.query(url, "SELECT COUNT(DISTINCT Z_PK) FROM ZBOOK") == ["5"])
    }

    @Test func walContentIsReadAndFilesStayUntouched() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Library.sqlite")
        try Self.writeLibrary(to: url, journal: .wal)
        // Another process still has the store open and its newest rows sit only in the -wal.
        var handle: OpaquePointer?
        #expect(sqlite3_open(url.path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        sqlite3_exec(handle, "PRAGMA wal_autocheckpoint = 0; INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (4, 6, 1, 'wal only');", nil, nil, nil)
        let wal = url.path + "-wal"
        #expect((try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? 0) > 0)
        let before = CorpusStoreTests.snapshot(of: url)
        let store = try SQLiteStore(contentsOf: url)
        let counts = try store.objectCounts()
        #expect(counts["Tag"] == 4)
        #expect(CorpusStoreTests.snapshot(of: url) == before)
    }

    @Test func storeWithoutCacheAsksForTheModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Old.sqlite")
        // Framework 519 and earlier wrote no Z_MODELCACHE.
        try SQLiteStoreWriter(creating: url, model: Self.library, style: SchemaStyle(frameworkVersion: 519)).finish()
        let store = try SQLiteStore(contentsOf: url)
        #expect(store.cachedModel == nil)
        let error = #expect(throws: DecantError.self) { try store.resolveModel(bundle: nil) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("--model") == true)
        let bundle = ModelBundle(name: "Library", versions: [Self.library], currentVersionName: "Library", sourceKind: .xcdatamodeld)
        #expect(try store.resolveModel(bundle: bundle).versionName == "Library")
    }

    @Test func nearestVersionExplainsTheDifference() throws {
        let store = try SQLiteStore(contentsOf: Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 3.moody"))
        var bundle = try ModelBundle.load(from: Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"))
        #expect(try store.resolveModel(bundle: bundle).versionName == "Moody 3")
        bundle.versions.removeAll { $0.versionName == "Moody 3" }
        let match = ModelMatch(storeHashes: store.metadata.entityVersionHashes, bundle: bundle)
        #expect(match.matched == nil)
        let nearest = try #require(match.nearest?.versionName)
        #expect(["Moody 2", "Moody 4"].contains(nearest))
        #expect(!match.differences.isEmpty)
        let error = #expect(throws: DecantError.self) { try store.resolveModel(bundle: bundle) }
        #expect(error?.code == .modelMismatch)
        #expect(error?.message.contains("nearest is \(nearest)") == true)
    }

    /// Runs `sql` on `url` with the C API and returns each row as `|`-joined text.
    static func query(_ url: URL, _ sql: String) throws -> [String] {
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
