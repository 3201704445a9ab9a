import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant` takes SwiftData Swift source wherever it takes a model: `inspect Folder/`, `--model Folder/`.
@Suite("Swift source models", .serialized)
struct SwiftSourceCommandTests {
    /// The first two versions of the Notes schema, which both sources below start with.
    static let firstTwoVersions = """
        enum NotesV1: VersionedSchema {
            static var versionIdentifier = Schema.Version(1, 0, 0)
            static var models: [any PersistentModel.Type] { [Note.self] }
            @Model final class Note { var title = ""; init() {} }
        }
        enum NotesV2: VersionedSchema {
            static var versionIdentifier = Schema.Version(2, 0, 0)
            static var models: [any PersistentModel.Type] { [Note.self] }
            @Model final class Note { var title = ""; var body: String?; init() {} }
        }
        """

    static let versioned = """
        import SwiftData
        \(Self.firstTwoVersions)
        enum NotesPlan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
            static var stages: [MigrationStage] { [.lightweight(fromVersion: NotesV1.self, toVersion: NotesV2.self)] }
        }
        """

    @Test(.requiresDecantBinary, arguments: ["Crafting", "CocktailsVersioned"])
    func inspectPrintsAVectorsHashes(_ vector: String) throws {
        let folder = Fixtures.corpus("swiftdata-vectors/\(vector)")
        let outcome = try EndToEndTests.run(["inspect", folder.path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let url = folder.appendingPathComponent("expected.json")
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let entities = try #require(expected["entities"] as? [String: String])
        for (name, hash) in entities {
            #expect(outcome.stdout.contains(name) && outcome.stdout.contains(hash), "\(name) \(hash)")
        }
        #expect(outcome.stdout.contains(try #require(expected["checksum"] as? String)))
        #expect(outcome.stdout.contains("swift-source"))
    }

    /// `decant lock` takes Swift source like every other command that takes a model: each version's hashes are
    /// locked, and a schema whose entity changes fails the check.
    @Test(.requiresDecantBinary) func lockLocksAndChecksSwiftSource() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let models = folder.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let source = models.appendingPathComponent("Schemas.swift")
        try Data(Self.versioned.utf8).write(to: source)
        let lockFile = folder.appendingPathComponent("Models.decant-lock.json").path
        let written = try EndToEndTests.run(["lock", models.path, "--lock-file", lockFile])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(written.stdout.contains("2 versions"), "\(written.stdout)")
        let hash = try #require(ModelBundle.load(modelOrSource: models).version(named: "NotesV2")?.versionHash(of: "Note"))
        #expect(try String(contentsOfFile: lockFile, encoding: .utf8).contains(hash.base64EncodedString()))
        #expect(try EndToEndTests.run(["lock", models.path, "--lock-file", lockFile, "--check"]).status == 0)
        try Data(Self.versioned.replacingOccurrences(of: "var body: String?", with: "var body: String").utf8)
            .write(to: source)
        let drifted = try EndToEndTests.run(["lock", models.path, "--lock-file", lockFile, "--check"])
        #expect(drifted.status == 1, "\(drifted.stdout)\(drifted.stderr)")
    }

    @Test(.requiresDecantBinary) func refusedSourceExits65WithFileAndLine() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("@Model final class Note {\n    var place: Place\n}\n".utf8)
            .write(to: folder.appendingPathComponent("Note.swift"))
        let outcome = try EndToEndTests.run(["inspect", folder.path])
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("Note.swift:2"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("give the file that defines it"), "\(outcome.stderr)")
    }

    @Test(.requiresDecantBinary) func aStoreOfTheFirstVersionValidatesAndMigratesWithTheSource() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let models = folder.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(Self.versioned.utf8).write(to: models.appendingPathComponent("Schemas.swift"))
        let bundle = try ModelBundle.load(modelOrStore: models)
        let v1 = try #require(bundle.version(named: "NotesV1"))
        let store = folder.appendingPathComponent("App.store")
        let writer = try SQLiteStoreWriter(creating: store, model: v1)
        let layout = try #require(RecordLayout(entity: "Note", in: v1))
        var batch = RecordBatch(layout: layout)
        batch.append(Record(entity: "Note", id: .primaryKey(1), values: ["first"]))
        try writer.write(batch)
        try writer.finish()

        let validated = try EndToEndTests.run(["validate", store.path, "--model", models.path])
        #expect(validated.status == 0, "\(validated.stdout) \(validated.stderr)")
        #expect(validated.stdout.contains("NotesV1"), "\(validated.stdout)")

        let output = folder.appendingPathComponent("Migrated.store")
        let migrated = try EndToEndTests.run(["migrate", store.path, "--model", models.path, "--output", output.path])
        #expect(migrated.status == 0, "\(migrated.stdout) \(migrated.stderr)")
        let inspected = try EndToEndTests.run(["inspect", output.path, "--model", models.path])
        #expect(inspected.stdout.contains("NotesV2"), "\(inspected.stdout)")
    }

    /// Three versions from source: V1 → V2 a lightweight stage, V2 → V3 a custom stage whose app code Decant cannot
    /// run, done by a mapping file that fills the new required `text` from `body`.
    static let staged = """
        import SwiftData
        \(Self.firstTwoVersions)
        enum NotesV3: VersionedSchema {
            static var versionIdentifier = Schema.Version(3, 0, 0)
            static var models: [any PersistentModel.Type] { [Note.self] }
            @Model final class Note { var title = ""; var text: String; init() { text = "" } }
        }
        enum NotesPlan: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, NotesV3.self] }
            static var stages: [MigrationStage] { [v1ToV2, v2ToV3] }
            static let v1ToV2 = MigrationStage.lightweight(fromVersion: NotesV1.self, toVersion: NotesV2.self)
            static let v2ToV3 = MigrationStage.custom(
                fromVersion: NotesV2.self, toVersion: NotesV3.self,
                willMigrate: nil,
                didMigrate: { context in try context.save() })
        }
        """

    @Test(.requiresDecantBinary) func aStoreOfTheFirstVersionMigratesThroughALightweightAndACustomStage() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let models = folder.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try Data(Self.staged.utf8).write(to: models.appendingPathComponent("Schemas.swift"))
        let bundle = try ModelBundle.load(modelOrStore: models)
        #expect(bundle.stages.map(\.from) == ["NotesV1", "NotesV2"])
        #expect(bundle.stages.first?.kind == .lightweight)
        guard case .custom(let closures)? = bundle.stages.last?.kind else {
            Issue.record("the second stage is not custom: \(bundle.stages)")
            return
        }
        #expect(closures.map(\.name) == ["didMigrate"])
        #expect(closures.first?.location?.line == 24)
        #expect(closures.first?.location?.column == 21)
        let v1 = try #require(bundle.version(named: "NotesV1"))
        let store = folder.appendingPathComponent("App.store")
        let writer = try SQLiteStoreWriter(creating: store, model: v1)
        let layout = try #require(RecordLayout(entity: "Note", in: v1))
        var batch = RecordBatch(layout: layout)
        batch.append(Record(entity: "Note", id: .primaryKey(1), values: ["first"]))
        try writer.write(batch)
        try writer.finish()
        let mapping = folder.appendingPathComponent("V2-V3.yaml")
        try Data(
            """
            source: NotesV2
            destination: NotesV3
            entities:
              Note:
                attributes:
                  text: "$source.body ?? ('from ' + $source.title)"
            """.utf8
        ).write(to: mapping)

        let output = folder.appendingPathComponent("Migrated.store")
        let migrated = try EndToEndTests.run([
            "migrate", store.path, "--model", models.path, "--mapping", mapping.path, "--output", output.path,
        ])
        #expect(migrated.status == 0, "\(migrated.stdout) \(migrated.stderr)")
        let inspected = try EndToEndTests.run(["inspect", output.path, "--model", models.path])
        #expect(inspected.stdout.contains("NotesV3"), "\(inspected.stdout)")
        let exported = folder.appendingPathComponent("Notes.json")
        let converted = try EndToEndTests.run(["convert", output.path, exported.path, "--model", models.path])
        #expect(converted.status == 0, "\(converted.stderr)")
        let json = try String(contentsOf: exported, encoding: .utf8)
        #expect(json.contains("from first"), "\(json)")
    }
}
