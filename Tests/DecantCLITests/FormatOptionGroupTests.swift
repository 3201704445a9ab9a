import Decant
import DecantTestSupport
import Foundation
import Testing

/// The format options are one group shared by the commands that read (and write) records of any format (issue 19):
/// `migrate` and `seed` pass them to non-SQLite outputs and inputs as `convert` does.
@Suite("format options on every command", .serialized, .requiresDecantBinary)
struct FormatOptionGroupTests {
    static let notes = MigrationCommandTests.notes

    @Test func migrateWritesCSVWithTheDelimiterGiven() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Notes 2 has one entity, so an output ending in .csv is one CSV file.
        let out = folder.appendingPathComponent("Notes.csv")
        let run = try EndToEndTests.run([
            "migrate", store.path, "--model", Self.notes, "--to-version", "Notes 2", "--output", out.path,
            "--delimiter", ";", "--null", "NULL",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: out.path, isDirectory: &isDirectory))
        #expect(!isDirectory.boolValue)
        let file = out
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.first?.contains(";") == true, "\(lines)")
        #expect(lines.first?.contains(",") == false, "\(lines)")
        // Migrated to Notes 2 (content became text), nil written as the marker.
        #expect(lines.first?.split(separator: ";").contains("text") == true, "\(lines)")
        #expect(lines.contains { $0.contains("milk") && $0.contains("NULL") }, "\(lines)")
    }

    @Test func migrateNamesTheOutputFormatWithTo() throws {
        let (folder, store) = try MigrationCommandTests.v1Store()
        defer { try? FileManager.default.removeItem(at: folder) }
        // No extension: --to csv makes it a CSV folder (Notes 3 has two entities).
        let out = folder.appendingPathComponent("Export")
        let run = try EndToEndTests.run([
            "migrate", store.path, "--model", Self.notes, "--output", out.path, "--to", "csv", "--delimiter", "tab",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let note = try String(contentsOf: out.appendingPathComponent("Note.csv"), encoding: .utf8)
        #expect(note.split(separator: "\n").first?.contains("\t") == true, "\(note)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("_decant.json").path))
    }

    @Test func seedReadsACSVSeedWithTheEntityAndDelimiterGiven() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A file named for no entity, semicolon-separated: --entity and --delimiter say how to read it.
        let seed = folder.appendingPathComponent("seed.csv")
        try Data("_id;text;title\nn1;milk;Shopping\nn2;eggs;Shopping\n".utf8).write(to: seed)
        let store = folder.appendingPathComponent("Notes.sqlite")
        let run = try EndToEndTests.run([
            "seed", "--default", seed.path, "--store", store.path, "--model", Self.notes, "--model-version", "Notes 2",
            "--entity", "Note", "--delimiter", ";",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let counts = try SQLiteStore(contentsOf: store).objectCounts()
        #expect(counts["Note"] == 2, "\(counts)")
        // Seeded at Notes 2 and migrated to the current version on the way in.
        #expect(run.stdout.contains("Notes 3"), "\(run.stdout)")
    }

    @Test func seedTakesTheSeedsFormatWithFrom() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = folder.appendingPathComponent("Note.export")
        try Data("_id,text\nn1,milk\n".utf8).write(to: seed)
        let store = folder.appendingPathComponent("Notes.sqlite")
        let unnamed = try EndToEndTests.run(["seed", "--default", seed.path, "--store", store.path, "--model", Self.notes])
        #expect(unnamed.status == 65, "\(unnamed.stderr)")
        #expect(unnamed.stderr.contains("--from"), "\(unnamed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: store.path))
        let named = try EndToEndTests.run([
            "seed", "--default", seed.path, "--store", store.path, "--model", Self.notes, "--from", "csv",
            "--entity", "Note",
        ])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try SQLiteStore(contentsOf: store).objectCounts()["Note"] == 1)
    }

    @Test func severalEntitiesNameNoInputOutsideConvert() throws {
        let run = try EndToEndTests.run([
            "migrate", "S.sqlite", "--model", Self.notes, "--output", "O.csv", "--entity", "Note,Folder",
        ])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--entity names the one entity"), "\(run.stderr)")
    }

    @Test func inspectReadsAnInputNamedWithFrom() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let export = folder.appendingPathComponent("notes.export")
        try Data("_id;text\nn1;milk\nn2;eggs\n".utf8).write(to: export)
        let unnamed = try EndToEndTests.run(["inspect", export.path])
        #expect(unnamed.status == 65, "\(unnamed.stderr)")
        #expect(unnamed.stderr.contains("--from"), "\(unnamed.stderr)")
        let named = try EndToEndTests.run([
            "inspect", export.path, "--from", "csv", "--entity", "Note", "--delimiter", ";", "--model", Self.notes,
            "--model-version", "Notes 2",
        ])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("Note  2"), "\(named.stdout)")
    }
}
