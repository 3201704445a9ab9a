import DecantTestSupport
import Foundation
import Testing

/// `decant inspect` and `decant convert` on plain property lists (issue 20, part 3), through the built binary: the
/// report and its JSON, the printed mapping edited and converting into a SQLite store whose values Python's sqlite3
/// reads, and exit 65 naming the place for a damaged file.
@Suite("decant on plain property lists", .serialized)
struct PropertyListCommandTests {
    /// A folder with the Bookmarks model, the binary list Python wrote and the XML list as `writeToFile:` writes it.
    static func inputs() throws -> (folder: URL, model: String, binary: String, xml: String) {
        let folder = try Fixtures.temporaryDirectory()
        let model = try ModelBundleFiles.write(
            "Bookmarks", versions: [("Bookmarks", PropertyListFixture.entities)], current: "Bookmarks", in: folder)
        let binary = folder.appendingPathComponent("Folders.plist")
        try PropertyListFixture.pythonBinary.write(to: binary)
        let xml = folder.appendingPathComponent("Bookmarks.plist")
        try PropertyListFixture.appleXML.write(to: xml)
        return (folder, model.path, binary.path, xml.path)
    }

    @Test(.requiresDecantBinary) func inspectDescribesArraysArchivesAndAMapping() throws {
        let (folder, _, binary, _) = try Self.inputs()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outcome = try EndToEndTests.run(["inspect", binary])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("Folders.plist: property list (binary), top level: dictionary of 2 keys"))
        #expect(outcome.stdout.contains("    Folders.Bookmarks  2 dictionaries (nested)"))
        #expect(outcome.stdout.contains("      LastVisit  archive of NSDate ×1"))
        #expect(outcome.stdout.contains("Folders[0].Bookmarks[0].LastVisit  date 2023-03-08T20:26:40Z"))
        #expect(outcome.stdout.contains("\"keyPath\" : \"Folders\""))
        let json = try EndToEndTests.run(["inspect", binary, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try EndToEndTests.validate(json.stdout) == "valid")
        // Named otherwise, the content tells it; --from plist says it outright.
        let renamed = folder.appendingPathComponent("Folders.data")
        try PropertyListFixture.pythonBinary.write(to: renamed)
        for arguments in [["inspect", renamed.path], ["inspect", renamed.path, "--from", "plist"]] {
            let run = try EndToEndTests.run(arguments)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("Folders.data: property list (binary)"), "\(run.stdout)")
        }
    }

    @Test(.requiresDecantBinary) func theInspectedMappingConvertsIntoAStore() throws {
        let (folder, model, binary, _) = try Self.inputs()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = try EndToEndTests.run(["inspect", binary, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        var mapping = try #require(report["mapping"] as? [String: Any])
        var arrays = try #require(mapping["arrays"] as? [String: Any])
        var bookmarks = try #require(arrays["Folders.Bookmarks"] as? [String: Any])
        var keys = try #require(bookmarks["keys"] as? [String: Any])
        #expect(keys["URLString"] as? String == "urlString")
        keys["URLString"] = "url"
        bookmarks["keys"] = keys
        arrays["Folders.Bookmarks"] = bookmarks
        mapping["arrays"] = arrays
        let file = folder.appendingPathComponent("mapping.json")
        try JSONSerialization.data(withJSONObject: mapping).write(to: file)
        let output = folder.appendingPathComponent("Bookmarks.sqlite").path
        let outcome = try EndToEndTests.run([
            "convert", binary, output, "--model", model, "--plist-mapping", file.path, "--journal", "delete",
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("4 objects written (model Bookmarks)"), "\(outcome.stdout)")
        let rows = try PythonOracle.text(
            """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[2])
            for row in db.execute('SELECT f.ZTITLE, CAST(f.ZCREATED AS REAL) FROM ZFOLDER f ORDER BY f.ZTITLE'):
                print(repr(row))
            for row in db.execute('SELECT b.ZTITLE, b.ZURL, b.ZVISITS, b.ZLASTVISIT, quote(b.ZICON), f.ZTITLE '
                                  'FROM ZBOOKMARK b JOIN ZFOLDER f ON b.ZFOLDER = f.Z_PK ORDER BY b.ZTITLE'):
                print(repr(row))
            """,
            arguments: [output])
        #expect(
            rows.split(separator: "\n") == [
                "('Empty', None)", "('Reading', 699599167.0)",
                "('Café ☕', 'https://example.com/cafe', 12, 700000000.5, \"X'89504E470D0A'\", 'Reading')",
                "('Docs', 'https://developer.apple.com', 0, None, 'NULL', 'Reading')",
            ])
    }

    @Test(.requiresDecantBinary) func theXMLListConvertsWithEntityAndWarnsOfUnknownKeys() throws {
        let (folder, model, _, xml) = try Self.inputs()
        defer { try? FileManager.default.removeItem(at: folder) }
        let output = folder.appendingPathComponent("out.sqlite").path
        let outcome = try EndToEndTests.run(["convert", xml, output, "--model", model, "--entity", "Bookmark"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("2 objects written"), "\(outcome.stdout)")
        #expect(outcome.stderr.contains("warning: "), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("WebBookmarkUUID"), "\(outcome.stderr)")
    }

    @Test(.requiresDecantBinary) func aDamagedListExits65WithItsPlaceAndWritesNothing() throws {
        let (folder, model, _, xml) = try Self.inputs()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cut = folder.appendingPathComponent("cut.plist")
        try PropertyListFixture.pythonBinary.prefix(300).write(to: cut)
        let output = folder.appendingPathComponent("out.sqlite")
        for arguments in [["inspect", cut.path], ["convert", cut.path, output.path, "--model", model]] {
            let run = try EndToEndTests.run(arguments)
            #expect(run.status == 65, "\(arguments[0]): \(run.stderr)")
            #expect(run.stderr.contains("Error: \(cut.path)"), "\(run.stderr)")
            #expect(run.stderr.contains("malformed input"), "\(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
        // A value that does not fit names the dictionary and key.
        var text = String(decoding: PropertyListFixture.appleXML, as: UTF8.self)
        text = text.replacingOccurrences(of: "<integer>3</integer>", with: "<string>three</string>")
        try Data(text.utf8).write(to: URL(fileURLWithPath: xml))
        let run = try EndToEndTests.run(["convert", xml, output.path, "--model", model, "--entity", "Bookmark"])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(
            run.stderr.contains("Bookmarks.plist: entity Bookmark, object [0], key Visits: malformed input: "),
            "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
