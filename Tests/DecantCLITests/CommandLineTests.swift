import ArgumentParser
import Decant
@testable import DecantCLI
import DecantTestSupport
import Foundation
import Testing

/// Getting and starting the tool: `make install`, `decant --version`, the model version option that does not clash
/// with it, and `decant` alone.
@Suite("decant on a CI runner", .serialized)
struct CommandLineTests {

    @Test(.requiresDecantBinary) func versionPrintsTheLibrarysVersion() throws {
        let outcome = try EndToEndTests.run(["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == decantVersion + "\n")
        #expect(decantVersion.split(separator: ".").count == 3)
    }

    /// `--model-version V` is the model's version; `--version` stays ArgumentParser's, so a convert that fails to
    /// parse reports the usage error, never Decant's version with exit 0.
    @Test func modelVersionDoesNotClashWithVersion() throws {
        let convert = try #require(
            try DecantCommand.parseAsRoot(["convert", "a.csv", "b.sqlite", "--model-version", "Notes 2"])
                as? DecantCommand.Convert)
        #expect(convert.modelVersion == "Notes 2")
        let inspect = try #require(
            try DecantCommand.parseAsRoot(["inspect", "M.xcdatamodeld", "--diagram", "dot", "--model-version", "V"])
                as? DecantCommand.Inspect)
        #expect(inspect.modelVersion == "V")
        for command in ["convert", "inspect"] {
            let help = DecantCommand.helpMessage(for: command == "convert" ? DecantCommand.Convert.self : DecantCommand.Inspect.self)
            #expect(help.contains("--model-version <model-version>"), "\(command)")
        }
    }

    @Test(.requiresDecantBinary) func aModelVersionWithAMissingArgumentIsAUsageError() throws {
        let outcome = try EndToEndTests.run(["convert", "in.csv", "--model-version", "Notes"])
        #expect(outcome.status == 64, "\(outcome.stdout)\(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains("Usage:"))
    }

    /// `make install` with PREFIX and DESTDIR puts the binary in DESTDIR/PREFIX/bin (SWIFT=true skips the release
    /// build; DECANT points at the debug binary). `-o deps` keeps make from running `deps`, which installs Debian
    /// packages as root when one is missing: a test never touches the system or the network. The dry run checks
    /// that nothing else would reach apt-get or dpkg either.
    @Test(.requiresDecantBinary) func makeInstallHonoursPrefixAndDestdir() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let make = [
            "make", "-C", Fixtures.packageRoot.path, "-o", "deps", "install", "SWIFT=true",
            "DECANT=\(EndToEndTests.binary.path)", "PREFIX=/opt/decant", "DESTDIR=\(folder.path)",
        ]
        let dry = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), [make[0], "-n"] + make.dropFirst())
        #expect(dry.status == 0, "\(dry.output)\(dry.errors)")
        #expect(dry.output.contains("install -m 755"), "\(dry.output)")
        try #require(
            !dry.output.contains("apt-get") && !dry.output.contains("dpkg"), "make install would run deps: \(dry.output)")
        let outcome = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), make)
        #expect(outcome.status == 0, "\(outcome.output)\(outcome.errors)")
        let installed = folder.appendingPathComponent("opt/decant/bin/decant")
        #expect(FileManager.default.isExecutableFile(atPath: installed.path))
        let version = try Subprocess.run(installed, ["--version"])
        #expect(version.output == decantVersion + "\n")
    }

    @Test(.requiresDecantBinary) func noArgumentsIsAUsageErrorOnStandardError() throws {
        let outcome = try EndToEndTests.run([])
        #expect(outcome.status == 64)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains("USAGE: decant <subcommand>"))
        #expect(outcome.stderr.contains("migrate"))
        let help = try EndToEndTests.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: decant <subcommand>"))
    }

    /// `--json` on failure: one JSON error document on standard output, following `schemas/error.schema.json`, with
    /// the status the process exits with, and the Error: line still on standard error.
    @Test(.requiresDecantBinary) func aFailureWithJSONPrintsAnErrorDocument() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("[{\"text\": \"a\"},\n {\"text\": 5}]".utf8).write(to: folder.appendingPathComponent("in.json"))
        let bad = try JSONConvertTests.run(
            in: folder, ["convert", "in.json", "out.sqlite", "--model", JSONConvertTests.notes, "--entity", "Note", "--json"])
        #expect(bad.status == 65)
        #expect(bad.errors.hasPrefix("Error: in.json:2:11"))
        #expect(try EndToEndTests.validate(bad.output, schema: "error") == "valid", "\(bad.output)")
        let document = try #require(try JSONSerialization.jsonObject(with: bad.stdout) as? [String: Any])
        #expect(document["status"] as? Int == 65)
        #expect(document["code"] as? String == "malformed input")
        #expect(document["file"] as? String == "in.json")
        let place = try #require(document["place"] as? [String: Any])
        #expect(place["line"] as? Int == 2)
        #expect(place["column"] as? Int == 11)
        #expect(place["entity"] as? String == "Note")
        #expect(place["key"] as? String == "text")
        #expect((document["message"] as? String)?.contains("expects a string, found a number") == true)
        #expect(document.keys.sorted() == ["cause", "code", "file", "message", "place", "status"])

        let missing = try EndToEndTests.run(["inspect", folder.appendingPathComponent("Nope.xcdatamodeld").path, "--json"])
        #expect(missing.status == 66)
        #expect(try EndToEndTests.validate(missing.stdout, schema: "error") == "valid", "\(missing.stdout)")
        let absent = try #require(try JSONSerialization.jsonObject(with: Data(missing.stdout.utf8)) as? [String: Any])
        #expect(absent["status"] as? Int == 66)
        #expect(absent["place"] is NSNull)
        // plan, migrate, seed and validate print it too: a store that is not there is exit 66, as a document.
        let nowhere = folder.appendingPathComponent("nowhere.sqlite").path
        for arguments in [
            ["validate", nowhere, "--model", JSONConvertTests.notes],
            ["plan", nowhere, "--model", JSONConvertTests.notes],
            ["migrate", nowhere, "--model", JSONConvertTests.notes, "--output", folder.appendingPathComponent("o.sqlite").path],
            ["seed", "--default", nowhere, "--store", folder.appendingPathComponent("App.sqlite").path],
        ] {
            let run = try EndToEndTests.run(arguments + ["--json"])
            #expect(run.status == 66, "\(arguments[0]): \(run.stderr)")
            #expect(try EndToEndTests.validate(run.stdout, schema: "error") == "valid", "\(arguments[0]): \(run.stdout)")
            let document = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            #expect(document?["status"] as? Int == 66, "\(arguments[0]): \(run.stdout)")
            #expect(document?["file"] as? String == nowhere, "\(arguments[0]): \(run.stdout)")
        }
        // Without --json, standard output stays empty.
        let plain = try EndToEndTests.run(["inspect", folder.appendingPathComponent("Nope.xcdatamodeld").path])
        #expect(plain.status == 66)
        #expect(plain.stdout.isEmpty)
    }

    /// `inspect X.xcmappingmodel` (and `.cdm`) through the binary, text and `--json` (schemas/inspect.schema.json).
    @Test(.requiresDecantBinary) func inspectDescribesAMappingModel() throws {
        let folder = Fixtures.corpus("objcio__core-data/Migrations/Migrations")
        let mapping = folder.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel").path
        let model = folder.appendingPathComponent("Moody.xcdatamodeld").path
        let text = try EndToEndTests.run(["inspect", mapping, "--model", model])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("source (version Moody 5):"))
        #expect(text.stdout.contains("CountryToCountry  custom  Country → Country, policy Migrations.Country5ToCountry6Policy"))
        let json = try EndToEndTests.run(["inspect", mapping, "--model", model, "--json"])
        #expect(json.status == 0)
        #expect(try EndToEndTests.validate(json.stdout) == "valid", "\(json.stdout)")
        #expect(json.stdout.contains("\"entityMappings\""))
        let cdm = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/V2toV3.cdm").path
        let compiled = try EndToEndTests.run(["inspect", cdm, "--json"])
        #expect(compiled.status == 0, "\(compiled.stderr)")
        #expect(try EndToEndTests.validate(compiled.stdout) == "valid", "\(compiled.stdout)")
        #expect(compiled.stdout.contains("REPLACE_AT_RUNTIME.V2to3MakerPolicy"))
    }

    /// `decant lock MODEL` then `--check`: unchanged (0), a new version (a warning, 0), an edited version (1, named),
    /// a removed version (1, named); `--lock-file` overrides the default `MODEL.decant-lock.json` beside the model.
    @Test(.requiresDecantBinary) func lockAndCheck() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try VersionCommandTests.bundle(in: folder, names: ["Typed", "Typed 2"])
        let locked = try EndToEndTests.run(["lock", bundle.path])
        #expect(locked.status == 0, "\(locked.stderr)")
        let lockFile = folder.appendingPathComponent("Typed.decant-lock.json")
        #expect(FileManager.default.fileExists(atPath: lockFile.path))
        #expect(locked.stdout.contains("2 versions of Typed locked"))
        let same = try EndToEndTests.run(["lock", bundle.path, "--check"])
        #expect(same.status == 0)
        #expect(same.stdout.contains("2 locked versions unchanged"))
        #expect(same.stderr.isEmpty)

        // A third version, not locked yet: a warning only.
        _ = try VersionCommandTests.bundle(in: folder, names: ["Typed", "Typed 2", "Typed 3"])
        let grown = try EndToEndTests.run(["lock", bundle.path, "--check"])
        #expect(grown.status == 0)
        #expect(grown.stderr.contains("warning: version Typed 3 is not locked yet"))

        // The shipped first version edited: count becomes Integer 64 as in Typed 2.
        let contents = bundle.appendingPathComponent("Typed.xcdatamodel/contents")
        let edited = try String(contentsOf: contents, encoding: .utf8).replacingOccurrences(of: "\"String\"", with: "\"Integer 64\"")
        try Data(edited.utf8).write(to: contents)
        let drifted = try EndToEndTests.run(["lock", bundle.path, "--check"])
        #expect(drifted.status == 1)
        #expect(drifted.stdout.contains("changed: version Typed (hash of Item (count changed))"), "\(drifted.stdout)")
        #expect(drifted.stderr.contains("Typed 3"))
        // With --json: one document (schemas/lock.schema.json) naming the same, and the same exit status.
        let driftedJSON = try EndToEndTests.run(["lock", bundle.path, "--check", "--json"])
        #expect(driftedJSON.status == 1)
        #expect(try EndToEndTests.validate(driftedJSON.stdout, schema: "lock") == "valid", "\(driftedJSON.stdout)")
        let document = try JSONDecoder().decode(ModelLock.Document.self, from: Data(driftedJSON.stdout.utf8))
        #expect(document.versions == ["Typed", "Typed 2"] && document.check?.unlocked == ["Typed 3"])
        #expect(document.check?.changed.first?.changedProperties["Item"]?.changed == ["count"])

        // Typed 2 removed, checked against a lock file named with --lock-file.
        let other = folder.appendingPathComponent("other.json")
        try FileManager.default.copyItem(at: lockFile, to: other)
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("Typed 2.xcdatamodel"))
        let removed = try EndToEndTests.run(["lock", bundle.path, "--check", "--lock-file", other.path])
        #expect(removed.status == 1)
        #expect(removed.stdout.contains("removed: version Typed 2"))
        let missing = try EndToEndTests.run(["lock", bundle.path, "--check", "--lock-file", folder.appendingPathComponent("none.json").path])
        #expect(missing.status == 66)
        let missingJSON = try EndToEndTests.run(
            ["lock", bundle.path, "--check", "--json", "--lock-file", folder.appendingPathComponent("none.json").path])
        #expect(missingJSON.status == 66)
        #expect(try EndToEndTests.validate(missingJSON.stdout, schema: "error") == "valid", "\(missingJSON.stdout)")
        // Writing a lock with --json: the file and the versions locked.
        let written = try EndToEndTests.run(["lock", bundle.path, "--json", "--lock-file", other.path])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try EndToEndTests.validate(written.stdout, schema: "lock") == "valid", "\(written.stdout)")
        #expect(try JSONDecoder().decode(ModelLock.Document.self, from: Data(written.stdout.utf8)).check == nil)
    }

    /// Help: no line ends in a literal backslash, the top-level discussion breaks lines only between paragraphs (so
    /// ArgumentParser wraps its sentences), and validate's --output-dir says what it does for validate.
    @Test func helpTextReadsAsProse() throws {
        let commands: [any ParsableCommand.Type] = [DecantCommand.self] + DecantCommand.configuration.subcommands
        for command in commands {
            let help = DecantCommand.helpMessage(for: command, columns: 200)
            let ending = help.split(separator: "\n").filter { $0.hasSuffix("\\") }
            #expect(ending.isEmpty, "\(command): \(ending)")
        }
        let discussion = DecantCommand.configuration.discussion
        #expect(!discussion.replacingOccurrences(of: "\n\n", with: "").dropLast().contains("\n"), "\(discussion)")
        let validate = DecantCommand.helpMessage(for: DecantCommand.Validate.self, columns: 200)
        #expect(validate.contains("validate: NAME.rejects.ndjson"))
        #expect(validate.contains("DIR/NAME.rejects.ndjson"))
    }

    /// validate --output-dir DIR: each store's failing objects in DIR/NAME.rejects.ndjson, every store checked.
    @Test(.requiresDecantBinary) func validateOutputDirListsEachStoresRejects() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Required.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="title" attributeType="String"/>
                </entity>
            </model>
            """.utf8
        ).write(to: model.appendingPathComponent("contents"))
        let version = try #require(try ModelBundle.load(from: model).versions.first)
        var stores: [String] = []
        for (name, title) in [("Good.sqlite", Value.string("t")), ("Bad.sqlite", Value.null)] {
            let url = folder.appendingPathComponent(name)
            let writer = try SQLiteStoreWriter(creating: url, model: version)
            var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Item", in: version)))
            batch.append(Record(entity: "Item", id: .primaryKey(1), values: [title]))
            try writer.write(batch)
            try writer.finish()
            stores.append(url.path)
        }
        let rejects = folder.appendingPathComponent("rejects")
        let outcome = try EndToEndTests.run(["validate"] + stores + ["--model", model.path, "--output-dir", rejects.path])
        #expect(outcome.status == 1, "\(outcome.stdout)\(outcome.stderr)")
        let bad = try String(contentsOf: rejects.appendingPathComponent("Bad.sqlite.rejects.ndjson"), encoding: .utf8)
        #expect(bad.contains("\"title\""), "\(bad)")
        let good = rejects.appendingPathComponent("Good.sqlite.rejects.ndjson")
        #expect(try String(contentsOf: good, encoding: .utf8).isEmpty)
        let both = try EndToEndTests.run(["validate"] + stores + ["--output-dir", rejects.path, "--rejects", "x.ndjson"])
        #expect(both.status == 64)
    }

    /// `validate --json` on a store with problems prints the whole report (every failure counted), exit 1, not an
    /// error document about the first failure.
    @Test(.requiresDecantBinary) func validateWithJSONPrintsTheWholeReport() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundleFiles.write(
            "Required", versions: [("Required", ModelBundleFiles.item("<attribute name=\"title\" attributeType=\"String\"/>"))],
            in: folder)
        let version = try #require(try ModelBundle.load(from: bundle).versions.first)
        let store = folder.appendingPathComponent("Items.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: version)
        var batch = RecordBatch(layout: try #require(RecordLayout(entity: "Item", in: version)))
        for (key, title) in [Value.null, "t", .null].enumerated() {
            batch.append(Record(entity: "Item", id: .primaryKey(Int64(key + 1)), values: [title]))
        }
        try writer.write(batch)
        try writer.finish()
        let outcome = try EndToEndTests.run(["validate", store.path, "--model", bundle.path, "--json"])
        #expect(outcome.status == 1, "\(outcome.stderr)")
        #expect(try EndToEndTests.validate(outcome.stdout, schema: "validate") == "valid", "\(outcome.stdout)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])
        #expect(report["failures"] as? [String: Int] == ["Item.title optional": 2], "\(outcome.stdout)")
        #expect((report["objects"] as? [String: Int])?["Item"] == 3)
    }
}
