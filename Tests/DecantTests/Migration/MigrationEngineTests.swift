import Decant
import DecantTestSupport
import Foundation
import Testing

/// The migration engines behind ``MigrationEngine``: the record stream on the in-memory store (no files), and a
/// format's own in-store engine (``InStoreMigratingFormat``) chosen by ``StoreMigration`` with no change to it, shown
/// with ``MemoFormat``, a format of the tests alone.
@Suite("Migration engines")
struct MigrationEngineTests {
    /// v1 `Folder{name} ⇄ Note{content, folder}`; v2 renames content → text and adds a required `priority` (default 7).
    static let bundle: ModelBundle = {
        var priority = Attribute(name: "priority", type: .integer16)
        priority.defaultValue = "7"
        return MigrationFixtures.bundle(
            "Memo",
            [
                MigrationFixtures.folderNotes("Memo", version: 1),
                MigrationFixtures.folderNotes("Memo", version: 2) { $0.attributes.append(priority) },
            ])
    }()

    /// Two folders and five notes of v1; note 4 has no content and no folder.
    static func records() -> [Record] {
        let v1 = bundle.versions[0]
        var records = (1...2).map { MigrationFixtures.record("Folder", Int64($0), in: v1, ["name": .string("F\($0)")]) }
        for key in 1...5 {
            let content: Value = key == 4 ? .null : .string("note \(key)")
            let folder: RelationshipValue = key == 4 ? .toOne(nil) : .toOne(.pk("Folder", Int64(key % 2 + 1)))
            records.append(
                MigrationFixtures.record("Note", Int64(key), in: v1, ["content": content], relationships: ["folder": folder]))
        }
        return records
    }

    static func inMemoryStore() throws -> InMemoryStore {
        var store = InMemoryStore(model: bundle.versions[0])
        for record in records() { try store.insert(record) }
        return store
    }

    /// Every record `reader` reads, per entity.
    static func records(of reader: inout some RecordReader) throws -> [String: [Record]] {
        guard let first = reader.model.entities.first, let layout = RecordLayout(entity: first.name, in: reader.model)
        else { return [:] }
        var batch = RecordBatch(layout: layout)
        var result: [String: [Record]] = [:]
        while try reader.nextBatch(into: &batch) {
            for row in 0..<batch.count { result[batch.layout.entityName, default: []].append(batch.record(at: row)) }
        }
        return result
    }

    /// `plan` run by the record stream from the in-memory `store`, read `batchSize` objects at a time, into a new
    /// in-memory store: what the run gave or threw, the store written, and how many readers of `store` the engine
    /// opened for its passes before the run.
    static func streamed(_ plan: MigrationPlan, from store: InMemoryStore, batchSize: Int = 1024)
        -> (outcome: Result<MigrationResult, any Error>, written: InMemoryStore, opened: Int)
    {
        var opened = 0
        let engine = RecordStreamEngine(settings: MigrationSettings()) {
            opened += 1
            return store.makeReader()
        }
        var reader = store.makeReader(batchSize: batchSize)
        var writer = InMemoryStore.Writer(model: plan.destination)
        let outcome = Result { try engine.migrate(plan, from: &reader, into: &writer) }
        return (outcome, writer.store, opened)
    }

    static func value(_ record: Record?, _ name: String) -> Value? {
        record.flatMap { MigrationFixtures.value($0, name, model: bundle.versions[1]) }
    }

    // MARK: - The record stream, in memory

    @Test func theRecordStreamMigratesAnInMemoryStoreIntoAnother() throws {
        let store = try Self.inMemoryStore()
        let plan = try MigrationPlan(bundle: Self.bundle, source: store.model)
        let run = Self.streamed(plan, from: store, batchSize: 2)
        let result = try run.outcome.get()

        #expect(result.engine == .stream)
        #expect(result.read == ["Folder": 2, "Note": 5])
        #expect(result.written == ["Folder": 2, "Note": 5])
        #expect(result.ledgers.map(\.hop) == ["Memo 1 → Memo 2"])
        #expect(result.ledgers.allSatisfy { $0.isReconciled })
        #expect(result.rejects.isEmpty && result.findings.isEmpty)
        // An inferred rename and a default need no pass over the source before the run.
        #expect(run.opened == 0)
        let notes = run.written.records(of: "Note")
        #expect(notes.count == 5)
        #expect(Self.value(notes.first, "text") == .string("note 1"))
        #expect(notes.allSatisfy { Self.value($0, "priority") == .integer(7) })
        #expect(Self.value(notes.first { $0.id == .primaryKey(4) }, "text") == .null)
        #expect(run.written.records(of: "Folder").map(\.id) == [.primaryKey(1), .primaryKey(2)])
    }

    @Test func aFilterRemovesObjectsInPassesOverTheInMemoryStore() throws {
        let store = try Self.inMemoryStore()
        let filter = try ValueExpression(parsing: "$source.content != nil")
        let mapping = ExplicitMapping(
            source: "Memo 1", destination: "Memo 2", path: "memo.yaml",
            entities: [ExplicitEntityMapping(destination: "Note", source: .entity("Note"), filter: filter)])
        let plan = try MigrationPlan(bundle: Self.bundle, source: store.model, mappings: [mapping])
        let run = Self.streamed(plan, from: store)
        let result = try run.outcome.get()

        // The delete rules' pass read the source again, through the engine's own reader: the filter's object is gone.
        #expect(run.opened >= 1)
        #expect(result.written["Note"] == 4)
        #expect(result.ledgers.first?.rows["Note"]?.removed == 1)
        #expect(result.ledgers.allSatisfy { $0.isReconciled })
        #expect(!run.written.records(of: "Note").contains { $0.id == .primaryKey(4) })
    }

    @Test func theRecordStreamCompilesEachHopOncePerRun() throws {
        // Two hops, the first with a filter (a pass for the objects it removes) and a key path through the folder (a
        // pass for the graph it reads): three passes over the source, each hop compiled once for all of them.
        var v3 = Self.bundle.versions[1]
        v3.versionName = "Memo 3"
        let note = try #require(v3.entities.firstIndex { $0.name == "Note" })
        v3.entities[note].attributes.append(Attribute(name: "archived", type: .boolean, isOptional: true))
        let bundle = MigrationFixtures.bundle("Memo", Self.bundle.versions + [v3])
        let mapping = ExplicitMapping(
            source: "Memo 1", destination: "Memo 2", path: "memo.yaml",
            entities: [
                ExplicitEntityMapping(
                    destination: "Note", source: .entity("Note"),
                    filter: try ValueExpression(parsing: "$source.content != nil"),
                    attributes: [.init(name: "text", expression: try ValueExpression(parsing: "$source.folder.name"))])
            ])
        let store = try Self.inMemoryStore()
        let plan = try MigrationPlan(bundle: bundle, source: store.model, mappings: [mapping])
        try #require(plan.hops.count == 2)
        let compilations = HopCompilations()
        let run = HopCompilations.$current.withValue(compilations) { Self.streamed(plan, from: store) }
        let result = try run.outcome.get()

        #expect(compilations.hops == ["Memo 1 → Memo 2", "Memo 2 → Memo 3"])
        // The passes ran: the filter's object is gone, the key path read each note's folder.
        #expect(run.opened >= 2)
        #expect(result.written == ["Folder": 2, "Note": 4])
        let texts = run.written.records(of: "Note").map { MigrationFixtures.value($0, "text", model: v3) }
        #expect(texts == ["F2", "F1", "F2", "F2"])
    }

    @Test func aPlanThatCannotRunIsRefusedBeforeAnyPass() throws {
        // A third version whose Folder.name becomes a number: not inferred, so the plan cannot run.
        var folder = Entity(name: "Folder")
        folder.attributes = [Attribute(name: "name", type: .integer64, isOptional: true)]
        let other = ObjectModel(versionName: "Memo 3", entities: [folder])
        let bundle = MigrationFixtures.bundle("Memo", Self.bundle.versions + [other])
        let store = try Self.inMemoryStore()
        let plan = try MigrationPlan(bundle: bundle, source: store.model)
        try #require(!plan.isExecutable)
        let run = Self.streamed(plan, from: store)
        let error = try #require(throws: DecantError.self) { try run.outcome.get() }
        #expect(error.code == .planNotExecutable)
        #expect(run.opened == 0)
        #expect(run.written.counts.values.reduce(0, +) == 0)
    }

    // MARK: - A format's own engine, chosen with no change to StoreMigration

    /// A v1 memo store in `folder`, and a registry that knows the memo format (tried first: an NDJSON document's
    /// content would otherwise be told as NDJSON).
    static func memoStore(in folder: URL, fastPath: MemoFormat.FastPath) throws -> (URL, FormatRegistry) {
        let url = folder.appendingPathComponent("notes.memo")
        var reader = try inMemoryStore().makeReader()
        var writer = try MemoFormat().makeWriter(at: url, model: bundle.versions[0], options: FormatOptions())
        _ = try RecordTransfer.copy(from: &reader, to: &writer)
        let registry = FormatRegistry([MemoFormat(fastPath: fastPath)] + FormatRegistry.builtIn.formats)
        return (url, registry)
    }

    static func options(_ registry: FormatRegistry) -> StoreMigration.Options {
        var options = StoreMigration.Options(bundle: bundle)
        options.environment.registry = registry
        options.formatOptions.version = "Memo 1"
        return options
    }

    static func read(_ url: URL) throws -> [String: [Record]] {
        var reader = try MemoFormat().makeReader(at: url, options: FormatOptions(bundle: bundle, version: "Memo 2"))
        return try records(of: &reader)
    }

    @Test func aMemoStoreMigratesThroughItsOwnEngineAndWritesWhatTheStreamWrites() throws {
        let folder = try Fixtures.temporaryDirectory()
        let (store, registry) = try Self.memoStore(in: folder, fastPath: .runs)
        let fast = folder.appendingPathComponent("fast.memo")
        let report = try StoreMigration.migrate(store: store, to: .file(fast), options: Self.options(registry))
        #expect(report.engine == .inStore(format: "memo"))
        #expect(report.streamReason == nil)
        #expect(report.action == .migrated)
        #expect(report.written == ["Folder": 2, "Note": 5])

        var streamed = Self.options(registry)
        streamed.environment.runsInStoreWhenPossible = false
        let slow = folder.appendingPathComponent("slow.memo")
        let stream = try StoreMigration.migrate(store: store, to: .file(slow), options: streamed)
        #expect(stream.engine == .stream)
        #expect(stream.streamReason == .inStoreTurnedOff(engine: "the memo store"))
        #expect(stream.streamReason?.description == "running inside the memo store is turned off")
        #expect(try Self.read(fast) == Self.read(slow))
        #expect(try Self.read(fast)["Note"]?.count == 5)

        // plan says what migrate would run.
        let plan = try StoreMigration.plan(store: store, options: Self.options(registry))
        #expect(plan.engine == .inStore(format: "memo"))
        #expect(PlanDocument(report: plan, store: store.path).engine == .inStore(format: "memo"))
    }

    @Test func aPlanTheFormatsEngineDeclinesRunsInTheStreamWithItsReason() throws {
        let folder = try Fixtures.temporaryDirectory()
        let (store, registry) = try Self.memoStore(in: folder, fastPath: .declines("memo stores keep no renames"))
        let output = folder.appendingPathComponent("out.memo")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: Self.options(registry))
        #expect(report.engine == .stream)
        #expect(report.streamReason == .planNotSupported("memo stores keep no renames"))
        #expect(try Self.read(output)["Note"]?.count == 5)

        let json = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        #expect(json["engine"] as? String == "stream")
        #expect(json["streamReason"] as? String == "memo stores keep no renames")
        #expect(json["action"] as? String == "migrated")
    }

    @Test func aFullDiskInTheFormatsEngineStopsTheMigrationWithNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        let (store, registry) = try Self.memoStore(in: folder, fastPath: .failsAsAFullDisk)
        let before = try Data(contentsOf: store)
        let output = folder.appendingPathComponent("out.memo")
        let error = try #require(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(output), options: Self.options(registry))
        }
        // Not a reason for the record stream to run instead: an I/O error, exit 74, and nothing written.
        #expect(error.code == .ioError)
        #expect(error.code.exitCode == 74)
        #expect(!FileManager.default.fileExists(atPath: output.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["notes.memo"])
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func seedingTakesAMemoSeedThroughTheRegistryItIsGiven() throws {
        let folder = try Fixtures.temporaryDirectory()
        let (seed, registry) = try Self.memoStore(in: folder, fastPath: .runs)
        let destination = folder.appendingPathComponent("Notes.sqlite")
        let report = try Seeding.seed(
            default: seed, store: destination, options: FormatOptions(bundle: Self.bundle, version: "Memo 1"),
            registry: registry)
        #expect(report.action == .seeded)
        #expect(report.seedFormat == "memo")
        #expect(report.migratedFrom == "Memo 1")
        #expect(report.version == "Memo 2")
        #expect(report.objects == ["Folder": 2, "Note": 5])
    }

    @Test func aDiskFailureInsideSQLiteIsAnIOErrorNotAReasonForTheStream() throws {
        let folder = try Fixtures.temporaryDirectory()
        let bundle = InStoreMigrationTests.notes()
        let url = try InStoreMigrationTests.store(in: folder, bundle: bundle, count: 5)
        let sqlite = try SQLiteStore(contentsOf: url)
        let reader = try SQLiteStoreReader(store: sqlite, model: sqlite.resolveModel(bundle: bundle))
        let plan = try MigrationPlan(bundle: bundle, source: reader.model)
        let prepared = try InStoreMigration.prepare(plan: plan, reader: reader)
        let migration = try #require({ if case .ready(let migration) = prepared { migration } else { nil } }())
        let output = folder.appendingPathComponent("out.sqlite")
        let writer = try SQLiteStoreWriter(creating: output, model: plan.destination)
        // The source goes away before SQLite attaches it: SQLite cannot open it, a failure of the file system.
        try FileManager.default.removeItem(at: url)
        let error = try #require(throws: DecantError.self) { try migration.run(into: writer) }
        #expect(error.code == .ioError)
        #expect(error.code.exitCode == 74)
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test func engineKindsAndReasonsKeepTheirSpellings() throws {
        let kinds: [MigrationEngineKind] = [.stream, .inStore(format: "sqlite"), .nothing]
        #expect(kinds.map(\.description) == ["stream", "sqlite", "none"])
        let encoded = try JSONEncoder().encode(kinds)
        #expect(String(decoding: encoded, as: UTF8.self) == #"["stream","sqlite","none"]"#)
        #expect(try JSONDecoder().decode([MigrationEngineKind].self, from: encoded) == kinds)
        let reasons: [StreamReason] = [
            .inStoreTurnedOff(engine: "SQLite"), .dryRunFoundViolations, .planNotSupported("Note.title is derived"),
        ]
        #expect(
            reasons.map(\.description) == [
                "running inside SQLite is turned off",
                "the dry run found objects that break a rule of the destination model", "Note.title is derived",
            ])
        #expect(try JSONDecoder().decode([StreamReason].self, from: JSONEncoder().encode(reasons)) == reasons)
    }
}
