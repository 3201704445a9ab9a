import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant validate` and the same checks before `migrate` writes.
@Suite("Validation")
struct ValidationTests {
    /// `Folder{name (unique), notes (to-many, no inverse, at most 2)}`, `Note{title (required, 2–10 chars, a
    /// capital first), rank (0–5), due (in 2001), folder (to-one)}`.
    static func model() -> ObjectModel {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.uniquenessConstraints = [["name"]]
        var notes = Relationship(name: "notes", destination: "Note", toMany: true)
        notes.maxCount = 2
        folder.relationships = [notes]
        var title = Attribute(name: "title", type: .string)
        title.minValue = "2"
        title.maxValue = "10"
        title.regularExpression = "[A-Z].*"
        var rank = Attribute(name: "rank", type: .integer16, isOptional: true)
        rank.minValue = "0"
        rank.maxValue = "5"
        var due = Attribute(name: "due", type: .date, isOptional: true)
        due.minDate = 0
        due.maxDate = 365 * 86400
        var note = Entity(name: "Note")
        note.attributes = [title, rank, due]
        note.relationships = [Relationship(name: "folder", destination: "Folder")]
        return ObjectModel(versionName: "Rules", entities: [folder, note])
    }

    static func store(in folder: URL) throws -> (URL, ModelBundle) {
        let model = Self.model()
        let url = folder.appendingPathComponent("rules.sqlite")
        let day = Date(timeIntervalSinceReferenceDate: 86400)
        try MigrationFixtures.writeStore(
            at: url, model: model,
            records: [
                MigrationFixtures.record("Folder", 1, in: model, ["name": "home"], relationships: ["notes": .toMany([.pk("Note", 1)])]),
                MigrationFixtures.record("Folder", 2, in: model, ["name": "elsewhere"]),
                MigrationFixtures.record(
                    "Folder", 3, in: model, ["name": "work"],
                    relationships: ["notes": .toMany([.pk("Note", 2), .pk("Note", 3), .pk("Note", 4)])]),
                MigrationFixtures.record("Note", 1, in: model, ["title": "Fine", "rank": 3, "due": .date(day)]),
                MigrationFixtures.record("Note", 2, in: model, ["rank": 1]),
                MigrationFixtures.record("Note", 3, in: model, ["title": "lowercase"]),
                MigrationFixtures.record("Note", 4, in: model, ["title": "Far too long a title"]),
                MigrationFixtures.record("Note", 5, in: model, ["title": "Ranked", "rank": 9]),
                MigrationFixtures.record("Note", 6, in: model, ["title": "Late", "due": .date(day.addingTimeInterval(400 * 86400))]),
                MigrationFixtures.record("Note", 7, in: model, ["title": "Lost"], relationships: ["folder": .toOne(.pk("Folder", 99))]),
            ])
        return (url, MigrationFixtures.bundle("Rules", [model]))
    }

    @Test func everyRuleIsCheckedAndListed() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        var options = StoreValidation.Options(bundle: bundle)
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        options.rejects = rejects
        let report = try StoreValidation.validate(store: store, options: options)
        #expect(report.objects == ["Folder": 3, "Note": 7])
        #expect(
            report.failures == [
                "Folder.notes maxCount": 1, "Note.title optional": 1, "Note.title regex": 1,
                "Note.title max": 1, "Note.rank max": 1, "Note.due max": 1, "Note.folder dangling": 1,
            ])
        let lines = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(lines.contains(#"{"entity":"Note","object":"Note/p7","property":"folder","rule":"dangling","value":"Folder/p99"}"#))
        #expect(lines.contains(#"{"entity":"Note","object":"Note/p5","property":"rank","rule":"max","value":"9"}"#))
    }

    @Test func withoutRejectsTheFirstFailureStopsTheRun() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        let error = try #require(throws: DecantError.self) {
            try StoreValidation.validate(store: store, options: StoreValidation.Options(bundle: bundle))
        }
        #expect(error.code == .validationFailed)
        #expect(error.location?.object == "Folder/p3")
        #expect(error.message == "Folder/p3: notes (3) breaks the rule maxCount; give --rejects FILE to list such objects and go on")
    }

    @Test func uniquenessIsCheckedBeforeTheWriter() throws {
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        var unique = tag
        unique.uniquenessConstraints = [["name"]]
        let bundle = MigrationFixtures.bundle(
            "Tags", [ObjectModel(versionName: "T1", entities: [tag]), ObjectModel(versionName: "T2", entities: [unique])])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("t1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: ["a", "b", "a"].enumerated().map { MigrationFixtures.record("Tag", Int64($0 + 1), in: v1, ["name": .string($1)]) })
        let output = folder.appendingPathComponent("t2.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        }
        #expect(error.message.hasPrefix("Tag/p3: another Tag has the same name (uniqueness constraint)"))
        var options = StoreMigration.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.first?.rows["Tag"] == MigrationLedger.Row(read: 3, written: 2, rejected: 1))
        #expect(try MigrationFixtures.read(output, bundle: bundle)["Tag"]?.count == 2)
    }

    @Test func migrateChecksBeforeWritingAndListsDanglingReferences() throws {
        // A `where` filter drops notes that a kept folder still lists: the reference would dangle.
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var folderEntity = Entity(name: "Folder")
        folderEntity.relationships = [Relationship(name: "notes", destination: "Note", toMany: true)]
        let v1 = ObjectModel(versionName: "F1", entities: [folderEntity, note])
        var note2 = note
        note2.attributes.append(Attribute(name: "pinned", type: .boolean, isOptional: true))
        let v2 = ObjectModel(versionName: "F2", entities: [folderEntity, note2])
        let bundle = MigrationFixtures.bundle("Filter", [v1, v2])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("f1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, relationships: ["notes": .toMany([.pk("Note", 1), .pk("Note", 2)])]),
                MigrationFixtures.record("Note", 1, in: v1, ["title": "keep"]),
                MigrationFixtures.record("Note", 2, in: v1, ["title": "drop"]),
            ])
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                "source: F1\ndestination: F2\nentities:\n  Note:\n    where: \"$source.title != 'drop'\"\n", path: "filter.yaml")
        ]
        let output = folder.appendingPathComponent("f2.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: options)
        }
        #expect(error.code == .validationFailed)
        #expect(error.message.contains("Folder/p1: notes points at Note/p2, which does not exist"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.dangling == 1)
        #expect(report.ledgers.first?.rows["Note"] == MigrationLedger.Row(read: 2, written: 1, removed: 1))
        #expect(try MigrationFixtures.read(output, bundle: bundle)["Note"]?.count == 1)
    }
}
