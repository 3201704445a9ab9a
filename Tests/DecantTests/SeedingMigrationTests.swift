import Decant
import DecantTestSupport
import Foundation
import Testing

/// Seeding is migration: a seed at another version is migrated before it is put in place, with migrate's options,
/// and a seed whose migration fails leaves the destination exactly as it was.
@Suite("Seeding migrates", .serialized)
struct SeedingMigrationTests {
    /// `Typed` `Item{count: String}`, `Typed 2` `Item{count: Integer 64}`: no inference (hop or single step) maps it.
    static func typed() -> ModelBundle {
        let versions = [("Typed", AttributeType.string), ("Typed 2", .integer64)].map { name, type in
            var item = Entity(name: "Item")
            item.attributes = [Attribute(name: "count", type: type, isOptional: true)]
            return ObjectModel(versionName: name, entities: [item])
        }
        return MigrationFixtures.bundle("Typed", versions)
    }

    /// A `Typed` store with two items in `folder`.
    static func seed(in folder: URL, bundle: ModelBundle) throws -> URL {
        let seed = folder.appendingPathComponent("Seed.sqlite")
        let v1 = bundle.versions[0]
        try MigrationFixtures.writeStore(
            at: seed, model: v1,
            records: [
                MigrationFixtures.record("Item", 1, in: v1, ["count": "1"]),
                MigrationFixtures.record("Item", 2, in: v1, ["count": "2"]),
            ])
        return seed
    }

    @Test func aSeedWhoseMigrationFailsLeavesTheDestinationAbsent() throws {
        let bundle = Self.typed()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = try Self.seed(in: folder, bundle: bundle)
        let app = folder.appendingPathComponent("App", isDirectory: true)
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        let destination = app.appendingPathComponent("Typed.sqlite")
        let error = #expect(throws: DecantError.self) {
            try Seeding.seed(default: seed, store: destination, options: FormatOptions(bundle: bundle))
        }
        #expect(error?.code == .planNotExecutable)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let left = try FileManager.default.contentsOfDirectory(atPath: app.path)
        #expect(left.isEmpty, "\(left)")
    }

    @Test func aSeedIsMigratedWithTheMigrationsMappings() throws {
        let bundle = Self.typed()
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let seed = try Self.seed(in: folder, bundle: bundle)
        let mapping = folder.appendingPathComponent("fix.yaml")
        try Data(
            "source: Typed\ndestination: Typed 2\nentities:\n  Item:\n    attributes:\n      count: 'integer($source.count)'\n"
                .utf8
        ).write(to: mapping)
        var migration = StoreMigration.Options(bundle: bundle)
        try migration.loadMappings(from: [mapping])
        let destination = folder.appendingPathComponent("App.sqlite")
        let report = try Seeding.seed(
            default: seed, store: destination, options: FormatOptions(bundle: bundle), migration: migration)
        #expect(report.action == .seeded)
        #expect(report.migratedFrom == "Typed")
        #expect(report.version == "Typed 2")
        #expect(report.objects == ["Item": 2])
        let v2 = bundle.versions[1]
        let items = try #require(try MigrationFixtures.read(destination, bundle: bundle)["Item"])
        #expect(items.map { MigrationFixtures.value($0, "count", model: v2) } == [.integer(1), .integer(2)])
        // A seed already at the destination version is put in place as it is.
        let again = folder.appendingPathComponent("Again.sqlite")
        let copied = try Seeding.seed(default: destination, store: again, options: FormatOptions(bundle: bundle))
        #expect(copied.action == .seeded)
        #expect(copied.migratedFrom == nil)
        #expect(try SQLiteStore(contentsOf: again).metadata.storeUUID == SQLiteStore(contentsOf: destination).metadata.storeUUID)
    }

    @Test func anExistingStoreOfAVersionWithNoOrderIsMigratedInPlaceToTheCurrentOne() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let names = ["ArtsyPartner 5", "ArtsyFolio v2.6.0", "ArtsyFolio v2.7.0"]
        let url = try VersionOrderTests.writeBundle("ArtsyFolio", versions: names, in: folder, current: "ArtsyFolio v2.7.0")
        let bundle = try ModelBundle.load(from: url)
        let destination = folder.appendingPathComponent("App.sqlite")
        try VersionOrderTests.store(at: destination, version: try #require(bundle.version(named: "ArtsyPartner 5")))
        let seed = folder.appendingPathComponent("Seed.sqlite")
        try VersionOrderTests.store(at: seed, version: try #require(bundle.version(named: "ArtsyFolio v2.7.0")))
        var migration = StoreMigration.Options(bundle: bundle, destinationVersion: "Nope")
        let unknown = #expect(throws: DecantError.self) {
            try Seeding.seed(default: seed, store: destination, migration: migration)
        }
        #expect(unknown?.code == .usage)
        migration.destinationVersion = nil
        let report = try Seeding.seed(default: seed, store: destination, migration: migration)
        #expect(report.action == .migrated)
        #expect(report.migratedFrom == "ArtsyPartner 5")
        #expect(report.version == "ArtsyFolio v2.7.0")
        #expect(try MigrationFixtures.hashes(destination) == bundle.currentVersion?.entityVersionHashes)
    }
}
