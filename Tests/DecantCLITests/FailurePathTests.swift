import ArgumentParser
import Decant
@testable import DecantCLI
import DecantTestSupport
import Foundation
import Testing

/// The CLI exits with the status of the error's code (DESIGN.md's table, written out in `ExitCodeTests`).
@Suite("Exit statuses of errors")
struct ErrorExitStatusTests {
    @Test func aThrownErrorExitsWithItsCodesStatus() {
        for code in DecantError.Code.allCases {
            do {
                try reportingErrors(verbose: 0) { throw DecantError(code, "a test error") }
                Issue.record("\(code): no exit")
            } catch let exit as ExitCode {
                #expect(exit.rawValue == code.exitCode, "\(code)")
                #expect(exit.rawValue != 0, "\(code)")
            } catch {
                Issue.record("\(code): \(error)")
            }
        }
    }
}

extension ErrorExitStatusTests {
    struct NotADecantError: Error {}

    /// An error that is not a ``DecantError`` is a defect of Decant's: exit 70 with "please report", not
    /// ArgumentParser's 1 (problems found); with `--json` it is the error document too, and `-v` adds its cause.
    @Test func anErrorThatIsNotADecantErrorExits70() {
        do {
            try reportingErrors(verbose: 1, json: true) { throw NotADecantError() }
            Issue.record("no exit")
        } catch let exit as ExitCode {
            #expect(exit.rawValue == 70)
        } catch {
            Issue.record("\(error)")
        }
    }

    /// ArgumentParser's own errors pass through as they are: an exit code, a clean exit, a usage error (64).
    @Test func argumentParsersOwnErrorsPassThrough() {
        let errors: [any Error] = [ExitCode(1), ExitCode(0), CleanExit.message("done"), ValidationError("bad")]
        for thrown in errors {
            do {
                try reportingErrors(verbose: 0) { throw thrown }
                Issue.record("\(thrown): no error")
            } catch {
                #expect(
                    DecantCommand.exitCode(for: error) == DecantCommand.exitCode(for: thrown), "\(thrown) became \(error)")
            }
        }
        #expect(DecantCommand.exitCode(for: ValidationError("bad")).rawValue == 64)
    }
}

/// The failures DESIGN.md promises, through the built binary, for each command: 66 for a missing input, 73 for an
/// output that cannot be created, 74 for an I/O error, 65 for a seed that is not a store; a failed run leaves no
/// output and an existing output as it was; `migrate --in-place` failing midway leaves the store's bytes and no
/// backup; `--no-backup` and `--backup PATH`; rejects counted across hops; two seeding processes make one copy.
///
/// Exit 70 (an internal error: a generated statement refused, counts that do not reconcile) is a defect of Decant's
/// own and has no input that reaches it; its status is checked by `ExitCodeTests`.
@Suite("decant's failure paths", .serialized, .requiresDecantBinary)
struct FailurePathTests {
    static let notes = MigrationCommandTests.notes

    /// Runs `decant arguments` from bash with the file size limit set to `kilobytes` (SIGXFSZ ignored, so a write
    /// past it fails with EFBIG, an I/O error, rather than killing the process).
    static func runLimited(_ arguments: [String], kilobytes: Int) throws -> (status: Int32, stdout: String, stderr: String) {
        let outcome = try Subprocess.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "ulimit -f \(kilobytes); trap '' XFSZ; exec \"$@\"", "bash", EndToEndTests.binary.path] + arguments)
        return (outcome.status, outcome.output, outcome.errors)
    }

    /// The names in `folder`, sorted (a finished run leaves no lock file either).
    static func entries(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    /// A v1 Notes store of `count` notes (about 60 bytes each), written with `journal delete` (one file).
    static func notesStore(at url: URL, count: Int) throws {
        let bundle = try ModelBundle.load(from: URL(fileURLWithPath: notes))
        let v1 = try #require(bundle.version(named: "Notes"))
        let writer = try SQLiteStoreWriter(creating: url, model: v1, journalMode: .delete)
        let layout = try #require(RecordLayout(entity: "Note", in: v1))
        var batch = RecordBatch(layout: layout)
        for key in 1...count {
            var values = [Value](repeating: .null, count: layout.attributes.count)
            values[try #require(layout.attributeIndex("content"))] = .string("note \(key) with some words in it")
            batch.append(Record(entity: "Note", id: .primaryKey(Int64(key)), values: values))
        }
        try writer.write(batch)
        try writer.finish()
    }

    @Test func aMissingInputExits66ForEveryCommand() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Self.notesStore(at: store, count: 2)
        let missing = folder.appendingPathComponent("Missing.sqlite").path
        let missingModel = folder.appendingPathComponent("Missing.xcdatamodeld").path
        let output = folder.appendingPathComponent("Out.sqlite").path
        let app = folder.appendingPathComponent("App", isDirectory: true)
        let cases: [(arguments: [String], missing: String)] = [
            (["inspect", missing], missing),
            (["convert", missing, output], missing),
            (["plan", missing, "--model", Self.notes], missing),
            (["plan", store.path, "--model", missingModel], missingModel),
            (["migrate", missing, "--model", Self.notes, "--output", output], missing),
            (["migrate", store.path, "--model", missingModel, "--output", output], missingModel),
            (["validate", missing, "--model", Self.notes], missing),
            (["seed", "--default", missing, "--store", app.appendingPathComponent("Notes.sqlite").path], missing),
            (["infer-mapping", "--model", missingModel, "--from-version", "A", "--to-version", "B"], missingModel),
            (["lock", missingModel], missingModel),
            (["lock", missingModel, "--check"], missingModel),
            (["lock", Self.notes, "--check", "--lock-file", missing], missing),
        ]
        let before = try Data(contentsOf: store)
        for (arguments, path) in cases {
            let outcome = try EndToEndTests.run(arguments)
            #expect(outcome.status == 66, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.hasPrefix("Error: ") && outcome.stderr.contains(path), "\(arguments): \(outcome.stderr)")
            #expect(try Self.entries(folder) == ["Notes.sqlite"], "\(arguments) left files behind")
        }
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func anOutputThatCannotBeCreatedExits73ForEveryCommandThatWrites() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Self.notesStore(at: store, count: 2)
        // A regular file where the output's folder should be: no output can be made below it (root included).
        let blocker = folder.appendingPathComponent("blocker")
        try Data("not a folder".utf8).write(to: blocker)
        let below = { (name: String) in blocker.appendingPathComponent(name).path }
        let cases: [[String]] = [
            ["convert", store.path, below("Out.sqlite")],
            ["convert", store.path, below("Out.ndjson")],
            ["migrate", store.path, "--model", Self.notes, "--output", below("Out.sqlite")],
            ["migrate", store.path, "--model", Self.notes, "--in-place", "--backup", below("Notes.backup")],
            ["validate", store.path, "--model", Self.notes, "--rejects", below("rejects.ndjson")],
            ["seed", "--default", store.path, "--store", below("Notes.sqlite")],
            ["infer-mapping", "--model", Self.notes, "--from-version", "Notes", "--to-version", "Notes 2", "--output", below("m.yaml")],
            ["lock", Self.notes, "--lock-file", below("Notes.decant-lock.json")],
            // A batch's folder and its JUnit report (before, Foundation's own errors: exit 1, as if problems were found).
            ["migrate", store.path, "--model", Self.notes, "--output-dir", below("out")],
            ["validate", store.path, "--model", Self.notes, "--junit", below("report.xml")],
        ]
        let before = try Data(contentsOf: store)
        for arguments in cases {
            let outcome = try EndToEndTests.run(arguments)
            #expect(outcome.status == 73, "\(arguments): \(outcome.stderr)")
            // The error names the path it could not create (in place, the store whose old version it sets aside).
            let named = arguments.contains("--in-place") ? store.path : blocker.path
            #expect(outcome.stderr.contains(named), "\(arguments): \(outcome.stderr)")
            #expect(try Data(contentsOf: store) == before, "\(arguments) changed the input")
            #expect(try Self.entries(folder) == ["Notes.sqlite", "blocker"], "\(arguments) left files behind")
        }
    }

    @Test func aWriteThatFailsExits74AndLeavesNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Self.notesStore(at: store, count: 4_000)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int)
        try #require(size > 128 * 1024, "the store must outgrow the limit (\(size) bytes)")
        let before = try Data(contentsOf: store)
        let out = { (name: String) in folder.appendingPathComponent(name).path }
        let cases: [[String]] = [
            ["convert", store.path, out("Out.sqlite")],
            ["convert", store.path, out("Out.ndjson")],
            ["migrate", store.path, "--model", Self.notes, "--output", out("Out.sqlite")],
            ["seed", "--default", store.path, "--store", out("Seeded.sqlite")],
        ]
        for arguments in cases {
            let outcome = try Self.runLimited(arguments, kilobytes: 64)
            #expect(outcome.status == 74, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.hasPrefix("Error: "), "\(arguments): \(outcome.stderr)")
            #expect(try Data(contentsOf: store) == before, "\(arguments) changed the input")
            #expect(try Self.entries(folder) == ["Notes.sqlite"], "\(arguments) left files behind")
        }
    }

    @Test func anInputThatCannotBeReadExits74ForEveryCommand() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A file that is there but cannot be read: reading /proc/self/mem at offset 0 fails with EIO. Before the
        // format is known the failure was taken for an unknown format (65).
        let unreadable = "/proc/self/mem"
        let output = folder.appendingPathComponent("Out.sqlite").path
        let cases: [[String]] = [
            ["inspect", unreadable],
            ["convert", unreadable, output],
            ["convert", unreadable, output, "--from", "sqlite"],
            ["convert", unreadable, folder.appendingPathComponent("Out.ndjson").path, "--from", "json"],
            ["plan", unreadable, "--model", Self.notes],
            ["migrate", unreadable, "--model", Self.notes, "--output", output],
            ["validate", unreadable, "--model", Self.notes],
            ["seed", "--default", unreadable, "--store", output],
        ]
        for arguments in cases {
            let outcome = try EndToEndTests.run(arguments)
            #expect(outcome.status == 74, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.hasPrefix("Error: \(unreadable)"), "\(arguments): \(outcome.stderr)")
            #expect(try Self.entries(folder) == [], "\(arguments) left files behind")
        }
    }

    @Test func aSeedThatIsNotAStoreExits65AndSeedsNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = folder.appendingPathComponent("Seed.sqlite")
        try Data("SQLite format 3\u{0}but not really a database at all".utf8).write(to: seed)
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let outcome = try EndToEndTests.run([
            "seed", "--default", seed.path, "--store", app.appendingPathComponent("Store.sqlite").path,
        ])
        #expect(outcome.status == 65, "\(outcome.stderr)")
        #expect(outcome.stderr.contains(seed.path), "\(outcome.stderr)")
        #expect(try Self.entries(app) == [])
    }

    @Test func aFailedMigrateLeavesNoOutputAndAnExistingOutputAsItWas() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Damaged: a store whose pages after the header are overwritten (malformed, exit 65).
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Self.notesStore(at: store, count: 500)
        var bytes = try Data(contentsOf: store)
        bytes.replaceSubrange(4096..<bytes.count, with: Data(repeating: 0xA5, count: bytes.count - 4096))
        let damaged = folder.appendingPathComponent("Damaged.sqlite")
        try bytes.write(to: damaged)
        let output = folder.appendingPathComponent("Out.sqlite")
        let failed = try EndToEndTests.run(["migrate", damaged.path, "--model", Self.notes, "--output", output.path])
        #expect(failed.status == 65, "\(failed.stderr)")
        #expect(try Self.entries(folder) == ["Damaged.sqlite", "Notes.sqlite"])

        // An output already there survives a failed run, byte for byte.
        let precious = Data("an output from an earlier run".utf8)
        try precious.write(to: output)
        let again = try EndToEndTests.run(["migrate", damaged.path, "--model", Self.notes, "--output", output.path])
        #expect(again.status == 65, "\(again.stderr)")
        #expect(try Data(contentsOf: output) == precious)
        #expect(try Self.entries(folder) == ["Damaged.sqlite", "Notes.sqlite", "Out.sqlite"])
    }

    @Test func anInPlaceMigrationFailingMidwayLeavesTheStoreAndNoBackup() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Self.notesStore(at: store, count: 4_000)
        let before = try Data(contentsOf: store)
        // The migrated store outgrows the file size limit while it is written: the write fails midway.
        let kilobytes = before.count / 1024 / 2
        let outcome = try Self.runLimited(["migrate", store.path, "--model", Self.notes, "--in-place"], kilobytes: kilobytes)
        #expect(outcome.status == 74, "\(outcome.stderr)")
        #expect(try Data(contentsOf: store) == before)
        #expect(try Self.entries(folder) == ["Notes.sqlite"])
    }

    @Test func inPlaceTakesNoBackupOrABackupWhereAsked() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Notes.sqlite")
        try Self.notesStore(at: store, count: 3)
        let before = try Data(contentsOf: store)
        let noBackup = try EndToEndTests.run(["migrate", store.path, "--model", Self.notes, "--in-place", "--no-backup"])
        #expect(noBackup.status == 0, "\(noBackup.stderr)")
        #expect(try Self.entries(folder) == ["Notes.sqlite"])
        #expect(try Data(contentsOf: store) != before)

        try FileManager.default.removeItem(at: store)
        try before.write(to: store)
        let elsewhere = folder.appendingPathComponent("kept", isDirectory: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let backup = elsewhere.appendingPathComponent("Notes-v1.sqlite")
        let asked = try EndToEndTests.run([
            "migrate", store.path, "--model", Self.notes, "--in-place", "--backup", backup.path,
        ])
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(try Data(contentsOf: backup) == before)
        #expect(!FileManager.default.fileExists(atPath: store.path + ".backup"))
        let inspected = try EndToEndTests.run(["inspect", store.path, "--model", Self.notes])
        #expect(inspected.stdout.contains("version Notes 3"), "\(inspected.stdout)")
    }

    /// A three-version bundle: hop 1 makes `count` required, hop 2 makes `name` required.
    static func strictening(in folder: URL) throws -> URL {
        let versions = [("Items", "YES", "YES"), ("Items 2", "YES", "NO"), ("Items 3", "NO", "NO")]
        return try ModelBundleFiles.write(
            "Items",
            versions: versions.map { version, nameOptional, countOptional in
                (
                    version,
                    ModelBundleFiles.item(
                        "<attribute name=\"count\" optional=\"\(countOptional)\" attributeType=\"Integer 64\" usesScalarValueType=\"YES\"/>",
                        "<attribute name=\"name\" optional=\"\(nameOptional)\" attributeType=\"String\"/>")
                )
            },
            current: "Items 3", in: folder)
    }

    @Test func rejectsAcrossSeveralHopsAddUp() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundleURL = try Self.strictening(in: folder)
        let bundle = try ModelBundle.load(from: bundleURL)
        let v1 = try #require(bundle.version(named: "Items"))
        let layout = try #require(RecordLayout(entity: "Item", in: v1))
        let countIndex = try #require(layout.attributeIndex("count"))
        let nameIndex = try #require(layout.attributeIndex("name"))
        // 10 items: 3 without a count (rejected by hop 1), 2 more without a name (rejected by hop 2), 5 whole.
        var batch = RecordBatch(layout: layout)
        for key in 1...10 {
            var values = [Value](repeating: .null, count: layout.attributes.count)
            if key > 3 { values[countIndex] = .integer(Int64(key)) }
            if !(4...5).contains(key) { values[nameIndex] = .string("item \(key)") }
            batch.append(Record(entity: "Item", id: .primaryKey(Int64(key)), values: values))
        }
        let store = folder.appendingPathComponent("items.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: v1)
        try writer.write(batch)
        try writer.finish()

        let rejects = folder.appendingPathComponent("rejects.ndjson")
        let output = folder.appendingPathComponent("out.sqlite")
        let outcome = try EndToEndTests.run([
            "migrate", store.path, "--model", bundleURL.path, "--output", output.path, "--rejects", rejects.path,
            "--json",
        ])
        // Rejected objects are problems found: the output and the rejects file are complete, and the exit is 1.
        #expect(outcome.status == 1, "\(outcome.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any], "\(outcome.stderr)")
        let ledgers = try #require(json["ledgers"] as? [[String: Any]])
        #expect(ledgers.count == 2)
        var rows: [[String: Int]] = []
        for ledger in ledgers {
            let row = try #require((ledger["rows"] as? [String: Any])?["Item"] as? [String: Int], "\(ledger)")
            // read + created = written + rejected + removed, hop by hop.
            #expect(row["read", default: -1] + row["created", default: -1]
                == row["written", default: -1] + row["rejected", default: -1] + row["removed", default: -1], "\(row)")
            rows.append(row)
        }
        #expect(rows.first?["read"] == 10)
        #expect(rows.last?["read"] == rows.first?["written"])
        // A nil copied into an attribute a hop makes required is judged against the destination's rules after the
        // last hop (where a violation the source already had is told apart from one the migration made), so the
        // rejections may be counted at either hop: together they are the 5 objects.
        #expect(rows.map { $0["rejected", default: -1] }.reduce(0, +) == 5)
        #expect(rows.last?["written"] == 5)
        #expect(json["rejected"] as? Int == 5)
        #expect((json["written"] as? [String: Int])?["Item"] == 5)
        // The rejects file lists each rejected object once, and the output holds the others (read with SQLite).
        let lines = try String(contentsOf: rejects, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 5, "\(lines)")
        let kept = try PythonOracle.text(
            "import sqlite3, sys; print([r[0] for r in sqlite3.connect(sys.argv[2]).execute('SELECT ZNAME FROM ZITEM ORDER BY ZCOUNT')])",
            arguments: [output.path])
        #expect(kept == "['item 6', 'item 7', 'item 8', 'item 9', 'item 10']")
    }

    /// Both processes are released together; the one that finds the store seeded must have waited for the other
    /// (it started before the seeder ended), or the test saw two runs one after the other and proved nothing about
    /// the lock. Every wait is bounded: a process that never sees `go` gives up after a minute, and so does the test.
    @Test func twoSeedingProcessesReleasedTogetherMakeOneCopy() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A seed large enough that copying it takes longer than the two processes' start-up differs.
        let seed = folder.appendingPathComponent("Seed.sqlite")
        try Self.notesStore(at: seed, count: 100_000)
        for round in 0..<4 {
            let app = folder.appendingPathComponent("App-\(round)", isDirectory: true)
            try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
            let destination = app.appendingPathComponent("Notes.sqlite")
            let go = app.appendingPathComponent("go")
            let mark = { (name: String, index: Int) in folder.appendingPathComponent("\(name)-\(round)-\(index)").path }
            // Each process says it is ready, then waits (a minute at most) for `go` to appear: both start within a
            // millisecond or so. Each writes the clock (ns) as it starts decant and as decant ends.
            var processes: [(Process, Pipe)] = []
            for index in 0..<2 {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/bash")
                process.arguments = [
                    "-c",
                    """
                    touch "$0"; n=0; while [ ! -e "$1" ]; do n=$((n+1)); [ $n -gt 60000 ] && exit 99; sleep 0.001; done
                    date +%s%N > "$2"; ended="$3"; shift 3; "$@"; status=$?; date +%s%N > "$ended"; exit $status
                    """,
                    mark("ready", index), go.path, mark("started", index), mark("ended", index),
                    EndToEndTests.binary.path, "seed", "--default", seed.path, "--store", destination.path,
                ]
                let output = Pipe()
                process.standardOutput = output
                process.standardError = output
                try process.run()
                processes.append((process, output))
            }
            let deadline = Date().addingTimeInterval(60)
            while !(0..<2).allSatisfy({ FileManager.default.fileExists(atPath: mark("ready", $0)) }) {
                guard Date() < deadline else {
                    for (process, _) in processes { process.terminate() }
                    Issue.record("round \(round): the processes did not start within a minute")
                    return
                }
                usleep(1_000)
            }
            try Data().write(to: go)
            var texts: [String] = []
            for (process, output) in processes {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "round \(round): \(text)")
                texts.append(text)
            }
            // One seeded, the other found it seeded; one store, complete, and nothing else (no lock file).
            let seeder = try #require(texts.firstIndex { $0.contains("seeded from") }, "round \(round): \(texts)")
            #expect(texts.filter { $0.contains("seeded from") }.count == 1, "round \(round): \(texts)")
            #expect(texts.filter { $0.contains("already seeded") }.count == 1, "round \(round): \(texts)")
            // The other one waited: it started before the seeder ended, and ended after it.
            func clock(_ name: String, _ index: Int) throws -> Int {
                let text = try String(contentsOfFile: mark(name, index), encoding: .utf8)
                return try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(name): \(text)")
            }
            let waiter = 1 - seeder
            #expect(
                try clock("started", waiter) < clock("ended", seeder),
                "round \(round): the second process started after the seeder had ended")
            #expect(try clock("ended", waiter) >= clock("ended", seeder), "round \(round)")
            for name in ["ready", "started", "ended"] {
                for index in 0..<2 { try FileManager.default.removeItem(atPath: mark(name, index)) }
            }
            try FileManager.default.removeItem(at: go)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: app.path).sorted()
                    == ["Notes.sqlite"], "round \(round)")
            #expect(try SQLiteStore(contentsOf: destination).objectCounts() == ["Note": 100_000])
        }
    }
}
