import Decant
import DecantTestSupport
import Foundation
import Testing

/// A store's persistent history (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`, the DDL of section 4.11) through a
/// migration, inside SQLite and through the record stream: kept, each change's entity number remapped to the entity
/// its object became, the changes of a removed entity left out and said so; `plan` and `convert` say what they keep.
@Suite struct PersistentHistoryMigrationTests {
    /// V1: Folder (1), Note (2), Tag (3). V2 renames Note.content to text, removes Tag and adds Archive, which comes first
    /// by name: Archive (1), Folder (2), Note (3). The entity numbers of Folder and Note change.
    static func bundle() -> ModelBundle {
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var v1 = MigrationFixtures.folderNotes("History", version: 1)
        v1.entities.append(tag)
        var archive = Entity(name: "Archive")
        archive.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var v2 = MigrationFixtures.folderNotes("History", version: 2)
        v2.entities.insert(archive, at: 0)
        return MigrationFixtures.bundle("History", [v1, v2])
    }

    /// Section 4.11's DDL, word for word, and a transaction that inserted Folder 1, Note 1 and 2 and Tag 1, then
    /// updated Note 2.
    static let history = """
        CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
        CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB );
        CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
        CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID);
        CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS);
        CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS);
        CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS);
        CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS);
        CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC);
        CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC);
        CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC);
        INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, 1, 'com.example.Notes'), (2, 16003, 1, 'Notes');
        INSERT INTO ATRANSACTION VALUES (1, 16002, 1, NULL, 1, NULL, 2, 785000000.5, NULL, 'com.example.Notes', NULL, 'Notes', NULL);
        INSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 1, 1, 1, NULL), (2, 16001, 1, 0, 2, 1, 1, NULL),
            (3, 16001, 1, 0, 2, 2, 1, NULL), (4, 16001, 1, 0, 3, 1, 1, NULL), (5, 16001, 1, 1, 2, 2, 1, X'04');
        INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 5), (16002, 'TRANSACTION', 0, 1), (16003, 'TRANSACTIONSTRING', 0, 2);
        """

    /// A V1 store with the history above.
    static func store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let v1 = bundle.versions[0]
        let url = folder.appendingPathComponent("history-v1.sqlite")
        try MigrationFixtures.writeStore(
            at: url, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "Home"]),
                MigrationFixtures.record("Note", 1, in: v1, ["content": "milk"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
                MigrationFixtures.record("Note", 2, in: v1, ["content": "eggs"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
                MigrationFixtures.record("Tag", 1, in: v1, ["name": "errands"]),
            ])
        let entities = try Self.query(url, "SELECT Z_NAME || '=' || Z_ENT FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        try #require(entities == "Folder=1\nNote=2\nTag=3")
        _ = try PythonOracle.text(
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[2]); db.executescript(sys.argv[3]); db.commit(); print('ok')",
            arguments: [url.path, Self.history])
        return url
    }

    /// Rows of a query, one line each, columns joined by `|`, read with Python's sqlite3.
    static func query(_ url: URL, _ sql: String) throws -> String {
        try PythonOracle.text(
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[2]); "
                + "print('\\n'.join('|'.join('' if v is None else str(v) for v in row) for row in db.execute(sys.argv[3])))",
            arguments: [url.path, sql])
    }

    @Test(arguments: [true, false]) func aMigrationKeepsTheHistoryAndRemapsEntityNumbers(inStore: Bool) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        var options = StoreMigration.Options(bundle: bundle)
        options.environment.runsInStoreWhenPossible = inStore
        let output = folder.appendingPathComponent("history-v2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.engine == (inStore ? .inStore(format: "sqlite") : .stream), "\(report.streamReason as Any)")
        #expect(try Self.query(output, "SELECT Z_NAME || '=' || Z_ENT FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT")
            == "Archive=1\nFolder=2\nNote=3")

        // The tables and indexes as the source declares them, the transactions and strings as they were.
        let schema = "SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') ORDER BY name"
        #expect(try Self.query(output, schema) == Self.query(store, schema))
        for table in ["ATRANSACTION", "ATRANSACTIONSTRING"] {
            #expect(try Self.query(output, "SELECT * FROM \(table)") == Self.query(store, "SELECT * FROM \(table)"))
        }
        // Folder's changes name 2 now, Note's 3; Tag's change is left out, and the report says so.
        #expect(
            try Self.query(output, "SELECT Z_PK, ZCHANGETYPE, ZENTITY, ZENTITYPK, hex(ZCOLUMNS) FROM ACHANGE ORDER BY Z_PK")
                == "1|0|2|1|\n2|0|3|1|\n3|0|3|2|\n5|1|3|2|04")
        #expect(try Self.query(output, "SELECT * FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT")
            == "16001|CHANGE|0|5\n16002|TRANSACTION|0|1\n16003|TRANSACTIONSTRING|0|2")
        let warning = try #require(report.warnings.first { $0.kind == .persistentHistory })
        #expect(warning.message == "persistent history: the 1 changes of Tag are not kept: Tag is removed in History 1 → History 2")
        // The migrated store still opens with V2, and a second run gives the same rows.
        #expect(try MigrationFixtures.hashes(output) == bundle.versions[1].entityVersionHashes)
        #expect(try MigrationFixtures.sameAgain(store, as: output, options: options, bundle: bundle))
    }

    @Test func thePlanSaysWhatIsKept() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        let plan = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: bundle)).plan
        #expect(plan.notes.contains {
            $0.hasPrefix("persistent history (ATRANSACTION, ACHANGE, ATRANSACTIONSTRING: 1 transactions, 5 changes, 2 strings): kept in a SQLite output")
        })
        #expect(plan.notes.contains("persistent history: the 1 changes of Tag are not kept: Tag is removed in History 1 → History 2"))
        // A store without history: nothing said.
        let plain = folder.appendingPathComponent("plain.sqlite")
        try MigrationFixtures.writeStore(at: plain, model: bundle.versions[0], records: [])
        let quiet = try StoreMigration.plan(store: plain, options: StoreMigration.Options(bundle: bundle)).plan
        #expect(!quiet.notes.contains { $0.contains("persistent history") })
    }

    @Test func intoAnotherFormatOrByConversionTheHistoryIsNotCarriedAndSaidSo() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        let json = folder.appendingPathComponent("history-v2.json")
        let migrated = try StoreMigration.migrate(store: store, to: .file(json), options: StoreMigration.Options(bundle: bundle))
        #expect(migrated.warnings.contains {
            $0.kind == .persistentHistory && $0.message.contains("1 transactions, 5 changes) is not carried into the json output")
        })
        let copy = folder.appendingPathComponent("copy.sqlite")
        var options = FormatOptions()
        options.bundle = bundle
        let converted = try StoreConversion.convert(from: store, to: copy, options: options)
        #expect(converted.warnings.contains {
            $0.kind == .persistentHistory && $0.message.contains("is not carried into the sqlite output")
        })
    }

    /// CoreDataPlus's SampleModel2 store, written by Core Data with history on (5,468 changes): a version that adds an
    /// entity named to come first renumbers every entity, and every change still names its own entity.
    @Test(arguments: [true, false]) func anAppleStoresHistoryNamesItsEntitiesAfterRenumbering(inStore: Bool) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Fixtures.copyStore(
            Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite"),
            into: folder)
        var v1 = try ModelBundle.load(modelOrStore: store).versions[0]
        v1.versionName = "V1"
        var v2 = v1
        v2.versionName = "V2"
        var first = Entity(name: "Aardvark")
        first.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        v2.entities.insert(first, at: 0)
        var options = StoreMigration.Options(bundle: MigrationFixtures.bundle("SampleModel2", [v1, v2]))
        options.environment.runsInStoreWhenPossible = inStore
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(!report.warnings.contains { $0.kind == .persistentHistory }, "\(report.warnings)")
        #expect(try Self.query(output, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'") != "1")
        // Each change, by key, names the same entity (by name) in the migrated store as in Apple's.
        let names = "SELECT c.Z_PK, p.Z_NAME, c.ZENTITYPK, c.ZCHANGETYPE FROM ACHANGE c JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.ZENTITY ORDER BY c.Z_PK"
        let before = try Self.query(store, names)
        #expect(before.split(separator: "\n").count == 5468)
        #expect(try Self.query(output, names) == before)
        #expect(try Self.query(output, "SELECT COUNT(*) FROM ATRANSACTION") == Self.query(store, "SELECT COUNT(*) FROM ATRANSACTION"))
    }

    /// A V1 store with `sql` run on it (history tables of its own shape).
    static func mutated(in folder: URL, _ sql: String) throws -> URL {
        let bundle = Self.bundle()
        let url = folder.appendingPathComponent("mutated-\(UUID().uuidString).sqlite")
        let v1 = bundle.versions[0]
        try MigrationFixtures.writeStore(
            at: url, model: v1, records: [MigrationFixtures.record("Folder", 1, in: v1, ["name": "Home"])])
        _ = try PythonOracle.text(
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[2]); db.executescript(sys.argv[3]); db.commit(); print('ok')",
            arguments: [url.path, sql])
        return url
    }

    @Test func historyTablesOfAnotherShapeStopTheMigrationLocatedAtTheStore() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transaction = "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER );"
        let strings = "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );"
        let cases: [(String, String)] = [
            // One table of three.
            (transaction, "has the persistent-history tables ATRANSACTION but not ATRANSACTIONSTRING, ACHANGE"),
            // ACHANGE without its entity column.
            (transaction + strings + "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER );", "ZENTITY"),
        ]
        for (sql, message) in cases {
            let store = try Self.mutated(in: folder, sql)
            let before = try Data(contentsOf: store)
            let output = folder.appendingPathComponent("out.sqlite")
            for inStore in [true, false] {
                var options = StoreMigration.Options(bundle: Self.bundle())
                options.environment.runsInStoreWhenPossible = inStore
                let error = try #require(throws: DecantError.self) {
                    try StoreMigration.migrate(store: store, to: .file(output), options: options)
                }
                #expect(error.code == .malformedInput && error.code.exitCode == 65, "\(error)")
                #expect(error.message.contains(message), "\(error.message)")
                #expect(error.location?.path == store.displayPath)
                #expect(!FileManager.default.fileExists(atPath: output.path))
                #expect(try Data(contentsOf: store) == before)
            }
            let plan = try #require(throws: DecantError.self) {
                try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: Self.bundle()))
            }
            #expect(plan.code == .malformedInput)
        }
    }

    @Test func aChangeWhoseEntityIsNoNumberIsLeftOutAndNamed() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let ddl = Self.history.split(separator: "\n").filter { $0.hasPrefix("CREATE") }.joined(separator: "\n")
        let store = try Self.mutated(
            in: folder, ddl + "\nINSERT INTO ACHANGE VALUES (1, 16001, 1, 0, 'Folder', 1, 1, NULL), (2, 16001, 1, 0, 1, 1, 1, NULL), (3, 16001, 1, 0, 99, 1, 1, NULL);")
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: Self.bundle()))
        let messages = report.warnings.filter { $0.kind == .persistentHistory }.map(\.message)
        #expect(messages == [
            "persistent history: the 1 changes of #\"Folder\" are not kept: it is not an entity of History 1",
            "persistent history: the 1 changes of #99 are not kept: it is not an entity of History 1",
        ])
        #expect(try Self.query(output, "SELECT Z_PK, ZENTITY FROM ACHANGE") == "2|2")
    }

    @Test func seedingKeepsTheHistoryOfTheStoreItMigratesInPlace() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        let seed = folder.appendingPathComponent("seed.sqlite")
        try FileManager.default.copyItem(at: store, to: seed)
        // The app's store exists at V1: seeding migrates it in place to V2, after a backup.
        let report = try Seeding.seed(
            default: seed, store: store, options: FormatOptions(bundle: bundle),
            migration: StoreMigration.Options(bundle: bundle))
        #expect(report.action == .migrated)
        #expect(try Self.query(store, "SELECT Z_PK, ZENTITY FROM ACHANGE ORDER BY Z_PK") == "1|2\n2|3\n3|3\n5|3")
        #expect(report.warnings.map(\.message).contains {
            $0 == "persistent history: the 1 changes of Tag are not kept: Tag is removed in History 1 → History 2"
        })
    }

    @Test func aStoreAtTheDestinationVersionIsCopiedWithItsHistory() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle()
        let store = try Self.store(in: folder, bundle: bundle)
        let output = folder.appendingPathComponent("copy.sqlite")
        let report = try StoreMigration.migrate(
            store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle, destinationVersion: "History 1"))
        #expect(report.action == .copied)
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        for table in ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING", "Z_PRIMARYKEY"] {
            #expect(try Self.query(output, "SELECT * FROM \(table) ORDER BY 1") == Self.query(store, "SELECT * FROM \(table) ORDER BY 1"))
        }
    }
}
