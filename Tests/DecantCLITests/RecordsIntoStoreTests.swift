import DecantTestSupport
import Foundation
import Testing

/// Records (JSON, CSV) written into a Core Data store meet the model's rules, as Core Data's save makes an app's
/// inserted objects meet them, and take the model's defaults for what they do not mention, as its insert gives them:
/// through `convert` and `seed` alike. A store-to-store copy carries what the store holds, unchecked.
@Suite("records into a store: the model's rules and defaults", .serialized, .requiresDecantBinary)
struct RecordsIntoStoreTests {
    /// `Item`: `name` required, `count` required with default 7, `label` optional with default "none".
    static func folder() throws -> URL {
        let folder = try Fixtures.temporaryDirectory()
        try ModelBundleFiles.write(
            "Items",
            versions: [
                (
                    "Items",
                    ModelBundleFiles.item(
                        #"<attribute name="name" attributeType="String"/>"#,
                        #"<attribute name="count" attributeType="Integer 32" defaultValueString="7" usesScalarValueType="YES"/>"#,
                        #"<attribute name="label" optional="YES" attributeType="String" defaultValueString="none"/>"#)
                )
            ], in: folder)
        // The third object has no name: Core Data's save refuses it (NSValidationMissingMandatoryPropertyError).
        try Data(#"[{"name":"a"},{"name":"b","count":3,"label":null},{"count":1}]"#.utf8)
            .write(to: folder.appendingPathComponent("items.json"))
        return folder
    }

    static func run(in folder: URL, _ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let outcome = try JSONConvertTests.run(in: folder, arguments)
        return (outcome.status, outcome.output, outcome.errors)
    }

    static func rows(_ store: URL) throws -> [String] {
        try PythonOracle.text(
            "import sqlite3, sys; [print(r) for r in sqlite3.connect(sys.argv[2]).execute('SELECT ZNAME, ZCOUNT, ZLABEL FROM ZITEM ORDER BY Z_PK')]",
            arguments: [store.path]
        ).split(separator: "\n").map(String.init)
    }

    @Test func anObjectBreakingARuleStopsTheConversionAndNothingIsWritten() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Self.run(in: folder, ["convert", "items.json", "out.sqlite", "--model", "Items.xcdatamodeld"])
        #expect(run.status == 1, "\(run.output)\(run.errors)")
        #expect(run.errors.contains("items.json: entity Item"), "\(run.errors)")
        #expect(run.errors.contains("name is nil, but the model requires a value"), "\(run.errors)")
        #expect(run.errors.contains("--rejects FILE"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.sqlite").path))
    }

    @Test func rejectsAreListedLeftOutAndCountedPerEntity() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Self.run(
            in: folder,
            ["convert", "items.json", "out.sqlite", "--model", "Items.xcdatamodeld", "--rejects", "rejects.ndjson", "--json"])
        #expect(run.status == 1, "\(run.errors)")
        #expect(run.errors.contains("Error: 1 object rejected by the rules of Items: Item 1"), "\(run.errors)")
        #expect(run.errors.contains("listed in rejects.ndjson"))
        #expect(try EndToEndTests.validate(run.output, schema: "convert") == "valid")
        #expect(run.output.contains(#""validated" : true"#), "\(run.output)")
        let rejects = try String(contentsOf: folder.appendingPathComponent("rejects.ndjson"), encoding: .utf8)
        #expect(rejects == #"{"entity":"Item","object":"Item\/#3","property":"name","rule":"optional"}"# + "\n"
            || rejects == #"{"entity":"Item","object":"Item/#3","property":"name","rule":"optional"}"# + "\n", "\(rejects)")
        // The two that pass are written; a key not mentioned takes the model's default, a null given stays nil.
        #expect(try Self.rows(folder.appendingPathComponent("out.sqlite")) == ["('a', 7, 'none')", "('b', 3, None)"])
    }

    @Test func noValidateWritesTheRawCopyAndAStoreToStoreCopyIsNotChecked() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let raw = try Self.run(
            in: folder, ["convert", "items.json", "raw.sqlite", "--model", "Items.xcdatamodeld", "--no-validate"])
        #expect(raw.status == 0, "\(raw.errors)")
        #expect(try Self.rows(folder.appendingPathComponent("raw.sqlite")).count == 3)
        let both = try Self.run(
            in: folder,
            ["convert", "items.json", "x.sqlite", "--model", "Items.xcdatamodeld", "--no-validate", "--rejects", "r.ndjson"])
        #expect(both.status == 64, "\(both.errors)")
        // The store holds an object without its required name: a copy of it carries it, as migratePersistentStore does.
        let copy = try Self.run(in: folder, ["convert", "raw.sqlite", "copy.xml", "--model", "Items.xcdatamodeld"])
        #expect(copy.status == 0, "\(copy.errors)")
        #expect(copy.output.contains("3 objects written"), "\(copy.output)")
        // And an export is never checked.
        let export = try Self.run(in: folder, ["convert", "raw.sqlite", "items.ndjson", "--model", "Items.xcdatamodeld"])
        #expect(export.status == 0, "\(export.errors)")
    }

    @Test func aCSVColumnNotGivenTakesTheDefault() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("name,label\nc,\nd,\"\"\n".utf8).write(to: folder.appendingPathComponent("items.csv"))
        let run = try Self.run(in: folder, ["convert", "items.csv", "out.sqlite", "--model", "Items.xcdatamodeld", "--entity", "Item"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(try Self.rows(folder.appendingPathComponent("out.sqlite")) == ["('c', 7, None)", "('d', 7, '')"])
    }

    @Test func aSeedBreakingARuleIsNotPutInPlaceUnlessItsRejectsAreListed() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let refused = try Self.run(
            in: folder, ["seed", "--default", "items.json", "--store", "App/Items.sqlite", "--model", "Items.xcdatamodeld"])
        #expect(refused.status == 1, "\(refused.errors)")
        #expect(refused.errors.contains("items.json: entity Item"), "\(refused.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("App").path))
        let listed = try Self.run(
            in: folder,
            [
                "seed", "--default", "items.json", "--store", "App/Items.sqlite", "--model", "Items.xcdatamodeld",
                "--rejects", "rejects.ndjson",
            ])
        #expect(listed.status == 1, "\(listed.errors)")
        #expect(listed.output.contains("seeded from items.json (2 objects"), "\(listed.output)")
        #expect(listed.errors.contains("1 object rejected by the rules of Items: Item 1"), "\(listed.errors)")
        #expect(try Self.rows(folder.appendingPathComponent("App/Items.sqlite")) == ["('a', 7, 'none')", "('b', 3, None)"])
        let raw = try Self.run(
            in: folder,
            ["seed", "--default", "items.json", "--store", "Raw/Items.sqlite", "--model", "Items.xcdatamodeld", "--no-validate"])
        #expect(raw.status == 0, "\(raw.errors)")
        #expect(try Self.rows(folder.appendingPathComponent("Raw/Items.sqlite")).count == 3)
    }

    /// A seed at an older version is checked by that version's rules, then migrated: both lists go in one file.
    @Test func aMigratedSeedListsItsOwnRejectsAndTheMigrations() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = ModelBundleFiles.item(
            #"<attribute name="name" attributeType="String"/>"#,
            #"<attribute name="note" optional="YES" attributeType="String"/>"#)
        // Version 2 requires `note`: objects without one are the migration's rejects.
        let v2 = ModelBundleFiles.item(
            #"<attribute name="name" attributeType="String"/>"#, #"<attribute name="note" attributeType="String"/>"#)
        try ModelBundleFiles.write(
            "Items", versions: [("Items", v1), ("Items 2", v2)], current: "Items 2", in: folder)
        try Data(#"[{"name":"a","note":"x"},{"note":"no name"},{"name":"c"}]"#.utf8)
            .write(to: folder.appendingPathComponent("items.json"))
        // Without --rejects the first breach stops the seeding, named at the seed (not at its copy's staging path).
        let stopped = try Self.run(
            in: folder,
            [
                "seed", "--default", "items.json", "--store", "App/Items.sqlite", "--model", "Items.xcdatamodeld",
                "--model-version", "Items",
            ])
        #expect(stopped.status == 1)
        #expect(stopped.errors.hasPrefix("Error: items.json: entity Item"), "\(stopped.errors)")
        #expect(!stopped.errors.contains("decant-seed"), "\(stopped.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("App").path))
        // Version 1's rules pass every object but the one without a name: the seed's copy is migrated, and version
        // 2's breach (no note) is named at the seed too.
        try Data(#"[{"name":"a","note":"x"},{"name":"c"}]"#.utf8).write(to: folder.appendingPathComponent("v1.json"))
        let migrating = try Self.run(
            in: folder,
            [
                "seed", "--default", "v1.json", "--store", "App/Items.sqlite", "--model", "Items.xcdatamodeld",
                "--model-version", "Items",
            ])
        #expect(migrating.status == 1)
        #expect(migrating.errors.hasPrefix("Error: v1.json: entity Item"), "\(migrating.errors)")
        #expect(migrating.errors.contains("note is nil"), "\(migrating.errors)")
        let run = try Self.run(
            in: folder,
            [
                "seed", "--default", "items.json", "--store", "App/Items.sqlite", "--model", "Items.xcdatamodeld",
                "--model-version", "Items", "--rejects", "rejects.ndjson",
            ])
        #expect(run.status == 1, "\(run.output)\(run.errors)")
        let lines = try String(contentsOf: folder.appendingPathComponent("rejects.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains(#""property":"name""#) == true)
        #expect(lines.last?.contains(#""property":"note""#) == true)
        #expect(run.output.contains("seeded from items.json (1 objects") || run.output.contains("(1 object"), "\(run.output)")
    }

    /// A writer that drops objects ends the run with exit 70 and commits nothing: the SQLite writer counts the rows
    /// the store took, and the transfer compares them with the objects it gave it. `DECANT_TEST_DROP_OBJECTS` makes
    /// the debug writer drop one chunk (docs/TESTING.md); without the check, the run exited 0 with a store short of
    /// objects.
    @Test func aWriterThatDropsObjectsEndsTheRunWith70() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func dropping(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            let outcome = try Subprocess.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["-C", folder.path, "DECANT_TEST_DROP_OBJECTS=1", EndToEndTests.binary.path] + arguments)
            return (outcome.status, outcome.output, outcome.errors)
        }
        let convert = try dropping(["convert", "items.json", "out.sqlite", "--model", "Items.xcdatamodeld", "--no-validate"])
        #expect(convert.status == 70, "\(convert.errors)")
        #expect(
            convert.errors.contains("out.sqlite: entity Item: internal error: the output took 2 of the 3 Item objects"),
            "\(convert.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.sqlite").path))
        let json = try dropping(["convert", "items.json", "out.sqlite", "--model", "Items.xcdatamodeld", "--no-validate", "--json"])
        #expect(json.status == 70)
        #expect(try EndToEndTests.validate(json.output, schema: "error") == "valid", "\(json.output)")
        let seed = try dropping(
            ["seed", "--default", "items.json", "--store", "App/Items.sqlite", "--model", "Items.xcdatamodeld", "--no-validate"])
        #expect(seed.status == 70, "\(seed.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("App").path))
        // The same run without the fault writes every object.
        let whole = try Self.run(in: folder, ["convert", "items.json", "out.sqlite", "--model", "Items.xcdatamodeld", "--no-validate"])
        #expect(whole.status == 0 && whole.output.contains("3 objects written"), "\(whole.errors)")
    }
}
