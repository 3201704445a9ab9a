import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant convert` and `decant inspect` on stores that are damaged or incomplete: the same located first line
/// and the documented exit code every time, paths as the user typed them, and no output left behind.
@Suite("decant on damaged stores", .serialized, .requiresDecantBinary)
struct ConvertFailureTests {
    /// A model whose second entity keeps a picture that may be stored externally, and a derived attribute Decant
    /// has no trigger for.
    static let model: ObjectModel = {
        var album = Entity(name: "Album")
        var upper = Attribute(name: "upperTitle", type: .string, isOptional: true)
        upper.derivation = Derivation(expression: "uppercase:(title)")
        album.attributes = [Attribute(name: "title", type: .string, isOptional: true), upper]
        var photo = Entity(name: "Photo")
        var image = Attribute(name: "image", type: .binary, isOptional: true)
        image.allowsExternalBinaryDataStorage = true
        photo.attributes = [image]
        return ObjectModel(versionName: "Photos", entities: [album, photo], versionIdentifiers: ["1"])
    }()

    /// Writes `Photos.sqlite` in `folder`: albums first, then photos whose third image lives in a missing file.
    static func writeStore(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("Photos.sqlite")
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        var albums = try #require(RecordLayout(entity: "Album", in: model)).emptyBatch()
        for key in 1...3 { albums.append(Record(entity: "Album", id: .primaryKey(Int64(key)), values: [.string("A\(key)"), .null])) }
        try writer.write(albums)
        var photos = try #require(RecordLayout(entity: "Photo", in: model)).emptyBatch()
        for key in 1...5 { photos.append(Record(entity: "Photo", id: .primaryKey(Int64(key)), values: [.data(Data([UInt8(key)]))])) }
        try writer.write(photos)
        try writer.finish()
        try Self.sqlite(url, "UPDATE ZPHOTO SET ZIMAGE = CAST(X'02' || 'AAAA-BBBB' || X'00' AS BLOB) WHERE Z_PK = 3")
        return url
    }

    static func sqlite(_ url: URL, _ sql: String) throws {
        _ = try PythonOracle.run(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); c.executescript(sys.argv[3]); c.commit()",
            arguments: [url.path, sql])
    }

    /// Runs decant in `folder` (so relative paths are relative to it).
    static func run(in folder: URL, _ arguments: [String]) throws -> Subprocess.Outcome {
        try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, EndToEndTests.binary.path] + arguments)
    }

    @Test func missingExternalFileFailsTheSameWayEveryTime() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.writeStore(in: folder)
        var outcomes: Set<String> = []
        for _ in 0..<50 {
            let outcome = try Self.run(in: folder, ["convert", "Photos.sqlite", "Out.sqlite"])
            outcomes.insert("\(outcome.status) \(outcome.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Out.sqlite").path))
        }
        #expect(outcomes.count == 1)
        let only = try #require(outcomes.first)
        #expect(only.hasPrefix("65 Error: Photos.sqlite: entity Photo, object Photo/p3, key image: malformed input: "))
        #expect(only.contains(".Photos_SUPPORT/_EXTERNAL_DATA/AAAA-BBBB"))
        #expect(!only.contains(folder.path), "paths are shown as typed")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(leftovers == ["Photos.sqlite"])
    }

    @Test func keepAndNullReportEveryAffectedObject() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.writeStore(in: folder)
        for policy in ["keep", "null"] {
            let outcome = try Self.run(
                in: folder, ["convert", "Photos.sqlite", "\(policy).sqlite", "--missing-external-data", policy, "--json"])
            #expect(outcome.status == 0, "\(outcome.errors)")
            let report = try #require(try JSONSerialization.jsonObject(with: outcome.stdout) as? [String: Any])
            #expect((report["written"] as? [String: Int]) == ["Album": 3, "Photo": 5])
            let warnings = try #require(report["warnings"] as? [[String: Any]])
            let missing = warnings.filter { $0["kind"] as? String == "missing-external-data" }
            #expect(missing.count == 1)
            let location = missing.first?["location"] as? [String: Any]
            #expect(location?["entity"] as? String == "Photo")
            #expect(location?["object"] as? String == "Photo/p3")
            #expect(location?["keyPath"] as? String == "image")
            #expect(missing.first?["file"] as? String == ".Photos_SUPPORT/_EXTERNAL_DATA/AAAA-BBBB")
            #expect(outcome.errors.contains("warning: Photos.sqlite: entity Photo, object Photo/p3, key image: "))
            #expect(try EndToEndTests.validate(outcome.output, schema: "convert") == "valid")
        }
    }

    @Test func unsupportedDerivationIsAWarning() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.writeStore(in: folder)
        let outcome = try Self.run(in: folder, ["convert", "Photos.sqlite", "Out.sqlite", "--missing-external-data", "null", "--json"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.errors.contains("derived attribute Album.upperTitle is copied as stored"))
        #expect(outcome.output.contains("\"unsupported-derivation\""))
    }

    @Test func selectionsAreReportedAndBadOnesExit64() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.writeStore(in: folder)
        let outcome = try Self.run(
            in: folder, ["convert", "Photos.sqlite", "Albums.sqlite", "--entity", "Album", "--where", "title != 'A2'", "--json"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: outcome.stdout) as? [String: Any])
        #expect((report["written"] as? [String: Int]) == ["Album": 2])
        #expect((report["filteredOut"] as? [String: Int]) == ["Album": 1, "Photo": 5])
        #expect(try EndToEndTests.validate(outcome.output, schema: "convert") == "valid")
        let bad = try Self.run(in: folder, ["convert", "Photos.sqlite", "Bad.sqlite", "--where", "title =="])
        #expect(bad.status == 64)
        #expect(bad.errors.hasPrefix("Error: --where:1:9: usage: expected a value or key path"), "\(bad.errors)")
        let unknown = try Self.run(in: folder, ["convert", "Photos.sqlite", "Bad.sqlite", "--entity", "Album", "--sort", "colour"])
        #expect(unknown.status == 64)
        #expect(unknown.errors.contains("--sort: Album has no attribute or to-one key path colour"), "\(unknown.errors)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Bad.sqlite").path))
    }

    @Test func progressShowsOnATerminalOnly() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try Self.writeStore(in: folder)
        let command = "\(EndToEndTests.binary.path) convert Photos.sqlite Out.sqlite --missing-external-data null"
        // `script` gives the command a terminal; NO_COLOR leaves the entity name unstyled.
        let terminal = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["-C", folder.path, "NO_COLOR=1", "script", "-qec", command + " --journal delete", "/dev/null"])
        #expect(terminal.status == 0, "\(terminal.output)")
        #expect(terminal.output.contains("Album  3 objects  "), "\(terminal.output)")
        #expect(!terminal.output.contains("\u{1B}[1m"))
        let quiet = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", folder.path, "script", "-qec", command + " -q", "/dev/null"])
        #expect(quiet.status == 0)
        #expect(!quiet.output.contains("objects  "))
        let piped = try Self.run(in: folder, ["convert", "Photos.sqlite", "Out.sqlite", "--missing-external-data", "null"])
        #expect(!piped.errors.contains("objects  "))
    }

    /// A missing column, a missing table, a damaged header, a non-blob metadata plist: each gives exit 65 with the
    /// file and SQLite's reason on the first line, from inspect and convert alike.
    @Test("damaged stores exit 65 with the file and the reason", arguments: [
        ("ALTER TABLE ZPHOTO DROP COLUMN ZIMAGE", "no such column: ZIMAGE"),
        ("DROP TABLE ZALBUM", "no such table: ZALBUM"),
        ("UPDATE Z_METADATA SET Z_PLIST = 42", "Z_METADATA.Z_PLIST is an integer"),
        ("header", "file is not a database|neither the SQLite header"),
    ])
    func damagedStore(_ damage: String, _ reason: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        try Self.sqlite(url, "UPDATE ZPHOTO SET ZIMAGE = NULL WHERE Z_PK = 3")
        if damage == "header" {
            let handle = try FileHandle(forWritingTo: url)
            try handle.write(contentsOf: Data(repeating: 0x41, count: 16))
            try handle.close()
        } else {
            try Self.sqlite(url, damage)
        }
        var commands = [["convert", "Photos.sqlite", "Out.sqlite"]]
        // inspect reads metadata and counts, not rows: it sees the damage that is not in the entity tables.
        if !damage.hasPrefix("ALTER") && !damage.hasPrefix("DROP") {
            commands.append(["inspect", "Photos.sqlite"])
        }
        for arguments in commands {
            let outcome = try Self.run(in: folder, arguments)
            let firstLine = outcome.errors.split(separator: "\n").first.map(String.init) ?? ""
            #expect(outcome.status == 65, "\(arguments[0]): \(outcome.errors)")
            #expect(firstLine.hasPrefix("Error: Photos.sqlite"), "\(firstLine)")
            #expect(reason.split(separator: "|").contains { firstLine.contains($0) }, "\(arguments[0]): \(firstLine)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Out.sqlite").path))
        }
    }

    /// A row whose `Z_ENT` is text, in `ZPHOTO`, the table `Photo` has to itself: Core Data's fetch of Photo does not
    /// read `Z_ENT` there (section 1.9), so the row is a Photo. inspect counts it as one, and convert carries it,
    /// with a warning that names the table and the row; nothing is refused or lost.
    @Test func aStrayEntityNumberInATableOfItsOwnIsReadAsCoreDataReadsIt() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = try Self.writeStore(in: folder)
        try Self.sqlite(url, "UPDATE ZPHOTO SET ZIMAGE = NULL WHERE Z_PK = 3; UPDATE ZPHOTO SET Z_ENT = 'x' WHERE Z_PK = 2")
        let inspected = try Self.run(in: folder, ["inspect", "Photos.sqlite"])
        #expect(inspected.status == 0, "\(inspected.errors)")
        #expect(inspected.output.contains("Photo  5"), "\(inspected.output)")
        #expect(!inspected.output.contains("Z_ENT is text"))
        let converted = try Self.run(in: folder, ["convert", "Photos.sqlite", "Out.sqlite"])
        #expect(converted.status == 0, "\(converted.errors)")
        #expect(
            converted.errors.contains(
                "warning: Photos.sqlite: entity Photo: 1 row of ZPHOTO (Z_PK 2) has a Z_ENT other than Photo's"),
            "\(converted.errors)")
        let written = try SQLiteStore(contentsOf: folder.appendingPathComponent("Out.sqlite"))
        #expect(try written.objectCounts() == ["Album": 3, "Photo": 5])
    }
}
