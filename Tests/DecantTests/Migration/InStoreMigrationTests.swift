import CSQLite
import Decant
import DecantTestSupport
import Foundation
import Testing

/// SQLite → SQLite migrations run as SQL inside SQLite (``InStoreMigration``): each gives, byte for byte, the store
/// the record stream writes, with the same report; and whatever the SQL path cannot decide goes to the record stream.
@Suite("Migrations inside SQLite")
struct InStoreMigrationTests {
    /// The benchmark's story: v1 `Folder{name} ⇄ Note{content, date, folder}`; v2 renames content → text, adds a
    /// required `priority` (default 0), keeps the to-one; `rules` adds rules to v2's Note.
    static func notes(rules: (inout Entity) -> Void = { _ in }) -> ModelBundle {
        func model(_ version: Int) -> ObjectModel {
            MigrationFixtures.folderNotes("Notes", version: version) { note in
                var flagged = Attribute(name: "flagged", type: .boolean, isOptional: version == 1)
                flagged.defaultValue = "NO"
                note.attributes += [Attribute(name: "date", type: .date, isOptional: true), flagged]
                guard version == 2 else { return }
                var priority = Attribute(name: "priority", type: .integer16)
                priority.defaultValue = "0"
                note.attributes.append(priority)
                var score = Attribute(name: "score", type: .double, isOptional: true)
                score.defaultValue = "2.5"
                note.attributes.append(score)
                rules(&note)
            }
        }
        return MigrationFixtures.bundle("Notes", [model(1), model(2)])
    }

    /// A v1 store: 3 folders, `count` notes (some without text, date or folder).
    static func store(in folder: URL, bundle: ModelBundle, count: Int = 40) throws -> URL {
        let v1 = bundle.versions[0]
        let url = folder.appendingPathComponent("notes.sqlite")
        var records = (1...3).map { MigrationFixtures.record("Folder", Int64($0), in: v1, ["name": .string("F\($0)")]) }
        for key in 1...count {
            var values: [String: Value] = ["date": .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(key) * 13.25))]
            if key % 5 != 0 { values["content"] = .string("note \(key) — ünïcödé 'quoted'") }
            if key % 3 == 0 { values["flagged"] = .bool(true) }
            if key % 7 == 0 { values["date"] = .date(Date(timeIntervalSinceReferenceDate: Double(key))) }
            let folder: RelationshipValue = key % 4 == 0 ? .toOne(nil) : .toOne(.pk("Folder", Int64(key % 3 + 1)))
            records.append(MigrationFixtures.record("Note", Int64(key * 2), in: v1, values, relationships: ["folder": folder]))
        }
        try MigrationFixtures.writeStore(at: url, model: v1, records: records)
        return url
    }

    /// Changes a store behind Decant's back, as a damaged or hand-edited store would be.
    static func execute(_ sql: String, on store: URL) {
        var db: OpaquePointer?
        #expect(sqlite3_open(store.path, &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(db)
    }

    /// Every table but `Z_METADATA` (whose store UUID differs) and the schema, cell by cell with storage classes and a
    /// real's bit pattern, and the metadata's entity hashes.
    static func dump(_ url: URL) throws -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(url.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw DecantError(.ioError, "cannot open \(url.path)")
        }
        defer { sqlite3_close(db) }
        func rows(_ sql: String) -> [String] {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return ["cannot prepare \(sql)"] }
            defer { sqlite3_finalize(statement) }
            var result: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                var cells: [String] = []
                for column in 0..<sqlite3_column_count(statement) {
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_INTEGER: cells.append("i\(sqlite3_column_int64(statement, column))")
                    case SQLITE_FLOAT: cells.append("r\(sqlite3_column_double(statement, column).bitPattern)")
                    case SQLITE_NULL: cells.append("null")
                    default:
                        let count = Int(sqlite3_column_bytes(statement, column))
                        let bytes = sqlite3_column_blob(statement, column).map {
                            Data(bytes: $0, count: count).base64EncodedString()
                        }
                        cells.append("b\(bytes ?? "")")
                    }
                }
                result.append(cells.joined(separator: "|"))
            }
            return result
        }
        var result = rows("SELECT type, name, sql FROM sqlite_master ORDER BY name")
        for table in rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
            let name = String(decoding: Data(base64Encoded: String(table.dropFirst())) ?? Data(), as: UTF8.self)
            guard name != "Z_METADATA" else { continue }
            result.append("== \(name)")
            result += rows("SELECT * FROM \"\(name)\" ORDER BY rowid")
        }
        result += try SQLiteStore(contentsOf: url).metadata.entityVersionHashes.sorted { $0.key < $1.key }
            .map { "\($0.key) \($0.value.base64EncodedString())" }
        return result
    }

    /// Migrates `store` inside SQLite and through the record stream and expects the same store and report; returns
    /// the in-store run's report.
    @discardableResult
    /// Rows of `query` on the SQLite file `url`, as Python's sqlite3 reads them (`[(1, 'a'), …]`): an oracle
    /// independent of Decant's reader.
    static func rows(_ url: URL, _ query: String) throws -> String {
        try PythonOracle.text(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); print([tuple(r) for r in c.execute(sys.argv[3])])",
            arguments: [url.path, query])
    }

    /// Each entity and join table of the SQLite file `url` with its row count, counted by Python's sqlite3.
    static func tableCounts(_ url: URL) throws -> String {
        try PythonOracle.text(
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); "
                + "ts = [r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' "
                + "AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE', 'Z_PRIMARYKEY') ORDER BY name\")]; "
                + "print([(t, c.execute('SELECT count(*) FROM \"%s\"' % t).fetchone()[0]) for t in ts])",
            arguments: [url.path])
    }

    /// Migrates `store` inside SQLite and through the record stream and compares the two; with `oracle`, both
    /// outputs must also give the rows written by hand for its query, and with `apple`, the tables and row counts
    /// of the store Core Data migrated (the engines share one writer, so agreeing with each other alone proves
    /// little).
    static func sameBothWays(
        _ store: URL, options: StoreMigration.Options, in folder: URL, rejects: Bool = false,
        oracle: (query: String, rows: String)? = nil, apple: URL? = nil
    ) throws -> StoreMigration.Report {
        var streaming = options
        streaming.environment.runsInStoreWhenPossible = false
        var inStore = options
        let output = folder.appendingPathComponent("in-store.sqlite")
        let streamed = folder.appendingPathComponent("streamed.sqlite")
        if rejects {
            inStore.rejects = folder.appendingPathComponent("in-store-rejects.ndjson")
            streaming.rejects = folder.appendingPathComponent("streamed-rejects.ndjson")
        }
        defer {
            SQLiteFormat().files(at: output).remove()
            SQLiteFormat().files(at: streamed).remove()
        }
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: inStore)
        let expected = try StoreMigration.migrate(store: store, to: .file(streamed), options: streaming)
        #expect(expected.engine == .stream)
        #expect(try dump(output) == dump(streamed))
        if let oracle {
            #expect(try rows(output, oracle.query) == oracle.rows, "inside SQLite")
            #expect(try rows(streamed, oracle.query) == oracle.rows, "through the stream")
        }
        if let apple {
            let counts = try tableCounts(apple)
            #expect(try tableCounts(output) == counts, "inside SQLite")
            #expect(try tableCounts(streamed) == counts, "through the stream")
        }
        #expect(report.read == expected.read)
        #expect(report.written == expected.written)
        #expect(report.ledgers == expected.ledgers)
        #expect(report.rejected == expected.rejected && report.dangling == expected.dangling)
        if let mine = inStore.rejects, let theirs = streaming.rejects {
            let (ours, expected) = try (String(contentsOf: mine, encoding: .utf8), String(contentsOf: theirs, encoding: .utf8))
            #expect(ours == expected)
        }
        return report
    }

    @Test func aRenameADefaultAndAToOneRunInsideSQLiteAndMatchTheStream() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes()
        let store = try Self.store(in: folder, bundle: bundle)
        let before = try Data(contentsOf: store)
        // Notes 1, 5 and 12 (keys 2, 10, 24), by hand: content renamed to text, flagged's default 0 where it was
        // nil, the new priority 0 and score 2.5, the folder kept (note 12 has none).
        let report = try Self.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder, rejects: true,
            oracle: (
                "SELECT Z_PK, ZTEXT, ZFLAGGED, ZPRIORITY, ZSCORE, ZFOLDER FROM ZNOTE WHERE Z_PK IN (2, 10, 24) ORDER BY Z_PK",
                #"[(2, "note 1 — ünïcödé 'quoted'", 0, 0, 2.5, 2), (10, None, 0, 0, 2.5, 3), "#
                    + #"(24, "note 12 — ünïcödé 'quoted'", 1, 0, 2.5, None)]"#
            ))
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
        #expect(report.written == ["Folder": 3, "Note": 40])
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func thePlanSaysWhereTheMigrationWouldRun() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes()
        let store = try Self.store(in: folder, bundle: bundle)
        let plan = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: bundle))
        #expect(plan.engine == .inStore(format: "sqlite") && plan.streamReason == nil)
        #expect(
            PlanDocument(report: plan, store: "notes.sqlite").text.hasSuffix(
                "into a SQLite store, runs inside SQLite, as Core Data's lightweight migration does"))

        // Objects that break a rule: the dry run finds them, and the stream is where they are listed.
        let strict = Self.notes { note in
            for index in note.attributes.indices where note.attributes[index].name == "text" {
                note.attributes[index].isOptional = false
            }
        }
        let refused = try StoreMigration.plan(store: store, options: StoreMigration.Options(bundle: strict))
        #expect(refused.engine == .stream)
        #expect(refused.preflight == ["Note.text optional": 8])
        #expect(
            PlanDocument(report: refused, store: "notes.sqlite").text.hasSuffix(
                "runs through the record stream: the dry run found objects that break a rule of the destination model"))
    }

    @Test func aMinimumLengthOverNonASCIITextHandsTheRunToTheStream() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes { note in
            for index in note.attributes.indices where note.attributes[index].name == "text" {
                note.attributes[index].minValue = "1"
                note.attributes[index].maxValue = "200"
            }
            for index in note.attributes.indices where note.attributes[index].name == "date" {
                note.attributes[index].minDate = 0
            }
            note.uniquenessConstraints = [["date"]]
        }
        let store = try Self.store(in: folder, bundle: bundle)
        // Every note keeps its text (note 5 had none), written by hand from the fixture.
        let texts = (1...5).map { key in key == 5 ? "(10, None)" : "(\(key * 2), \"note \(key) — ünïcödé 'quoted'\")" }
        let report = try Self.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder,
            oracle: (
                query: "SELECT Z_PK, ZTEXT FROM ZNOTE WHERE Z_PK <= 10 ORDER BY Z_PK",
                rows: "[" + texts.joined(separator: ", ") + "]"
            ))
        #expect(report.written["Note"] == 40)
        // Non-ASCII texts under a minimum length are for the stream to count in characters.
        #expect(report.engine == .stream)
        #expect(report.streamReason?.description.contains("may break a rule") == true)
    }

    @Test(arguments: ["min", "max", "required", "unique", "dangling", "type"])
    func aRowThatMayBreakARuleGoesToTheStream(_ rule: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes { note in
            for index in note.attributes.indices where note.attributes[index].name == "date" {
                switch rule {
                case "min": note.attributes[index].minDate = 700_000_100
                case "max": note.attributes[index].maxDate = 700_000_100
                case "required": note.attributes[index].isOptional = false
                default: break
                }
            }
            if rule == "unique" { note.uniquenessConstraints = [["flagged"]] }
        }
        let store = try Self.store(in: folder, bundle: bundle)
        let damage = [
            "required": "UPDATE ZNOTE SET ZDATE = NULL WHERE Z_PK = 4",
            "dangling": "UPDATE ZNOTE SET ZFOLDER = 99 WHERE Z_PK = 2",
            // A text where a Boolean belongs: the stream reads it as no value.
            "type": "UPDATE ZNOTE SET ZFLAGGED = 'yes' WHERE Z_PK = 4",
        ]
        if let sql = damage[rule] {
            Self.execute(sql, on: store)
        }
        // The notes each engine must write, from the fixture's values (note k is Z_PK 2k, dated 700,000,000 + 13.25 k
        // seconds, or k seconds when k is a multiple of 7; flagged when k is a multiple of 3, else NO by default), not
        // from either engine: the two share one writer, so their agreeing alone proves little.
        func date(_ key: Int) -> Double { key % 7 == 0 ? Double(key) : 700_000_000 + Double(key) * 13.25 }
        let kept: [Int] =
            switch rule {
            case "min": (1...40).filter { date($0) >= 700_000_100 }
            case "max": (1...40).filter { date($0) <= 700_000_100 }
            case "required", "type": (1...40).filter { $0 != 2 }
            // The first object of each value keeps it: note 1 (NO) and note 3 (YES).
            case "unique": [1, 3]
            default: Array(1...40)
            }
        let oracle = (
            query: "SELECT Z_PK FROM ZNOTE ORDER BY Z_PK",
            rows: "[" + kept.map { "(\($0 * 2),)" }.joined(separator: ", ") + "]"
        )
        let report = try Self.sameBothWays(
            store, options: StoreMigration.Options(bundle: bundle), in: folder, rejects: true, oracle: oracle)
        #expect(report.engine == .stream)
        // Found by the checks, or (a uniqueness constraint) by the store's own unique index.
        let reason = report.streamReason?.description ?? ""
        #expect(
            reason.contains("Note/p") || reason.contains("UNIQUE constraint failed: ZNOTE.ZFLAGGED")
                || reason == "Note.folder may point at an object that does not exist: key 99", "\(reason)")
        if rule == "dangling" {
            // The source's reference dangled already: carried over with a warning, as Core Data's lightweight
            // migration carries it.
            #expect(report.rejected + report.dangling == 0)
            #expect(report.warnings.map(\.kind) == [.preexistingViolation])
        } else {
            #expect(report.rejected + report.dangling > 0)
        }
    }

    @Test func aStoreCopiedWithItsWriteAheadLogMigratesWithTheLogsChanges() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes()
        let store = try Self.store(in: folder, bundle: bundle)
        // An app's store as copied off a device: the last change still in its -wal.
        let copy = folder.appendingPathComponent("copy", isDirectory: true)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        var db: OpaquePointer?
        #expect(sqlite3_open(store.path, &db) == SQLITE_OK)
        #expect(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0", nil, nil, nil) == SQLITE_OK)
        #expect(sqlite3_exec(db, "UPDATE ZNOTE SET ZCONTENT = 'from the log' WHERE Z_PK = 2", nil, nil, nil) == SQLITE_OK)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(
                atPath: store.path + suffix, toPath: copy.appendingPathComponent("notes.sqlite").path + suffix)
        }
        sqlite3_close(db)
        let copied = copy.appendingPathComponent("notes.sqlite")
        #expect(try FileManager.default.attributesOfItem(atPath: copied.path + "-wal")[.size] as? Int ?? 0 > 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: copy.path).sorted()
        let report = try Self.sameBothWays(copied, options: StoreMigration.Options(bundle: bundle), in: folder)
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
        // The source's files are untouched, its log included.
        #expect(try FileManager.default.contentsOfDirectory(atPath: copy.path).sorted() == files)
        let output = folder.appendingPathComponent("out.sqlite")
        _ = try StoreMigration.migrate(store: copied, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        let notes = try MigrationFixtures.read(output, bundle: bundle)["Note"] ?? []
        let first = try #require(notes.first)
        #expect(MigrationFixtures.value(first, "text", model: bundle.versions[1]) == .string("from the log"))
    }

    @Test func withoutRejectsTheStreamStopsAtTheFirstBrokenRuleAndNothingIsWritten() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes { note in
            for index in note.attributes.indices where note.attributes[index].name == "date" {
                note.attributes[index].isOptional = false
            }
        }
        let store = try Self.store(in: folder, bundle: bundle)
        Self.execute("UPDATE ZNOTE SET ZDATE = NULL WHERE Z_PK = 6", on: store)
        let output = folder.appendingPathComponent("out.sqlite")
        #expect {
            try StoreMigration.migrate(store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
        } throws: { error in
            (error as? DecantError)?.code == .validationFailed && "\(error)".contains("Note/p6")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.sqlite"])
    }

    @Test func aDamagedStoreFailsCleanlyWithNothingWritten() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes()
        let pristine = try Data(contentsOf: Self.store(in: folder, bundle: bundle, count: 400))
        let pages = pristine.count / 4096
        // A run of flipped bytes inside each page after the first (table and index pages, the metadata's overflow).
        for page in 1..<pages {
            var damaged = pristine
            for offset in page * 4096 + 100..<page * 4096 + 160 { damaged[offset] ^= 0x5A }
            let store = folder.appendingPathComponent("damaged.sqlite")
            try damaged.write(to: store)
            let output = folder.appendingPathComponent("out.sqlite")
            do {
                let report = try StoreMigration.migrate(
                    store: store, to: .file(output), options: StoreMigration.Options(bundle: bundle))
                #expect(report.ledgers.allSatisfy { $0.isReconciled })
                SQLiteFormat().files(at: output).remove()
            } catch let error as DecantError {
                #expect(
                    [.malformedInput, .validationFailed, .modelMismatch].contains(error.code),
                    "page \(page): \(error)")
                #expect(!FileManager.default.fileExists(atPath: output.path), "page \(page)")
            }
            #expect(try Data(contentsOf: store) == damaged, "page \(page): the source must stay as it was")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
                    == ["damaged.sqlite", "notes.sqlite"], "page \(page)")
            try FileManager.default.removeItem(at: store)
        }
    }

    @Test func aFailureAfterTheRowsAreInLeavesNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes()
        let store = try Self.store(in: folder, bundle: bundle)
        let before = try Data(contentsOf: store)
        // The store is migrated and finished inside SQLite; then the rejects file cannot be written.
        var options = StoreMigration.Options(bundle: bundle)
        options.rejects = folder.appendingPathComponent("missing/rejects.ndjson")
        let output = folder.appendingPathComponent("out.sqlite")
        #expect {
            try StoreMigration.migrate(store: store, to: .file(output), options: options)
        } throws: { error in
            (error as? DecantError)?.code == .cannotCreateOutput
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.sqlite"])
        #expect(try Data(contentsOf: store) == before)
    }

    /// `ZNOTE` holds `Note` alone: Core Data's fetch of it does not read `Z_ENT` (section 1.9), so a row whose `Z_ENT`
    /// names no entity is a Note, and migrates as one, inside SQLite and through the stream alike.
    @Test func aStrayEntityNumberInATableOfItsOwnMigratesAsANote() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = Self.notes()
        let store = try Self.store(in: folder, bundle: bundle)
        Self.execute("UPDATE ZNOTE SET Z_ENT = 42 WHERE Z_PK = 8", on: store)
        #expect(try Self.inStoreReason(store, bundle: bundle) == nil)
        let report = try Self.sameBothWays(store, options: StoreMigration.Options(bundle: bundle), in: folder)
        #expect(report.written == ["Folder": 3, "Note": 40])
        #expect(report.warnings.contains { $0.kind == .strayEntityNumber && $0.message.contains("Z_PK 8") })
    }

    /// Why the migration of `store` to the current version needs the record stream, from its plan or from a run
    /// into a scratch store that is then abandoned (nil: it runs inside SQLite).
    static func inStoreReason(_ store: URL, bundle: ModelBundle) throws -> String? {
        let sqlite = try SQLiteStore(contentsOf: store)
        let reader = try SQLiteStoreReader(store: sqlite, model: sqlite.resolveModel(bundle: bundle))
        let plan = try MigrationPlan(bundle: bundle, source: reader.model)
        switch try InStoreMigration.prepare(plan: plan, reader: reader) {
        case .ready(let migration):
            let scratch = store.deletingLastPathComponent().appendingPathComponent("scratch.sqlite")
            let writer = try SQLiteStoreWriter(creating: scratch, model: plan.destination)
            defer { writer.abandon() }
            switch try migration.run(into: writer) {
            case .migrated: return nil
            case .needsRecordStream(let reason): return reason.description
            }
        case .needsRecordStream(let reason): return reason.description
        }
    }

    @Test func theSamplesNotesChainAndTheRenameChainRunInsideSQLite() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = try MigrationFixtures.notes()
        let store = try NotesMigrationTests.v1Store(in: folder, bundle: notes)
        let when = NotesMigrationTests.when.timeIntervalSinceReferenceDate
        let report = try Self.sameBothWays(
            store, options: StoreMigration.Options(bundle: notes), in: folder,
            oracle: (
                "SELECT Z_PK, ZTEXT, ZTITLE, ZDATE, ZFOLDER FROM ZNOTE ORDER BY Z_PK",
                "[(1, 'milk', None, \(when), None), (2, 'eggs', None, None, None), (5, None, None, \(when + 60), None)]"
            ))
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
        #expect(report.hops.count == 2)

        let chain = ChainAndShapeMigrationTests.renameChain()
        let items = folder.appendingPathComponent("items.sqlite")
        let v1 = chain.versions[0]
        try MigrationFixtures.writeStore(
            at: items, model: v1,
            records: (1...9).map {
                MigrationFixtures.record("Item", Int64($0), in: v1, ["a": .string("value \($0)"), "count": .integer(Int64($0))])
            })
        let chained = try Self.sameBothWays(
            items, options: StoreMigration.Options(bundle: chain), in: folder,
            oracle: (
                "SELECT Z_PK, ZE, ZCOUNT FROM ZITEM ORDER BY Z_PK",
                "[" + (1...9).map { "(\($0), 'value \($0)', \($0))" }.joined(separator: ", ") + "]"
            ))
        #expect(chained.engine == .inStore(format: "sqlite"), "\(chained.streamReason?.description ?? "")")
        #expect(chained.hops.count == 4)
    }

    @Test func anEntityMovingIntoANewParentRunsInsideSQLite() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = ChainAndShapeMigrationTests.newParent()
        let p1 = bundle.versions[0]
        let url = folder.appendingPathComponent("parent.sqlite")
        var records: [Record] = []
        for key: Int64 in 1...4 {
            records.append(
                MigrationFixtures.record("Note", key, in: p1, ["title": .string("t\(key)"), "body": .string("b\(key)")]))
        }
        for key: Int64 in 1...6 {
            let note: ObjectReference? = key == 6 ? nil : .pk("Note", key % 4 + 1)
            records.append(
                MigrationFixtures.record(
                    "Tag", key, in: p1, ["label": .string("l\(key)")], relationships: ["note": .toOne(note)]))
        }
        try MigrationFixtures.writeStore(at: url, model: p1, records: records)
        // Note's rows move to Item's table under a new entity number; Tag.note keeps its keys.
        let report = try Self.sameBothWays(url, options: StoreMigration.Options(bundle: bundle), in: folder)
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
    }

    @Test func shapesTheSQLPathDoesNotTakeRunInTheStreamAndSayWhy() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A to-one becoming a many-to-many (ordered), then a to-one again.
        let shapes = ChainAndShapeMigrationTests.shapes()
        let s1 = shapes.versions[0]
        let url = folder.appendingPathComponent("shapes.sqlite")
        try MigrationFixtures.writeStore(
            at: url, model: s1,
            records: [
                MigrationFixtures.record("Folder", 1, in: s1, ["name": .string("inbox")]),
                MigrationFixtures.record("Note", 1, in: s1, ["text": .string("x")], relationships: ["folder": .toOne(.pk("Folder", 1))]),
            ])
        let reason = try Self.inStoreReason(url, bundle: shapes)
        #expect(reason == "Note.folder is read from folders, which is a to-many")
        let report = try Self.sameBothWays(url, options: StoreMigration.Options(bundle: shapes), in: folder)
        #expect(report.engine == .stream)
        #expect(report.streamReason?.description == reason)

        // An entity the next version removes: its objects are dropped and counted, as the stream does.
        var note = Entity(name: "Note")
        note.attributes = [Attribute(name: "text", type: .string, isOptional: true)]
        var tag = Entity(name: "Tag")
        tag.attributes = [Attribute(name: "label", type: .string, isOptional: true)]
        let removal = MigrationFixtures.bundle(
            "Removal",
            [ObjectModel(versionName: "R1", entities: [note, tag]), ObjectModel(versionName: "R2", entities: [note])])
        let tags = folder.appendingPathComponent("tags.sqlite")
        try MigrationFixtures.writeStore(
            at: tags, model: removal.versions[0],
            records: [
                MigrationFixtures.record("Tag", 1, in: removal.versions[0], ["label": .string("a")]),
                MigrationFixtures.record("Note", 1, in: removal.versions[0], ["text": .string("b")]),
            ])
        let removed = try Self.sameBothWays(
            tags, options: StoreMigration.Options(bundle: removal), in: folder,
            oracle: (
                "SELECT (SELECT count(*) FROM sqlite_master WHERE name = 'ZTAG'), Z_PK, ZTEXT FROM ZNOTE",
                "[(0, 1, 'b')]"
            ))
        #expect(removed.engine == .inStore(format: "sqlite"), "\(removed.streamReason?.description ?? "")")
        #expect(removed.ledgers.first?.rows["Tag"] == MigrationLedger.Row(read: 1, removed: 1))

        // A removal a mapping file states applies delete rules; a `where` filter removes objects too.
        let trash = folder.appendingPathComponent("trash", isDirectory: true)
        try FileManager.default.createDirectory(at: trash, withIntermediateDirectories: true)
        let (trashStore, _, trashOptions) = try ValidationTests.trash(rule: .cascade, in: trash)
        let filtered = try Self.sameBothWays(trashStore, options: trashOptions, in: trash)
        #expect(filtered.engine == .stream)
        #expect(filtered.streamReason?.description.contains("filters objects") == true, "\(filtered.streamReason?.description ?? "")")
    }

    @Test(arguments: CorpusMigrationTests.chains) func corpusChainsGiveTheSameStoreBothWays(
        _ chain: CorpusMigrationTests.Chain
    ) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundle.load(from: Fixtures.corpus(chain.model))
        let store = try Fixtures.copyStore(Fixtures.corpus(chain.source), into: folder)
        let options = StoreMigration.Options(bundle: bundle, destinationVersion: chain.destinationVersion)
        // Apple's migrated store (copied: opening a WAL store writes its -shm).
        let expectedFolder = folder.appendingPathComponent("expected", isDirectory: true)
        try FileManager.default.createDirectory(at: expectedFolder, withIntermediateDirectories: true)
        let apple = try Fixtures.copyStore(Fixtures.corpus(chain.expected), into: expectedFolder)
        let report = try Self.sameBothWays(store, options: options, in: folder, apple: apple)
        #expect(report.engine == .inStore(format: "sqlite"), "\(report.streamReason?.description ?? "")")
    }
}
