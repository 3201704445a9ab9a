import Decant
import DecantTestSupport
import Foundation
import Testing

/// Models built in code: a rename at every version, relationship shape changes, an entity moving into a new parent.
@Suite("Migration chains and shapes")
struct ChainAndShapeMigrationTests {
    // MARK: Five versions, a rename at each

    /// V1 `Item{a}`, V2 `b` ← a, V3 `c` ← b, V4 `d` ← c, V5 `e` ← d: each renaming identifier names the
    /// previous name.
    static func renameChain() -> ModelBundle {
        let names = ["a", "b", "c", "d", "e"]
        let versions = names.enumerated().map { index, name in
            var attribute = Attribute(name: name, type: .string, isOptional: true)
            if index > 0 { attribute.renamingIdentifier = names[index - 1] }
            var count = Attribute(name: "count", type: index < 2 ? .integer16 : .integer64, isOptional: true)
            count.renamingIdentifier = nil
            var item = Entity(name: "Item")
            item.attributes = [attribute, count]
            return ObjectModel(versionName: "V\(index + 1)", entities: [item])
        }
        return MigrationFixtures.bundle("Chain", versions)
    }

    @Test func aRenameAtEveryVersionKeepsItsValueHopByHop() throws {
        let bundle = Self.renameChain()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let v5 = bundle.versions[4]
        let store = folder.appendingPathComponent("chain.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: (1...50).map {
                MigrationFixtures.record(
                    "Item",
                    Int64($0),
                    in: v1,
                    ["a": .string("item \($0)"), "count": .integer(Int64($0))]
                )
            }
        )
        let output = folder.appendingPathComponent("v5.sqlite")
        let report = try StoreMigration.migrate(
            store: store,
            to: .file(output),
            options: StoreMigration.Options(bundle: bundle)
        )
        #expect(report.hops.count == 4)
        #expect(try MigrationFixtures.hashes(output) == v5.entityVersionHashes)
        let items = try #require(try MigrationFixtures.read(output, bundle: bundle)["Item"])
        #expect(items.count == 50)
        #expect(items.map { MigrationFixtures.value($0, "e", model: v5) } == (1...50).map { .string("item \($0)") })
        #expect(items.map { MigrationFixtures.value($0, "count", model: v5) } == (1...50).map { .integer(Int64($0)) })
        #expect(
            try MigrationFixtures.sameAgain(
                store,
                as: output,
                options: StoreMigration.Options(bundle: bundle),
                bundle: bundle
            )
        )
        // Core Data's single step from V1 straight to V5 pairs nothing and loses the value.
        let direct = MappingInference.infer(from: v1, to: v5).mapping.mapping(producing: "Item")
        #expect(direct?.property("e")?.change == .added(default: nil))
        // Each hop against its neighbour pairs the rename and widens the integer once.
        let plan = try MigrationPlan(bundle: bundle, source: v1)
        try #require(plan.hops.count == 4)
        #expect(plan.hops[0].mapping.mapping(producing: "Item")?.property("b")?.change == .renamed(from: "a"))
        #expect(
            plan.hops[1].mapping.mapping(producing: "Item")?.property("count")?.change
                == .widened(from: .integer16, to: .integer64)
        )
    }

    // MARK: To-one ⇄ to-many, unordered ⇄ ordered

    /// V1: Folder.notes (to-many) ⇄ Note.folder (to-one). V2: Note.folders (to-many, renamed) ⇄ Folder.notes
    /// (to-many, ordered): many-to-many. V3: back to Note.folder (to-one) ⇄ Folder.notes (unordered), and a new
    /// Folder.color so that V3's hashes differ from V1's.
    static func shapes() -> ModelBundle {
        func model(_ name: String, noteToMany: Bool, ordered: Bool) -> ObjectModel {
            var folder = Entity(name: "Folder")
            folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            if name == "S3" { folder.attributes.append(Attribute(name: "color", type: .string, isOptional: true)) }
            var notes = Relationship(
                name: "notes",
                destination: "Note",
                inverse: noteToMany ? "folders" : "folder",
                toMany: true
            )
            notes.isOrdered = ordered
            folder.relationships = [notes]
            var note = Entity(name: "Note")
            note.attributes = [Attribute(name: "text", type: .string, isOptional: true)]
            var link = Relationship(
                name: noteToMany ? "folders" : "folder",
                destination: "Folder",
                inverse: "notes",
                toMany: noteToMany
            )
            link.renamingIdentifier = noteToMany ? "folder" : "folders"
            if name == "S1" { link.renamingIdentifier = nil }
            note.relationships = [link]
            return ObjectModel(versionName: name, entities: [folder, note])
        }
        return MigrationFixtures.bundle(
            "Shapes",
            [
                model("S1", noteToMany: false, ordered: false), model("S2", noteToMany: true, ordered: true),
                model("S3", noteToMany: false, ordered: false),
            ]
        )
    }

    @Test func toOneBecomesToManyAndOrderedThenBack() throws {
        let bundle = Self.shapes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let s1 = bundle.versions[0]
        let s2 = bundle.versions[1]
        let s3 = bundle.versions[2]
        let store = folder.appendingPathComponent("s1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: s1,
            records: [
                MigrationFixtures.record("Folder", 1, in: s1, ["name": "home"], relationships: ["notes": .viaInverse]),
                MigrationFixtures.record("Folder", 2, in: s1, ["name": "work"], relationships: ["notes": .viaInverse]),
                MigrationFixtures.record(
                    "Note",
                    1,
                    in: s1,
                    ["text": "milk"],
                    relationships: ["folder": .toOne(.pk("Folder", 1))]
                ),
                MigrationFixtures.record(
                    "Note",
                    2,
                    in: s1,
                    ["text": "eggs"],
                    relationships: ["folder": .toOne(.pk("Folder", 1))]
                ),
                MigrationFixtures.record(
                    "Note",
                    3,
                    in: s1,
                    ["text": "memo"],
                    relationships: ["folder": .toOne(.pk("Folder", 2))]
                ),
                MigrationFixtures.record("Note", 4, in: s1, ["text": "loose"]),
            ]
        )
        let plan = try MigrationPlan(bundle: bundle, source: s1)
        #expect(plan.isExecutable, "\(plan.problems)")
        try #require(plan.hops.count == 2)
        #expect(
            plan.hops[0].mapping.mapping(producing: "Note")?.property("folders")?.change == .cardinality(toMany: true)
        )
        #expect(
            plan.hops[0].mapping.mapping(producing: "Folder")?.property("notes")?.change == .ordering(ordered: true)
        )

        let atS2 = folder.appendingPathComponent("s2.sqlite")
        _ = try StoreMigration.migrate(
            store: store,
            to: .file(atS2),
            options: StoreMigration.Options(bundle: bundle, destinationVersion: "S2")
        )
        #expect(try MigrationFixtures.hashes(atS2) == s2.entityVersionHashes)
        let two = try MigrationFixtures.read(atS2, bundle: bundle)
        let notes2 = try #require(two["Note"])
        #expect(
            notes2.map { MigrationFixtures.relationship($0, "folders", model: s2) }
                == [.toMany([.pk("Folder", 1)]), .toMany([.pk("Folder", 1)]), .toMany([.pk("Folder", 2)]), .toMany([])]
        )
        let folders2 = try #require(two["Folder"])
        let members = folders2.map { record -> Set<ObjectReference> in
            guard case .toMany(let list)? = MigrationFixtures.relationship(record, "notes", model: s2) else {
                return []
            }
            return Set(list)
        }
        #expect(members == [[.pk("Note", 1), .pk("Note", 2)], [.pk("Note", 3)]])

        // And back: to-many → to-one, ordered → unordered.
        let atS3 = folder.appendingPathComponent("s3.sqlite")
        _ = try StoreMigration.migrate(store: atS2, to: .file(atS3), options: StoreMigration.Options(bundle: bundle))
        #expect(try MigrationFixtures.hashes(atS3) == s3.entityVersionHashes)
        let notes3 = try #require(try MigrationFixtures.read(atS3, bundle: bundle)["Note"])
        #expect(
            notes3.map { MigrationFixtures.relationship($0, "folder", model: s3) }
                == [.toOne(.pk("Folder", 1)), .toOne(.pk("Folder", 1)), .toOne(.pk("Folder", 2)), .toOne(nil)]
        )
        #expect(notes3.map { MigrationFixtures.value($0, "text", model: s3) } == ["milk", "eggs", "memo", "loose"])
        let options = StoreMigration.Options(bundle: bundle)
        // Both hops in one run give what two runs gave, and the same again.
        let direct = folder.appendingPathComponent("s1-to-s3.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(direct), options: options)
        #expect(try MigrationFixtures.read(direct, bundle: bundle) == MigrationFixtures.read(atS3, bundle: bundle))
        #expect(try MigrationFixtures.sameAgain(store, as: direct, options: options, bundle: bundle))
    }

    // MARK: A new parent

    /// P1: `Note{title, body}` and `Tag{label, note}`. P2: a new parent `Item{title}`, `Note` below it (with
    /// `body`), `Task` below it too, and `Tag.note` unchanged.
    static func newParent() -> ModelBundle {
        var note1 = Entity(name: "Note")
        note1.attributes = [
            Attribute(name: "title", type: .string, isOptional: true),
            Attribute(name: "body", type: .string, isOptional: true),
        ]
        note1.relationships = [Relationship(name: "tags", destination: "Tag", inverse: "note", toMany: true)]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "label", type: .string, isOptional: true)]
        tag.relationships = [Relationship(name: "note", destination: "Note", inverse: "tags")]
        var item = Entity(name: "Item")
        item.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var note2 = Entity(name: "Note", parentName: "Item")
        note2.attributes = [Attribute(name: "body", type: .string, isOptional: true)]
        note2.relationships = note1.relationships
        var task = Entity(name: "Task", parentName: "Item")
        task.attributes = [Attribute(name: "done", type: .boolean, isOptional: true)]
        return MigrationFixtures.bundle(
            "Parent",
            [
                ObjectModel(versionName: "P1", entities: [note1, tag]),
                ObjectModel(versionName: "P2", entities: [item, note2, task, tag]),
            ]
        )
    }

    @Test func anEntityMovesIntoANewParent() throws {
        let bundle = Self.newParent()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let p1 = bundle.versions[0]
        let p2 = bundle.versions[1]
        let store = folder.appendingPathComponent("p1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: p1,
            records: [
                MigrationFixtures.record(
                    "Note",
                    1,
                    in: p1,
                    ["title": "Groceries", "body": "milk"],
                    relationships: ["tags": .viaInverse]
                ),
                MigrationFixtures.record(
                    "Note",
                    2,
                    in: p1,
                    ["title": "Work", "body": "report"],
                    relationships: ["tags": .viaInverse]
                ),
                MigrationFixtures.record(
                    "Tag",
                    1,
                    in: p1,
                    ["label": "home"],
                    relationships: ["note": .toOne(.pk("Note", 1))]
                ),
                MigrationFixtures.record(
                    "Tag",
                    2,
                    in: p1,
                    ["label": "office"],
                    relationships: ["note": .toOne(.pk("Note", 2))]
                ),
            ]
        )
        let plan = try MigrationPlan(bundle: bundle, source: p1)
        #expect(plan.isExecutable, "\(plan.problems)")
        try #require(plan.hops.count == 1)
        #expect(plan.hops[0].mapping.mapping(producing: "Item")?.kind == .add)
        let output = folder.appendingPathComponent("p2.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        #expect(try MigrationFixtures.hashes(output) == p2.entityVersionHashes)
        let records = try MigrationFixtures.read(output, bundle: bundle)
        let notes = try #require(records["Note"])
        #expect(notes.map { MigrationFixtures.value($0, "title", model: p2) } == ["Groceries", "Work"])
        #expect(notes.map { MigrationFixtures.value($0, "body", model: p2) } == ["milk", "report"])
        let tags = try #require(records["Tag"])
        #expect(
            tags.map { MigrationFixtures.relationship($0, "note", model: p2) } == [
                .toOne(notes[0].reference), .toOne(notes[1].reference),
            ]
        )
        // Note now lives in Item's table.
        let store2 = try SQLiteStore(contentsOf: output)
        #expect(try store2.objectCounts(model: p2)["Note"] == 2)
        #expect(
            try MigrationFixtures.sameAgain(
                store,
                as: output,
                options: StoreMigration.Options(bundle: bundle),
                bundle: bundle
            )
        )
    }

    // MARK: Refusals

    @Test func refusalsNameTheEntityThePropertyAndWhatToWrite() throws {
        var note1 = Entity(name: "Note")
        note1.attributes = [Attribute(name: "count", type: .string, isOptional: true)]
        var note2 = Entity(name: "Note")
        note2.attributes = [Attribute(name: "count", type: .integer64, isOptional: true)]
        let result = MappingInference.infer(
            from: ObjectModel(versionName: "A", entities: [note1]),
            to: ObjectModel(versionName: "B", entities: [note2])
        )
        #expect(result.problems.count == 1)
        #expect(
            result.problems.first?.description
                == "Note.count: String → Integer 64 is not a change Core Data infers; in a mapping file, write under "
                + "entities: Note: attributes: count: 'integer($source.count)'"
        )

        // Two source hierarchies cannot share one destination hierarchy.
        let a = Entity(name: "A")
        let b = Entity(name: "B")
        let root = Entity(name: "Root")
        let merged = MappingInference.infer(
            from: ObjectModel(versionName: "M1", entities: [a, b]),
            to: ObjectModel(
                versionName: "M2",
                entities: [root, Entity(name: "A", parentName: "Root"), Entity(name: "B", parentName: "Root")]
            )
        )
        #expect(merged.problems.map(\.entity) == ["Root"])
        #expect(merged.problems.first?.message.contains("cannot merge hierarchies") == true)

        // Duplicate renaming identifiers (Core Data 134190) where inference must choose: two destinations claim the
        // source entity Same.
        var x = Entity(name: "X")
        x.renamingIdentifier = "Same"
        var y = Entity(name: "Y")
        y.renamingIdentifier = "Same"
        let duplicate = MappingInference.infer(
            from: ObjectModel(versionName: "D1", entities: [Entity(name: "Same")]),
            to: ObjectModel(versionName: "D2", entities: [x, y])
        )
        #expect(duplicate.problems.first?.message.contains("134190") == true)
        #expect(duplicate.problems.first?.message.contains("X and Y") == true)
        // With no source to choose, both are added: nothing to refuse.
        let added = MappingInference.infer(
            from: ObjectModel(versionName: "D1", entities: []), to: ObjectModel(versionName: "D2", entities: [x, y]))
        #expect(added.problems.isEmpty)
    }

    @Test func aPlanThatCannotRunStopsMigrateAndWritesNothing() throws {
        var note1 = Entity(name: "Note")
        note1.attributes = [Attribute(name: "count", type: .string, isOptional: true)]
        var note2 = Entity(name: "Note")
        note2.attributes = [Attribute(name: "count", type: .integer64, isOptional: true)]
        let bundle = MigrationFixtures.bundle(
            "Refused",
            [ObjectModel(versionName: "A", entities: [note1]), ObjectModel(versionName: "B", entities: [note2])]
        )
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("a.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: bundle.versions[0],
            records: [
                MigrationFixtures.record("Note", 1, in: bundle.versions[0], ["count": "12"])
            ]
        )
        let output = folder.appendingPathComponent("b.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        }
        #expect(error.code == .planNotExecutable)
        #expect(error.code.exitCode == 1)
        #expect(error.message.contains("Note.count"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func aRequiredValueThatIsNilIsRejectedOrStopsTheRun() throws {
        var note1 = Entity(name: "Note")
        note1.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var note2 = Entity(name: "Note")
        note2.attributes = [Attribute(name: "title", type: .string, isOptional: false)]
        let bundle = MigrationFixtures.bundle(
            "Required",
            [ObjectModel(versionName: "R1", entities: [note1]), ObjectModel(versionName: "R2", entities: [note2])]
        )
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("r1.sqlite")
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: [
                MigrationFixtures.record("Note", 1, in: v1, ["title": "kept"]),
                MigrationFixtures.record("Note", 2, in: v1),
                MigrationFixtures.record("Note", 3, in: v1, ["title": "kept too"]),
            ]
        )
        let output = folder.appendingPathComponent("r2.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        }
        #expect(error.code == .validationFailed)
        #expect(error.location?.object == "Note/p2")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        var options = StoreMigration.Options(bundle: bundle)
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        options.rejects = rejects
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.rejected == 1)
        #expect(
            report.ledgers.first?.rows["Note"]
                == MigrationLedger.Row(read: 3, written: 2, rejected: 1, removed: 0, created: 0)
        )
        let lines = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n")
        #expect(lines == [#"{"entity":"Note","object":"Note/p2","property":"title","rule":"optional"}"#])
        #expect(try MigrationFixtures.read(output, bundle: bundle)["Note"]?.count == 2)
    }
}
