import Decant
import DecantTestSupport
import Foundation
import Testing

/// A bundle's own migration stages (a SwiftData `SchemaMigrationPlan`, ``ModelBundle/stages``) in `plan` and
/// `migrate`: the hops they give, a custom stage's closures named and refused without a mapping file, run with one,
/// and stages that name versions the bundle lacks refused where they are declared.
@Suite struct StageMigrationTests {
    /// `Folder ⇄ Note` in three versions named as SwiftData names them (by their `VersionedSchema` enum): V2 renames
    /// the note's `content` to `text`, V3 adds `Note.pinned`; `stages` as given.
    static func bundle(_ stages: [VersionStage]) -> ModelBundle {
        var v1 = MigrationFixtures.folderNotes("V", version: 1)
        v1.versionName = "V1"
        var v2 = MigrationFixtures.folderNotes("V", version: 2)
        v2.versionName = "V2"
        var v3 = MigrationFixtures.folderNotes("V", version: 3) {
            $0.attributes.append(Attribute(name: "pinned", type: .boolean, isOptional: true))
        }
        v3.versionName = "V3"
        var bundle = ModelBundle(
            name: "Notes", versions: [v1, v2, v3], currentVersionName: "V3", sourceKind: .swiftSource)
        bundle.stages = stages
        return bundle
    }

    static let file = "Sources/Notes/NotesMigrationPlan.swift"

    /// V1 → V2 custom (willMigrate and didMigrate), V2 → V3 lightweight.
    static let customThenLightweight = [
        VersionStage(
            from: "V1", to: "V2",
            kind: .custom(closures: [
                .init(name: "willMigrate", location: Location(path: file, line: 14)),
                .init(name: "didMigrate", location: Location(path: file, line: 19)),
            ]),
            location: Location(path: file, line: 12)),
        VersionStage(from: "V2", to: "V3", kind: .lightweight, location: Location(path: file, line: 24)),
    ]

    /// A V1 store: two folders, three notes.
    static func v1Store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let v1 = bundle.versions[0]
        let store = folder.appendingPathComponent("notes-v1.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Folder", 1, in: v1, ["name": "Home"]),
                MigrationFixtures.record("Folder", 2, in: v1, ["name": "Work"]),
                MigrationFixtures.record("Note", 1, in: v1, ["content": "milk"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
                MigrationFixtures.record("Note", 2, in: v1, ["content": "eggs"], relationships: ["folder": .toOne(.pk("Folder", 1))]),
                MigrationFixtures.record("Note", 3, in: v1, ["content": "call Bob"], relationships: ["folder": .toOne(.pk("Folder", 2))]),
            ])
        return store
    }

    @Test func aCustomStageWithoutAMappingFileIsNamedAndRefused() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle(Self.customThenLightweight)
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let before = try Data(contentsOf: store)
        let options = StoreMigration.Options(bundle: bundle)

        let report = try StoreMigration.plan(store: store, options: options)
        #expect(report.plan.hops.map(\.name) == ["V1 → V2", "V2 → V3"])
        // Core Data's single step V1 → V3 could be inferred, but it would skip the custom stage: the stages stay the path.
        #expect(report.plan.path == .hopByHop)
        let problem = try #require(report.plan.problems.first)
        #expect(report.plan.problems.count == 1)
        #expect(problem.location == Location(path: Self.file, line: 12))
        #expect(
            problem.description == "\(Self.file):12: stage V1 → V2: the custom stage runs willMigrate (\(Self.file):14) "
                + "and didMigrate (\(Self.file):19), which are app code; write a mapping file for V1 → V2 that does "
                + "what they do and give it with --mapping")
        // The same shape as a mapping model's policy that no app code answers: a problem of the hop, and `plan`'s text
        // lists it under "cannot run".
        let text = PlanDocument(report: report, store: "notes-v1.sqlite").text
        #expect(text.contains("  stage: custom (\(Self.file):12): willMigrate at \(Self.file):14, didMigrate at \(Self.file):19 (app code, not run); no mapping file stands for it"))
        #expect(text.contains("  stage: lightweight (\(Self.file):24)"))
        #expect(text.contains("cannot run:\n  \(problem)"))

        let output = folder.appendingPathComponent("notes-v3.sqlite")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: options)
        }
        #expect(error.code == .planNotExecutable && error.code.exitCode == 1)
        #expect(error.message.contains("willMigrate (\(Self.file):14)"))
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func withAMappingFileTheCustomStageRuns() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle(Self.customThenLightweight)
        let store = try Self.v1Store(in: folder, bundle: bundle)
        var options = StoreMigration.Options(bundle: bundle)
        // What the app's didMigrate did: the text is the old content in capitals.
        options.mappings = [
            ExplicitMapping(
                source: "V1", destination: "V2", path: "v1-v2.yaml",
                entities: [
                    ExplicitEntityMapping(
                        destination: "Note", source: .entity("Note"),
                        attributes: [
                            .init(name: "text", expression: try ValueExpression(parsing: "uppercase($source.content)"))
                        ])
                ])
        ]
        let plan = try StoreMigration.plan(store: store, options: options).plan
        #expect(plan.isExecutable, "\(plan.problems)")
        #expect(plan.hops.map(\.file) == ["v1-v2.yaml", nil])
        let text = PlanDocument(report: try StoreMigration.plan(store: store, options: options), store: "s").text
        #expect(text.contains("(app code, not run); v1-v2.yaml stands for it"))

        let output = folder.appendingPathComponent("notes-v3.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.hops == ["V1 → V2", "V2 → V3"])
        let v3 = bundle.versions[2]
        let notes = try MigrationFixtures.read(output, bundle: bundle)["Note"] ?? []
        #expect(notes.map { MigrationFixtures.value($0, "text", model: v3) } == [
            .string("MILK"), .string("EGGS"), .string("CALL BOB"),
        ])
        #expect(try MigrationFixtures.hashes(output) == v3.entityVersionHashes)
    }

    @Test func stagesGiveTheHops() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // One lightweight stage straight from V1 to V3: one hop, not two.
        let skipping = Self.bundle([VersionStage(from: "V1", to: "V3", kind: .lightweight)])
        let store = try Self.v1Store(in: folder, bundle: skipping)
        let plan = try MigrationPlan(bundle: skipping, source: skipping.versions[0])
        #expect(plan.hops.map(\.name) == ["V1 → V3"])
        #expect(plan.hops.first?.stage == skipping.stages.first)
        #expect(plan.isExecutable)
        let output = folder.appendingPathComponent("v3.sqlite")
        let report = try StoreMigration.migrate(
            store: store, to: .file(output), options: StoreMigration.Options(bundle: skipping))
        #expect(report.hops == ["V1 → V3"])
        // A version no stage starts at: its hop is inferred, and the plan says so.
        let partial = Self.bundle([VersionStage(from: "V2", to: "V3", kind: .lightweight)])
        let walked = try MigrationPlan(bundle: partial, source: partial.versions[0])
        #expect(walked.hops.map(\.name) == ["V1 → V2", "V2 → V3"])
        #expect(walked.hops.map { $0.stage?.from } == [nil, "V2"])
        #expect(walked.notes.contains { $0.contains("no stage of Notes's migration plan starts at V1") })
        // A custom stage without closures runs as a lightweight one.
        let empty = Self.bundle([VersionStage(from: "V1", to: "V2", kind: .custom(closures: []))])
        #expect(try MigrationPlan(bundle: empty, source: empty.versions[0]).isExecutable)
    }

    @Test func aStageNamingAnUnknownVersionIsRefusedWhereItIsDeclared() throws {
        let location = Location(path: Self.file, line: 31)
        let cases: [(VersionStage, String)] = [
            (VersionStage(from: "V2", to: "V4", kind: .lightweight, location: location), "names V4, which is not a version of Notes"),
            (VersionStage(from: "V0", to: "V1", kind: .lightweight, location: location), "names V0, which is not a version of Notes"),
            (VersionStage(from: "V3", to: "V2", kind: .lightweight, location: location), "does not go forward"),
        ]
        for (stage, message) in cases {
            let bundle = Self.bundle([stage])
            let error = try #require(throws: DecantError.self) {
                try MigrationPlan(bundle: bundle, source: bundle.versions[0])
            }
            #expect(error.code == .malformedInput && error.code.exitCode == 65)
            #expect(error.location == location)
            #expect(error.message.contains(message), "\(error.message)")
        }
        let twice = Self.bundle([
            VersionStage(from: "V1", to: "V2", kind: .lightweight, location: Location(path: Self.file, line: 5)),
            VersionStage(from: "V1", to: "V3", kind: .lightweight, location: location),
        ])
        let error = try #require(throws: DecantError.self) { try MigrationPlan(bundle: twice, source: twice.versions[0]) }
        #expect(error.location == location)
        #expect(error.message.contains("starts at the same version as the stage V1 → V2 (\(Self.file):5)"))
    }

    @Test func thePlanDocumentFollowsItsSchema() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.bundle(Self.customThenLightweight)
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let report = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: bundle))
        let document = PlanDocument(report: report, store: store.path)
        #expect(document.hops.first?.stage?.kind == .custom)
        #expect(document.hops.first?.stage?.closures.map(\.name) == ["willMigrate", "didMigrate"])
        #expect(document.hops.last?.stage?.kind == .lightweight)
        let json = try document.jsonDocument()
        let schema = Fixtures.packageRoot.appendingPathComponent("schemas/plan.schema.json").path
        let script = "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))); print('valid')"
        #expect(try PythonOracle.text(script, input: json, arguments: [schema]) == "valid")
    }
}
