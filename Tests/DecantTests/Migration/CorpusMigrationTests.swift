import Decant
import DecantTestSupport
import Foundation
import Testing

/// Apple-written stores migrated over the hops that need no Xcode mapping model, compared with the store Core Data
/// itself wrote at the destination version from the same data.
@Suite("Corpus migrations")
struct CorpusMigrationTests {
    struct Chain: Sendable, CustomTestStringConvertible {
        var model: String
        var source: String
        var destinationVersion: String
        /// Core Data's own store of the same objects at the destination version.
        var expected: String
        /// Whether Core Data's store kept the source's primary keys (else only the objects and links are compared).
        var samePrimaryKeys: Bool
        var testDescription: String { "\(source) → \(destinationVersion)" }
    }

    static let chains = [
        // objc.io Moody: v1 → v2 adds Mood.rating (default 0) and renames remoteIdentifier → remoteID; the later
        // hops
        // ship Xcode mapping models.
        Chain(
            model: "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld",
            source: "objcio__core-data/Migrations/MigrationsTests/Moody.moody",
            destinationVersion: "Moody 2",
            expected: "objcio__core-data/Migrations/MigrationsTests/Moody 2.moody",
            samePrimaryKeys: false
        ),
        // CoreDataPlus SampleModel: V1 → V2 drops color and Person.id and renames ExpensiveSportCar → LuxuryCar;
        // V2 → V3
        // ships a mapping model.
        Chain(
            model: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld",
            source: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V1.sqlite",
            destinationVersion: "SampleModel2",
            expected: "alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel_V2.sqlite",
            samePrimaryKeys: true
        ),
    ]

    @Test(arguments: chains) func migratesLikeCoreData(_ chain: Chain) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundle.load(from: Fixtures.corpus(chain.model))
        let store = try Fixtures.copyStore(Fixtures.corpus(chain.source), into: folder)
        let expectedFolder = folder.appendingPathComponent("expected", isDirectory: true)
        try FileManager.default.createDirectory(at: expectedFolder, withIntermediateDirectories: true)
        let expected = try Fixtures.copyStore(Fixtures.corpus(chain.expected), into: expectedFolder)
        let options = StoreMigration.Options(bundle: bundle, destinationVersion: chain.destinationVersion)

        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        #expect(plan.plan.hops.allSatisfy { $0.isInferred })
        #expect(plan.preflight == [:])

        let output = folder.appendingPathComponent("migrated.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let destination = try #require(bundle.version(named: chain.destinationVersion))
        #expect(try MigrationFixtures.hashes(output) == destination.entityVersionHashes)
        let migrated = try MigrationFixtures.read(output, bundle: bundle)
        let apple = try MigrationFixtures.read(expected, bundle: bundle)
        #expect(migrated.keys.sorted() == apple.keys.sorted())
        let canonicalMigrated = Self.canonical(migrated)
        let canonicalApple = Self.canonical(apple)
        for entity in apple.keys.sorted() {
            #expect(canonicalMigrated[entity] == canonicalApple[entity], "\(entity)")
            if chain.samePrimaryKeys { #expect(migrated[entity] == apple[entity], "\(entity)") }
        }
        // Twice gives the same.
        let again = folder.appendingPathComponent("again.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(again), options: options)
        #expect(try MigrationFixtures.read(again, bundle: bundle) == migrated)
    }

    /// Every object as its values and, per relationship, the values of the objects it points at, sorted: what two
    /// stores of the same objects share whatever primary keys they gave them.
    static func canonical(_ records: [String: [Record]]) -> [String: [String]] {
        var byReference: [ObjectReference: String] = [:]
        for record in records.values.joined() { byReference[record.reference] = "\(record.values)" }
        return records.mapValues { list in
            list.map { record in
                let links = record.relationships.map { link -> String in
                    switch link {
                    case .toOne(let target): target.map { byReference[$0] ?? "dangling" } ?? "nil"
                    case .toMany(let members): members.map { byReference[$0] ?? "dangling" }.sorted().description
                    case .viaInverse: "via inverse"
                    }
                }
                return "\(record.values) \(links)"
            }.sorted()
        }
    }
}
