import Decant
import DecantTestSupport
import Foundation
import Testing

/// SIGKILL at many moments of a run: the source stays byte for byte as it was, the destination is absent (or, in
/// place, the old store exactly) or complete, and a rerun succeeds. The number of moments can be raised with
/// `DECANT_CRASH_MOMENTS`.
@Suite("Crash safety", .serialized, .enabled(if: EndToEndTests.hasBinary))
struct CrashSafetyTests {
    static let moments = Int(ProcessInfo.processInfo.environment["DECANT_CRASH_MOMENTS"] ?? "") ?? 50

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

    /// Runs `arguments` to completion and returns its wall time.
    static func timedRun(_ arguments: [String]) throws -> TimeInterval {
        let start = Date()
        let outcome = try Subprocess.run(EndToEndTests.binary, arguments)
        #expect(outcome.status == 0, "\(arguments): \(outcome.errors)")
        return Date().timeIntervalSince(start)
    }

    /// Starts `arguments`, kills it with SIGKILL after `delay` seconds (if still running); returns whether it was
    /// killed.
    static func kill(_ arguments: [String], after delay: TimeInterval) throws -> Bool {
        let process = Process()
        process.executableURL = EndToEndTests.binary
        process.arguments = arguments + ["--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: delay)
        let wasRunning = process.isRunning
        if wasRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return wasRunning && process.terminationReason == .uncaughtSignal
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

    @Test func convertKilledAtAnyMoment() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = folder.appendingPathComponent("Source.sqlite")
        try Self.writeStore(at: source, count: 80_000)
        let sourceBytes = try Data(contentsOf: source)
        let counts = try SQLiteStore(contentsOf: source).objectCounts()
        let output = folder.appendingPathComponent("Out.sqlite")
        let arguments = ["convert", source.path, output.path]
        // The moments spread over the fastest run seen so far: one run slowed by a busy machine would put most of
        // them after the end.
        var duration = try Self.timedRun(arguments)
        try FileManager.default.removeItem(at: output)
        var killed = 0
        for moment in 0..<Self.moments {
            if try Self.kill(arguments, after: duration * Double(moment) / Double(Self.moments)) { killed += 1 }
            #expect(try Data(contentsOf: source) == sourceBytes, "moment \(moment)")
            try Self.checkAbsentOrComplete(output, counts: counts, moment: moment)
            duration = min(duration, try Self.timedRun(arguments))
            try Self.checkAbsentOrComplete(output, counts: counts, moment: moment)
            try FileManager.default.removeItem(at: output)
        }
        #expect(killed >= Self.moments / 2, "most moments fall inside the run (\(killed) of \(Self.moments))")
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
        let duration = try Self.timedRun(arguments)
        try FileManager.default.removeItem(at: destination)
        for moment in 0..<Self.moments {
            _ = try Self.kill(arguments, after: duration * Double(moment) / Double(Self.moments))
            #expect(try Data(contentsOf: seed) == seedBytes, "moment \(moment)")
            try Self.checkAbsentOrComplete(destination, counts: counts, moment: moment)
            _ = try Self.timedRun(arguments)
            try Self.checkAbsentOrComplete(destination, counts: counts, moment: moment)
            let entries = try FileManager.default.contentsOfDirectory(atPath: app.path).sorted()
            #expect(entries == [".Store.sqlite.decant-lock", "Store.sqlite"], "moment \(moment): \(entries)")
            try FileManager.default.removeItem(at: destination)
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
        let duration = try Self.timedRun(arguments)
        let migrated = try SQLiteStore(contentsOf: store)
        #expect(migrated.metadata.entityVersionHashes == bundle.currentVersion?.entityVersionHashes)
        let counts = try migrated.objectCounts()
        func reset() throws {
            try? FileManager.default.removeItem(at: backup)
            try? FileManager.default.removeItem(at: store)
            try original.write(to: store)
        }
        try reset()
        for moment in 0..<Self.moments {
            _ = try Self.kill(arguments, after: duration * Double(moment) / Double(Self.moments))
            // The old store exactly, or the migrated one complete: the current version, whole, every object.
            if try Data(contentsOf: store) != original {
                try Self.checkAbsentOrComplete(store, counts: counts, moment: moment)
                #expect(
                    try SQLiteStore(contentsOf: store).metadata.entityVersionHashes
                        == bundle.currentVersion?.entityVersionHashes, "moment \(moment)")
            }
            // A backup under its real name is whole; the rerun succeeds (and says so when there is nothing to do).
            if FileManager.default.fileExists(atPath: backup.path) {
                #expect(try Data(contentsOf: backup) == original, "moment \(moment)")
                try FileManager.default.removeItem(at: backup)
            }
            _ = try Self.timedRun(arguments)
            try Self.checkAbsentOrComplete(store, counts: counts, moment: moment)
            try reset()
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
