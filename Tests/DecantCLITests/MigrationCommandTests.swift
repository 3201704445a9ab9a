import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant plan`, `migrate` and `infer-mapping` through the built binary: exit codes, output, JSON schemas.
@Suite("decant plan, migrate, infer-mapping", .serialized)
struct MigrationCommandTests {
    static let notes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    /// A v1 Notes store with two notes in a fresh folder.
    static func v1Store() throws -> (folder: URL, store: URL) {
        let folder = try Fixtures.temporaryDirectory { folder in
            let bundle = try ModelBundle.load(from: URL(fileURLWithPath: notes))
            let v1 = try #require(bundle.version(named: "Notes"))
            let writer = try SQLiteStoreWriter(creating: folder.appendingPathComponent("Notes.sqlite"), model: v1)
            let layout = try #require(RecordLayout(entity: "Note", in: v1))
            var batch = RecordBatch(layout: layout)
            batch.append(Record(entity: "Note", id: .primaryKey(1), values: ["milk", .null]))
            batch.append(Record(entity: "Note", id: .primaryKey(2), values: ["eggs", .null]))
            try writer.write(batch)
            try writer.finish()
        }
        return (folder, folder.appendingPathComponent("Notes.sqlite"))
    }

    @Test(.requiresDecantBinary) func helpListsTheMigrationCommands() throws {
        let help = try EndToEndTests.run(["--help"])
        for command in ["plan", "migrate", "infer-mapping"] { #expect(help.stdout.contains("  \(command) ")) }
    }

    @Test(.requiresDecantBinary) func planPrintsTheHopsAndFollowsItsSchema() throws {
        let (folder, store) = try Self.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = try EndToEndTests.run(["plan", store.path, "--model", Self.notes])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("version Notes → Notes 3"))
        #expect(text.stdout.contains("hop 1: Notes → Notes 2 (inferred)"))
        #expect(text.stdout.contains("text = $source.content  (renamed from content)"))
        #expect(text.stdout.contains("pre-flight: 2 objects read, none would be rejected"))
        let json = try EndToEndTests.run(["plan", store.path, "--model", Self.notes, "--json"])
        #expect(json.status == 0)
        #expect(try EndToEndTests.validate(json.stdout, schema: "plan") == "valid")
    }

    @Test(.requiresDecantBinary) func migrateWritesTheCurrentVersionAndSaysWhatItDid() throws {
        let (folder, store) = try Self.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("Notes3.sqlite")
        let run = try EndToEndTests.run(["migrate", store.path, "--model", Self.notes, "--output", output.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("migrated Notes → Notes 3"))
        #expect(run.stdout.contains("Note  read 2, written 2, rejected 0, removed 0, created 0"))
        let inspected = try EndToEndTests.run(["inspect", output.path, "--model", Self.notes])
        #expect(inspected.stdout.contains("matches Notes version Notes 3"))
        // Already there: copied, and says so; in place: left alone.
        let copy = folder.appendingPathComponent("copy.sqlite")
        let again = try EndToEndTests.run([
            "migrate", output.path, "--model", Self.notes, "--output", copy.path, "--json",
        ])
        #expect(again.status == 0)
        #expect(try EndToEndTests.validate(again.stdout, schema: "migrate") == "valid")
        #expect(again.stdout.contains(#""action" : "copied""#))
        let inPlace = try EndToEndTests.run(["migrate", output.path, "--model", Self.notes, "--in-place"])
        #expect(inPlace.stdout.contains("already at Notes 3; nothing to do"))
        // Usage.
        #expect(try EndToEndTests.run(["migrate", store.path, "--model", Self.notes]).status == 64)
        #expect(
            try EndToEndTests.run(["migrate", store.path, "--model", Self.notes, "--output", store.path]).status == 64
        )
    }

    @Test(.requiresDecantBinary) func inPlaceKeepsABackup() throws {
        let (folder, store) = try Self.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: store)
        let run = try EndToEndTests.run(["migrate", store.path, "--model", Self.notes, "--in-place", "--to-version", "Notes 2"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path + ".backup")) == before)
        #expect(
            try EndToEndTests.run(["inspect", store.path, "--model", Self.notes]).stdout.contains("version Notes 2")
        )
    }

    /// `Typed.xcdatamodeld` in `folder`: an Item whose optional `count` is a String in Typed and an Integer 64 in
    /// Typed 2, a change inference refuses.
    static func stringToIntegerBundle(in folder: URL) throws -> URL {
        try ModelBundleFiles.write(
            "Typed",
            versions: [("Typed", "String"), ("Typed 2", "Integer 64")].map { version, type in
                (version, ModelBundleFiles.item("<attribute name=\"count\" optional=\"YES\" attributeType=\"\(type)\"/>"))
            },
            in: folder)
    }

    @Test(.requiresDecantBinary) func aPlanThatCannotRunExits1WithTheReason() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.stringToIntegerBundle(in: folder)
        let loaded = try ModelBundle.load(from: bundle)
        let store = folder.appendingPathComponent("typed.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: try #require(loaded.version(named: "Typed")))
        try writer.finish()
        let plan = try EndToEndTests.run(["plan", store.path, "--model", bundle.path])
        #expect(plan.status == 1)
        #expect(plan.stdout.contains("Item.count: String → Integer 64 is not a change Core Data infers"))
        #expect(plan.stdout.contains("count: 'integer($source.count)'"))
        let json = try EndToEndTests.run(["plan", store.path, "--model", bundle.path, "--json"])
        #expect(json.status == 1)
        #expect(try EndToEndTests.validate(json.stdout, schema: "plan") == "valid")
        let migrate = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", folder.appendingPathComponent("out.sqlite").path,
        ])
        #expect(migrate.status == 1)
        #expect(migrate.stderr.contains("Item.count"))
        // Nothing written: no output, and nothing staged beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["Typed.xcdatamodeld", "typed.sqlite"])
        // The advice, written into a mapping file, makes the plan run.
        let mapping = folder.appendingPathComponent("fix.yaml")
        let fix = "source: Typed\ndestination: Typed 2\nentities:\n  Item:\n    attributes:\n"
            + "      count: 'integer($source.count)'\n"
        try Data(fix.utf8).write(to: mapping)
        let fixed = try EndToEndTests.run(["plan", store.path, "--model", bundle.path, "--mapping", mapping.path])
        #expect(fixed.status == 0, "\(fixed.stdout)\(fixed.stderr)")
        #expect(fixed.stdout.contains("(explicit: \(mapping.path))"))
    }

    /// `Items 1`: `Item{name (required), code}`; `Items 2` requires `code` too. Item 1 has no name (broken
    /// already), item 2 no code (broken by the migration), item 3 both.
    static func itemsStore(in folder: URL) throws -> (bundle: URL, store: URL) {
        let bundle = try ModelBundleFiles.write(
            "Items",
            versions: [("Items", "YES"), ("Items 2", "NO")].map { version, codeIsOptional in
                (
                    version,
                    ModelBundleFiles.item(
                        "<attribute name=\"name\" attributeType=\"String\"/>",
                        "<attribute name=\"code\" optional=\"\(codeIsOptional)\" attributeType=\"String\"/>")
                )
            },
            in: folder)
        let loaded = try ModelBundle.load(from: bundle)
        let v1 = try #require(loaded.version(named: "Items"))
        let store = folder.appendingPathComponent("items.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: v1)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Item", in: v1)))
        let codes: [Value] = ["c", .null, .null]
        for (key, name) in [Value.null, "two", "three"].enumerated() {
            let values = try #require(RecordLayout(entity: "Item", in: v1)).attributes.map { $0.name == "name" ? name : codes[key] }
            batch.append(Record(entity: "Item", id: .primaryKey(Int64(key + 1)), values: values))
        }
        try writer.write(batch)
        try writer.finish()
        return (bundle, store)
    }

    /// `plan` exits as `migrate` would: a dry run that predicts rejections is a problem found (exit 1), so a CI gate
    /// on `plan` cannot pass a migration that fails; with `--no-dry-run` it predicts nothing and exits 0.
    @Test(.requiresDecantBinary) func planExits1WhenItsDryRunRejectsObjects() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (bundle, store) = try Self.itemsStore(in: folder)
        let plan = try EndToEndTests.run(["plan", store.path, "--model", bundle.path])
        #expect(plan.status == 1, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("2 would be rejected"), "\(plan.stdout)")
        let json = try EndToEndTests.run(["plan", store.path, "--model", bundle.path, "--json"])
        #expect(json.status == 1)
        #expect(try EndToEndTests.validate(json.stdout, schema: "plan") == "valid")
        let unchecked = try EndToEndTests.run(["plan", store.path, "--model", bundle.path, "--no-dry-run"])
        #expect(unchecked.status == 0, "\(unchecked.stderr)")
    }

    /// A run that rejects objects is a problem found: it exits 1 with the counts per entity on standard error, its
    /// output and rejects file complete (it exited 0 and said nothing on standard error). What the store already
    /// broke is carried over with a warning (it was rejected too), unless --strict.
    @Test(.requiresDecantBinary) func rejectingObjectsExits1AndCarriedViolationsWarn() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (bundle, store) = try Self.itemsStore(in: folder)
        let output = folder.appendingPathComponent("out.sqlite")
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        let run = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", output.path, "--rejects", rejects.path,
        ])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("Error: 2 objects rejected by the rules of Items 2: Item 2"), "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "warning: Item.name optional: 1 object already broke this rule in the source and was carried over"))
        #expect(run.stdout.contains("Item  read 3, written 1, rejected 2, removed 0, created 0"), "\(run.stdout)")
        #expect(FileManager.default.fileExists(atPath: output.path))
        let listed = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n")
        #expect(listed.count == 2 && listed.allSatisfy { $0.contains(#""property":"code","rule":"optional""#) })

        let json = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", output.path, "--rejects", rejects.path, "--json",
        ])
        #expect(json.status == 1)
        #expect(try EndToEndTests.validate(json.stdout, schema: "migrate") == "valid")
        #expect(json.stdout.contains(#""kind":"preexisting-violation""#) || json.stdout.contains(#""kind" : "preexisting-violation""#))

        let strict = try EndToEndTests.run([
            "migrate", store.path, "--model", bundle.path, "--output", output.path, "--rejects", rejects.path, "--strict",
        ])
        #expect(strict.status == 1)
        #expect(strict.stderr.contains("Error: 3 objects rejected by the rules of Items 2: Item 3"), "\(strict.stderr)")
        #expect(!strict.stderr.contains("warning:"))
    }

    @Test(.requiresDecantBinary) func inferMappingWritesAFileThatReproducesTheMigration() throws {
        let (folder, store) = try Self.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let yaml = folder.appendingPathComponent("v1-v2.yaml")
        let json = folder.appendingPathComponent("v1-v2.json")
        for file in [yaml, json] {
            let written = try EndToEndTests.run(
                ["infer-mapping", "--model", Self.notes, "--from-version", "Notes", "--to-version", "Notes 2", "--output", file.path])
            #expect(written.status == 0, "\(written.stderr)")
        }
        #expect(try EndToEndTests.validate(String(contentsOf: json, encoding: .utf8), schema: "mapping") == "valid")
        #expect(
            try String(contentsOf: yaml, encoding: .utf8).contains(
                "\"text\": \"$source.content\"   # renamed from content"
            )
        )
        let inferred = folder.appendingPathComponent("inferred.sqlite")
        let explicit = folder.appendingPathComponent("explicit.sqlite")
        #expect(
            try EndToEndTests.run([
                "migrate", store.path, "--model", Self.notes, "--to-version", "Notes 2", "--output", inferred.path,
            ]).status == 0
        )
        let withFile = try EndToEndTests.run(
            [
                "migrate", store.path, "--model", Self.notes, "--to-version", "Notes 2", "--mapping", yaml.path, "--output",
                explicit.path,
            ])
        #expect(withFile.status == 0, "\(withFile.stderr)")
        let bundle = try ModelBundle.load(from: URL(fileURLWithPath: Self.notes))
        func records(_ url: URL) throws -> [Record] {
            var reader = try SQLiteFormat().makeReader(at: url, options: FormatOptions(bundle: bundle))
            var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Note", in: reader.model)))
            var all: [Record] = []
            while try reader.nextBatch(into: &batch) { all += (0..<batch.count).map { batch.record(at: $0) } }
            return all
        }
        #expect(try records(inferred) == records(explicit))
        #expect(try records(explicit).count == 2)
    }
}

extension MigrationCommandTests {
    @Test(.requiresDecantBinary) func validateExits1AndListsRejects() throws {
        let (folder, store) = try Self.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let valid = try EndToEndTests.run(["validate", store.path, "--model", Self.notes, "--json"])
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(try EndToEndTests.validate(valid.stdout, schema: "validate") == "valid")
        // A store whose note points at a folder that does not exist.
        let bundle = try ModelBundle.load(from: URL(fileURLWithPath: Self.notes))
        let v3 = try #require(bundle.version(named: "Notes 3"))
        let broken = folder.appendingPathComponent("broken.sqlite")
        let writer = try SQLiteStoreWriter(creating: broken, model: v3)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Note", in: v3)))
        batch.append(
            Record(
                entity: "Note",
                id: .primaryKey(1),
                values: [.null, "milk", .null],
                relationships: [.toOne(ObjectReference(entity: "Folder", id: .primaryKey(7)))]
            )
        )
        try writer.write(batch)
        try writer.finish()
        let stopped = try EndToEndTests.run(["validate", broken.path, "--model", Self.notes])
        #expect(stopped.status == 1)
        #expect(stopped.stderr.contains("Note/p1: folder points at Folder/p7, which does not exist"))
        let rejects = folder.appendingPathComponent("rejects.ndjson")
        let listed = try EndToEndTests.run(["validate", broken.path, "--model", Self.notes, "--rejects", rejects.path])
        #expect(listed.status == 1)
        #expect(listed.stdout.contains("Note.folder dangling: 1"))
        #expect(try String(contentsOf: rejects, encoding: .utf8).contains(#""rule":"dangling""#))
    }

    /// Xcode mapping models found in a folder by their hashes: Moody v1 → v5 runs through three of them; v5 → v6
    /// needs the app's policy class, which `plan` names with exit 1 (in text and in its JSON document).
    @Test(.requiresDecantBinary) func xcodeMappingModelsFromAFolder() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld").path
        let mappings = Fixtures.corpus("objcio__core-data/Migrations/Migrations").path
        let stores = "objcio__core-data/Migrations/MigrationsTests"
        let store = try Fixtures.copyStore(Fixtures.corpus("\(stores)/Moody.moody"), into: folder)
        let output = folder.appendingPathComponent("moody5.sqlite")
        let migrate = try EndToEndTests.run([
            "migrate", store.path, "--model", model, "--to-version", "Moody 5", "--mapping", mappings, "--output", output.path,
        ])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stdout.contains("migrated Moody → Moody 5"))

        let newest = try Fixtures.copyStore(Fixtures.corpus("\(stores)/Moody 5.moody"), into: folder)
        let plan = try EndToEndTests.run(["plan", newest.path, "--model", model, "--mapping", mappings])
        #expect(plan.status == 1)
        #expect(plan.stdout.contains("CountryToCountry needs the migration policy Migrations.Country5ToCountry6Policy"))
        #expect(plan.stdout.contains("Country: transform (policy Migrations.Country5ToCountry6Policy)"))
        let json = try EndToEndTests.run(["plan", newest.path, "--model", model, "--mapping", mappings, "--json"])
        #expect(json.status == 1)
        #expect(json.stdout.contains("Country5ToCountry6Policy"))
        #expect(try EndToEndTests.validate(json.stdout, schema: "plan") == "valid")
    }

    @Test(.requiresDecantBinary) func migrateAndValidateShowProgressOnATerminalOnly() throws {
        let (folder, store) = try Self.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = EndToEndTests.binary.path
        let migrate = "\(binary) migrate Notes.sqlite --model '\(Self.notes)' --output Notes3.sqlite"
        let validate = "\(binary) validate Notes3.sqlite --model '\(Self.notes)'"
        // `script` gives the command a terminal; NO_COLOR leaves the entity name unstyled.
        for command in [migrate, validate] {
            let terminal = try Subprocess.run(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["-C", folder.path, "NO_COLOR=1", "script", "-qec", command, "/dev/null"])
            #expect(terminal.status == 0, "\(terminal.output)")
            #expect(terminal.output.contains("Note  2 objects  "), "\(terminal.output)")
            #expect(!terminal.output.contains("\u{1B}[1m"))
            let quiet = try Subprocess.run(
                URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, "script", "-qec", command + " -q", "/dev/null"])
            #expect(quiet.status == 0, "\(quiet.output)")
            #expect(!quiet.output.contains("objects  "))
        }
        // Standard error not a terminal: nothing progress-like, neither the line nor the codes that redraw it.
        let output = folder.appendingPathComponent("Piped.sqlite")
        for arguments in [
            ["migrate", store.path, "--model", Self.notes, "--output", output.path],
            ["validate", output.path, "--model", Self.notes],
        ] {
            let piped = try EndToEndTests.run(arguments)
            #expect(piped.status == 0, "\(piped.stderr)")
            for mark in ["\r", "\u{1B}[", "objects"] { #expect(!piped.stderr.contains(mark), "\(piped.stderr)") }
        }
    }
}
