import Decant
import DecantTestSupport
import Foundation
import Testing

/// First-run seeding: one consistent copy (WAL content and external data included), never an overwrite, one copy
/// for two seeders, leftovers of crashed runs cleaned, and a second run that changes nothing.
@Suite("Seeding", .serialized)
struct SeedingTests {
    /// Corpus stores whose newest rows sit in their `-wal`.
    static let walStores: [String] = Fixtures.corpusItems { $0.lastPathComponent.hasSuffix("-wal") }
        .map { Fixtures.corpusRelativePath($0).replacingOccurrences(of: "-wal", with: "") }

    /// The corpus's own WAL stores (at least objc.io's five Moody stores) are there, so the sweeps below
    /// cannot pass on none; the apps corpus's are swept when their `-wal` is beside them (its copies on some machines
    /// hold them checkpointed into the database).
    @Test func theCorpusHasItsWALStores() {
        #expect(Self.walStores.filter { !$0.hasPrefix("apps:") && !$0.hasPrefix("legacy:") }.count >= 5, "\(Self.walStores)")
    }

    /// Copies a store with its companions into `folder` (the corpus is never opened in place).
    static func copySet(_ url: URL, into folder: URL, as name: String? = nil) throws -> URL {
        let target = folder.appendingPathComponent(name ?? url.lastPathComponent)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: target.path + suffix)
        }
        return target
    }

    /// Every record of the store at `url`, read with its own model, or for a corpus store allow-listed as having no
    /// `Z_MODELCACHE`, with the model source beside `corpusStore`.
    static func records(of url: URL, corpusStore: String? = nil) throws -> [String: [Record]] {
        let store = try SQLiteStore(contentsOf: url)
        let bundle = corpusStore.flatMap {
            CorpusStoreModels.bundle(forStore: $0, hashes: store.metadata.entityVersionHashes)
        }
        let model = try store.resolveModel(bundle: bundle)
        let reader = try SQLiteStoreReader(store: store, model: model)
        var result: [String: [Record]] = [:]
        for entity in model.entities { result[entity.name] = try reader.records(of: entity.name) }
        return result
    }

    @Test("WAL-mode seed stores seed with all their rows", arguments: walStores)
    func walSeed(_ store: String) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Bundle"), withIntermediateDirectories: true)
        let seed = try Self.copySet(Fixtures.corpus(store), into: folder.appendingPathComponent("Bundle"))
        let app = folder.appendingPathComponent("App")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let destination = app.appendingPathComponent("Store.sqlite")
        let report = try Seeding.seed(default: seed, store: destination)
        #expect(report.action == .seeded)
        #expect(!FileManager.default.fileExists(atPath: destination.path + "-wal"))
        #expect(try SQLiteStore(contentsOf: destination).objectCounts() == SQLiteStore(contentsOf: seed).objectCounts())
        let seededRecords = try CorpusAllowList.readingRows(of: store) {
            try Self.records(of: destination, corpusStore: store)
        }
        if let seededRecords { #expect(try seededRecords == Self.records(of: seed, corpusStore: store)) }
        // Independently of Decant's reader: every table's rows, as Python's sqlite3 reads them (the seed through its
        // -wal), are the same on both sides.
        let dump = "import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); "
            + "ts = [r[0] for r in c.execute(\"SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name\")]; "
            + "print(ts); [print(t, sorted(map(repr, c.execute('SELECT * FROM \"%s\"' % t)))) for t in ts]"
        let seeded = try PythonOracle.text(dump, arguments: [destination.path])
        #expect(seeded == (try PythonOracle.text(dump, arguments: [seed.path])))
        #expect(seeded.contains("Z_PRIMARYKEY"))
        // An empty store counts too (a `-wal`, empty, beside a store no app wrote rows to): what the seed holds, the
        // copy holds, as compared above; theWALSweepSeedsRows keeps the sweep from passing on empty stores alone.
    }

    /// The WAL sweep seeds stores that hold rows, not only empty ones (objc.io's Moody stores hold moods).
    @Test func theWALSweepSeedsRows() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var withRows = 0
        for store in Self.walStores where !store.hasPrefix("apps:") {
            let seed = try Self.copySet(Fixtures.corpus(store), into: folder, as: "\(withRows)-\(UUID().uuidString).sqlite")
            if try SQLiteStore(contentsOf: seed).objectCounts().values.reduce(0, +) > 0 { withRows += 1 }
        }
        #expect(withRows >= 5)
    }

    @Test func secondRunChangesNothing() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = try Self.copySet(Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody"), into: folder)
        let destination = folder.appendingPathComponent("App.sqlite")
        #expect(try Seeding.seed(default: seed, store: destination).action == .seeded)
        let bytes = try Data(contentsOf: destination)
        // A modification date set far in the past: any write would move it, however coarse the clock (no sleep).
        let past = Date(timeIntervalSince1970: 1_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: destination.path)
        let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
        let again = try Seeding.seed(default: seed, store: destination)
        #expect(again.action == .alreadySeeded)
        #expect(again.text.contains("already seeded"))
        #expect(try Data(contentsOf: destination) == bytes)
        let after = try FileManager.default.attributesOfItem(atPath: destination.path)
        #expect(after[.modificationDate] as? Date == past)
        // The same file, not a copy renamed over it.
        #expect(after[.systemFileNumber] as? Int == attributes[.systemFileNumber] as? Int)
    }

    @Test func twoSeedersMakeOneCopy() throws {
        for _ in 0..<10 {
            let folder = try Fixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: folder) }
            let seed = try Self.copySet(Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody"), into: folder)
            let destination = folder.appendingPathComponent("App.sqlite")
            let results = Results()
            let group = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    results.add(Result { try Seeding.seed(default: seed, store: destination).action })
                }
            }
            group.wait()
            let actions = try results.all.map { try $0.get() }
            #expect(actions.sorted { $0.rawValue < $1.rawValue } == [.alreadySeeded, .seeded])
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            #expect(leftovers == ["App.sqlite", "Moody 5.moody", "Moody 5.moody-shm", "Moody 5.moody-wal"])
        }
    }

    @Test func leftoversOfACrashedRunAreRemoved() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = try Self.copySet(Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody"), into: folder)
        let destination = folder.appendingPathComponent("App.sqlite")
        try Data("half a copy".utf8).write(to: folder.appendingPathComponent(".App.sqlite.decant-0000"))
        try Data("stale log".utf8).write(to: URL(fileURLWithPath: destination.path + "-wal"))
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent(".App_SUPPORT/_EXTERNAL_DATA"), withIntermediateDirectories: true)
        #expect(try Seeding.seed(default: seed, store: destination).action == .seeded)
        let entries = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!entries.contains(".App.sqlite.decant-0000"))
        #expect(!entries.contains("App.sqlite-wal"))
        #expect(!entries.contains(".App_SUPPORT"))
        #expect(try SQLiteStore(contentsOf: destination).objectCounts() == SQLiteStore(contentsOf: seed).objectCounts())
    }

    @Test func aNewerStoreIsLeftAlone() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let moody = Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld")
        var bundle = try ModelBundle.load(from: moody)
        bundle.currentVersionName = "Moody"
        let seed = try Self.copySet(Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody"), into: folder)
        let destination = try Self.copySet(
            Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 2.moody"), into: folder, as: "App.sqlite")
        let before = try Data(contentsOf: destination)
        let error = #expect(throws: DecantError.self) {
            try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: bundle))
        }
        #expect(error?.code == .modelMismatch)
        #expect(error?.message.contains("version Moody 2, newer than the current Moody;") == true, "\(error?.message ?? "")")
        #expect(try Data(contentsOf: destination) == before)
    }

    @Test func anOlderStoreIsMigratedInPlaceWithABackup() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notes = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Notes.xcdatamodeld"))
        var options = FormatOptions(bundle: notes, version: "Notes")
        options.sqlite.journalMode = .delete
        let seed = folder.appendingPathComponent("NotesV1.sqlite")
        _ = try StoreConversion.convert(
            from: Fixtures.samplesRoot.appendingPathComponent("notes-v1"), to: seed, options: options)
        let destination = folder.appendingPathComponent("App.sqlite")
        try FileManager.default.copyItem(at: seed, to: destination)
        let before = try Data(contentsOf: destination)
        let report = try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: notes))
        #expect(report.action == .migrated)
        #expect(report.migratedFrom == "Notes")
        #expect(report.version == "Notes 3")
        let backup = folder.appendingPathComponent("App.sqlite.backup-Notes")
        #expect(report.backup == backup.displayPath)
        #expect(try Data(contentsOf: backup) == before)
        let store = try SQLiteStore(contentsOf: destination)
        #expect(store.metadata.entityVersionHashes == notes.currentVersion?.entityVersionHashes)
        #expect(try store.objectCounts() == ["Note": 4])
        let again = try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: notes))
        #expect(again.action == .alreadySeeded)
        // A fresh destination is seeded from the older seed and migrated at once, with no backup needed.
        let fresh = folder.appendingPathComponent("Fresh.sqlite")
        let seeded = try Seeding.seed(default: seed, store: fresh, options: FormatOptions(bundle: notes))
        #expect(seeded.action == .seeded)
        #expect(seeded.migratedFrom == "Notes")
        #expect(try SQLiteStore(contentsOf: fresh).metadata.entityVersionHashes == notes.currentVersion?.entityVersionHashes)
    }

    @Test func aCSVOrJSONSeedBecomesAStoreForTheModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let books = try ModelBundle.load(from: Fixtures.samplesRoot.appendingPathComponent("Books.xcdatamodeld"))
        let destination = folder.appendingPathComponent("Books.sqlite")
        let report = try Seeding.seed(
            default: Fixtures.samplesRoot.appendingPathComponent("books"), store: destination,
            options: FormatOptions(bundle: books))
        #expect(report.action == .seeded)
        #expect(report.seedFormat == "csv")
        #expect(report.objects == ["Book": 8])
        #expect(try SQLiteStore(contentsOf: destination).metadata.entityVersionHashes == books.currentVersion?.entityVersionHashes)
        // The same objects as JSON seed a second store alike.
        let json = folder.appendingPathComponent("books.json")
        _ = try StoreConversion.convert(from: destination, to: json, options: FormatOptions(bundle: books))
        let second = try Seeding.seed(
            default: json, store: folder.appendingPathComponent("FromJSON.sqlite"), options: FormatOptions(bundle: books))
        #expect(second.seedFormat == "json")
        #expect(second.objects == ["Book": 8])
    }

    @Test func externalDataTravelsWithTheStore() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var photo = Entity(name: "Photo")
        var image = Attribute(name: "image", type: .binary, isOptional: true)
        image.allowsExternalBinaryDataStorage = true
        photo.attributes = [image]
        let model = ObjectModel(versionName: "Photos", entities: [photo], versionIdentifiers: ["1"])
        let seed = folder.appendingPathComponent("Seed.sqlite")
        let writer = try SQLiteStoreWriter(creating: seed, model: model, journalMode: .delete)
        var batch = try #require(RecordLayout(entity: "Photo", in: model)).emptyBatch()
        batch.append(Record(entity: "Photo", id: .primaryKey(1), values: [.externalDataReference("F1")]))
        try writer.write(batch)
        try writer.finish()
        let payload = Data(repeating: 7, count: 300_000)
        let external = StoreFiles(database: seed).externalDataFolder
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        try payload.write(to: external.appendingPathComponent("F1"))
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let destination = app.appendingPathComponent("Photos.sqlite")
        #expect(try Seeding.seed(default: seed, store: destination).action == .seeded)
        let copied = try Self.records(of: destination)
        #expect(copied["Photo"]?.first?.values == [.data(payload)])
        #expect(FileManager.default.fileExists(atPath: app.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA/F1").path))
    }
}

/// Results gathered from several threads.
final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Result<Seeding.Report.Action, any Error>] = []
    func add(_ value: Result<Seeding.Report.Action, any Error>) { lock.withLock { values.append(value) } }
    var all: [Result<Seeding.Report.Action, any Error>] { lock.withLock { values } }
}
