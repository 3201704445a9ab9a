import DecantTestSupport
import Foundation
import Testing

/// `decant inspect` and `decant convert` on keyed archives, through the built binary: the README's example, the
/// mapping file, and exit 65 naming the object and key.
@Suite("decant on keyed archives", .serialized)
struct ArchiveCommandTests {
    static let sample = Fixtures.samplesRoot.appendingPathComponent("LegacyNotes.archive").path
    static let notes = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld").path

    @Test(.requiresDecantBinary) func theReadmeExampleConverts() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("notes.sqlite").path
        // The README's command, run from the package root.
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "-C", Fixtures.packageRoot.path, EndToEndTests.binary.path,
                "convert", "samples/LegacyNotes.archive", output, "--model", "samples/Notes.xcdatamodeld",
                "--model-version", "Notes", "--class", "LegacyNote=Note",
            ])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.contains("5 objects written (model Notes)"))
        #expect(outcome.errors.isEmpty)
        let rows = try PythonOracle.text(
            """
            import sqlite3, sys
            rows = sqlite3.connect(sys.argv[2]).execute('SELECT ZCONTENT, ZDATE FROM ZNOTE ORDER BY ZDATE')
            for content, date in rows:
                print(repr(content), float(date))
            """,
            arguments: [output])
        #expect(
            rows.split(separator: "\n") == [
                "'Buy milk' 700000000.0", "'Call the plumber' 700086400.0",
                "'Ideas:\\n- a garden\\n- a bigger desk' 700172800.5",
                "'Café à 15 h avec Zoë 🎉' 700259200.0",
                "None 700345600.0",
            ])
    }

    @Test(.requiresDecantBinary) func inspectListsClassesKeysAndAMapping() throws {
        let outcome = try EndToEndTests.run(["inspect", Self.sample])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("NotesApp.LegacyNote : NSObject  5 objects"))
        #expect(outcome.stdout.contains("content  string ×4, nil ×1"))
        #expect(outcome.stdout.contains("date  date ×5"))
        #expect(outcome.stdout.contains("\"NotesApp.LegacyNote\" : \"LegacyNote\""))
        let json = try EndToEndTests.run(["inspect", Self.sample, "--json"])
        #expect(json.status == 0)
        #expect(try EndToEndTests.validate(json.stdout) == "valid")
    }

    @Test(.requiresDecantBinary) func theInspectedMappingConvertsOnceEdited() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = try EndToEndTests.run(["inspect", Self.sample, "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        var mapping = try #require(report["mapping"] as? [String: Any])
        var classes = try #require(mapping["classes"] as? [String: Any])
        #expect(classes["NotesApp.LegacyNote"] as? String == "LegacyNote")
        classes["NotesApp.LegacyNote"] = ["entity": "Note", "keys": ["content": "text"]]
        mapping["classes"] = classes
        let file = folder.appendingPathComponent("mapping.json")
        try JSONSerialization.data(withJSONObject: mapping).write(to: file)
        // Notes 3 calls the text `text`: the mapping renames the coder key.
        let output = folder.appendingPathComponent("notes3.sqlite").path
        let outcome = try EndToEndTests.run([
            "convert", Self.sample, output, "--model", Self.notes, "--class-mapping", file.path,
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("5 objects written (model Notes 3)"))
        let texts = try PythonOracle.text(
            "import sqlite3, sys\n"
                + "print(sqlite3.connect(sys.argv[2]).execute('SELECT count(ZTEXT) FROM ZNOTE').fetchone()[0])",
            arguments: [output])
        #expect(texts == "4")
    }

    /// Foundation's fixtures and the Notes blobs of the corpus (compiled models are keyed archives too, but
    /// `inspect` describes them as models).
    static let corpusArchives: [String] = Fixtures.corpusItems { url in
        let name = url.lastPathComponent
        return name.hasSuffix(".archive") || (name.hasPrefix("NSKeyedUnarchiver-") && name.hasSuffix(".plist"))
            || (name.hasPrefix("ZSERVER") && name.hasSuffix(".bin"))
    }.map(Fixtures.corpusRelativePath)

    /// Its own test: a guard inside the parameterized test never runs on an empty list.
    @Test func theCorpusHasItsArchives() {
        // 48 in the corpus, 10 in the apps corpus.
        #expect(Self.corpusArchives.count == 58)
    }

    @Test(.requiresDecantBinary, arguments: corpusArchives)
    func everyCorpusArchiveInspects(relative: String) throws {
        let outcome = try EndToEndTests.run(["inspect", Fixtures.corpus(relative).path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains(": keyed archive ("))
    }

    @Test(.requiresDecantBinary) func malformedArchivesExit65NamingObjectAndKey()
        throws
    {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The sample with the first note's content pointing past the end of $objects.
        let broken = folder.appendingPathComponent("Broken.archive")
        let script = """
            import plistlib, sys
            v = plistlib.load(open(sys.argv[2], 'rb'))
            v['$objects'][2]['content'] = plistlib.UID(999)
            open(sys.argv[3], 'wb').write(plistlib.dumps(v, fmt=plistlib.FMT_BINARY))
            """
        _ = try PythonOracle.text(script, arguments: [Self.sample, broken.path])
        let inspected = try EndToEndTests.run(["inspect", broken.path])
        #expect(inspected.status == 65)
        #expect(inspected.stderr.contains("object $objects[2], key content"), "\(inspected.stderr)")
        let converted = try EndToEndTests.run([
            "convert", broken.path, folder.appendingPathComponent("out.sqlite").path, "--model",
            Self.notes,
            "--model-version", "Notes", "--class", "LegacyNote=Note",
        ])
        #expect(converted.status == 65)
        #expect(converted.stderr.contains("object $objects[2], key content"), "\(converted.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.sqlite").path))
        // A date where Notes 3 has a string: the value does not fit.
        let mismatch = try EndToEndTests.run([
            "convert", Self.sample, folder.appendingPathComponent("out.sqlite").path, "--model",
            Self.notes,
            "--class", "LegacyNote=Note", "--class", "x",
        ])
        #expect(mismatch.status == 64)
    }
}
