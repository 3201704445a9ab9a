import DecantCore
import DecantCodecs
import DecantFormats
@testable import DecantSQLite
import DecantTestSupport
import Testing

@Suite("StoreSchema")
struct StoreSchemaTests {
    @Test("name hash matches the test vectors of formats 4.14")
    func nameHash() {
        #expect(SchemaNaming.hash("a") == 1062)
        #expect(SchemaNaming.hash("nickname") == 838_016_334)
        #expect(SchemaNaming.hash("likedBy") == 779_457_355)
        #expect(SchemaNaming.hash("likes") == 1_005_348_029)
        #expect(SchemaNaming.bucketCount(forEntries: 6) == 11)
    }

    @Test("case-insensitive order, generator suffixes, upper-casing")
    func naming() {
        let sorted = ["Wheel", "Vehicle", "badge", "Person", "Garage"].sorted(by: SchemaNaming.caseInsensitiveLess)
        #expect(sorted == ["badge", "Garage", "Person", "Vehicle", "Wheel"])
        var generator = SchemaNameGenerator()
        #expect(generator.uniqueName(base: "ZTITLE") == "ZTITLE")
        #expect(generator.uniqueName(base: "ZTITLE1") == "ZTITLE1")
        #expect(generator.uniqueName(base: "ZTITLE") == "ZTITLE2")
        #expect(generator.uniqueName(base: "ZTITLE") == "ZTITLE3")
        #expect(SchemaNaming.asciiUppercased("straße") == "STRAßE")
        #expect(SchemaNaming.unicodeUppercased("straße") == "STRASSE")
    }

    @Test("the 4.14 example model: numbers, columns, join tables, indexes")
    func exampleModel() throws {
        let schema = try StoreSchema(model: SchemaTestModels.example)
        #expect(schema.primaryKeyRows.map(\.name) == ["badge", "Garage", "Person", "Vehicle", "Car", "Truck", "Wheel"])
        #expect(schema.primaryKeyRows.map(\.superNumber) == [0, 0, 0, 0, 4, 4, 0])
        let vehicle = try #require(schema.table(named: "ZVEHICLE"))
        #expect(vehicle.columns.map(\.name) == ["Z_PK", "Z_ENT", "Z_OPT", "Z2VISITORS", "ZPLATE", "ZNICKNAME", "ZNICKNAME1"])
        #expect(schema.entity(named: "Car")?.attributeColumns["nickname"] == "ZNICKNAME")
        #expect(schema.entity(named: "Truck")?.attributeColumns["nickname"] == "ZNICKNAME1")
        #expect(schema.entity(named: "Truck")?.attributeColumns["plate"] == "ZPLATE")
        let wheel = try #require(schema.table(named: "ZWHEEL"))
        #expect(wheel.columns.map(\.name) == ["Z_PK", "Z_ENT", "Z_OPT", "ZVEHICLE", "Z4_VEHICLE", "ZDIAMETER"])
        #expect(schema.entity(named: "Wheel")?.relationships["vehicle"]
            == .toOne(.init(table: "ZWHEEL", column: "ZVEHICLE", entityColumn: "Z4_VEHICLE", orderColumn: nil)))
        #expect(schema.entity(named: "Garage")?.relationships["visitors"]
            == .toManyThroughHiddenKey(.init(table: "ZVEHICLE", column: "Z2VISITORS", entityColumn: nil, orderColumn: nil)))

        let statements = schema.createStatements
        #expect(statements.contains("CREATE TABLE Z_5GARAGES ( Z_5CARS INTEGER, Z_2GARAGES INTEGER, PRIMARY KEY (Z_5CARS, Z_2GARAGES) )"))
        #expect(statements.contains("CREATE INDEX Z_5GARAGES_Z_2GARAGES_INDEX ON Z_5GARAGES (Z_2GARAGES, Z_5CARS)"))
        #expect(statements.contains("CREATE TABLE Z_5DRIVERS ( Z_5DRIVENCARS INTEGER, Z_3DRIVERS INTEGER, PRIMARY KEY (Z_5DRIVENCARS, Z_3DRIVERS) )"))
        #expect(statements.contains(
            "CREATE TABLE Z_3DRIVENTRUCKS ( Z_3DRIVERS1 INTEGER, Z_6DRIVENTRUCKS INTEGER, PRIMARY KEY (Z_3DRIVERS1, Z_6DRIVENTRUCKS) )"))
        #expect(statements.contains("CREATE TABLE Z_1HOLDERS ( Z_1BADGES INTEGER, Z_3HOLDERS INTEGER, PRIMARY KEY (Z_1BADGES, Z_3HOLDERS) )"))
        #expect(statements.contains("CREATE INDEX ZVEHICLE_Z2VISITORS_INDEX ON ZVEHICLE (Z2VISITORS)"))
        #expect(statements.contains("CREATE INDEX ZWHEEL_ZVEHICLE_INDEX ON ZWHEEL (ZVEHICLE)"))
        #expect(statements.contains("CREATE INDEX ZVEHICLE_Z_ENT_INDEX ON ZVEHICLE (Z_ENT)"))
        #expect(statements.contains("CREATE INDEX Z_Car_byNickname ON ZVEHICLE (ZNICKNAME COLLATE BINARY ASC)"))
        #expect(statements.contains("CREATE INDEX Z_Car_nickname ON ZVEHICLE (ZNICKNAME COLLATE BINARY ASC)"))
        #expect(!statements.contains { $0.contains("Z4_VEHICLE_INDEX") })

        #expect(schema.entity(named: "Person")?.relationships["drivenTrucks"] == .manyToMany(.init(
            table: "Z_3DRIVENTRUCKS", sourceColumn: "Z_3DRIVERS1", destinationColumn: "Z_6DRIVENTRUCKS", orderColumn: nil,
            isReflexive: false)))
        #expect(schema.entity(named: "Truck")?.relationships["drivers"] == .manyToMany(.init(
            table: "Z_3DRIVENTRUCKS", sourceColumn: "Z_6DRIVENTRUCKS", destinationColumn: "Z_3DRIVERS1", orderColumn: nil,
            isReflexive: false)))
        // The generated DDL is valid SQLite and reads back.
        let snapshot = try SQLiteSchemaSnapshot(schema: schema)
        #expect(snapshot.tables["ZVEHICLE"]?.columns["ZNICKNAME1"] == "VARCHAR")
        #expect(snapshot.indexes["Z_5GARAGES_Z_2GARAGES_INDEX"]?.columns == ["Z_2GARAGES", "Z_5CARS"])
    }

    @Test("self-referential likes/likedBy: master chosen by hash-table order")
    func likes() throws {
        let schema = try StoreSchema(model: SchemaTestModels.likes)
        #expect(schema.joinTables.map(\.createStatement) == [
            "CREATE TABLE Z_1LIKES ( Z_1LIKEDBY INTEGER, Z_1LIKES INTEGER, Z_FOK_1LIKES INTEGER, PRIMARY KEY (Z_1LIKEDBY, Z_1LIKES) )",
        ])
        let person = try #require(schema.entity(named: "Person"))
        #expect(person.relationships["likes"] == .manyToMany(.init(
            table: "Z_1LIKES", sourceColumn: "Z_1LIKEDBY", destinationColumn: "Z_1LIKES", orderColumn: "Z_FOK_1LIKES",
            isReflexive: false)))
        #expect(person.relationships["likedBy"] == .manyToMany(.init(
            table: "Z_1LIKES", sourceColumn: "Z_1LIKES", destinationColumn: "Z_1LIKEDBY", orderColumn: nil, isReflexive: false)))
    }

    @Test("SampleModel v1 DDL of formats 4.12, exactly")
    func sampleModelDDL() throws {
        let schema = try StoreSchema(model: SchemaTestModels.sampleModelV1)
        #expect(schema.createStatements == [
            "CREATE TABLE ZCAR ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, ZISLIMITEDEDITION INTEGER, "
                + "ZMARKEDFORDELETIONASOF TIMESTAMP, ZMAKER VARCHAR, ZMODEL VARCHAR, ZNUMBERPLATE VARCHAR, ZCOLOR BLOB )",
            "CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZUPDATEDAT TIMESTAMP, ZFIRSTNAME VARCHAR, "
                + "ZLASTNAME VARCHAR, ZID BLOB )",
            "CREATE INDEX ZCAR_ZOWNER_INDEX ON ZCAR (ZOWNER)",
            "CREATE INDEX ZCAR_Z_ENT_INDEX ON ZCAR (Z_ENT)",
            "CREATE UNIQUE INDEX Z_Car_UNIQUE_numberPlate ON ZCAR (ZNUMBERPLATE COLLATE BINARY ASC)",
            "CREATE UNIQUE INDEX Z_Person_UNIQUE_firstName_lastName ON ZPERSON (ZFIRSTNAME COLLATE BINARY ASC, ZLASTNAME COLLATE BINARY ASC)",
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
            "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
        ])
        #expect(schema.primaryKeyRows.map { "\($0.entityNumber) \($0.name) \($0.superNumber)" }
            == ["1 Car 0", "2 SportCar 1", "3 ExpensiveSportCar 2", "4 Person 0"])
        let sport = try #require(schema.entity(named: "ExpensiveSportCar"))
        #expect(sport.tableName == "ZCAR")
        #expect(sport.attributeColumns == [
            "color": "ZCOLOR", "maker": "ZMAKER", "markedForDeletionAsOf": "ZMARKEDFORDELETIONASOF", "model": "ZMODEL",
            "numberPlate": "ZNUMBERPLATE", "isLimitedEdition": "ZISLIMITEDEDITION",
        ])
        #expect(schema.entity(named: "Car")?.hierarchyNumbers == [1, 2, 3])
        #expect(schema.entity(named: "Person")?.relationships["cars"]
            == .toManyThroughInverse(.init(table: "ZCAR", column: "ZOWNER", entityColumn: nil, orderColumn: nil)))
    }

    @Test("framework 637 style: constraint clause, legacy index names, no Z_MODELCACHE at 519")
    func legacyStyle() throws {
        let moody = try ModelBundle.load(from: Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"))
        let schema = try StoreSchema(model: try #require(moody.version(named: "Moody 5")), style: SchemaStyle(frameworkVersion: 637))
        let statements = schema.createStatements
        #expect(statements.first == "CREATE TABLE ZCOUNTRY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
            + "ZISOCONTINENT INTEGER, ZNUMBEROFMOODS INTEGER, ZNUMERICISO3166CODE INTEGER, ZUNIQUENESSDUMMY INTEGER, "
            + "ZMARKEDFORDELETIONDATE TIMESTAMP, ZUPDATEDAT TIMESTAMP, "
            + "CONSTRAINT ZNUMERICISO3166CODE_ZUNIQUENESSDUMMY UNIQUE (ZNUMERICISO3166CODE, ZUNIQUENESSDUMMY))")
        #expect(statements.contains(
            "CREATE INDEX ZMOOD_ZMARKEDFORREMOTEDELETION_ZMARKEDFORDELETIONDATE_ZDATE ON ZMOOD (ZMARKEDFORREMOTEDELETION, ZMARKEDFORDELETIONDATE, ZDATE)"))
        #expect(statements.contains("CREATE INDEX ZMOOD_ZREMOTEID_INDEX ON ZMOOD (ZREMOTEID)"))
        #expect(statements.contains(StoreSchema.modelCacheTableStatement))
        let old = try StoreSchema(model: SchemaTestModels.likes, style: SchemaStyle(frameworkVersion: 419))
        #expect(!old.createStatements.contains(StoreSchema.modelCacheTableStatement))
        #expect(old.indexes.isEmpty)
    }

    @Test("a relationship to a missing entity throws")
    func missingDestination() {
        var entity = Entity(name: "A")
        entity.relationships = [Relationship(name: "b", destination: "B")]
        #expect(throws: DecantError.self) { try StoreSchema(model: ObjectModel(entities: [entity])) }
    }
}
