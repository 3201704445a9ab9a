import Decant
import DecantTestSupport
import Foundation
import Testing

/// Value expressions that leave the mapped object: `$source.folder.name` through a to-one, collection operators over
/// to-many relationships, and `mapped(…)` relationships through several objects, in Decant mapping files.
@Suite("Key paths through relationships")
struct KeyPathMigrationTests {
    /// Shelf 1: `Folder{name, notes}`, `Note{text, words, folder}`, `Tag{label, note}`.
    /// Shelf 2: `Folder{name, noteCount, totalWords, longest, tags}`, `Note{text, folderName, folder}`,
    /// `Tag{label, folder}` (tags move from notes to their folder).
    static func shelf() -> ModelBundle {
        var folder1 = Entity(name: "Folder")
        folder1.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder1.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note1 = Entity(name: "Note")
        note1.attributes = [
            Attribute(name: "text", type: .string, isOptional: true),
            Attribute(name: "words", type: .integer32, isOptional: true),
        ]
        note1.relationships = [
            Relationship(name: "folder", destination: "Folder", inverse: "notes"),
            Relationship(name: "tags", destination: "Tag", inverse: "note", toMany: true),
        ]
        var tag1 = Entity(name: "Tag")
        tag1.attributes = [Attribute(name: "label", type: .string, isOptional: true)]
        tag1.relationships = [Relationship(name: "note", destination: "Note", inverse: "tags")]

        var folder2 = folder1
        folder2.attributes += [
            Attribute(name: "noteCount", type: .integer32, isOptional: true),
            Attribute(name: "totalWords", type: .integer64, isOptional: true),
            Attribute(name: "longest", type: .integer32, isOptional: true),
        ]
        folder2.relationships.append(Relationship(name: "tags", destination: "Tag", inverse: "folder", toMany: true))
        var note2 = note1
        note2.attributes.append(Attribute(name: "folderName", type: .string, isOptional: true))
        note2.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        var tag2 = tag1
        tag2.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "tags")]
        return MigrationFixtures.bundle(
            "Shelf",
            [
                ObjectModel(versionName: "Shelf 1", entities: [folder1, note1, tag1]),
                ObjectModel(versionName: "Shelf 2", entities: [folder2, note2, tag2]),
            ]
        )
    }

    static let mapping = """
        source: Shelf 1
        destination: Shelf 2
        entities:
          Note:
            attributes:
              folderName: "uppercase($source.folder.name ?? 'none')"
          Folder:
            attributes:
              noteCount: $source.notes.@count
              totalWords: $source.notes.@sum.words
              longest: $source.notes.@max.words
            relationships:
              tags: "mapped('TagToTag', $source.notes.@distinctUnionOfSets.tags)"
          Tag:
            from: Tag
            relationships:
              folder: "mappedThrough('folder', $source.note.folder)"
        """

    @Test func keyPathsReachOtherObjects() throws {
        let bundle = Self.shelf()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let v2 = bundle.versions[1]
        let store = folder.appendingPathComponent("shelf1.sqlite")
        func note(_ key: Int64) -> ObjectReference { ObjectReference(entity: "Note", id: .primaryKey(key)) }
        func home(_ key: Int64) -> ObjectReference { ObjectReference(entity: "Folder", id: .primaryKey(key)) }
        try MigrationFixtures.writeStore(
            at: store,
            model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "Work"]),
                MigrationFixtures.record("Folder", 2, in: v1, ["name": "Empty"]),
                MigrationFixtures.record(
                    "Note", 1, in: v1, ["text": "a", "words": 3], relationships: ["folder": .toOne(home(1))]),
                MigrationFixtures.record(
                    "Note", 2, in: v1, ["text": "b", "words": 5], relationships: ["folder": .toOne(home(1))]),
                MigrationFixtures.record("Note", 3, in: v1, ["text": "c", "words": 7]),
                MigrationFixtures.record("Tag", 1, in: v1, ["label": "x"], relationships: ["note": .toOne(note(1))]),
                MigrationFixtures.record("Tag", 2, in: v1, ["label": "y"], relationships: ["note": .toOne(note(2))]),
                MigrationFixtures.record("Tag", 3, in: v1, ["label": "z"], relationships: ["note": .toOne(note(3))]),
            ]
        )
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [try MappingFiles.parse(Self.mapping, path: "shelf-1-2.yaml")]
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        let output = folder.appendingPathComponent("shelf2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        func value(_ record: Record, _ name: String) -> Value? { MigrationFixtures.value(record, name, model: v2) }

        let notes = try #require(migrated["Note"])
        #expect(notes.map { value($0, "folderName") } == [.string("WORK"), .string("WORK"), .string("NONE")])
        let folders = try #require(migrated["Folder"])
        #expect(folders.map { value($0, "noteCount") } == [.integer(2), .integer(0)])
        #expect(folders.map { value($0, "totalWords") } == [.integer(8), .integer(0)])
        #expect(folders.map { value($0, "longest") } == [.integer(5), .null])
        // Tags moved to the folder of their note: x and y to Work, z (its note has no folder) to none.
        let tags = try #require(migrated["Tag"])
        let layout = try #require(RecordLayout(entity: "Tag", in: v2))
        let position = try #require(layout.relationshipIndex("folder"))
        let work = folders[0].reference
        #expect(tags.map { $0.relationships[position] } == [.toOne(work), .toOne(work), .toOne(nil)])
        #expect(try MigrationFixtures.sameAgain(store, as: output, options: options, bundle: bundle))
    }

    /// A key path that names no property fails naming the key path, the entity and the mapping.
    @Test func unknownKeyPathIsLocated() throws {
        let bundle = Self.shelf()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("shelf1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "Work"]),
                MigrationFixtures.record(
                    "Note", 1, in: v1, ["text": "a"],
                    relationships: ["folder": .toOne(ObjectReference(entity: "Folder", id: .primaryKey(1)))]),
            ])
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                "source: Shelf 1\ndestination: Shelf 2\nentities:\n  Note:\n    attributes:\n"
                    + "      folderName: $source.folder.title\n",
                path: "bad.yaml")
        ]
        let output = folder.appendingPathComponent("out.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: options)
        }
        #expect(error.message.contains("$source.folder.title"))
        #expect(error.message.contains("Folder in Shelf 1 has no property title"))
        #expect(error.message.contains("bad.yaml:6"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// `fetch` and `fetchCount` (an Xcode mapping model's `FETCH` in a value expression): source objects a predicate
    /// holds for, as a relationship's objects or as their number.
    @Test func fetchesFindSourceObjectsByPredicate() throws {
        let bundle = Self.shelf()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let v2 = bundle.versions[1]
        let store = folder.appendingPathComponent("shelf1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "Work"]),
                MigrationFixtures.record("Folder", 2, in: v1, ["name": "Home"]),
                MigrationFixtures.record("Note", 1, in: v1, ["text": "a", "words": 3]),
                MigrationFixtures.record("Note", 2, in: v1, ["text": "b", "words": 9]),
                MigrationFixtures.record("Tag", 1, in: v1, ["label": "x"]),
            ])
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                """
                source: Shelf 1
                destination: Shelf 2
                entities:
                  Folder:
                    attributes:
                      noteCount: "fetchCount('Note', 'words > 4')"
                  Tag:
                    relationships:
                      folder: 'mapped(''FolderToFolder'', fetch(''Folder'', "name BEGINSWITH[c] ''w''"))'
                """, path: "fetch.yaml")
        ]
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        let output = folder.appendingPathComponent("shelf2.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        let folders = try #require(migrated["Folder"])
        #expect(folders.map { MigrationFixtures.value($0, "noteCount", model: v2) } == [.integer(1), .integer(1)])
        let tag = try #require(migrated["Tag"]?.first)
        let position = try #require(RecordLayout(entity: "Tag", in: v2)?.relationshipIndex("folder"))
        #expect(tag.relationships[position] == .toOne(folders[0].reference))

        // A predicate Decant cannot read, or an entity the source lacks, stops the plan.
        options.mappings = [
            try MappingFiles.parse(
                "source: Shelf 1\ndestination: Shelf 2\nentities:\n  Folder:\n    attributes:\n"
                    + "      noteCount: \"fetchCount('Page', 'words > 4')\"\n",
                path: "bad-fetch.yaml")
        ]
        let refused = try StoreMigration.plan(store: store, options: options)
        #expect(refused.plan.problems.contains { $0.message.contains("fetches Page") })
    }

    /// A fetch predicate may read the object being mapped (`$source.label`, substituted per object as Core Data's
    /// `fetchRequestForSourceEntityNamed:predicateString:` does), follow a relationship of the fetched objects
    /// (`folder.name`), and compare a to-many key path with `ANY`/`ALL`/`NONE`; in a relationship's `fetch`, an
    /// attribute's `fetchCount` and a `where`.
    @Test func fetchPredicatesReadTheMappedObjectAndRelationships() throws {
        let bundle = Self.shelf()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let v2 = bundle.versions[1]
        let store = folder.appendingPathComponent("shelf1.sqlite")
        func home(_ key: Int64) -> ObjectReference { ObjectReference(entity: "Folder", id: .primaryKey(key)) }
        func note(_ key: Int64) -> ObjectReference { ObjectReference(entity: "Note", id: .primaryKey(key)) }
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "Work"]),
                MigrationFixtures.record("Folder", 2, in: v1, ["name": "Home"]),
                MigrationFixtures.record("Folder", 3, in: v1, ["name": "Empty"]),
                MigrationFixtures.record(
                    "Note", 1, in: v1, ["text": "a", "words": 3], relationships: ["folder": .toOne(home(1))]),
                MigrationFixtures.record(
                    "Note", 2, in: v1, ["text": "b", "words": 5], relationships: ["folder": .toOne(home(1))]),
                MigrationFixtures.record(
                    "Note", 3, in: v1, ["text": "c", "words": 9], relationships: ["folder": .toOne(home(2))]),
                MigrationFixtures.record("Note", 4, in: v1, ["text": "a", "words": 1]),
                MigrationFixtures.record("Tag", 1, in: v1, ["label": "work"], relationships: ["note": .toOne(note(1))]),
                MigrationFixtures.record("Tag", 2, in: v1, ["label": "HOME"], relationships: ["note": .toOne(note(3))]),
                MigrationFixtures.record("Tag", 3, in: v1, ["label": "nowhere"]),
            ])
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                """
                source: Shelf 1
                destination: Shelf 2
                entities:
                  Folder:
                    attributes:
                      noteCount: "fetchCount('Note', 'folder.name == $source.name AND words >= 5')"
                      totalWords: "fetchCount('Folder', 'ANY notes.words > 4')"
                      longest: "fetchCount('Folder', 'NONE notes.words > 4')"
                  Note:
                    where: "fetchCount('Note', 'text == $source.text') == 1"
                  Tag:
                    relationships:
                      folder: "mapped('FolderToFolder', fetch('Folder', 'name ==[c] $source.label'))"
                """, path: "fetch-source.yaml")
        ]
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        let output = folder.appendingPathComponent("shelf2.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        let folders = try #require(migrated["Folder"])
        func values(_ name: String) -> [Value?] { folders.map { MigrationFixtures.value($0, name, model: v2) } }
        // Work's notes of 5 words or more: b; Home's: c; Empty has none.
        #expect(values("noteCount") == [.integer(1), .integer(1), .integer(0)])
        // Folders with a note over 4 words: Work and Home; with none: Empty.
        #expect(values("totalWords") == [.integer(2), .integer(2), .integer(2)])
        #expect(values("longest") == [.integer(1), .integer(1), .integer(1)])
        // The two notes reading "a" are left out; b and c stay.
        let notes = try #require(migrated["Note"])
        #expect(notes.map { MigrationFixtures.value($0, "text", model: v2) } == [.string("b"), .string("c")])
        // Tags find their folder by name, case folded; "nowhere" finds none.
        let tags = try #require(migrated["Tag"])
        let position = try #require(RecordLayout(entity: "Tag", in: v2)?.relationshipIndex("folder"))
        #expect(
            tags.map { $0.relationships[position] }
                == [.toOne(folders[0].reference), .toOne(folders[1].reference), .toOne(nil)])

        // A to-many key path compared without ANY, ALL or NONE is a mistake of the file, at its line; past the plan
        // (a graph asked directly), the object that has several values is named.
        options.mappings = [
            try MappingFiles.parse(
                "source: Shelf 1\ndestination: Shelf 2\nentities:\n  Folder:\n    attributes:\n"
                    + "      noteCount: \"fetchCount('Folder', 'notes.words > 4')\"\n",
                path: "to-many.yaml")
        ]
        let unquantified = folder.appendingPathComponent("unquantified.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(unquantified), options: options)
        }
        #expect(error.message.contains("through the to-many notes: compare it with ANY, ALL or NONE"), "\(error.message)")
        #expect(error.message.contains("to-many.yaml:6"), "\(error.message)")
        #expect(!FileManager.default.fileExists(atPath: unquantified.path))
        var graph = SourceGraph(needs: [:], model: v1)
        graph.fetch([FetchRequest(entity: "Folder", predicate: "notes.words > 4")], in: v1)
        let reader = try SQLiteStoreReader(store: SQLiteStore(contentsOf: store), model: v1)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Folder", in: v1)))
        while try reader.nextBatch(into: &batch) { graph.collect(batch) }
        let several = try #require(throws: DecantError.self) { try graph.finishFetches() }
        #expect(several.message.contains("notes.words gives 2 values for Folder/p1, not one"), "\(several.message)")
    }

    /// A fetch predicate's key paths, its own and `$source`'s, are checked against the models when the plan is
    /// made, at the mapping file's line; `ANY` and `$source` stay out of `--where`.
    @Test func fetchPredicateKeyPathsAreChecked() throws {
        let bundle = Self.shelf()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("shelf1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1, records: [MigrationFixtures.record("Folder", 1, in: v1, ["name": "Work"])])
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [
            try MappingFiles.parse(
                """
                source: Shelf 1
                destination: Shelf 2
                entities:
                  Folder:
                    attributes:
                      noteCount: "fetchCount('Note', 'folder.nme == $source.name')"
                      longest: "fetchCount('Note', 'text == $source.titel')"
                      totalWords: "fetchCount('Note', '$folder == nil')"
                """, path: "misspelt.yaml")
        ]
        let plan = try StoreMigration.plan(store: store, options: options)
        let messages = plan.plan.problems.map(\.message)
        #expect(messages.contains { $0.contains("where folder.nme, and Folder has no property nme (did you mean name?)") })
        #expect(messages.contains { $0.contains("where $source.titel, and Folder has no property titel") })
        #expect(messages.contains { $0.contains("a fetch predicate knows one variable, $source") })
        #expect(plan.plan.problems.allSatisfy { $0.location?.path == "misspelt.yaml" })

        #expect(throws: DecantError.self) { try ObjectPredicate(parsing: "ANY notes.words > 4") }
        #expect(throws: DecantError.self) { try ObjectPredicate(parsing: "name == $source.name") }
        let all = try ObjectPredicate(parsing: "ALL notes.words < 4", isFetch: true)
        #expect(all.evaluate({ _ in .null }, members: { _ in [] }))
        #expect(all.evaluate({ _ in .null }, members: { _ in [.integer(1), .integer(3)] }))
        #expect(!all.evaluate({ _ in .null }, members: { _ in [.integer(1), .integer(4)] }))
    }
}
