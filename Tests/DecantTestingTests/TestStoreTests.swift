import DecantTestSupport
import DecantTesting
import Foundation
import Testing

/// DecantTesting's ``TestStore``: a store built by property name or loaded from a fixture, migrated, and asked for
/// counts, fetches with an NSPredicate and values by name.
@Suite("Testing library")
struct TestStoreTests {
    /// v1 `Folder{name} ⇄ Note{content; folder}`; v2 renames `content` to `text` and adds `pinned` (Boolean,
    /// default "True") and `priority` (Integer 16, required, default "1.5").
    static let bundle: ModelBundle = {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var v1 = Entity(name: "Note")
        v1.attributes = [Attribute(name: "content", type: .string, isOptional: true)]
        v1.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        var v2 = v1
        var text = Attribute(name: "text", type: .string, isOptional: true)
        text.renamingIdentifier = "content"
        var pinned = Attribute(name: "pinned", type: .boolean)
        pinned.defaultValue = "True"
        var priority = Attribute(name: "priority", type: .integer16)
        priority.defaultValue = "1.5"
        v2.attributes = [text, pinned, priority]
        return ModelBundle(
            name: "Notes",
            versions: [
                ObjectModel(versionName: "Notes", entities: [folder, v1], versionIdentifiers: ["1"]),
                ObjectModel(versionName: "Notes 2", entities: [folder, v2], versionIdentifiers: ["2"]),
            ],
            currentVersionName: "Notes 2", sourceKind: .xcdatamodeld)
    }()

    static func filled() throws -> TestStore {
        var store = try TestStore(bundle: bundle, version: "Notes")
        let home = try store.insert("Folder", ["name": "Home"])
        try store.insert("Note", ["content": "Buy milk"], relationships: ["folder": .toOne(home)])
        try store.insert("Note", ["content": "Call mum"])
        return store
    }

    @Test func aMigrationTestIsAFewLines() throws {
        let migrated = try Self.filled().migrated()

        #expect(migrated.model.versionName == "Notes 2")
        #expect(migrated.migrationReport?.action == .migrated)
        #expect(try migrated.count("Note") == 2)
        #expect(try migrated.count("Note", where: "text BEGINSWITH[c] 'buy' AND folder.name == 'Home'") == 1)
        let mum = try #require(try migrated.fetch("Note", where: "folder == nil").first)
        #expect(mum["text"] == "Call mum")
        // The added attributes start at their defaults, parsed as the model loads them: "True" and "1.5".
        #expect(mum["pinned"] == true && mum["priority"] == 1)
        let home = try #require(try migrated.fetch("Folder").first)
        #expect(try migrated.related(home, "notes").map { $0["text"] } == ["Buy milk"])
    }

    @Test func aFixtureFileLoadsAndWritesBack() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Notes.sqlite")
        try Self.filled().write(to: url)
        let loaded = try TestStore.load(url, bundle: Self.bundle)
        #expect(loaded.model.versionName == "Notes")
        #expect(try loaded.fetch("Note").map { $0["content"] } == ["Buy milk", "Call mum"])
        // The store on disk is then migrated as any other.
        #expect(try loaded.migrated(to: "Notes 2").count("Note", where: "pinned == YES") == 2)
    }

    @Test func aCorpusStoreLoads() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Fixtures.copyStore(
            Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 2.moody"), into: folder)
        let model = Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld")
        let loaded = try TestStore.load(store, model: model, format: "sqlite")
        #expect(loaded.model.versionName == "Moody 2")
        var reader = try SQLiteFormat().makeReader(at: store, options: FormatOptions(bundle: loaded.bundle))
        var writer = InMemoryStore.Writer(model: reader.model)
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        #expect(!writer.store.counts.isEmpty)
        for (entity, count) in writer.store.counts {
            // Counts take sub-entities, as a Core Data fetch does; the store's counts are per concrete entity.
            let concrete = try loaded.fetch(entity).filter { $0.entity == entity }.count
            #expect(concrete == count, "\(entity)")
        }
    }

    @Test func mistakesNameTheEntityAndTheProperty() throws {
        var store = try Self.filled()
        let unknown = try #require(throws: DecantError.self) { try store.insert("Note", ["text": "milk"]) }
        #expect(unknown.location?.entity == "Note" && unknown.message.contains("no attribute text"))
        let path = try #require(throws: DecantError.self) { try store.count("Note", where: "folder.title == 'x'") }
        #expect(path.code == .usage && path.message.contains("Folder has no property title"))
        #expect(throws: DecantError.self) { try store.count("Nope") }
        #expect(throws: DecantError.self) { try store.fetch("Note", where: "content ==") }
        let version = try #require(throws: DecantError.self) { try store.migrated(to: "Notes 9") }
        #expect(version.message.contains("Notes 9"))
        #expect(throws: DecantError.self) { try TestStore(bundle: Self.bundle, version: "Notes 9") }
    }

    /// The bundle with a third version of Note made by `change`.
    static func withThirdVersion(_ change: (inout Attribute) -> Void) throws -> ModelBundle {
        var v3 = try #require(bundle.version(named: "Notes"))
        v3.versionName = "Notes 3"
        v3.versionIdentifiers = ["3"]
        let index = try #require(v3.entities.firstIndex { $0.name == "Note" })
        change(&v3.entities[index].attributes[0])
        return ModelBundle(
            name: "Notes", versions: bundle.versions + [v3], currentVersionName: "Notes 3", sourceKind: .xcdatamodeld)
    }

    @Test func aMigrationThatCannotRunSaysWhy() throws {
        // content becomes an Integer 16: a type change inference refuses without a mapping.
        var store = try TestStore(bundle: Self.withThirdVersion { $0.type = .integer16 }, version: "Notes")
        try store.insert("Note", ["content": "milk"])
        let plan = try #require(throws: DecantError.self) { try store.migrated(to: "Notes 3") }
        #expect(plan.code == .planNotExecutable && plan.message.contains("content"), "\(plan)")

        // content becomes required without a default: the object with none breaks the destination's rule.
        var required = try TestStore(bundle: Self.withThirdVersion { $0.isOptional = false }, version: "Notes")
        try required.insert("Note", [:])
        let rule = try #require(throws: DecantError.self) { try required.migrated(to: "Notes 3") }
        #expect(rule.code == .validationFailed, "\(rule)")
        #expect(rule.location?.object == "Note/p1" && rule.location?.keyPath == "content")
    }
}
