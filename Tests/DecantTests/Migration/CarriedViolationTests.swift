import Decant
import DecantTestSupport
import Foundation
import Testing

/// Core Data's lightweight migration runs inside SQLite and never validates the objects it moves: in an inferred hop a
/// violation the source object already had (same object, property and rule) is carried over with a warning; only
/// violations the migration makes stop it. `strict` refuses both.
@Suite("Carried violations")
struct CarriedViolationTests {
    /// `Items 1`: `Item{name (required, at most 5 characters), code, tag (required), owner → Owner}`.
    /// `Items 2`: the same, but `code` becomes required and `tag` is renamed `label` (renaming identifier).
    static func items() -> ModelBundle {
        func model(_ version: Int) -> ObjectModel {
            var name = Attribute(name: "name", type: .string)
            name.maxValue = "5"
            var tag = Attribute(name: version == 1 ? "tag" : "label", type: .string)
            if version == 2 { tag.renamingIdentifier = "tag" }
            var item = Entity(name: "Item")
            item.attributes = [name, Attribute(name: "code", type: .string, isOptional: version == 1), tag]
            item.relationships = [Relationship(name: "owner", destination: "Owner")]
            var owner = Entity(name: "Owner")
            owner.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            return ObjectModel(versionName: "Items \(version)", entities: [owner, item])
        }
        return MigrationFixtures.bundle("Items", [model(1), model(2)])
    }

    /// Item 1 has no name, 2 too long a name, 4 no tag, 5 an owner that does not exist: all broke a rule of
    /// `Items 1` already. Item 3 has no code, which only `Items 2` requires. Item 6 is fine.
    static func store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("items1.sqlite")
        let owner: [String: RelationshipValue] = ["owner": .toOne(.pk("Owner", 1))]
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Owner", 1, in: v1, ["name": "me"]),
                MigrationFixtures.record("Item", 1, in: v1, ["code": "a", "tag": "t"], relationships: owner),
                MigrationFixtures.record("Item", 2, in: v1, ["name": "toolong", "code": "b", "tag": "t"]),
                MigrationFixtures.record("Item", 3, in: v1, ["name": "three", "tag": "t"]),
                MigrationFixtures.record("Item", 4, in: v1, ["name": "four", "code": "d"]),
                MigrationFixtures.record(
                    "Item", 5, in: v1, ["name": "five", "code": "e", "tag": "t"],
                    relationships: ["owner": .toOne(.pk("Owner", 99))]),
                MigrationFixtures.record("Item", 6, in: v1, ["name": "six", "code": "f", "tag": "t"]),
            ])
        return store
    }

    static func lines(_ url: URL) throws -> [String] {
        try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init).sorted()
    }

    /// Before, every one of items 1, 2, 4 and 5 was refused (or, for 5, listed as dangling) like item 3.
    @Test func violationsTheSourceHadAreCarriedOverWithAWarning() throws {
        let bundle = Self.items()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder, bundle: bundle)
        var options = StoreMigration.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let output = folder.appendingPathComponent("items2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.rejected == 1 && report.dangling == 0)
        #expect(report.written == ["Owner": 1, "Item": 5])
        #expect(
            try Self.lines(folder.appendingPathComponent("rejects.ndjson"))
                == [#"{"entity":"Item","object":"Item/p3","property":"code","rule":"optional"}"#])
        #expect(report.warnings.allSatisfy { $0.kind == .preexistingViolation })
        #expect(
            report.warnings.map(\.message) == [
                "Item.label optional: 1 object already broke this rule in the source and was carried over, as Core "
                    + "Data's lightweight migration does (Item/p4); give --strict to refuse them",
                "Item.name max: 1 object already broke this rule in the source and was carried over, as Core Data's "
                    + "lightweight migration does (Item/p2); give --strict to refuse them",
                "Item.name optional: 1 object already broke this rule in the source and was carried over, as Core "
                    + "Data's lightweight migration does (Item/p1); give --strict to refuse them",
                "Item.owner dangling: 1 object already broke this rule in the source and was carried over, as Core "
                    + "Data's lightweight migration does (Item/p5); give --strict to refuse them",
            ])
        // The carried objects are written as they were; `validate` still reports them.
        let items = try #require(try MigrationFixtures.read(output, bundle: bundle)["Item"])
        #expect(items.map(\.id) == [1, 2, 4, 5, 6].map { RecordID.primaryKey($0) })
        var validation = StoreValidation.Options(bundle: bundle)
        validation.rejects = folder.appendingPathComponent("found.ndjson")
        #expect(
            try StoreValidation.validate(store: output, options: validation).failures
                == ["Item.label optional": 1, "Item.name max": 1, "Item.name optional": 1, "Item.owner dangling": 1])
    }

    /// The violation the migration makes (item 3's missing code) still stops a run without rejects.
    @Test func aViolationTheMigrationMakesStillStopsTheRun() throws {
        let bundle = Self.items()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder, bundle: bundle)
        let output = folder.appendingPathComponent("items2.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        }
        #expect(error.code == .validationFailed)
        #expect(error.location?.object == "Item/p3")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// `strict` refuses what the source already broke too, as before.
    @Test func strictRefusesViolationsTheSourceHadToo() throws {
        let bundle = Self.items()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder, bundle: bundle)
        var options = StoreMigration.Options(bundle: bundle)
        options.strict = true
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(
            store: store, to: .file(folder.appendingPathComponent("items2.sqlite")), options: options)
        #expect(report.rejected == 4 && report.dangling == 1)
        #expect(report.warnings.isEmpty)
        #expect(
            try Self.lines(folder.appendingPathComponent("rejects.ndjson")) == [
                #"{"entity":"Item","object":"Item/p1","property":"name","rule":"optional"}"#,
                #"{"entity":"Item","object":"Item/p2","property":"name","rule":"max","value":"toolong"}"#,
                #"{"entity":"Item","object":"Item/p3","property":"code","rule":"optional"}"#,
                #"{"entity":"Item","object":"Item/p4","property":"label","rule":"optional"}"#,
                #"{"entity":"Item","object":"Item/p5","property":"owner","rule":"dangling","value":"Owner/p99"}"#,
            ])
        options.rejects = nil
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(
                store: store, to: .file(folder.appendingPathComponent("strict.sqlite")), options: options)
        }
        #expect(error.location?.object == "Item/p1")
    }

    /// A reference that dangles because the run rejected its object is the migration's doing: listed, not carried.
    @Test func aReferenceToARejectedObjectIsNotCarried() throws {
        func model(_ version: Int) -> ObjectModel {
            var owner = Entity(name: "Owner")
            owner.attributes = [Attribute(name: "name", type: .string, isOptional: version == 1)]
            var item = Entity(name: "Item")
            item.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
            item.relationships = [Relationship(name: "owner", destination: "Owner")]
            return ObjectModel(versionName: "Owners \(version)", entities: [owner, item])
        }
        let bundle = MigrationFixtures.bundle("Owners", [model(1), model(2)])
        let v1 = bundle.versions[0]
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("owners1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Owner", 1, in: v1),
                MigrationFixtures.record("Item", 1, in: v1, ["title": "a"], relationships: ["owner": .toOne(.pk("Owner", 1))]),
                MigrationFixtures.record("Item", 2, in: v1, ["title": "b"], relationships: ["owner": .toOne(.pk("Owner", 7))]),
            ])
        var options = StoreMigration.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(
            store: store, to: .file(folder.appendingPathComponent("owners2.sqlite")), options: options)
        #expect(report.rejected == 1 && report.dangling == 1)
        #expect(
            try Self.lines(folder.appendingPathComponent("rejects.ndjson")) == [
                #"{"entity":"Item","object":"Item/p1","property":"owner","rule":"dangling","value":"Owner/p1"}"#,
                #"{"entity":"Owner","object":"Owner/p1","property":"name","rule":"optional"}"#,
            ])
        #expect(report.warnings.map(\.message) == [
            "Item.owner dangling: 1 object already broke this rule in the source and was carried over, as Core "
                + "Data's lightweight migration does (Item/p2); give --strict to refuse them",
        ])
    }
}
