import Decant
import DecantTestSupport
import Foundation
import Testing

/// The Swift policy API on its own: what a policy makes, one object per key, app functions, and failures that leave
/// no output.
@Suite("Migration policies")
struct PolicyTests {
    /// Makes the Note, one Paragraph per note and one shared Paragraph per distinct title.
    struct SplittingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let note = try manager.createDefaultDestinationInstance()
            #expect(try manager.createDefaultDestinationInstance() === note)
            let paragraph = manager.insertObject(entity: "Paragraph")
            paragraph["body"] = try manager.sourceValue("text")
            paragraph["position"] = .integer(1)
            paragraph.setRelationship("note", to: [note.reference])
            let shared = manager.findOrInsertObject(entity: "Paragraph", key: try manager.sourceValue("title").text ?? "")
            if shared.isNew {
                shared["body"] = .string("about \(try manager.sourceValue("title").text ?? "")")
                shared["position"] = .integer(0)
            }
            #expect(manager.destinationInstance(forEntityMappingNamed: mapping.name, sourceInstance: source) == note.reference)
        }

        func perform(_ selector: String, arguments: [Value]) throws -> Value {
            selector == "shout:" ? .string((arguments.first?.text ?? "").uppercased()) : .null
        }
    }

    struct FailingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            if case .primaryKey(2) = source.id { throw DecantError(.malformedInput, "the policy refuses \(source)") }
            _ = try manager.createDefaultDestinationInstance()
        }
    }

    struct StrayPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            _ = manager.insertObject(entity: "Chapter")
        }
    }

    static func store(in folder: URL) throws -> (URL, ModelBundle) {
        let bundle = MappingFileMigrationTests.docs()
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("docs1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Note", 1, in: v1, ["text": "milk", "title": "Shopping"]),
                MigrationFixtures.record("Note", 2, in: v1, ["text": "eggs", "title": "Shopping"]),
                MigrationFixtures.record("Note", 3, in: v1, ["text": "call Bob", "title": "Calls"]),
            ])
        return (store, bundle)
    }

    /// The Docs 1 → Docs 2 hop as a complete mapping whose Note mapping names `policy`.
    static func options(_ bundle: ModelBundle, policy: (any EntityMigrationPolicy)?) throws -> StoreMigration.Options {
        var options = StoreMigration.Options(bundle: bundle)
        var mapping = MappingInference.infer(from: bundle.versions[0], to: bundle.versions[1]).mapping
        for index in mapping.entityMappings.indices where mapping.entityMappings[index].destinationEntity == "Note" {
            mapping.entityMappings[index].policy = "App.NotePolicy"
            if let title = mapping.entityMappings[index].attributes.firstIndex(where: { $0.name == "title" }) {
                mapping.entityMappings[index].attributes[title].expression = try ValueExpression(
                    parsing: "call('App.NotePolicy', 'shout:', $source.title)")
            }
        }
        options.mappingModels = [mapping]
        if let policy { options.functions.registerPolicy(policy, as: "NotePolicy") }
        return options
    }

    @Test func aPolicyMakesLinkedObjectsAndOnePerKey() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        let options = try Self.options(bundle, policy: SplittingPolicy())
        let output = folder.appendingPathComponent("docs2.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        #expect(report.written == ["Note": 3, "Paragraph": 5])
        let v2 = bundle.versions[1]
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        let titles = (migrated["Note"] ?? []).map { MigrationFixtures.value($0, "title", model: v2) }
        #expect(titles == [.string("SHOPPING"), .string("SHOPPING"), .string("CALLS")])
        let bodies = (migrated["Paragraph"] ?? []).compactMap { MigrationFixtures.value($0, "body", model: v2)?.text }
        #expect(bodies.sorted() == ["about Calls", "about Shopping", "call Bob", "eggs", "milk"])
    }

    @Test func withoutThePolicyThePlanNamesIt() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        let plan = try StoreMigration.plan(store: store, options: try Self.options(bundle, policy: nil))
        let messages = plan.plan.problems.map(\.message)
        #expect(messages.contains { $0.contains("needs the migration policy App.NotePolicy") })
        #expect(messages.contains { $0.contains("calls App.NotePolicy shout:") })
    }

    @Test func aFailingPolicyLeavesNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (store, bundle) = try Self.store(in: folder)
        let before = try Data(contentsOf: store)
        let output = folder.appendingPathComponent("docs2.sqlite")
        for policy: any EntityMigrationPolicy in [FailingPolicy(), StrayPolicy()] {
            var options = try Self.options(bundle, policy: policy)
            options.functions.registerMethod("App.NotePolicy", selector: "shout:") { $0.first ?? .null }
            let error = try #require(throws: DecantError.self) {
                try StoreMigration.migrate(store: store, to: .file(output), options: options)
            }
            #expect(error.message.contains("Note/p") || error.location?.object?.contains("Note/p") == true, "\(error)")
            #expect(!FileManager.default.fileExists(atPath: output.path))
            #expect(try Data(contentsOf: store) == before)
        }
    }
}
