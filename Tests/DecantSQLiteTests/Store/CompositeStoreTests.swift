import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Composite attributes in a SQLite store (`coredata-formats.md` 12.5): one column per element named by the element
/// alone (`Z` + upper-cased name, a clash suffixed), read and written as a dictionary keyed by element name, and
/// the store's Z_MODELCACHE enough to read them back without the model.
@Suite("Composite attributes in SQLite stores")
struct CompositeStoreTests {
    @Test func eachElementHasItsOwnColumnAndAClashIsSuffixed() throws {
        let schema = try StoreSchema(model: CompositeFixtures.trip)
        let trip = try #require(schema.entity(named: "Trip"))
        #expect(trip.attributeColumns["id"] == "ZID")
        #expect(trip.attributeColumns["place"] == nil)
        let columns = trip.compositeColumns.mapValues { $0.map { "\($0.element.name)=\($0.column)" } }
        #expect(columns["mode"] == ["mode=ZMODE"])
        #expect(columns["season"] == ["spring=ZSPRING", "summer=ZSUMMER", "autumn=ZAUTUMN"])
        #expect(columns["place"] == ["id=ZID1", "city=ZCITY", "latitude=ZLATITUDE", "stops=ZSTOPS"])
        let table = try #require(schema.table(named: "ZTRIP"))
        #expect(
            table.createStatement
                == "CREATE TABLE ZTRIP ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZLATITUDE FLOAT, ZMODE VARCHAR, "
                + "ZNAME VARCHAR, ZCITY VARCHAR, ZSPRING VARCHAR, ZSUMMER VARCHAR, ZAUTUMN VARCHAR, ZID BLOB, ZID1 BLOB, "
                + "ZSTOPS BLOB )")
        #expect(schema.createStatements.contains("CREATE UNIQUE INDEX Z_Trip_UNIQUE_name ON ZTRIP (ZNAME COLLATE BINARY ASC)"))
    }

    /// An Xcode 15 `contents` with `<composite>` elements gets the same columns.
    @Test func anXcodeCompositeGetsTheSameLayout() throws {
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic">
                <entity name="Trip" representedClassName="Trip" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="place" optional="YES" attributeType="Composite" composite="Place"/>
                </entity>
                <composite name="Place">
                    <attribute name="id" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="city" optional="YES" attributeType="String"/>
                </composite>
            </model>
            """
        let model = try XcdatamodelReader.parse(Data(contents.utf8), path: "Trips.xcdatamodel/contents")
        let trip = try #require(try StoreSchema(model: model).entity(named: "Trip"))
        #expect(trip.compositeColumns["place"]?.map(\.column) == ["ZID1", "ZCITY"])
    }

    /// A composite inside a composite (Xcode allows one; phimage/MomXML's model) gets no column, as before.
    @Test func aNestedCompositeElementHasNoColumn() throws {
        let model = try #require(
            try ModelBundle.load(from: Fixtures.corpus("phimage__MomXML/Tests/Model.xcdatamodeld")).version(named: "Model"))
        let produit = try #require(try StoreSchema(model: model).entity(named: "Produit"))
        #expect(produit.compositeColumns["attribute1"]?.map(\.element.name) == ["one", "two"])
    }

    /// All element columns NULL: a required composite reads as an empty dictionary (as SwiftData's `= Tags()` of nil
    /// members is stored), an optional one as nil.
    @Test func aRequiredCompositeWithNoElementValueIsAnEmptyDictionary() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Trips.sqlite")
        let model = CompositeFixtures.trip
        let layout = try #require(RecordLayout(entity: "Trip", in: model))
        let values: [String: Value] = ["name": "Nowhere", "id": .uuid(UUID()), "mode": .composite([:])]
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        var batch = layout.emptyBatch()
        batch.append(Record(entity: "Trip", id: .primaryKey(1), values: layout.attributes.map { values[$0.name] ?? .null }))
        try writer.write(batch)
        try writer.finish()
        #expect(try Self.rows("SELECT ZMODE, ZCITY FROM ZTRIP", in: url) == [["NULL", "NULL"]])
        let reader = try SQLiteStoreReader(store: try SQLiteStore(contentsOf: url), model: model)
        var read = layout.emptyBatch()
        #expect(try reader.nextBatch(into: &read))
        let record = read.record(at: 0)
        #expect(record.values[try #require(layout.attributeIndex("mode"))] == .composite([:]))
        #expect(record.values[try #require(layout.attributeIndex("place"))] == .null)
    }

    static func writeTrips(to url: URL) throws {
        let model = CompositeFixtures.trip
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        var batch = try #require(RecordLayout(entity: "Trip", in: model)).emptyBatch()
        for record in CompositeFixtures.tripRecords(in: model) { batch.append(record) }
        try writer.write(batch)
        try writer.finish()
    }

    static func rows(_ sql: String, in url: URL) throws -> [[String]] {
        var db: OpaquePointer?
        try #require(sqlite3_open(url.path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        var rows: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_NULL: return "NULL"
                    case SQLITE_BLOB: return "blob\(sqlite3_column_bytes(statement, column))"
                    default: return sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
                    }
                })
        }
        return rows
    }

    @Test func valuesGoToTheElementColumnsAndReadBackWithAndWithoutTheModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Trips.sqlite")
        try Self.writeTrips(to: url)
        // The columns hold the elements: the current case's column holds the case name, the others NULL.
        let stored = try Self.rows(
            "SELECT ZNAME, ZMODE, ZSPRING, ZSUMMER, ZAUTUMN, ZCITY, ZLATITUDE, ZID, ZID1, ZSTOPS FROM ZTRIP ORDER BY Z_PK", in: url)
        #expect(stored == [
            ["Lisbon", "walk", "NULL", "summer", "NULL", "Lisboa", "38.72", "blob16", "blob16", "blob3"],
            ["Home", "stay", "NULL", "NULL", "NULL", "NULL", "NULL", "blob16", "NULL", "NULL"],
        ])
        let expected = CompositeFixtures.tripRecords(in: CompositeFixtures.trip)
        let store = try SQLiteStore(contentsOf: url)
        #expect(store.modelCacheProblem == nil)
        for model in [CompositeFixtures.trip, try store.resolveModel(bundle: nil)] {
            #expect(model.entityVersionHashes == CompositeFixtures.trip.entityVersionHashes)
            let reader = try SQLiteStoreReader(store: store, model: model)
            var batch = try #require(RecordLayout(entity: "Trip", in: model)).emptyBatch()
            var records: [Record] = []
            while try reader.nextBatch(into: &batch) { records += (0..<batch.count).map { batch.record(at: $0) } }
            #expect(records.map(\.values) == expected.map(\.values))
        }
    }
}
