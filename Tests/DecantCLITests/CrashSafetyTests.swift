import Decant
import DecantTestSupport
import Foundation
import Testing

/// SIGKILL at many moments of a run: the source stays byte for byte as it was, the destination is absent (or, in
/// place, the old store exactly) or complete, and a rerun succeeds. A moment is a point of progress, not of time: the
/// run is killed once the files it stages beside its destination hold that fraction of the finished store's bytes,
/// and most kills must land on a running process; three more kills come as the output appears under its real name
/// (a copy into place instead of a rename fails them). 12 moments in `make test`, 50 with `DECANT_FULL_TESTS=1`
/// (`make test-all`); `DECANT_CRASH_MOMENTS` sets the number.
@Suite("Crash safety", .serialized, .requiresDecantBinary, .tags(.slow))
struct CrashSafetyTests {
    static let moments = TestScale.count("DECANT_CRASH_MOMENTS", quick: 12, full: 50)

    /// A store of `count` notes in folders (to-one, to-many through the inverse), large enough that a debug build
    /// of decant takes about a second to convert it.
    static func writeStore(at url: URL, count: Int) throws {
        let model = SelectionTestsModel.model
        let writer = try SQLiteStoreWriter(creating: url, model: model, journalMode: .delete)
        var folders = try #require(RecordLayout(entity: "Folder", in: model)).emptyBatch()
        for key in 1...100 {
            folders.append(Record(entity: "Folder", id: .primaryKey(Int64(key)), values: [.string("F\(key)")], relationships: [.viaInverse]))
        }
        try writer.write(folders)
        var notes = try #require(RecordLayout(entity: "Note", in: model)).emptyBatch()
        for key in 1...count {
            notes.append(
                Record(
                    entity: "Note", id: .primaryKey(Int64(key)),
                    values: [.date(Date(timeIntervalSinceReferenceDate: Double(key))), .string("note number \(key) with some text")],
                    relationships: [.toOne(ObjectReference(entity: "Folder", id: .primaryKey(Int64(key % 100 + 1))))]))
            if notes.count == 5_000 {
                try writer.write(notes)
                notes.removeAll()
            }
        }
        try writer.write(notes)
        try writer.finish()
    }

    /// Runs `arguments` to completion and returns the bytes of `destination` and its companions afterwards.
    static func completeRun(_ arguments: [String], destination: URL) throws -> Int {
        let outcome = try Subprocess.run(EndToEndTests.binary, arguments)
        #expect(outcome.status == 0, "\(arguments): \(outcome.errors)")
        return ["", "-wal", "-shm"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: destination.path + suffix))?[.size] as? Int ?? 0)
        }
    }

    /// The names of the files a run stages beside `destination` (`.Name.decant-…`, not the lock).
    static func staged(beside destination: URL) -> Set<String> {
        let prefix = ".\(destination.lastPathComponent).decant-"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: destination.deletingLastPathComponent().path))
        return Set((entries ?? []).filter { $0.hasPrefix(prefix) && $0 != prefix + "lock" })
    }

    /// The bytes of the files staged beside `destination` other than `earlier` (left by a killed run), or nil when
    /// there are none yet. A file may vanish between listing and measuring (renamed into place): it counts as 0.
    static func stagedBytes(beside destination: URL, except earlier: Set<String>) -> Int? {
        let folder = destination.deletingLastPathComponent()
        let names = staged(beside: destination).subtracting(earlier)
        guard !names.isEmpty else { return nil }
        return names.reduce(0) { total, name in
            let path = folder.appendingPathComponent(name).path
            return total + ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int ?? 0)
        }
    }

    /// Starts `arguments` and sends SIGKILL as soon as the files staged beside `destination` hold `bytes` bytes
    /// (watched, not timed); returns whether the kill landed on the running process (false when the run ended
    /// first).
    static func kill(_ arguments: [String], whenStaged bytes: Int, beside destination: URL) throws -> Bool {
        let earlier = staged(beside: destination)
        return try kill(arguments) {
            guard let written = stagedBytes(beside: destination, except: earlier) else { return false }
            return written >= bytes
        }
    }

    /// Starts `arguments` and sends SIGKILL as soon as `moment` says so (polled); returns whether the kill landed
    /// on the running process. A run still going after ten minutes is killed and recorded as an issue, so a hung
    /// run fails the test rather than holding it forever.
    static func kill(_ arguments: [String], when moment: () -> Bool) throws -> Bool {
        let process = Process()
        process.executableURL = EndToEndTests.binary
        process.arguments = arguments + ["--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(600)
        while process.isRunning {
            if moment() {
                Foundation.kill(process.processIdentifier, SIGKILL)
                break
            }
            if Date() > deadline {
                Foundation.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                Issue.record("\(arguments) still ran after ten minutes")
                return false
            }
            usleep(200)
        }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
    }

    /// The moment the destination appears: the staged output is being moved into place. A rename shows it whole; a
    /// copy would show it partly written.
    static func destinationAppears(_ destination: URL) -> () -> Bool {
        { FileManager.default.fileExists(atPath: destination.path) }
    }

    /// Kills runs of `arguments` as soon as `moment` says so until `landed` kills land on a running process (at most
    /// three times as many runs), calling `check` after each; a moment no kill can hit fails the test, for a test
    /// whose kills all came after the run ended would check finished runs only.
    static func killAt(
        _ what: String, _ arguments: [String], when moment: @escaping () -> Bool, landed wanted: Int = 3,
        check: (Int) throws -> Void
    ) throws {
        var landed = 0
        var attempt = 0
        while landed < wanted && attempt < wanted * 3 {
            if try kill(arguments, when: moment) { landed += 1 }
            try check(attempt)
            attempt += 1
        }
        #expect(landed == wanted, "\(what): \(landed) of \(attempt) kills landed on a running process")
    }

    /// The moment a file whose name starts with `prefix` appears in `folder`.
    static func entryAppears(_ prefix: String, in folder: URL) -> () -> Bool {
        {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return entries.contains { $0.hasPrefix(prefix) }
        }
    }

    /// Most moments must kill a running process, or the test checked finished runs only.
    static func expectMostKillsLanded(_ killed: Int) {
        #expect(killed * 4 >= moments * 3, "most moments fall inside the run (\(killed) of \(moments))")
    }

    /// The destination is absent, or a complete store with `counts`.
    static func checkAbsentOrComplete(_ url: URL, counts: [String: Int], moment: Int) throws {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let check = try PythonOracle.text(
            "import sqlite3, sys; c = sqlite3.connect('file:' + sys.argv[2] + '?mode=ro', uri=True); "
                + "print(c.execute('PRAGMA integrity_check').fetchone()[0])", arguments: [url.path])
        #expect(check == "ok", "moment \(moment)")
        #expect(try SQLiteStore(contentsOf: url).objectCounts() == counts, "moment \(moment)")
    }

    /// Ctrl-C (SIGINT) or a cancelled CI job (SIGTERM) while the output is staged: the run removes what it staged,
    /// exits 130 or 143, and leaves no `.Out.sqlite.decant-…` file (they stayed, hundreds of megabytes, forever).
    @Test(arguments: [SIGINT, SIGTERM]) func aSignalRemovesTheStagedOutput(_ signalNumber: Int32) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("Source.sqlite")
        try Self.writeStore(at: source, count: 80_000)
        let output = folder.appendingPathComponent("Out.sqlite")
        let process = Process()
        process.executableURL = EndToEndTests.binary
        process.arguments = ["convert", source.path, output.path, "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var sent = false
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline {
            if !sent, (Self.stagedBytes(beside: output, except: []) ?? 0) > 4096 {
                Foundation.kill(process.processIdentifier, signalNumber)
                sent = true
            }
            usleep(200)
        }
        process.waitUntilExit()
        try #require(sent, "the run ended before anything was staged")
        #expect(process.terminationStatus == 128 + signalNumber, "\(process.terminationReason)")
        #expect(Self.staged(beside: output).isEmpty, "\(Self.staged(beside: output))")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// A run killed with SIGKILL cannot clean up: the next run on the same destination finds its staging (its
    /// process gone), removes it and says so; a live process's staging and one it cannot judge (no process id in
    /// its name, as before tokens named it) are left alone.
    @Test func theNextRunRemovesADeadRunsStagingAndSaysSo() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("Source.sqlite")
        try Self.writeStore(at: source, count: 80_000)
        let output = folder.appendingPathComponent("Out.sqlite")
        let arguments = ["convert", source.path, output.path]
        try #require(try Self.kill(arguments, whenStaged: 4096, beside: output), "the run ended before the kill")
        let dead = Self.staged(beside: output)
        try #require(!dead.isEmpty)
        let live = ".Out.sqlite.decant-\(DestinationLease.runToken()).sqlite"
        let unjudged = ".Out.sqlite.decant-\(UUID().uuidString).sqlite"
        for name in [live, unjudged] {
            try Data("x".utf8).write(to: folder.appendingPathComponent(name))
        }
        let rerun = try Subprocess.run(EndToEndTests.binary, arguments + ["--json"])
        #expect(rerun.status == 0, "\(rerun.errors)")
        for name in dead {
            #expect(rerun.errors.contains("warning: \(folder.path)/\(name): removed \(name), left by a Decant run (process "), "\(rerun.errors)")
            #expect(rerun.output.contains(#""kind" : "dead-run-leftovers""#), "\(rerun.output)")
        }
        #expect(Self.staged(beside: output) == [live, unjudged])
    }

    @Test func convertKilledAtAnyMoment() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("Source.sqlite")
        try Self.writeStore(at: source, count: 80_000)
        let sourceBytes = try Data(contentsOf: source)
        let counts = try SQLiteStore(contentsOf: source).objectCounts()
        let output = folder.appendingPathComponent("Out.sqlite")
        let arguments = ["convert", source.path, output.path]
        let size = try Self.completeRun(arguments, destination: output)
        try FileManager.default.removeItem(at: output)
        var killed = 0
        for moment in 0..<Self.moments {
            if try Self.kill(arguments, whenStaged: size * moment / Self.moments, beside: output) { killed += 1 }
            #expect(try Data(contentsOf: source) == sourceBytes, "moment \(moment)")
            try Self.checkAbsentOrComplete(output, counts: counts, moment: moment)
            _ = try Self.completeRun(arguments, destination: output)
            try Self.checkAbsentOrComplete(output, counts: counts, moment: moment)
            try FileManager.default.removeItem(at: output)
        }
        Self.expectMostKillsLanded(killed)
        // And as the output is moved into place.
        try Self.killAt("commit", arguments, when: Self.destinationAppears(output)) { attempt in
            #expect(try Data(contentsOf: source) == sourceBytes, "commit \(attempt)")
            try Self.checkAbsentOrComplete(output, counts: counts, moment: Self.moments + attempt)
            SQLiteFormat().files(at: output).remove()
        }
    }

    @Test func seedKilledAtAnyMoment() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = folder.appendingPathComponent("Seed.sqlite")
        try Self.writeStore(at: seed, count: 80_000)
        let seedBytes = try Data(contentsOf: seed)
        let counts = try SQLiteStore(contentsOf: seed).objectCounts()
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let destination = app.appendingPathComponent("Store.sqlite")
        let arguments = ["seed", "--default", seed.path, "--store", destination.path]
        let size = try Self.completeRun(arguments, destination: destination)
        try FileManager.default.removeItem(at: destination)
        var killed = 0
        for moment in 0..<Self.moments {
            if try Self.kill(arguments, whenStaged: size * moment / Self.moments, beside: destination) { killed += 1 }
            #expect(try Data(contentsOf: seed) == seedBytes, "moment \(moment)")
            try Self.checkAbsentOrComplete(destination, counts: counts, moment: moment)
            _ = try Self.completeRun(arguments, destination: destination)
            try Self.checkAbsentOrComplete(destination, counts: counts, moment: moment)
            let entries = try FileManager.default.contentsOfDirectory(atPath: app.path).sorted()
            #expect(entries == ["Store.sqlite"], "moment \(moment): \(entries)")
            try FileManager.default.removeItem(at: destination)
        }
        Self.expectMostKillsLanded(killed)
        // And as the copy is moved into place.
        try Self.killAt("commit", arguments, when: Self.destinationAppears(destination)) { attempt in
            #expect(try Data(contentsOf: seed) == seedBytes, "commit \(attempt)")
            try Self.checkAbsentOrComplete(destination, counts: counts, moment: Self.moments + attempt)
            SQLiteFormat().files(at: destination).remove()
        }
    }
}

extension CrashSafetyTests {
    @Test func migrateInPlaceKilledAtAnyMoment() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundlePath = Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld")
        let bundle = try ModelBundle.load(from: bundlePath)
        let v1 = try #require(bundle.version(named: "Notes"))
        let store = folder.appendingPathComponent("Notes.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: v1, journalMode: .delete)
        var notes = try #require(RecordLayout(entity: "Note", in: v1)).emptyBatch()
        for key in 1...60_000 {
            notes.append(
                Record(
                    entity: "Note", id: .primaryKey(Int64(key)),
                    values: [.string("note \(key) with some words in it"), .date(Date(timeIntervalSinceReferenceDate: Double(key)))]))
            if notes.count == 5_000 {
                try writer.write(notes)
                notes.removeAll()
            }
        }
        try writer.finish()
        let original = try Data(contentsOf: store)
        let backup = folder.appendingPathComponent("Notes.sqlite.backup")
        let arguments = ["migrate", store.path, "--model", bundlePath.path, "--in-place"]
        let size = try Self.completeRun(arguments, destination: store)
        let migrated = try SQLiteStore(contentsOf: store)
        #expect(migrated.metadata.entityVersionHashes == bundle.currentVersion?.entityVersionHashes)
        let counts = try migrated.objectCounts()
        func reset() throws {
            try? FileManager.default.removeItem(at: backup)
            try? FileManager.default.removeItem(at: store)
            try original.write(to: store)
        }
        try reset()
        // The old store exactly, or the migrated one complete: the current version, whole, every object. A backup
        // under its real name is whole; the rerun succeeds (and says so when there is nothing to do).
        func checkAndRerun(moment: Int) throws {
            if try Data(contentsOf: store) != original {
                try Self.checkAbsentOrComplete(store, counts: counts, moment: moment)
                #expect(
                    try SQLiteStore(contentsOf: store).metadata.entityVersionHashes
                        == bundle.currentVersion?.entityVersionHashes, "moment \(moment)")
            }
            if FileManager.default.fileExists(atPath: backup.path) {
                #expect(try Data(contentsOf: backup) == original, "moment \(moment)")
                try FileManager.default.removeItem(at: backup)
            }
            _ = try Self.completeRun(arguments, destination: store)
            try Self.checkAbsentOrComplete(store, counts: counts, moment: moment)
            try reset()
        }
        var killed = 0
        for moment in 0..<Self.moments {
            if try Self.kill(arguments, whenStaged: size * moment / Self.moments, beside: store) { killed += 1 }
            try checkAndRerun(moment: moment)
        }
        Self.expectMostKillsLanded(killed)
        // And at the commit: as the backup is written under its temporary name (a backup written under its real
        // name never shows one, and fails here), as it appears under its real name, and as the old store's journal
        // is set aside (an empty `-journal`, which SQLite ignores, gives the old store a companion to set aside).
        let journal = URL(fileURLWithPath: store.path + "-journal")
        let moments: [(String, () -> Bool)] = [
            ("backup staged", Self.entryAppears(".Notes.sqlite.backup.decant-", in: folder)),
            ("backup named", Self.destinationAppears(backup)),
            ("journal set aside", Self.entryAppears(".Notes.sqlite.decant-pending-", in: folder)),
        ]
        for (index, (what, moment)) in moments.enumerated() {
            try Data().write(to: journal)
            try Self.killAt(what, arguments, when: moment) { attempt in
                try checkAndRerun(moment: Self.moments + index * 10 + attempt)
                try Data().write(to: journal)
            }
            try? FileManager.default.removeItem(at: journal)
        }
    }
}

/// A small Folder ⇄ Note model for stores built in tests.
enum SelectionTestsModel {
    static let model: ObjectModel = {
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        folder.relationships = [Relationship(name: "notes", destination: "Note", inverse: "folder", toMany: true)]
        var note = Entity(name: "Note")
        note.attributes = [
            Attribute(name: "date", type: .date, isOptional: true), Attribute(name: "text", type: .string, isOptional: true),
        ]
        note.relationships = [Relationship(name: "folder", destination: "Folder", inverse: "notes")]
        return ObjectModel(versionName: "Crash", entities: [folder, note], versionIdentifiers: ["1"])
    }()
}
