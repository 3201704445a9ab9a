import CSQLite
import Decant
@testable import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Generates the schema of hand-built models with the style of each real store's framework version and compares
/// it with the schema Apple's Core Data wrote.
@Suite("StoreSchema against corpus stores")
struct CorpusStoreSchemaTests {
    /// A corpus store and the model version it was written with.
    struct Case: CustomTestStringConvertible, Sendable {
        var store: String
        var model: @Sendable () -> ObjectModel
        /// `Z_PRIMARYKEY` names the store keeps from before an in-place migration.
        var primaryKeyLeftovers: [String: String] = [:]
        var testDescription: String { store }
    }

    static let cases: [Case] = [
        Case(store: "objcio__core-data/Migrations/MigrationsTests/Moody.moody", model: { SchemaTestModels.moodyV1 }),
        Case(store: "objcio__core-data/Migrations/MigrationsTests/Moody 2.moody", model: { SchemaTestModels.moodyV2 }),
        Case(store: "objcio__core-data/Migrations/MigrationsTests/Moody 3.moody", model: { SchemaTestModels.moodyV3 }),
        Case(store: "objcio__core-data/Migrations/MigrationsTests/Moody 4.moody", model: { SchemaTestModels.moodyV4 }),
        Case(store: "objcio__core-data/Migrations/MigrationsTests/Moody 5.moody", model: { SchemaTestModels.moodyV5 }),
        Case(
            store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
            model: { SchemaTestModels.sampleModelV1 }),
        // Migrated in place from V1: Z_PRIMARYKEY still names entity 3 by its V1 name.
        Case(
            store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
            model: { SchemaTestModels.sampleModelV2 }, primaryKeyLeftovers: ["LuxuryCar": "ExpensiveSportCar"]),
        // Persistent history is on: its ancillary A… tables are left out of the comparison.
        Case(
            store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite",
            model: { SchemaTestModels.sampleModel2V1 }),
        Case(
            store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V2.sqlite",
            model: { SchemaTestModels.sampleModel2V2 }),
        Case(
            store: "alemar11__CoreDataPlus/Tests/Resources/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            model: { SchemaTestModels.sampleModel3V1 }),
    ]

    @Test("generated schema equals the store's schema", arguments: cases)
    func compare(_ testCase: Case) throws {
        let copy = try Self.copyStore(Fixtures.corpus(testCase.store))
        let metadata = try Self.metadata(ofStoreAt: copy.path)
        let frameworkVersion = try #require(metadata["NSPersistenceFrameworkVersion"] as? Int)
        let model = testCase.model()
        let identifiers = metadata["NSStoreModelVersionIdentifiers"] as? [String] ?? []
        // Moody.moody was written before its model had a version identifier.
        #expect(identifiers == model.versionIdentifiers || identifiers == [""])

        let schema = try StoreSchema(model: model, style: SchemaStyle(frameworkVersion: frameworkVersion))
        let expected = try SQLiteSchemaSnapshot(schema: schema)
        let actual = try SQLiteSchemaSnapshot(contentsOf: copy.path).removingTables { $0.hasPrefix("A") }
        #expect(!actual.tables.isEmpty && !actual.indexes.isEmpty || testCase.store.contains("SampleModel3"))
        #expect(Set(actual.tables.keys).isSuperset(of: schema.tables.map(\.name)))
        let differences = expected.differences(from: actual)
        #expect(differences.isEmpty, "\(testCase.store) (framework \(frameworkVersion)):\n\(differences.joined(separator: "\n"))")

        let connection = try SQLiteConnection(path: copy.path, flags: SQLITE_OPEN_READONLY)
        let rows = try connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
        let stored = rows.map { $0.map { $0 ?? "" }.joined(separator: " ") }
        let generated = schema.primaryKeyRows.map {
            "\($0.entityNumber) \(testCase.primaryKeyLeftovers[$0.name] ?? $0.name) \($0.superNumber)"
        }
        #expect(stored == generated)
    }

    @Test("a style that does not match the store's framework version is detected")
    func wrongStyleDiffers() throws {
        let copy = try Self.copyStore(Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody"))
        let actual = try SQLiteSchemaSnapshot(contentsOf: copy.path)
        let current = try SQLiteSchemaSnapshot(schema: StoreSchema(model: SchemaTestModels.moodyV5, style: .current))
        let differences = current.differences(from: actual)
        #expect(differences.contains("+ index sqlite_autoindex_ZCOUNTRY_1: UNIQUE ON ZCOUNTRY (ZNUMERICISO3166CODE, ZUNIQUENESSDUMMY)"))
        #expect(differences.contains("- index Z_Mood_remoteID: ON ZMOOD (ZREMOTEID)"))
        #expect(differences.contains("+ index ZMOOD_ZREMOTEID_INDEX: ON ZMOOD (ZREMOTEID)"))
    }

    /// Copies a store with its `-wal` and `-shm` into a fresh temporary directory: opening the original would write
    /// its `-shm`.
    static func copyStore(_ url: URL) throws -> URL {
        let directory = try Fixtures.temporaryDirectory()
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard manager.fileExists(atPath: source.path) else { continue }
            let target = directory.appendingPathComponent(source.lastPathComponent)
            try manager.copyItem(at: source, to: target)
            try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        }
        return directory.appendingPathComponent(url.lastPathComponent)
    }

    /// The `Z_METADATA` plist of a store.
    static func metadata(ofStoreAt path: String) throws -> [String: Any] {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
            throw DecantError(.ioError, "cannot open store", at: Location(path: path))
        }
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT Z_PLIST FROM Z_METADATA", -1, &statement, nil) == SQLITE_OK, let statement,
              sqlite3_step(statement) == SQLITE_ROW, let bytes = sqlite3_column_blob(statement, 0)
        else { throw DecantError(.malformedInput, "no Z_METADATA row", at: Location(path: path)) }
        defer { sqlite3_finalize(statement) }
        let data = Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, 0)))
        let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
        return plist as? [String: Any] ?? [:]
    }
}
