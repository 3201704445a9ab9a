import Decant
import DecantTestSupport
import Foundation
import Testing

/// README promises that only a run of the binary shows: the exit status of a small output's failed write, `-v`'s
/// cause, `infer-mapping`'s refusal, seeding onto a store of an unknown version, `--version-order` on `migrate` and
/// `seed`, and a hop a mapping file states checking everything.
@Suite("decant's promises, through the binary", .requiresDecantBinary)
struct CommandPromiseTests {
    static let notes = MigrationCommandTests.notes

    /// A store of the Notes model whose second note breaks a rule (a required attribute made nil), for `validate`.
    static func brokenStore(in folder: URL) throws -> URL {
        let bundle = try ModelBundleFiles.write(
            "Items",
            versions: [("Items", ModelBundleFiles.item("<attribute name=\"name\" attributeType=\"String\"/>"))],
            in: folder)
        let model = try #require(try ModelBundle.load(from: bundle).version(named: "Items"))
        let store = folder.appendingPathComponent("items.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: model, journalMode: .delete)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Item", in: model)))
        batch.append(Record(entity: "Item", id: .primaryKey(1), values: ["one"]))
        batch.append(Record(entity: "Item", id: .primaryKey(2), values: [.null]))
        try writer.write(batch)
        try writer.finish()
        return store
    }

    /// A write that fails (here: a file size limit of 0, so the first byte fails with EFBIG) is an I/O error, 74, for
    /// the small outputs too: the rejects file, the mapping file and the lock file; nothing is left behind.
    @Test func aSmallOutputWhoseWriteFailsExits74() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Model", isDirectory: true)
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let store = try Self.brokenStore(in: model)
        let before = try FileManager.default.contentsOfDirectory(atPath: model.path).sorted()
        let out = folder.appendingPathComponent("out", isDirectory: true)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let cases: [[String]] = [
            ["validate", store.path, "--rejects", out.appendingPathComponent("rejects.ndjson").path],
            [
                "infer-mapping", "--model", Self.notes, "--from-version", "Notes", "--to-version", "Notes 2", "--output",
                out.appendingPathComponent("m.yaml").path,
            ],
            ["lock", Self.notes, "--lock-file", out.appendingPathComponent("Notes.decant-lock.json").path],
        ]
        for arguments in cases {
            let outcome = try FailurePathTests.runLimited(arguments, kilobytes: 0)
            #expect(outcome.status == 74, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.hasPrefix("Error: \(out.path)/"), "\(arguments): \(outcome.stderr)")
            #expect(try FailurePathTests.entries(out) == [], "\(arguments) left files behind")
            #expect(try FileManager.default.contentsOfDirectory(atPath: model.path).sorted() == before)
            // The same run without the limit succeeds (validate: exit 1, problems found), so the limit failed it.
            let free = try EndToEndTests.run(arguments)
            #expect(free.status == (arguments[0] == "validate" ? 1 : 0), "\(arguments): \(free.stderr)")
            for name in try FailurePathTests.entries(out) { try FileManager.default.removeItem(at: out.appendingPathComponent(name)) }
        }
    }

    /// `-v` adds the underlying cause to the error line; without it there is none.
    @Test func verboseAddsTheCause() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let lock = folder.appendingPathComponent("Notes.decant-lock.json")
        try Data("{\"not\": \"a lock\"}".utf8).write(to: lock)
        let plain = try EndToEndTests.run(["lock", Self.notes, "--check", "--lock-file", lock.path])
        #expect(plain.status == 65, "\(plain.stderr)")
        #expect(plain.stderr.hasPrefix("Error: \(lock.path): malformed input: not a Decant lock file"), "\(plain.stderr)")
        #expect(!plain.stderr.contains("caused by"), "\(plain.stderr)")
        let verbose = try EndToEndTests.run(["lock", Self.notes, "--check", "--lock-file", lock.path, "-v"])
        #expect(verbose.status == 65)
        let lines = verbose.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(verbose.stderr)")
        #expect(lines.first.map(String.init) == plain.stderr.split(separator: "\n").first.map(String.init))
        #expect(lines.last?.hasPrefix("  caused by: ") == true, "\(verbose.stderr)")
        #expect(lines.last?.contains("keyNotFound") == true, "\(verbose.stderr)")
    }

    /// A hop inference refuses: `infer-mapping` still writes what it could, names each refusal, and exits 1.
    @Test func inferMappingExits1OnARefusal() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try MigrationCommandTests.stringToIntegerBundle(in: folder)
        let output = folder.appendingPathComponent("typed.yaml")
        let run = try EndToEndTests.run([
            "infer-mapping", "--model", bundle.path, "--from-version", "Typed", "--to-version", "Typed 2", "--output",
            output.path,
        ])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("cannot infer: Item.count: String → Integer 64"), "\(run.stderr)")
        let written = try String(contentsOf: output, encoding: .utf8)
        #expect(written.hasPrefix("# CANNOT INFER: Item.count: String → Integer 64"), "\(written)")
        // With --json: the document (schemas/infer-mapping.schema.json) names the refusal, the file is written as
        // before, and the status is the same; without --output it is a usage error (the document holds stdout).
        try FileManager.default.removeItem(at: output)
        let json = try EndToEndTests.run([
            "infer-mapping", "--model", bundle.path, "--from-version", "Typed", "--to-version", "Typed 2", "--output",
            output.path, "--json",
        ])
        #expect(json.status == 1, "\(json.stderr)")
        #expect(try EndToEndTests.validate(json.stdout, schema: "infer-mapping") == "valid", "\(json.stdout)")
        let document = try JSONDecoder().decode(InferredMappingDocument.self, from: Data(json.stdout.utf8))
        #expect(document.problems.map(\.entity) == ["Item"] && document.problems.first?.property == "count")
        #expect(document.entityMappings == 1 && document.format == "yaml" && document.output == output.path)
        #expect(try String(contentsOf: output, encoding: .utf8) == written)
        let toStandardOutput = try EndToEndTests.run([
            "infer-mapping", "--model", bundle.path, "--from-version", "Typed", "--to-version", "Typed 2", "--json",
        ])
        #expect(toStandardOutput.status == 64, "\(toStandardOutput.stderr)")
        #expect(toStandardOutput.stderr.contains("--output"), "\(toStandardOutput.stderr)")
    }

    /// An app store at a version the model does not have: seeding refuses it (65), naming the store, and leaves it
    /// as it was.
    @Test func seedingOntoAStoreOfAnUnknownVersionExits65() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, seed) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: seed.deletingLastPathComponent()) }
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let existing = try Self.brokenStore(in: app)
        let before = try Data(contentsOf: existing)
        let entries = try FailurePathTests.entries(app)
        let run = try EndToEndTests.run(["seed", "--default", seed.path, "--store", existing.path, "--model", Self.notes])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("Error: \(existing.path)"), "\(run.stderr)")
        #expect(try Data(contentsOf: existing) == before)
        #expect(try FailurePathTests.entries(app) == entries)
    }

    /// A bundle whose history runs against its names (`Ordered`, then `Ordered 3`, then `Ordered 2`, the current
    /// one): by name a store at Ordered 3 is newer than the current version, and refused (migrate 64, seed 65);
    /// `--version-order` gives the history, and `migrate` and `seed` take the store to Ordered 2.
    @Test func versionOrderReachesMigrateAndSeed() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let attribute = { (name: String) in "<attribute name=\"\(name)\" optional=\"YES\" attributeType=\"String\"/>" }
        let bundle = try ModelBundleFiles.write(
            "Ordered",
            versions: [
                ("Ordered", ModelBundleFiles.item(attribute("name"))),
                ("Ordered 3", ModelBundleFiles.item(attribute("name"), attribute("note"))),
                ("Ordered 2", ModelBundleFiles.item(attribute("name"), attribute("note"), attribute("tag"))),
            ],
            current: "Ordered 2", in: folder)
        let order = "Ordered,Ordered 3,Ordered 2"
        let loaded = try ModelBundle.load(from: bundle)
        let third = try #require(loaded.version(named: "Ordered 3"))
        let second = try #require(loaded.version(named: "Ordered 2"))
        func thirdStore(_ name: String) throws -> URL {
            let url = folder.appendingPathComponent(name)
            let writer = try SQLiteStoreWriter(creating: url, model: third, journalMode: .delete)
            var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Item", in: third)))
            batch.append(Record(entity: "Item", id: .primaryKey(1), values: ["kept", "a note"]))
            try writer.write(batch)
            try writer.finish()
            return url
        }
        let store = try thirdStore("third.sqlite")
        let output = folder.appendingPathComponent("second.sqlite")
        let unordered = try EndToEndTests.run(["migrate", store.path, "--model", bundle.path, "--output", output.path])
        #expect(unordered.status == 64, "\(unordered.stderr)")
        #expect(unordered.stderr.contains("newer than"), "\(unordered.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let migrated = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", output.path, "--version-order", order,
        ])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(try SQLiteStore(contentsOf: output).metadata.entityVersionHashes == second.entityVersionHashes)

        // seed: the app's store at Ordered 3 is migrated to Ordered 2 (the seed is not needed then).
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let existing = app.appendingPathComponent("App.sqlite")
        try FileManager.default.moveItem(at: try thirdStore("app.sqlite"), to: existing)
        let seed = ["seed", "--default", output.path, "--store", existing.path, "--model", bundle.path]
        // By name the app's store is newer than the model's current version: seeding stops there (65, as README
        // says of a newer DEST) and leaves it.
        let refused = try EndToEndTests.run(seed)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("newer than the current Ordered 2"), "\(refused.stderr)")
        #expect(try SQLiteStore(contentsOf: existing).metadata.entityVersionHashes == third.entityVersionHashes)
        let seeded = try EndToEndTests.run(seed + ["--version-order", order])
        #expect(seeded.status == 0, "\(seeded.stderr)")
        #expect(try SQLiteStore(contentsOf: existing).metadata.entityVersionHashes == second.entityVersionHashes)
    }

    /// A hop a mapping file states checks everything: the violation the store already had is not carried over with
    /// a warning (as on an inferred hop) but rejected, as with `--strict`.
    @Test func aHopAMappingFileStatesChecksEverything() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (bundle, store) = try MigrationCommandTests.itemsStore(in: folder)
        let mapping = folder.appendingPathComponent("items.yaml")
        let inferred = try EndToEndTests.run([
            "infer-mapping", "--model", bundle.path, "--from-version", "Items", "--to-version", "Items 2", "--output",
            mapping.path,
        ])
        #expect(inferred.status == 0, "\(inferred.stderr)")
        let output = folder.appendingPathComponent("out.sqlite")
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        let inferredRun = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", output.path, "--rejects", rejects.path,
        ])
        #expect(inferredRun.stderr.contains("Error: 2 objects rejected"), "\(inferredRun.stderr)")
        #expect(inferredRun.stderr.contains("warning: "), "\(inferredRun.stderr)")
        let stated = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", output.path, "--rejects", rejects.path,
            "--mapping", mapping.path,
        ])
        #expect(stated.status == 1)
        #expect(stated.stderr.contains("Error: 3 objects rejected by the rules of Items 2"), "\(stated.stderr)")
        #expect(!stated.stderr.contains("warning:"), "\(stated.stderr)")
        #expect(try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n").count == 3)
    }
}
