import CSQLite
import DecantCore
import DecantCodecs
import DecantFormats
@testable import DecantSQLite
import DecantTestSupport
import Foundation
import Testing

/// Generates the schema of each real store's model, with the style of the store's framework version, and compares
/// it with the schema Apple's Core Data wrote: tables, columns with declared types, indexes by name with their
/// columns, and the `Z_PRIMARYKEY` rows. The model comes from the real files twice over: decoded from the store's
/// own `Z_MODELCACHE` (proven by its hashes), and, where the corpus repository holds the model source, the matching
/// version of that bundle.
@Suite("StoreSchema against corpus stores")
struct CorpusStoreSchemaTests {
    /// `Z_PRIMARYKEY` names a store keeps from before an in-place migration (4.14): SampleModel_V2 was migrated
    /// from V1, where `LuxuryCar` was still called `ExpensiveSportCar`.
    static let primaryKeyLeftovers: [String: [String: String]] = [
        "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite": [
            "LuxuryCar": "ExpensiveSportCar"
        ]
    ]

    /// Indexes a store lacks although its model declares them, the store having been changed in place since its
    /// tables were made (4.14: "stores changed in place by migrations may differ from a fresh store"): DuckDuckGo's
    /// merged store has the fetch index `domainIndex` of `HTTPSExcludedDomain` but not the index of the attribute it
    /// marks indexed, which a store made with that model has.
    static let schemaLeftovers: [String: Set<String>] = [
        "\(Fixtures.appsPrefix)duckduckgo__iOS/DuckDuckGoTests/AppRatingPrompt_v1/Database.sqlite": [
            "- index Z_HTTPSExcludedDomain_domain: ON ZHTTPSEXCLUDEDDOMAIN (ZDOMAIN)"
        ]
    ]

    /// Where a test case's model comes from.
    enum ModelSource: String, Sendable, CaseIterable {
        case cache, bundle
    }

    @Test("generated schema equals the store's schema", arguments: CorpusStoreTests.stores, ModelSource.allCases)
    func compare(_ store: String, from source: ModelSource) throws {
        let copy = try Self.copyStore(Fixtures.corpus(store))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let opened = try SQLiteStore(contentsOf: copy)
        let model: ObjectModel
        switch source {
        case .cache:
            if let reason = CorpusAllowList.storesWithoutModelCache[store] {
                #expect(opened.cachedModel == nil, "\(store) is allow-listed (\(reason)) but has a model cache now")
                return
            }
            model = try opened.resolveModel(bundle: nil)
        case .bundle:
            let hashes = opened.metadata.entityVersionHashes
            let found = CorpusStoreTests.bundles(besides: store).first(where: {
                ModelMatch(storeHashes: hashes, bundle: $0).matched != nil
            })
            // A store with no model source in the corpus is allow-listed by name (SampleModel2's).
            if let reason = CorpusAllowList.storesWithoutModelSource[store] {
                #expect(found == nil, "\(store) is allow-listed (\(reason)) but has a model source now")
                return
            }
            let bundle = try #require(found, "no version of a bundle beside \(store) matches its hashes")
            model = try opened.resolveModel(bundle: bundle)
        }
        let frameworkVersion = try #require(opened.metadata.frameworkVersion)
        let schema = try StoreSchema(model: model, style: SchemaStyle(frameworkVersion: frameworkVersion))
        let expected = try SQLiteSchemaSnapshot(schema: schema)
        // Persistent history's ancillary A… tables are not part of the model's schema.
        let actual = try SQLiteSchemaSnapshot(contentsOf: copy.path).removingTables { $0.hasPrefix("A") }
        let differences = expected.differences(from: actual)
        if let damage = CorpusAllowList.damagedStores[store] {
            // The damage is what differs, and nothing else.
            #expect(differences.count == 1, "\(store): \(differences)")
            #expect(damage.names.allSatisfy { name in differences.contains { $0.contains(name) } }, "\(differences)")
            return
        }
        #expect(
            Set(differences) == Self.schemaLeftovers[store] ?? [],
            "\(store) (framework \(frameworkVersion)):\n\(differences.joined(separator: "\n"))")

        // Derived attributes: the same triggers, word for word (SampleModel2's Book.pagesCount).
        let (triggers, unsupported) = schema.derivedAttributeTriggers(for: model)
        #expect(unsupported.isEmpty)
        #expect(Set(triggers) == Set(try Self.triggers(ofStoreAt: copy)))

        let leftovers = Self.primaryKeyLeftovers[store] ?? [:]
        let stored = opened.primaryKeys.filter { $0.entityNumber < 16000 }.map { "\($0.entityNumber) \($0.name) \($0.superNumber)" }
        let generated = schema.primaryKeyRows.map { "\($0.entityNumber) \(leftovers[$0.name] ?? $0.name) \($0.superNumber)" }
        #expect(stored == generated)
    }

    @Test("converting with the store's own model and with its source model gives one schema", arguments: CorpusStoreTests.stores)
    func cacheAndSourceConvertAlike(_ store: String) throws {
        let copy = try Self.copyStore(Fixtures.corpus(store))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let opened = try SQLiteStore(contentsOf: copy)
        if let reason = CorpusAllowList.storesWithoutModelCache[store] {
            #expect(opened.cachedModel == nil, "\(store) is allow-listed (\(reason)) but has a model cache now")
            return
        }
        try #require(opened.cachedModel != nil, "\(store) has no Z_MODELCACHE")
        let hashes = opened.metadata.entityVersionHashes
        var models = [try opened.resolveModel(bundle: nil)]
        let found = CorpusStoreTests.bundles(besides: store).first(where: {
            ModelMatch(storeHashes: hashes, bundle: $0).matched != nil
        })
        if let bundle = found {
            models.append(try opened.resolveModel(bundle: bundle))
        } else {
            // Only the allow-listed stores have no model source to convert with.
            #expect(CorpusAllowList.storesWithoutModelSource[store] != nil, "no model source matches \(store)")
        }
        var snapshots: [SQLiteSchemaSnapshot] = []
        for (index, model) in models.enumerated() {
            var reader = try SQLiteStoreReader(store: opened, model: model)
            let output = copy.deletingLastPathComponent().appendingPathComponent("out-\(index).sqlite")
            var writer = try SQLiteStoreWriter(creating: output, model: model, journalMode: .delete)
            let report = try RecordTransfer.copy(from: &reader, to: &writer)
            #expect(report.isReconciled)
            snapshots.append(try SQLiteSchemaSnapshot(contentsOf: output.path))
        }
        if snapshots.count == 2 {
            let differences = snapshots[0].differences(from: snapshots[1])
            #expect(differences.isEmpty, "\(store):\n\(differences.joined(separator: "\n"))")
        }
    }

    @Test("a style that does not match the store's framework version is detected")
    func wrongStyleDiffers() throws {
        let copy = try Self.copyStore(Fixtures.corpus("objcio__core-data/Migrations/MigrationsTests/Moody 5.moody"))
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let actual = try SQLiteSchemaSnapshot(contentsOf: copy.path)
        let model = try SQLiteStore(contentsOf: copy).resolveModel(bundle: nil)
        let current = try SQLiteSchemaSnapshot(schema: StoreSchema(model: model, style: .current))
        let differences = current.differences(from: actual)
        #expect(differences.contains("+ index sqlite_autoindex_ZCOUNTRY_1: UNIQUE ON ZCOUNTRY (ZNUMERICISO3166CODE, ZUNIQUENESSDUMMY)"))
        #expect(differences.contains("- index Z_Mood_remoteID: ON ZMOOD (ZREMOTEID)"))
        #expect(differences.contains("+ index ZMOOD_ZREMOTEID_INDEX: ON ZMOOD (ZREMOTEID)"))
    }

    /// The `CREATE TRIGGER` statements of a store.
    static func triggers(ofStoreAt url: URL) throws -> [String] {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw DecantError(.ioError, "cannot open \(url.path) to list its triggers")
        }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT sql FROM sqlite_master WHERE type = 'trigger'", -1, &statement, nil)
            == SQLITE_OK
        else { throw DecantError(.ioError, "cannot list the triggers of \(url.path)") }
        defer { sqlite3_finalize(statement) }
        var result: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) {
            result.append(String(cString: text))
        }
        return result
    }

    /// Copies a store with its `-wal` and `-shm` into a fresh temporary directory: opening the original would write
    /// its `-shm`.
    static func copyStore(_ url: URL) throws -> URL {
        let directory = try Fixtures.temporaryDirectory()
        let manager = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: url.path + suffix)
            guard manager.fileExists(atPath: source.path) else { continue }
            let target = directory.appendingPathComponent(source.lastPathComponent)
            try manager.copyItem(at: source, to: target)
            try manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        }
        return directory.appendingPathComponent(url.lastPathComponent)
    }
}
