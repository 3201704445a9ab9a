import Decant
import DecantTestSupport
import Foundation
import Testing

/// Hops that Core Data runs and that Decant refused (section 1.9, 9.2): a renaming identifier shared inside one
/// version, stopped only where inference must choose by it; Integer 64 → Double, inferred with the value converted;
/// and artsy's fixture stores, whose app migrates them automatically and expects its artworks.
@Suite("Hops Core Data runs")
struct AppleLeniencyMigrationTests {
    /// LoopKit's shape: v1 `Dose{programmed (elementID "scheduled"), scheduled, units}`; v2 `Dose{scheduled,
    /// units, note}` (`note` added, so the hashes differ).
    static let sharedIdentifier: ModelBundle = {
        var programmed = Attribute(name: "programmed", type: .double, isOptional: true)
        programmed.renamingIdentifier = "scheduled"
        var v1 = Entity(name: "Dose")
        v1.attributes = [
            programmed, Attribute(name: "scheduled", type: .double, isOptional: true),
            Attribute(name: "units", type: .double, isOptional: true),
        ]
        var v2 = Entity(name: "Dose")
        v2.attributes = [
            Attribute(name: "note", type: .string, isOptional: true), Attribute(name: "scheduled", type: .double, isOptional: true),
            Attribute(name: "units", type: .double, isOptional: true),
        ]
        return MigrationFixtures.bundle(
            "Doses", [ObjectModel(versionName: "Doses 1", entities: [v1]), ObjectModel(versionName: "Doses 2", entities: [v2])])
    }()

    static func doses(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("doses.sqlite")
        let v1 = sharedIdentifier.versions[0]
        try MigrationFixtures.writeStore(
            at: url, model: v1,
            records: [
                MigrationFixtures.record(
                    "Dose", 1, in: v1, ["programmed": .double(1.5), "scheduled": .double(0.5), "units": .double(2)])
            ])
        return url
    }

    @Test func anInferredHopThatMustChooseNamesBothAttributesAndTheWayOut() throws {
        let plan = try MigrationPlan(bundle: Self.sharedIdentifier, source: Self.sharedIdentifier.versions[0])
        let problem = try #require(plan.problems.first)
        #expect(plan.problems.count == 1)
        #expect(problem.entity == "Dose" && problem.property == "scheduled")
        #expect(problem.message.contains("programmed and scheduled") && problem.message.contains("134190"))
        #expect(problem.advice?.contains("entities: Dose: attributes") == true)
        #expect(problem.advice?.contains("scheduled: $source.programmed") == true)
    }

    /// A mapping file that states the property the two share runs the hop, whatever the source's identifiers; the
    /// property it does not state (`units`) is still inferred.
    @Test func aStatedHopRunsWhateverTheSourcesIdentifiers() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.doses(in: folder)
        let file = folder.appendingPathComponent("doses.yaml")
        try """
            source: Doses 1
            destination: Doses 2
            entities:
              Dose:
                attributes:
                  scheduled: $source.programmed
            """.write(to: file, atomically: true, encoding: .utf8)
        var options = StoreMigration.Options(bundle: Self.sharedIdentifier)
        try options.loadMappings(from: [file])
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.written == ["Dose": 1])
        let v2 = Self.sharedIdentifier.versions[1]
        let records = try CSVStoreRoundTripTests.records(of: output, model: v2)
        let dose = try #require(records["Dose"]?.first)
        #expect(MigrationFixtures.value(dose, "scheduled", model: v2) == .double(1.5))
        #expect(MigrationFixtures.value(dose, "units", model: v2) == .double(2))
    }

    /// WooCommerce's `OrderGiftCard.amount`: Integer 64 in v1, Double in v2, no mapping; the app's test expects 1.0.
    static let amounts: ModelBundle = {
        func model(_ version: Int) -> ObjectModel {
            var card = Entity(name: "GiftCard")
            card.attributes = [
                Attribute(name: "amount", type: version == 1 ? .integer64 : .double, isOptional: true),
                Attribute(name: "code", type: .string, isOptional: true),
            ]
            return ObjectModel(versionName: "Cards \(version)", entities: [card])
        }
        return MigrationFixtures.bundle("Cards", [model(1), model(2)])
    }()

    @Test func integer64ToDoubleIsInferredWithTheValueConverted() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = Self.amounts.versions[0]
        let store = folder.appendingPathComponent("cards.sqlite")
        let big: Int64 = 9_007_199_254_740_993  // 2^53 + 1: the nearest double is 2^53
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("GiftCard", 1, in: v1, ["amount": .integer(1), "code": "A"]),
                MigrationFixtures.record("GiftCard", 2, in: v1, ["code": "B"]),
                MigrationFixtures.record("GiftCard", 3, in: v1, ["amount": .integer(big)]),
            ])
        let plan = try MigrationPlan(bundle: Self.amounts, source: v1)
        #expect(plan.problems.isEmpty, "\(plan.problems)")
        let change = plan.hops.first?.mapping.mapping(producing: "GiftCard")?.property("amount")?.change
        #expect(change == .converted(from: .integer64, to: .double))
        // Inside SQLite and through the record stream alike.
        for inStore in [true, false] {
            var options = StoreMigration.Options(bundle: Self.amounts)
            options.environment.runsInStoreWhenPossible = inStore
            let output = folder.appendingPathComponent("out-\(inStore).sqlite")
            let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
            #expect(report.engine == (inStore ? .inStore(format: "sqlite") : .stream))
            let v2 = Self.amounts.versions[1]
            let cards = try #require(try CSVStoreRoundTripTests.records(of: output, model: v2)["GiftCard"])
            #expect(cards.map { MigrationFixtures.value($0, "amount", model: v2) } == [.double(1), .null, .double(Double(big))])
        }
    }

    /// A change Core Data does not infer still needs a mapping, and the message says which (Integer 32 → Double is
    /// not the verified Integer 64 → Double).
    @Test func otherTypeChangesStillNeedAMapping() throws {
        var card1 = Entity(name: "GiftCard")
        card1.attributes = [Attribute(name: "amount", type: .integer32, isOptional: true)]
        var card2 = Entity(name: "GiftCard")
        card2.attributes = [Attribute(name: "amount", type: .double, isOptional: true)]
        let result = MappingInference.infer(
            from: ObjectModel(versionName: "A", entities: [card1]), to: ObjectModel(versionName: "B", entities: [card2]))
        #expect(result.problems.map(\.message) == ["Integer 32 → Double is not a change Core Data infers"])
        #expect(result.problems.first?.advice?.contains("double($source.amount)") == true)
    }

    /// artsy's fixture stores (framework 419 and 479) migrate to the bundle's current version with no flags, as the
    /// app's own test migrates them, and keep every artwork — the one whose `Z_ENT` names another entity included.
    @Test(arguments: [
        "ArtsyPartner_1.3.sqlite", "ArtsyPartner_1.3.5.sqlite", "ArtsyPartner_1.4.sqlite", "ArtsyPartner_1.6.sqlite",
        "ArtsyPartner_2.0.sqlite",
    ])
    func artsysFixturesKeepEveryArtwork(_ name: String) throws {
        let repository = "\(Fixtures.appsPrefix)artsy__energy-legacy/"
        let bundleURL = Fixtures.corpus(repository + "Resources/CoreData/ArtsyPartner.xcdatamodeld")
        let bundle = try ModelBundle.load(from: bundleURL)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Fixtures.copyStore(Fixtures.corpus(repository + "ArtsyFolio Tests/Migrations/" + name), into: folder)
        let source = try SQLiteStore(contentsOf: store)
        let artworks = try source.objectCounts(model: source.resolveModel(bundle: bundle))["Artwork"] ?? 0
        // 1.6's fixture holds none (the app's test counts the others).
        #expect(artworks >= 1 || name == "ArtsyPartner_1.6.sqlite")
        var options = StoreMigration.Options(bundle: bundle)
        options.modelURL = bundleURL
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.destinationVersion == bundle.currentVersion?.versionName)
        #expect(report.written["Artwork", default: 0] == artworks)
        #expect(try SQLiteStore(contentsOf: output).objectCounts()["Artwork", default: 0] == artworks)
    }
}
