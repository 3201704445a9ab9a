import Decant
import DecantTestSupport
import Foundation
import Testing

/// Files on disk have one owner: a format declares the files of a store, and one lease per destination stages,
/// backs up, commits, locks and recovers them for every job, nested jobs included.
@Suite("Destination lease")
struct DestinationLeaseTests {
    /// The entries of `folder`, sorted.
    static func entries(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    /// A `Notes` (v1) store of the samples' notes, self-contained, at `url`.
    static func notesV1(at url: URL, bundle: ModelBundle) throws {
        var options = FormatOptions(bundle: bundle, version: "Notes")
        options.sqlite.journalMode = .delete
        _ = try StoreConversion.convert(from: Fixtures.samplesRoot.appendingPathComponent("notes-v1"), to: url, options: options)
    }

    @Test func aSQLiteStoreDeclaresItsDatabaseCompanionsAndSupportFolder() throws {
        let folder = URL(fileURLWithPath: "/tmp/app", isDirectory: true)
        let url = folder.appendingPathComponent("Notes.sqlite")
        // Asked through the registry (as every job asks), not the concrete type: the format's own set answers.
        let sqlite = try FormatRegistry.builtIn.format(named: "sqlite")
        #expect(sqlite.files(at: url).members.map(\.path) == [
            "/tmp/app/Notes.sqlite", "/tmp/app/Notes.sqlite-wal", "/tmp/app/Notes.sqlite-shm",
            "/tmp/app/Notes.sqlite-journal", "/tmp/app/.Notes_SUPPORT",
        ])
        let json = try FormatRegistry.builtIn.format(named: "json")
        #expect(json.files(at: folder.appendingPathComponent("Notes.json")).members.map(\.path) == ["/tmp/app/Notes.json"])
    }

    /// Replacing a store in place backs up its whole set (the database, its `-wal` and `-shm`, its support folder
    /// under the backup's name), sets the old companions aside and removes them, and keeps the support folder whose
    /// external data the new database still names. Nothing staged and no lock file is left.
    @Test func theDeclaredSetDrivesBackupAndReplacement() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Data("old database".utf8).write(to: store)
        try Data("old log".utf8).write(to: URL(fileURLWithPath: store.path + "-wal"))
        try Data("old index".utf8).write(to: URL(fileURLWithPath: store.path + "-shm"))
        let external = folder.appendingPathComponent(".Notes_SUPPORT/_EXTERNAL_DATA", isDirectory: true)
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try Data("photo".utf8).write(to: external.appendingPathComponent("A1"))
        let backup = folder.appendingPathComponent("Notes.sqlite.backup")

        let lease = try DestinationLease(destination: store, format: SQLiteFormat(), locking: true)
        #expect(DestinationLease.isLocked(store))
        try Data("new database".utf8).write(to: lease.staging)
        try lease.commit(backup: backup)
        lease.release()

        #expect(try String(contentsOf: store, encoding: .utf8) == "new database")
        #expect(try String(contentsOf: external.appendingPathComponent("A1"), encoding: .utf8) == "photo")
        #expect(try String(contentsOf: backup, encoding: .utf8) == "old database")
        #expect(try String(contentsOfFile: backup.path + "-wal", encoding: .utf8) == "old log")
        #expect(try String(contentsOfFile: backup.path + "-shm", encoding: .utf8) == "old index")
        let backupExternal = SQLiteFormat().files(at: backup).supportFolders[0].appendingPathComponent("_EXTERNAL_DATA/A1")
        #expect(backupExternal.path == folder.appendingPathComponent(".Notes.sqlite_SUPPORT/_EXTERNAL_DATA/A1").path)
        #expect(try String(contentsOf: backupExternal, encoding: .utf8) == "photo")
        #expect(try Self.entries(folder) == [
            ".Notes.sqlite_SUPPORT", ".Notes_SUPPORT", "Notes.sqlite", "Notes.sqlite.backup", "Notes.sqlite.backup-shm",
            "Notes.sqlite.backup-wal",
        ])
    }

    /// A discarded lease leaves the destination's set as it was and nothing beside it; releasing it removes the lock.
    @Test func aDiscardedLeaseLeavesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Data("old database".utf8).write(to: store)
        try Data("old log".utf8).write(to: URL(fileURLWithPath: store.path + "-wal"))
        let lease = try DestinationLease(destination: store, format: SQLiteFormat(), locking: true)
        let staged = lease.stagingFiles
        try Data("half".utf8).write(to: staged.main)
        try Data("half log".utf8).write(to: staged.companion("-wal"))
        try FileManager.default.createDirectory(at: staged.supportFolders[0], withIntermediateDirectories: false)
        #expect(try Self.entries(folder).count == 6)
        lease.discard()
        lease.release()
        #expect(try Self.entries(folder) == ["Notes.sqlite", "Notes.sqlite-wal"])
        #expect(try String(contentsOf: store, encoding: .utf8) == "old database")
    }

    /// A replacement a crash interrupted after the old companions were set aside is repaired by the next lease that
    /// locks the destination: before the rename, they go back (also for a staging Decant named before the lease);
    /// after it, they are removed.
    @Test func anInterruptedReplacementIsRepairedByTheNextLockingLease() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        for staging in [".Notes.sqlite.decant-TOKEN.sqlite", ".Notes.sqlite.decant-TOKEN"] {
            let token = UUID().uuidString
            try Data("old database".utf8).write(to: store)
            try Data("new database".utf8).write(to: folder.appendingPathComponent(staging.replacingOccurrences(of: "TOKEN", with: token)))
            try Data("old log".utf8).write(to: folder.appendingPathComponent(".Notes.sqlite.decant-pending-\(token)-wal"))
            let lease = try DestinationLease(destination: store, format: SQLiteFormat(), locking: true)
            #expect(try String(contentsOfFile: store.path + "-wal", encoding: .utf8) == "old log", "\(staging)")
            lease.removeLeftovers()
            lease.release()
            #expect(try Self.entries(folder) == ["Notes.sqlite", "Notes.sqlite-wal"], "\(staging)")
            try FileManager.default.removeItem(atPath: store.path + "-wal")
        }
        // The new database took the old one's place: what was set aside belongs to the old one.
        let token = UUID().uuidString
        try Data("old log".utf8).write(to: folder.appendingPathComponent(".Notes.sqlite.decant-pending-\(token)-wal"))
        try DestinationLease(destination: store, format: SQLiteFormat(), locking: true).release()
        #expect(try Self.entries(folder) == ["Notes.sqlite"])
    }

    /// A writer made by its format writes where the job tells it, once: while a migration runs, the only file
    /// beside its output is the job's staging location (a writer that staged again would add its own).
    @Test func aMigrationStagesItsOutputOnce() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("v1.sqlite")
        try Self.notesV1(at: store, bundle: bundle)
        let output = folder.appendingPathComponent("v3.sqlite")
        var staged: [[String]] = []
        for inStore in [true, false] {
            var options = StoreMigration.Options(bundle: bundle)
            options.environment.runsInStoreWhenPossible = inStore
            _ = try StoreMigration.migrate(store: store, to: .file(output), options: options) { _, _ in
                staged.append((try? Self.entries(folder))?.filter { $0.hasPrefix(".") } ?? ["cannot list"])
            }
            try FileManager.default.removeItem(at: output)
        }
        #expect(!staged.isEmpty)
        for entries in staged {
            #expect(entries.count == 1 && entries[0].hasPrefix(".v3.sqlite.decant-"), "\(entries)")
        }
        #expect(try Self.entries(folder) == ["v1.sqlite"])
    }

    /// An in-place migration that fails part-way (an object breaks a rule of the destination model) leaves the
    /// store's folder exactly as it was: no staged file, no set-aside companion, no lock file.
    @Test func aFailedInPlaceMigrationLeavesNoStagingAndNoLock() throws {
        var note1 = Entity(name: "Note")
        note1.attributes = [Attribute(name: "title", type: .string, isOptional: true)]
        var note2 = Entity(name: "Note")
        note2.attributes = [Attribute(name: "title", type: .string, isOptional: false)]
        let bundle = MigrationFixtures.bundle(
            "Required", [ObjectModel(versionName: "R1", entities: [note1]), ObjectModel(versionName: "R2", entities: [note2])])
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("r.sqlite")
        let v1 = bundle.versions[0]
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [MigrationFixtures.record("Note", 1, in: v1, ["title": "kept"]), MigrationFixtures.record("Note", 2, in: v1)])
        let before = try Data(contentsOf: store)
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(
                store: store, to: .inPlace(backup: folder.appendingPathComponent("r.sqlite.backup")),
                options: StoreMigration.Options(bundle: bundle))
        }
        #expect(error.code == .validationFailed)
        #expect(try Self.entries(folder) == ["r.sqlite"])
        #expect(try Data(contentsOf: store) == before)
    }

    /// `seed` holds one lock through the migration it runs: while the migration writes, the destination's lock is
    /// held on the very lock file the seeding took (a seeding that let go and locked again would have removed it
    /// and made a new one), and a second seeder started then waits for it and finds the store current.
    @Test func seedHoldsItsLockThroughTheNestedMigration() throws {
        let bundle = try MigrationFixtures.notes()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = folder.appendingPathComponent("NotesV1.sqlite")
        try Self.notesV1(at: seed, bundle: bundle)
        let destination = folder.appendingPathComponent("App.sqlite")
        try FileManager.default.copyItem(at: seed, to: destination)
        // The lock file a killed run left: the seeding takes it over. Held open here, its inode cannot be reused.
        let lockFile = DestinationLease.lockFile(for: destination)
        #expect(FileManager.default.createFile(atPath: lockFile.path, contents: Data()))
        let handle = try FileHandle(forReadingFrom: lockFile)
        defer { try? handle.close() }
        var taken = stat()
        #expect(fstat(handle.fileDescriptor, &taken) == 0)

        var observed: (sameFile: Bool, locked: Bool)?
        let second = Results()
        let group = DispatchGroup()
        let report = try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: bundle)) { _, _ in
            guard observed == nil else { return }
            var named = stat()
            let same = stat(lockFile.path, &named) == 0 && named.st_dev == taken.st_dev && named.st_ino == taken.st_ino
            observed = (same, DestinationLease.isLocked(destination))
            DispatchQueue.global().async(group: group) {
                second.add(Result { try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: bundle)).action })
            }
        }
        group.wait()
        #expect(report.action == .migrated)
        let seen = try #require(observed, "the nested migration reported progress")
        #expect(seen.sameFile, "the lock file the seeding took is the one held through its migration")
        #expect(seen.locked)
        #expect(try second.all.map { try $0.get() } == [.alreadySeeded])
        #expect(try SQLiteStore(contentsOf: destination).metadata.entityVersionHashes == bundle.currentVersion?.entityVersionHashes)
        #expect(try Self.entries(folder) == ["App.sqlite", "App.sqlite.backup-Notes", "NotesV1.sqlite"])
    }
}
