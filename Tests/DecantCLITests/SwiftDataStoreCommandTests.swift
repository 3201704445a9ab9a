import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// Every command on a store shaped as SwiftData writes them (`coredata-formats.md` 12.1): composite attributes of
/// each shape in Z_MODELCACHE and across their element columns, SwiftData's userInfo values, the persistent-history
/// tables, `_NSAutoVacuumLevel`, version identifiers ["1.0.0"], and a WAL header with no `-wal` file beside it.
@Suite("SwiftData-shaped stores", .serialized)
struct SwiftDataStoreCommandTests {
    static let history = [
        "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, "
            + "ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, "
            + "ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, "
            + "ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "INSERT INTO ATRANSACTIONSTRING VALUES (1, 16001, 1, 'com.example.trips')",
        "INSERT INTO ATRANSACTION VALUES (1, 16002, 1, NULL, 1, NULL, NULL, 754000000.5, NULL, 'com.example.trips', NULL, NULL, NULL)",
        "INSERT INTO ACHANGE VALUES (1, 16000, 1, 0, 1, 1, 1, NULL)",
    ]

    /// The Trip model as Xcode 15 `contents` (composites as `<composite>` elements), version 1 and a version 2 that
    /// adds an optional `notes`.
    static func trips(notes: Bool) -> String {
        """
        <entity name="Trip" representedClassName="Trip" syncable="YES">
            <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
            <attribute name="mode" attributeType="Composite" composite="Mode"/>
            <attribute name="name" attributeType="String"/>
        \(notes ? #"    <attribute name="notes" optional="YES" attributeType="String"/>"# : "")
            <attribute name="place" optional="YES" attributeType="Composite" composite="Place"/>
            <attribute name="season" optional="YES" attributeType="Composite" composite="Season"/>
            <uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints>
        </entity>
        <composite name="Mode"><attribute name="mode" optional="YES" attributeType="String"/></composite>
        <composite name="Place">
            <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
            <attribute name="city" optional="YES" attributeType="String"/>
            <attribute name="latitude" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <attribute name="stops" optional="YES" attributeType="Binary"/>
        </composite>
        <composite name="Season">
            <attribute name="spring" optional="YES" attributeType="String"/>
            <attribute name="summer" optional="YES" attributeType="String"/>
            <attribute name="autumn" optional="YES" attributeType="String"/>
        </composite>
        """
    }

    /// A folder with `Trips.sqlite` (SwiftData-shaped), `Trips.mom` (its model compiled) and `Trips.xcdatamodeld`.
    static func folder() throws -> URL {
        let folder = try Fixtures.temporaryDirectory()
        let model = CompositeFixtures.trip
        let store = folder.appendingPathComponent("Trips.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: model, journalMode: .wal)
        var batch = try #require(RecordLayout(entity: "Trip", in: model)).emptyBatch()
        for record in CompositeFixtures.tripRecords(in: model) { batch.append(record) }
        try writer.write(batch)
        try writer.finish()
        var db: OpaquePointer?
        try #require(sqlite3_open(store.path, &db) == SQLITE_OK)
        for statement in history { #expect(sqlite3_exec(db, statement, nil, nil, nil) == SQLITE_OK, "\(statement)") }
        sqlite3_close(db)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
        try ArchivedModelEncoder.encode(model).write(to: folder.appendingPathComponent("Trips.mom"))
        try ModelBundleFiles.write(
            "Trips", versions: [("Trips", trips(notes: false)), ("Trips 2", trips(notes: true))], current: "Trips 2", in: folder)
        return folder
    }

    @Test func theStoreHasSwiftDatasShape() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Trips.sqlite")
        let header = try Data(contentsOf: url).prefix(20)
        #expect(header[18] == 2 && header[19] == 2, "the header says WAL")
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        let store = try SQLiteStore(contentsOf: url)
        #expect(store.metadata.plist["_NSAutoVacuumLevel"] == .string("2"))
        #expect(store.metadata.plist["NSStoreModelVersionIdentifiers"] == .array([.string("1.0.0")]))
        #expect(store.modelCacheProblem == nil)
        // The Xcode source's version 1 is the same model by hash.
        let bundle = try ModelBundle.load(from: folder.appendingPathComponent("Trips.xcdatamodeld"))
        #expect(bundle.version(named: "Trips")?.entityVersionHashes == CompositeFixtures.trip.entityVersionHashes)
    }

    static func run(_ folder: URL, _ arguments: [String]) throws -> Subprocess.Outcome {
        try ConvertCSVTests.run(in: folder, arguments)
    }

    @Test(.requiresDecantBinary, arguments: [[], ["--model", "Trips.mom"], ["--model", "Trips.xcdatamodeld"]])
    func inspectValidateAndConvertReadIt(model: [String]) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let inspected = try Self.run(folder, ["inspect", "Trips.sqlite"] + model)
        #expect(inspected.status == 0, "\(inspected.errors)")
        #expect(inspected.output.contains("Trip"), "\(inspected.output)")
        let validated = try Self.run(folder, ["validate", "Trips.sqlite"] + model)
        #expect(validated.status == 0, "\(validated.errors)\(validated.output)")
        let converted = try Self.run(folder, ["convert", "Trips.sqlite", "trips.ndjson"] + model)
        #expect(converted.status == 0, "\(converted.errors)")
        let text = try String(contentsOf: folder.appendingPathComponent("trips.ndjson"), encoding: .utf8)
        #expect(text.contains(#""place":{"city":"Lisboa","id":"0A5E0D1C-2B3C-4D5E-8F90-A1B2C3D4E5F6","latitude":38.72,"stops":"AQID"}"#), "\(text)")
        #expect(text.contains(#""season":{"summer":"summer"}"#), "\(text)")
        // And back into a store, the same rows in the element columns.
        let back = try Self.run(folder, ["convert", "trips.ndjson", "Back.sqlite", "--model", "Trips.mom"])
        #expect(back.status == 0, "\(back.errors)")
        let query = "SELECT ZNAME, ZMODE, ZSUMMER, ZCITY, ZLATITUDE, hex(ZID1) FROM ZTRIP ORDER BY Z_PK"
        #expect(try Self.rows(query, folder.appendingPathComponent("Back.sqlite")) == Self.rows(query, folder.appendingPathComponent("Trips.sqlite")))
    }

    @Test(.requiresDecantBinary) func seedAndMigrateKeepTheComposites() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("App"), withIntermediateDirectories: true)
        let seeded = try Self.run(
            folder, ["seed", "--default", "Trips.sqlite", "--store", "App/Trips.sqlite", "--model", "Trips.mom"])
        #expect(seeded.status == 0, "\(seeded.errors)")
        let query = "SELECT ZNAME, ZMODE, ZSPRING, ZSUMMER, ZCITY, ZLATITUDE, hex(ZID1), hex(ZSTOPS) FROM ZTRIP ORDER BY Z_PK"
        let original = try Self.rows(query, folder.appendingPathComponent("Trips.sqlite"))
        #expect(original.count == 2)
        #expect(try Self.rows(query, folder.appendingPathComponent("App/Trips.sqlite")) == original)
        // Version 1 to version 2 (notes added): the composites come through unchanged.
        let migrated = try Self.run(
            folder, ["migrate", "Trips.sqlite", "--model", "Trips.xcdatamodeld", "--output", "Migrated.sqlite"])
        #expect(migrated.status == 0, "\(migrated.errors)")
        let output = folder.appendingPathComponent("Migrated.sqlite")
        #expect(try Self.rows(query, output) == original)
        #expect(try Self.rows("SELECT count(*) FROM ZTRIP WHERE ZNOTES IS NULL", output) == [["2"]])
    }

    static func rows(_ sql: String, _ url: URL) throws -> [[String]] {
        var db: OpaquePointer?
        try #require(sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, "\(sql)")
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_type(statement, column) == SQLITE_NULL
                        ? "NULL" : sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
                })
        }
        return rows
    }
}
