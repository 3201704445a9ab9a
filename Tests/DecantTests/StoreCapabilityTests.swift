import Decant
import DecantTestSupport
import Foundation
import Testing

/// The jobs ask formats for capabilities and name none: ``MemoFormat``, a format of the tests alone, goes through
/// `inspect` (``InputKind``, ``StoreReport``), `seed` (``Seeding``) and `convert` (``StoreConversion``) as it goes
/// through `migrate` (``MigrationEngineTests``), with nothing outside its folder changed.
@Suite("Store capabilities")
struct StoreCapabilityTests {
    static let bundle = MigrationEngineTests.bundle

    /// The v1 memo store of ``MigrationEngineTests`` in a folder of its own, and a registry that knows the format.
    static func memoStore() throws -> (folder: URL, store: URL, registry: FormatRegistry) {
        let folder = try Fixtures.temporaryDirectory()
        let (store, registry) = try MigrationEngineTests.memoStore(in: folder, fastPath: .runs)
        return (folder, store, registry)
    }

    @Test func aMemoStoreIsInspectedAsAStoreByWhatItSaysOfItself() throws {
        let (folder, store, registry) = try Self.memoStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try InputKind(of: store, registry: registry) == .store("memo"))
        #expect(InputKind(named: "memo", registry: registry) == .store("memo"))

        let report = try StoreReport(store: store, path: "notes.memo", bundle: Self.bundle, registry: registry)
        #expect(report.format == "memo")
        #expect(report.journalMode == nil)
        #expect(report.model?.matchedVersion == "Memo 1")
        #expect(report.entityCounts == ["Folder": 2, "Note": 5])
        #expect(report.versionIdentifiers == Self.bundle.versions[0].versionIdentifiers)
        let lines = report.text.split(separator: "\n").map(String.init)
        #expect(lines.first == "notes.memo: Core Data memo store")
        #expect(lines.contains("  model:             matches Memo version Memo 1"))
        #expect(!lines.contains { $0.hasPrefix("  model cache:") })

        let unknown = try StoreReport(store: store, path: "notes.memo", bundle: nil, registry: registry)
        #expect(unknown.model == nil)
        #expect(unknown.text.contains("  model:             unknown (a memo store carries no model; give it with --model)"))
        // The JSON document has the same keys as a SQLite store's.
        let json = try #require(JSONSerialization.jsonObject(with: try report.jsonData()) as? [String: Any])
        #expect(json["format"] as? String == "memo")
        #expect(json["storeKind"] == nil && json["modelCacheName"] == nil)
    }

    @Test func aMemoSeedIsCopiedIntoPlaceMigratedAndLeftAsItIsOnTheSecondRun() throws {
        let (folder, store, registry) = try Self.memoStore()
        defer { try? FileManager.default.removeItem(at: folder) }

        // Without a model: copied as it is.
        let copied = folder.appendingPathComponent("App/Copy.memo")
        let first = try Seeding.seed(default: store, store: copied, registry: registry)
        #expect(first.action == .seeded)
        #expect(first.seedFormat == "memo")
        #expect(first.objects == ["Folder": 2, "Note": 5])
        #expect(try Data(contentsOf: copied) == Data(contentsOf: store))
        // Under a name another format's extension gives, a store seed is still copied as it is.
        let misnamed = folder.appendingPathComponent("App/Copy.json")
        #expect(try Seeding.seed(default: store, store: misnamed, registry: registry).objects == ["Folder": 2, "Note": 5])
        #expect(try Data(contentsOf: misnamed) == Data(contentsOf: store))

        // With the model: migrated to its current version on the way in, by the memo store's own engine.
        let destination = folder.appendingPathComponent("App/Notes.memo")
        let options = MigrationEngineTests.options(registry)
        let seeded = try Seeding.seed(
            default: store, store: destination, options: options.formatOptions, migration: options, registry: registry)
        #expect(seeded.action == .seeded)
        #expect(seeded.migratedFrom == "Memo 1")
        #expect(seeded.version == "Memo 2")
        #expect(seeded.objects == ["Folder": 2, "Note": 5])
        #expect(try MigrationEngineTests.read(destination)["Note"]?.count == 5)

        let again = try Seeding.seed(
            default: store, store: destination, options: options.formatOptions, migration: options, registry: registry)
        #expect(again.action == .alreadySeeded)
        #expect(again.version == "Memo 2")
        #expect(again.objects == ["Folder": 2, "Note": 5])
    }

    @Test func aMemoStoreConvertsToNDJSONAndBackAndIsSeededFromIt() throws {
        let (folder, store, registry) = try Self.memoStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = FormatOptions(bundle: Self.bundle, version: "Memo 1")

        let export = folder.appendingPathComponent("notes.ndjson")
        let out = try StoreConversion.convert(from: store, to: export, options: options, registry: registry)
        #expect(out.inputFormat == "memo")
        #expect(out.outputFormat == "ndjson")
        #expect(out.written == ["Folder": 2, "Note": 5])

        let back = folder.appendingPathComponent("back.memo")
        let into = try StoreConversion.convert(from: export, to: back, options: options, registry: registry)
        #expect(into.outputFormat == "memo")
        #expect(try StoreReport(store: back, bundle: Self.bundle, registry: registry).entityCounts == ["Folder": 2, "Note": 5])

        // A seed in another format becomes a store in the format the destination's extension names.
        let seeded = folder.appendingPathComponent("App/Fresh.memo")
        let report = try Seeding.seed(default: export, store: seeded, options: options, registry: registry)
        #expect(report.action == .seeded)
        #expect(report.seedFormat == "ndjson")
        #expect(report.objects == ["Folder": 2, "Note": 5])
        #expect(try InputKind(of: seeded, registry: registry) == .store("memo"))

        // Records seeded into a name that makes them no store are refused before anything is written.
        let notAStore = folder.appendingPathComponent("Other/Fresh.json")
        let error = try #require(throws: DecantError.self) {
            try Seeding.seed(default: export, store: notAStore, options: options, registry: registry)
        }
        #expect(error.code == .usage)
        #expect(!FileManager.default.fileExists(atPath: notAStore.deletingLastPathComponent().path))
    }
}
