import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// Many-to-many relationships in migrations run inside SQLite (``InStoreMigration``): the join table's rows go in
/// with one `INSERT … SELECT` from the source's, and the result is, byte for byte, the store the record stream writes;
/// whatever the SQL cannot decide (a member that does not exist, a count over the model's limit) goes to the stream.
@Suite("Many-to-many relationships migrated inside SQLite")
struct InStoreManyToManyTests {
    /// `Folder{name} ⇄ Note{text; folder; tags} ⇄ Tag{name; notes}` (the benchmark's keyed shape), `Note.tags ⇄
    /// Tag.notes` many-to-many, ordered on either side as asked; version 2 adds `Note.archived` (Boolean, default NO)
    /// and `change` alters it further.
    static func tagged(
        ordered: (source: Bool, destination: Bool) = (false, false), change: (inout ObjectModel) -> Void = { _ in }
    ) -> ModelBundle {
        func model(_ version: Int) -> ObjectModel {
            var folder = Entity(name: "Folder")
            folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
            var note = Entity(name: "Note")
            note.attributes = [Attribute(name: "text", type: .string, isOptional: true)]
            var tags = Relationship(name: "tags", destination: "Tag", inverse: "notes", toMany: true)
            tags.isOrdered = version == 1 ? ordered.source : ordered.destination
            note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes"), tags]
            var tag = Entity(name: "Tag")
            tag.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            tag.relationships = [Relationship(name: "notes", destination: "Note", inverse: "tags", toMany: true)]
            var model = ObjectModel(versionName: "Tagged \(version)", entities: [folder, note, tag])
            guard version == 2 else { return model }
            var archived = Attribute(name: "archived", type: .boolean)
            archived.defaultValue = "NO"
            model.entities[1].attributes.append(archived)
            change(&model)
            return model
        }
        return MigrationFixtures.bundle("Tagged", [model(1), model(2)])
    }

    /// The tags of note `key` (0 to 3 of the 6, in the order the note lists them).
    static func tags(of key: Int) -> [Int] {
        var result: [Int] = []
        for tag in [(key * 5) % 6 + 1, key % 6 + 1, (key * 7 + 2) % 6 + 1] where !result.contains(tag) {
            result.append(tag)
        }
        return Array(result.prefix(key % 4))
    }

    /// A version 1 store: 3 folders, `count` notes (note `k` is `Z_PK` `k`) and 6 tags, each side listing its
    /// members. The tags are written first, so the source's join rows lie in tag order, not the note order in which
    /// the record stream writes them.
    static func store(in folder: URL, bundle: ModelBundle, count: Int = 30) throws -> URL {
        let v1 = bundle.versions[0]
        let url = folder.appendingPathComponent("tagged.sqlite")
        var records: [Record] = []
        for tag in 1...6 {
            let notes = (1...count).reversed().filter { tags(of: $0).contains(tag) }.map { ObjectReference.pk("Note", Int64($0)) }
            records.append(
                MigrationFixtures.record(
                    "Tag", Int64(tag), in: v1, ["name": .string("tag \(tag)")], relationships: ["notes": .toMany(notes)]))
        }
        records += (1...3).map { MigrationFixtures.record("Folder", Int64($0), in: v1, ["name": .string("F\($0)")]) }
        for key in 1...count {
            let folder: ObjectReference? = key % 5 == 0 ? nil : .pk("Folder", Int64(key % 3 + 1))
            records.append(
                MigrationFixtures.record(
                    "Note", Int64(key), in: v1, ["text": .string("note \(key) — ünïcödé")],
                    relationships: [
                        "folder": .toOne(folder), "tags": .toMany(tags(of: key).map { .pk("Tag", Int64($0)) }),
                    ]))
        }
        try MigrationFixtures.writeStore(at: url, model: v1, records: records)
        return url
    }

    /// The join rows the record stream writes, `(note, tag)` note by note, from the fixture (not from either engine):
    /// a note's tags in the order it lists them when the source keeps it, else by key, each with its position when
    /// `positions`.
    static func joinRows(count: Int = 30, listed: Bool, positions: Bool) -> String {
        var rows: [String] = []
        for key in 1...count {
            for (position, tag) in (listed ? tags(of: key) : tags(of: key).sorted()).enumerated() {
                rows.append(positions ? "(\(key), \(tag), \(position + 1))" : "(\(key), \(tag))")
            }
        }
        return "[" + rows.joined(separator: ", ") + "]"
    }

    @Test(arguments: [false, true], [false, true])
    func aManyToManyRunsInsideSQLiteAndMatchesTheStream(sourceOrdered: Bool, destinationOrdered: Bool) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.tagged(ordered: (sourceOrdered, destinationOrdered))
        let store = try Self.store(in: folder, bundle: bundle)
        if sourceOrdered {
            // Positions with gaps, as deletions leave them: both engines number the members from 1 again.
            InStoreMigrationTests.execute("UPDATE Z_2TAGS SET Z_FOK_3TAGS = Z_FOK_3TAGS * 10 + 3", on: store)
        }
        let before = try Data(contentsOf: store)
        let columns = destinationOrdered ? "Z_2NOTES, Z_3TAGS, Z_FOK_3TAGS" : "Z_2NOTES, Z_3TAGS"
        let report = try InStoreMigrationTests.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder, rejects: true,
            oracle: (
                "SELECT \(columns) FROM Z_2TAGS ORDER BY rowid",
                Self.joinRows(listed: sourceOrdered, positions: destinationOrdered)
            ))
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
        #expect(report.written == ["Folder": 3, "Note": 30, "Tag": 6])
        #expect(try Data(contentsOf: store) == before)
        let plan = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: bundle))
        #expect(plan.engine == .inStore(format: "sqlite") && plan.streamReason == nil)
    }

    @Test func aRenamedAndRenumberedMemberEntityKeepsItsLinks() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Tag becomes Label: entity 2 rather than 3, so the join table becomes Label.notes's, its columns swapped.
        let bundle = Self.tagged { model in
            model.entities[2].name = "Label"
            model.entities[2].renamingIdentifier = "Tag"
            model.entities[2].relationships[0].inverseName = "labels"
            model.entities[1].relationships[1].name = "labels"
            model.entities[1].relationships[1].renamingIdentifier = "tags"
            model.entities[1].relationships[1].destinationEntity = "Label"
        }
        let store = try Self.store(in: folder, bundle: bundle)
        var pairs: [String] = []
        for key in 1...30 { pairs += Self.tags(of: key).sorted().map { "(\($0), \(key))" } }
        let report = try InStoreMigrationTests.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder,
            oracle: ("SELECT Z_2LABELS, Z_3NOTES FROM Z_2NOTES ORDER BY rowid", "[" + pairs.joined(separator: ", ") + "]"))
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
        #expect(report.written == ["Folder": 3, "Label": 6, "Note": 30])
    }

    @Test(arguments: ["relationship", "entity"])
    func aDroppedRelationshipOrMemberEntityWritesNoJoinRows(_ dropped: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.tagged { model in
            model.entities[1].relationships.removeLast()
            if dropped == "entity" {
                model.entities.removeLast()
            } else {
                model.entities[2].relationships = []
            }
        }
        let store = try Self.store(in: folder, bundle: bundle)
        let report = try InStoreMigrationTests.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder,
            oracle: ("SELECT name FROM sqlite_master WHERE name LIKE 'Z\\_%' ESCAPE '\\' AND type = 'table' ORDER BY name",
                     "[('Z_METADATA',), ('Z_MODELCACHE',), ('Z_PRIMARYKEY',)]"))
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
        if dropped == "entity" {
            #expect(report.ledgers.first?.rows["Tag"] == MigrationLedger.Row(read: 6, removed: 6))
        } else {
            #expect(report.written["Tag"] == 6)
        }
    }

    @Test(arguments: ["member", "owner"])
    func aLinkToAnObjectThatDoesNotExistGoesToTheStream(_ end: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.tagged()
        let store = try Self.store(in: folder, bundle: bundle)
        InStoreMigrationTests.execute(
            end == "member" ? "INSERT INTO Z_2TAGS VALUES (2, 99)" : "INSERT INTO Z_2TAGS VALUES (77, 1)", on: store)
        #expect(
            try InStoreMigrationTests.inStoreReason(store, bundle: bundle)
                == (end == "member"
                    ? "Note.tags may hold an object that does not exist: key 99"
                    : "Tag.notes may hold an object that does not exist: key 77"))
        let report = try InStoreMigrationTests.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder, rejects: true)
        #expect(report.engine == .stream)
        #expect(report.streamReason?.description.contains("may hold an object that does not exist") == true)
    }

    @Test(arguments: ["max", "min", "within"])
    func aCountOverTheModelsLimitGoesToTheStreamWhichNamesTheObject(_ limit: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.tagged { model in
            switch limit {
            case "max": model.entities[1].relationships[1].maxCount = 2
            case "min":
                model.entities[1].relationships[1].minCount = 1
                model.entities[1].relationships[1].isOptional = false
            default:
                model.entities[1].relationships[1].maxCount = 3
                model.entities[2].relationships[0].minCount = 1
            }
        }
        let store = try Self.store(in: folder, bundle: bundle)
        let output = folder.appendingPathComponent("out.sqlite")
        var options = StoreMigration.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("rejects.ndjson")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        SQLiteFormat().files(at: output).remove()
        let rejects = try String(contentsOf: try #require(options.rejects), encoding: .utf8)
        switch limit {
        case "max":
            // Notes 7, 11, 15… list three tags.
            #expect(report.engine == .stream)
            #expect(report.streamReason?.description == "Note.tags may hold more than 2 objects in Note/p7")
            #expect(rejects.contains(#""object":"Note/p7""#) && rejects.contains(#""rule":"maxCount""#))
        case "min":
            // Notes 4, 8, 12… list none.
            #expect(report.engine == .stream)
            #expect(report.streamReason?.description == "Note.tags may hold fewer than 1 objects in Note/p4")
            #expect(rejects.contains(#""object":"Note/p4""#) && rejects.contains(#""rule":"minCount""#))
        default:
            #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
            #expect(rejects.isEmpty)
        }
        try FileManager.default.removeItem(at: try #require(options.rejects))
        // A note rejected for its count leaves the tags that list it dangling: the same rejects, in the same order.
        _ = try InStoreMigrationTests.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder, rejects: true)
    }

    @Test func aManyToManyThatIsItsOwnInverseRunsInTheStreamAndSaysWhy() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        func model(_ version: Int) -> ObjectModel {
            var person = Entity(name: "Person")
            person.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            if version == 2 { person.attributes.append(Attribute(name: "age", type: .integer16, isOptional: true)) }
            person.relationships = [Relationship(name: "friends", destination: "Person", inverse: "friends", toMany: true)]
            return ObjectModel(versionName: "People \(version)", entities: [person])
        }
        let bundle = MigrationFixtures.bundle("People", [model(1), model(2)])
        let url = folder.appendingPathComponent("people.sqlite")
        let v1 = bundle.versions[0]
        try MigrationFixtures.writeStore(
            at: url, model: v1,
            records: (1...4).map { key in
                MigrationFixtures.record(
                    "Person", Int64(key), in: v1, ["name": .string("p\(key)")],
                    relationships: ["friends": .toMany([.pk("Person", Int64(key % 4 + 1))])])
            })
        #expect(
            try InStoreMigrationTests.inStoreReason(url, bundle: bundle)
                == "Person.friends is a many-to-many that is its own inverse")
        let report = try InStoreMigrationTests.sameBothWays(url, options: StoreMigration.Options(bundle: bundle), in: folder)
        #expect(report.engine == .stream)
    }

    @Test func aDiskFailureIsAnIOErrorAndLeavesNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.tagged()
        let url = try Self.store(in: folder, bundle: bundle)
        let sqlite = try SQLiteStore(contentsOf: url)
        let reader = try SQLiteStoreReader(store: sqlite, model: sqlite.resolveModel(bundle: bundle))
        let plan = try MigrationPlan(bundle: bundle, source: reader.model)
        let prepared = try InStoreMigration.prepare(plan: plan, reader: reader)
        let migration = try #require({ if case .ready(let migration) = prepared { migration } else { nil } }())
        let output = folder.appendingPathComponent("out.sqlite")
        let writer = try SQLiteStoreWriter(creating: output, model: plan.destination)
        // The source goes away before SQLite attaches it: SQLite cannot open it, a failure of the file system.
        try FileManager.default.removeItem(at: url)
        let error = try #require(throws: DecantError.self) { try migration.run(into: writer) }
        #expect(error.code == .ioError)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aJoinTableThatDoesNotFitItsModelFailsCleanlyWithNothingWritten() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.tagged()
        let store = try Self.store(in: folder, bundle: bundle)
        // A join table whose member column is gone: the in-store run meets SQLite's error and hands over, and the
        // stream refuses the store.
        InStoreMigrationTests.execute("ALTER TABLE Z_2TAGS RENAME COLUMN Z_3TAGS TO ZGONE", on: store)
        let damaged = try Data(contentsOf: store)
        #expect(try InStoreMigrationTests.inStoreReason(store, bundle: bundle)?.contains("no such column") == true)
        let output = folder.appendingPathComponent("out.sqlite")
        #expect {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        } throws: { error in
            (error as? DecantError)?.code == .malformedInput
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try Data(contentsOf: store) == damaged)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tagged.sqlite"])
    }
}
