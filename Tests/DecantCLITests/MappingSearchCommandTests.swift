import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant plan` and `migrate` find the project's mapping models without `--mapping`, `--no-mapping-search` turns that
/// off, and a mapping no hop uses is a note, not exit 64.
@Suite("decant plan and migrate: mapping search", .serialized)
struct MappingSearchCommandTests {
    static let moody = Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld").path
    static let mappings = Fixtures.corpus("objcio__core-data/Migrations/Migrations").path

    static func store(_ version: String, in folder: URL) throws -> URL {
        try Fixtures.copyStore(
            Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/\(version).moody"), into: folder)
    }

    @Test(.requiresDecantBinary) func planAndMigrateFindTheMappingModels() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store("Moody 2", in: folder)
        let plan = try EndToEndTests.run(["plan", store.path, "--model", Self.moody, "--to-version", "Moody 5"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("mapping models found in "), "\(plan.stdout)")
        #expect(plan.stdout.contains("hop 1: Moody 2 → Moody 3 (explicit: "), "\(plan.stdout)")
        #expect(plan.stdout.contains("Moody 5-Moody 6.xcmappingmodel is not used") == false)
        #expect(plan.stdout.contains("Moody 5-Moody 6.xcmappingmodel maps Moody 5 → Moody 6, which no hop"), "\(plan.stdout)")
        // The summary lists what the mapping models change, not every property they copy (`date = $source.date`);
        // --verbose lists those too.
        let copies = { (text: String) in
            text.split(separator: "\n").filter { line in
                let parts = line.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 3)
                return parts.count >= 3 && parts[1] == "=" && parts[2] == "$source.\(parts[0])"
            }.count
        }
        #expect(copies(plan.stdout) == 0, "\(plan.stdout)")
        let verbose = try EndToEndTests.run(
            ["plan", store.path, "--model", Self.moody, "--to-version", "Moody 5", "--verbose"])
        #expect(copies(verbose.stdout) > 10, "\(verbose.stdout)")
        let json = try EndToEndTests.run(["plan", store.path, "--model", Self.moody, "--to-version", "Moody 5", "--json"])
        #expect(try EndToEndTests.validate(json.stdout, schema: "plan") == "valid")
        #expect(json.stdout.contains("\"mappingSearch\""))

        let off = try EndToEndTests.run(
            ["plan", store.path, "--model", Self.moody, "--to-version", "Moody 5", "--no-mapping-search", "--no-dry-run"])
        #expect(!off.stdout.contains("mapping models found"))
        #expect(off.stdout.contains("hop 1: Moody 2 → Moody 3 (inferred)"), "\(off.stdout)")

        let output = folder.appendingPathComponent("Moody5.sqlite")
        let migrate = try EndToEndTests.run(
            ["migrate", store.path, "--model", Self.moody, "--to-version", "Moody 5", "--output", output.path])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stdout.contains("hops: Moody 2 → Moody 3, Moody 3 → Moody 4, Moody 4 → Moody 5"))
    }

    /// The search never enters `.git` (nor `.build`, `DerivedData`, `Pods`, `node_modules`): mapping models there
    /// are not found, and the hops they would map are inferred; the same files in the project are found and used.
    @Test(.requiresDecantBinary) func theSearchSkipsGit() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = folder.appendingPathComponent("Project", isDirectory: true)
        let git = project.appendingPathComponent(".git/objects", isDirectory: true)
        try FileManager.default.createDirectory(at: git, withIntermediateDirectories: true)
        let model = project.appendingPathComponent("Moody.xcdatamodeld")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: Self.moody), to: model)
        let hop = "Moody 2-Moody 3.xcmappingmodel"
        try FileManager.default.copyItem(
            at: URL(fileURLWithPath: Self.mappings).appendingPathComponent(hop), to: git.appendingPathComponent(hop))
        let store = try Self.store("Moody 2", in: folder)
        let arguments = ["plan", store.path, "--model", model.path, "--to-version", "Moody 3", "--no-dry-run"]
        let skipped = try EndToEndTests.run(arguments)
        #expect(skipped.stdout.contains("hop 1: Moody 2 → Moody 3 (inferred)"), "\(skipped.stdout)")
        #expect(!skipped.stdout.contains(hop), "\(skipped.stdout)")

        try FileManager.default.moveItem(at: git.appendingPathComponent(hop), to: project.appendingPathComponent(hop))
        let found = try EndToEndTests.run(arguments)
        #expect(found.stdout.contains("hop 1: Moody 2 → Moody 3 (explicit: "), "\(found.stdout)")
        #expect(found.stdout.contains(hop), "\(found.stdout)")
    }

    /// A model named by a relative path gets the mapping models the search finds named relative to the current
    /// folder too, as the user would type them, never by an absolute path the user did not type.
    @Test(.requiresDecantBinary) func foundMappingModelsAreNamedAsTheModelWasTyped() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store("Moody 2", in: folder)
        let project = Fixtures.corpus("objcio__core-data")
        let plan = try ConvertCSVTests.run(
            in: project,
            ["plan", store.path, "--model", "Migrations/Migrations/Moody.xcdatamodeld", "--to-version", "Moody 5", "--no-dry-run"])
        let text = plan.output
        #expect(plan.status == 0, "\(plan.errors)")
        #expect(text.contains("(explicit: Migrations/Migrations/Moody 2-Moody 3.xcmappingmodel)"), "\(text)")
        #expect(!text.contains(project.path), "\(text)")
    }

    /// A batch hands every store the whole mappings folder: a store past some hops uses the rest.
    @Test(.requiresDecantBinary) func aStorePastAMappingsHopStillMigrates() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.store("Moody 4", in: folder)
        let output = folder.appendingPathComponent("Moody5.sqlite")
        let migrate = try EndToEndTests.run([
            "migrate", store.path, "--model", Self.moody, "--to-version", "Moody 5", "--mapping", Self.mappings,
            "--no-mapping-search", "--output", output.path,
        ])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stdout.contains("hops: Moody 4 → Moody 5"))
    }

    /// Two mapping files for one hop exit 64 naming both; one file given twice counts once.
    @Test(.requiresDecantBinary) func twoMappingFilesForOneHopAreNamed() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = folder.appendingPathComponent("a.yaml").path
        let second = folder.appendingPathComponent("b.yaml").path
        for file in [first, second] {
            let inferred = try EndToEndTests.run([
                "infer-mapping", "--model", MigrationCommandTests.notes, "--from-version", "Notes", "--to-version", "Notes 2",
                "--output", file,
            ])
            #expect(inferred.status == 0, "\(inferred.stderr)")
        }
        let twice = try EndToEndTests.run(
            ["plan", store.path, "--model", MigrationCommandTests.notes, "--mapping", first, "--mapping", second])
        #expect(twice.status == 64)
        #expect(twice.stderr.contains("two mappings claim the same hop from Notes"), "\(twice.stderr)")
        #expect(twice.stderr.contains("a.yaml (Notes → Notes 2) and"), "\(twice.stderr)")
        #expect(twice.stderr.contains("b.yaml (Notes → Notes 2)"), "\(twice.stderr)")
        let same = try EndToEndTests.run(
            ["plan", store.path, "--model", MigrationCommandTests.notes, "--mapping", first, "--mapping", first])
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.contains("hop 1: Notes → Notes 2 (explicit: "), "\(same.stdout)")
    }
}
