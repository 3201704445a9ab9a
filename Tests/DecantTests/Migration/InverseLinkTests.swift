import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// Core Data maintains inverses: a mapping that sets either side of a relationship stores it, and the objects a hop
/// makes are checked once both sides are set (Core Data validates after the relationship phase).
@Suite("Inverse links")
struct InverseLinkTests {
    /// `Split 1`: `Note{title, body}`. `Split 2`: `Note{title, paragraphs (to-many, required, at least 1)}`,
    /// `Paragraph{text, note (to-one, required)}`: each Note's body becomes a Paragraph of its own.
    static func split() -> ModelBundle {
        var note1 = Entity(name: "Note")
        note1.attributes = [
            Attribute(name: "title", type: .string, isOptional: true),
            Attribute(name: "body", type: .string, isOptional: true),
        ]
        var note2 = Entity(name: "Note")
        note2.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var paragraphs = Relationship(name: "paragraphs", destination: "Paragraph", inverse: "note", toMany: true)
        paragraphs.isOptional = false
        paragraphs.minCount = 1
        note2.relationships = [paragraphs]
        var paragraph = Entity(name: "Paragraph")
        paragraph.attributes = [Attribute(name: "text", type: .string, isOptional: true)]
        var note = Relationship(name: "note", destination: "Note", inverse: "paragraphs")
        note.isOptional = false
        paragraph.relationships = [note]
        return MigrationFixtures.bundle(
            "Split",
            [
                ObjectModel(versionName: "Split 1", entities: [note1]),
                ObjectModel(versionName: "Split 2", entities: [note2, paragraph]),
            ])
    }

    /// The split written from the to-many side (Note's `paragraphs`) or from the to-one side (Paragraph's `note`).
    static func mapping(fromToManySide: Bool) -> String {
        """
        source: Split 1
        destination: Split 2
        entities:
          Note:
            from: Note
            relationships:
              paragraphs: \(fromToManySide ? "\"mapped('NoteToParagraph', $source)\"" : "nil")
          Paragraph:
            from: Note
            attributes:
              text: $source.body
            relationships:
              note: \(fromToManySide ? "nil" : "$source")
        """
    }

    static func store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("split1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Note", 1, in: v1, ["title": "milk", "body": "two litres"]),
                MigrationFixtures.record("Note", 2, in: v1, ["title": "eggs", "body": "a dozen"]),
            ])
        return store
    }

    /// Without keeping both sides, the split from the to-many side wrote Paragraphs with no Note (and they were
    /// refused as "note is nil"), and the split from the to-one side refused its Notes as having no paragraphs.
    @Test func aSplitWrittenFromEitherSideStoresTheRelationship() throws {
        let bundle = Self.split()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder, bundle: bundle)
        var results: [[String: [Record]]] = []
        for fromToManySide in [true, false] {
            var options = StoreMigration.Options(bundle: bundle)
            options.mappings = [try MappingFiles.parse(Self.mapping(fromToManySide: fromToManySide), path: "split.yaml")]
            let output = folder.appendingPathComponent("split2-\(fromToManySide).sqlite")
            let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
            #expect(report.rejected == 0 && report.dangling == 0)
            #expect(report.written == ["Note": 2, "Paragraph": 2])
            let migrated = try Self.splitStore(output, bundle: bundle)
            // Read back from the other side too, through the inverse's column.
            var validation = StoreValidation.Options(bundle: bundle)
            validation.rejects = folder.appendingPathComponent("rejects-\(fromToManySide).ndjson")
            #expect(try StoreValidation.validate(store: output, options: validation).failures == [:])
            results.append(migrated)
        }
        #expect(results[0] == results[1])
    }

    /// The split store at `output`, read back, after checking each Paragraph holds its Note's body and links to it.
    static func splitStore(_ output: URL, bundle: ModelBundle) throws -> [String: [Record]] {
        let v2 = bundle.versions[1]
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        let notes = try #require(migrated["Note"])
        let paragraphs = try #require(migrated["Paragraph"])
        #expect(paragraphs.map { MigrationFixtures.value($0, "text", model: v2) } == ["two litres", "a dozen"])
        #expect(
            paragraphs.map { MigrationFixtures.relationship($0, "note", model: v2) }
                == notes.map { .toOne($0.reference) })
        return migrated
    }

    /// A policy that makes each Note's Paragraph, linking them from one side only.
    struct SplitPolicy: EntityMigrationPolicy {
        var fromToManySide: Bool
        func createDestinationInstances(
            forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let note = try manager.createDefaultDestinationInstance()
            let paragraph = manager.insertObject(entity: "Paragraph")
            paragraph["text"] = try manager.sourceValue("body")
            if fromToManySide {
                note.setRelationship("paragraphs", to: [paragraph.reference])
            } else {
                paragraph.setRelationship("note", to: [note.reference])
            }
        }
    }

    /// The same split made by a policy (an Xcode mapping model's custom policy), linking from either side: before,
    /// the Paragraphs a policy linked from the Note's side were refused as having no Note.
    @Test func aPolicyLinkingEitherSideStoresTheRelationship() throws {
        let bundle = Self.split()
        let v2 = bundle.versions[1]
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store(in: folder, bundle: bundle)
        var results: [[String: [Record]]] = []
        for fromToManySide in [true, false] {
            var options = StoreMigration.Options(bundle: bundle)
            var mapping = MappingInference.infer(from: bundle.versions[0], to: v2).mapping
            for index in mapping.entityMappings.indices where mapping.entityMappings[index].destinationEntity == "Note" {
                mapping.entityMappings[index].policy = "App.SplitPolicy"
            }
            options.mappingModels = [mapping]
            options.functions.registerPolicy(SplitPolicy(fromToManySide: fromToManySide), as: "SplitPolicy")
            let output = folder.appendingPathComponent("policy-\(fromToManySide).sqlite")
            let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
            #expect(report.rejected == 0 && report.dangling == 0)
            let migrated = try Self.splitStore(output, bundle: bundle)
            results.append(migrated)
        }
        #expect(results[0] == results[1])
    }

    /// `Pin 1`: `Folder{name, notes} ⇄ Note{title, folder}`. `Pin 2`: `Folder{name, pinned (to-many)} ⇄
    /// Note{title, pinnedIn (to-one, optional)}`: a one-to-many whose objects are made from different source objects.
    static func pins() -> ModelBundle {
        func model(_ version: Int) -> ObjectModel {
            let toMany = version == 1 ? "notes" : "pinned"
            let toOne = version == 1 ? "folder" : "pinnedIn"
            var folder = Entity(name: "Folder")
            folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
            folder.relationships = [Relationship(name: toMany, destination: "Note", inverse: toOne, toMany: true)]
            var note = Entity(name: "Note")
            note.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
            note.relationships = [Relationship(name: toOne, destination: "Folder", inverse: toMany)]
            return ObjectModel(versionName: "Pin \(version)", entities: [folder, note])
        }
        return MigrationFixtures.bundle("Pin", [model(1), model(2)])
    }

    /// The pins written from the to-many side (`Folder.pinned`) or from the to-one side (`Note.pinnedIn`).
    static func pinMapping(fromToManySide: Bool) -> String {
        """
        source: Pin 1
        destination: Pin 2
        entities:
          Folder:
            from: Folder
            relationships:
              pinned: \(fromToManySide ? "$source.notes" : "nil")
          Note:
            from: Note
            relationships:
              pinnedIn: \(fromToManySide ? "nil" : "$source.folder")
        """
    }

    /// How many of `store`'s Notes have a `ZPINNEDIN`: the column a SQLite store keeps `Folder.pinned` in.
    static func pinnedNotes(_ store: URL) throws -> Int64 {
        var db: OpaquePointer?
        guard sqlite3_open_v2(store.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw DecantError(.ioError, "cannot open \(store.path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        let sql = "SELECT COUNT(*) FROM ZNOTE WHERE ZPINNEDIN IS NOT NULL"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw DecantError(.ioError, "cannot prepare \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw DecantError(.ioError, "no row for \(sql)") }
        return sqlite3_column_int64(statement, 0)
    }

    /// A to-many set by a mapping across objects made from different source objects (Folder's and Note's) is not
    /// completed on the to-one side, which a SQLite store keeps: the run says so, per relationship with the count,
    /// rather than losing the links silently (before, the report had no warning). The same links written from the
    /// to-one side are stored, with no warning.
    @Test func aToManySetAcrossSourceObjectsWarnsThatSQLiteLosesIt() throws {
        let bundle = Self.pins()
        let v1 = bundle.versions[0]
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("pin1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record(
                    "Folder", 1, in: v1, ["name": "home"],
                    relationships: ["notes": .toMany([.pk("Note", 1), .pk("Note", 2)])]),
                MigrationFixtures.record(
                    "Note", 1, in: v1, ["title": "milk"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
                MigrationFixtures.record(
                    "Note", 2, in: v1, ["title": "eggs"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
                MigrationFixtures.record("Note", 3, in: v1, ["title": "bread"]),
            ])
        for fromToManySide in [true, false] {
            var options = StoreMigration.Options(bundle: bundle)
            options.mappings = [
                try MappingFiles.parse(Self.pinMapping(fromToManySide: fromToManySide), path: "pin.yaml")
            ]
            let output = folder.appendingPathComponent("pin2-\(fromToManySide).sqlite")
            let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
            #expect(report.written == ["Folder": 1, "Note": 3])
            let warnings = report.warnings.filter { $0.kind == .oneSidedLink }
            if fromToManySide {
                #expect(try Self.pinnedNotes(output) == 0)
                #expect(warnings.count == 1)
                let message = try #require(warnings.first).message
                // The SQLite source keeps Folder.notes in Note.folder: the mapping's to-many comes through the
                // inverse, which the mapping leaves nil.
                #expect(message.hasPrefix("Folder.pinned: set from its to-many side on 1 object"))
                #expect(message.contains("the mapping leaves the inverse Note.pinnedIn nil"))
                #expect(report.engine == .stream)
            } else {
                #expect(try Self.pinnedNotes(output) == 2)
                #expect(warnings.isEmpty)
            }
        }
    }

    /// From an XML store, whose to-manys list their members, a to-many set by a mapping across objects made from
    /// different source objects keeps its links: each member gets the to-one the store keeps them in, as Core Data
    /// sets the inverse of what a mapping sets (before, the links were lost with a warning).
    @Test func aListedToManySetAcrossSourceObjectsKeepsItsLinks() throws {
        let bundle = Self.pins()
        let v1 = bundle.versions[0]
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("pin1.xml")
        let writer = try XMLStoreWriter(creating: store, model: v1)
        for record in [
            MigrationFixtures.record(
                "Folder", 1, in: v1, ["name": "home"],
                relationships: ["notes": .toMany([.pk("Note", 1), .pk("Note", 2)])]),
            MigrationFixtures.record(
                "Note", 1, in: v1, ["title": "milk"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
            MigrationFixtures.record(
                "Note", 2, in: v1, ["title": "eggs"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
        ] {
            var batch = RecordBatch(layout: try #require(RecordLayout(entity: record.entity, in: v1)))
            batch.append(record)
            try writer.write(batch)
        }
        try writer.finish()
        var options = StoreMigration.Options(bundle: bundle)
        options.mappings = [try MappingFiles.parse(Self.pinMapping(fromToManySide: true), path: "pin.yaml")]
        let output = folder.appendingPathComponent("pin2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(try Self.pinnedNotes(output) == 2)
        #expect(!report.warnings.contains { $0.kind == .oneSidedLink }, "\(report.warnings)")
    }
}
