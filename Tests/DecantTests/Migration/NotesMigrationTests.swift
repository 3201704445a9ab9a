import Decant
import DecantTestSupport
import Foundation
import Testing

/// The samples' Notes model: v1 `Note{content, date}`, v2 renames `content` → `text` (renaming identifier) and adds
/// `title`, v3 adds `Folder` with `notes` ⇄ `Note.folder`.
@Suite("Notes v1 → v3")
struct NotesMigrationTests {
    static let when = Date(timeIntervalSinceReferenceDate: 737_057_646.5)

    /// A v1 store with three notes.
    static func v1Store(in folder: URL, bundle: ModelBundle) throws -> URL {
        let v1 = try #require(bundle.version(named: "Notes"))
        let url = folder.appendingPathComponent("Notes.sqlite")
        try MigrationFixtures.writeStore(
            at: url,
            model: v1,
            records: [
                MigrationFixtures.record("Note", 1, in: v1, ["content": "milk", "date": .date(when)]),
                MigrationFixtures.record("Note", 2, in: v1, ["content": "eggs"]),
                MigrationFixtures.record("Note", 5, in: v1, ["date": .date(when.addingTimeInterval(60))]),
            ]
        )
        return url
    }

    @Test func planHasTwoInferredHopsWithTheRename() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let report = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: bundle))
        #expect(report.plan.sourceVersion == "Notes")
        #expect(report.plan.destinationVersion == "Notes 3")
        #expect(report.plan.hops.map(\.name) == ["Notes → Notes 2", "Notes 2 → Notes 3"])
        #expect(report.plan.hops.allSatisfy { $0.isInferred })
        #expect(report.plan.isExecutable)
        let note = try #require(report.plan.hops[0].mapping.mapping(producing: "Note"))
        #expect(note.property("text")?.expression == .sourceProperty("content"))
        #expect(note.property("text")?.change == .renamed(from: "content"))
        #expect(note.property("title")?.change == .added(default: nil))
        #expect(report.plan.hops[1].mapping.mapping(producing: "Folder")?.kind == .add)
        #expect(report.plan.destructiveChanges.isEmpty)
        #expect(report.preflight == [:])
        #expect(report.objects == ["Note": 3])
    }

    @Test func migratesEveryValueWhereItBelongs() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let before = try Data(contentsOf: store)
        let output = folder.appendingPathComponent("Notes3.sqlite")
        let report = try StoreMigration.migrate(
            store: store,
            to: .file(output),
            options: StoreMigration.Options(bundle: bundle)
        )
        #expect(report.action == .migrated)
        #expect(report.hops == ["Notes → Notes 2", "Notes 2 → Notes 3"])
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        #expect(report.ledgers.last?.rows["Note"]?.written == 3)
        let v3 = try #require(bundle.version(named: "Notes 3"))
        #expect(try MigrationFixtures.hashes(output) == v3.entityVersionHashes)
        let records = try MigrationFixtures.read(output, bundle: bundle)
        let notes = try #require(records["Note"])
        #expect(notes.map(\.id) == [.primaryKey(1), .primaryKey(2), .primaryKey(5)])
        #expect(notes.map { MigrationFixtures.value($0, "text", model: v3) } == ["milk", "eggs", .null])
        #expect(notes.map { MigrationFixtures.value($0, "title", model: v3) } == [.null, .null, .null])
        #expect(
            notes.map { MigrationFixtures.value($0, "date", model: v3) }
                == [.date(Self.when), .null, .date(Self.when.addingTimeInterval(60))]
        )
        #expect(
            notes.map { MigrationFixtures.relationship($0, "folder", model: v3) } == [
                .toOne(nil), .toOne(nil), .toOne(nil),
            ]
        )
        #expect(records["Folder"] == nil)
        // The source is only read.
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func runningTheSameMigrationTwiceGivesTheSameResult() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let first = folder.appendingPathComponent("first.sqlite")
        let second = folder.appendingPathComponent("second.sqlite")
        let options = StoreMigration.Options(bundle: bundle)
        let one = try StoreMigration.migrate(store: store, to: .file(first), options: options)
        let two = try StoreMigration.migrate(store: store, to: .file(second), options: options)
        #expect(one.ledgers == two.ledgers)
        #expect(try MigrationFixtures.read(first, bundle: bundle) == MigrationFixtures.read(second, bundle: bundle))
        #expect(try MigrationFixtures.hashes(first) == MigrationFixtures.hashes(second))
        // Independently of Decant's reader: both files hold the rows written by hand, read with Python's sqlite3.
        let rows = "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); "
            + "print([tuple(r) for r in c.execute('SELECT Z_PK, ZTEXT, ZTITLE, ZDATE, ZFOLDER FROM ZNOTE ORDER BY Z_PK')])"
        let expected = "[(1, 'milk', None, \(Self.when.timeIntervalSinceReferenceDate), None), (2, 'eggs', None, None, None), "
            + "(5, None, None, \(Self.when.addingTimeInterval(60).timeIntervalSinceReferenceDate), None)]"
        #expect(try PythonOracle.text(rows, arguments: [first.path]) == expected)
        #expect(try PythonOracle.text(rows, arguments: [second.path]) == expected)
    }

    @Test func aStoreAtTheTargetIsCopiedOrLeftAlone() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let options = StoreMigration.Options(bundle: bundle, destinationVersion: "Notes")
        let copy = folder.appendingPathComponent("copy.sqlite")
        let copied = try StoreMigration.migrate(store: store, to: .file(copy), options: options)
        #expect(copied.action == .copied)
        #expect(try MigrationFixtures.read(copy, bundle: bundle) == MigrationFixtures.read(store, bundle: bundle))
        let before = try Data(contentsOf: store)
        let untouched = try StoreMigration.migrate(store: store, to: .inPlace(backup: nil), options: options)
        #expect(untouched.action == .unchanged)
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func inPlaceKeepsABackupOfTheOriginal() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.v1Store(in: folder, bundle: bundle)
        let before = try Data(contentsOf: store)
        let backup = folder.appendingPathComponent("Notes.sqlite.backup")
        let report = try StoreMigration.migrate(
            store: store,
            to: .inPlace(backup: backup),
            options: StoreMigration.Options(bundle: bundle)
        )
        #expect(report.backup != nil)
        #expect(try Data(contentsOf: backup) == before)
        let v3 = try #require(bundle.version(named: "Notes 3"))
        #expect(try MigrationFixtures.hashes(store) == v3.entityVersionHashes)
        #expect(try MigrationFixtures.read(store, bundle: bundle)["Note"]?.count == 3)
        // Only the store and its backup remain: nothing half-written, and no lock file.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal")
        }
        #expect(names.sorted() == ["Notes.sqlite", "Notes.sqlite.backup"])
        // A second in-place run (a CI job run again) has nothing to do: it succeeds, writes no backup (the first
        // one's stays as it was, never overwritten) and leaves the store as it was.
        let migrated = try Data(contentsOf: store)
        let again = try StoreMigration.migrate(
            store: store,
            to: .inPlace(backup: backup),
            options: StoreMigration.Options(bundle: bundle)
        )
        #expect(again.action == .unchanged)
        #expect(again.backup == nil)
        #expect(try Data(contentsOf: backup) == before)
        #expect(try Data(contentsOf: store) == migrated)
    }
}
