import Decant
import DecantTestSupport
import Foundation
import Testing

/// objc.io's `Country5ToCountry6Policy`: each Country gets the Continent its `isoContinent` code names, one Continent
/// per code, made the first time a code is seen.
struct Country5ToCountry6Policy: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        let country = try manager.createDefaultDestinationInstance()
        guard case .integer(let code) = try manager.sourceValue("isoContinent") else { return }
        let continent = manager.findOrInsertObject(entity: "Continent", key: String(code))
        if continent.isNew { continent["numericISO3166Code"] = .integer(code) }
        country.setRelationship("continent", to: [continent.reference])
    }
}

/// CoreDataPlus's `V2to3MakerPolicy`: each car's `maker` name becomes a Maker object (one per name) that the car is
/// `createdBy`.
struct V2to3MakerPolicy: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: ObjectReference, in mapping: EntityMapping, manager: MigrationManager
    ) throws {
        let car = try manager.createDefaultDestinationInstance()
        guard let name = try manager.sourceValue("maker").text else { return }
        let maker = manager.findOrInsertObject(entity: "Maker", key: name)
        if maker.isNew { maker["name"] = .string(name) }
        car.setRelationship("createdBy", to: [maker.reference])
    }
}

/// Apple's own mapping models (`.xcmappingmodel`, `.cdm`) run by the engine, with their policy classes registered as
/// Swift policies.
@Suite("Xcode mapping model migrations")
struct XcodeMappingMigrationTests {
    static let moodyModel = "objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"
    static let moodyMappings = "objcio__core-data/Migrations/Migrations"
    static let moodyStores = "objcio__core-data/Migrations/MigrationsTests"

    static func moodyOptions(to version: String?, policy: Bool = true) throws -> StoreMigration.Options {
        var options = StoreMigration.Options(
            bundle: try ModelBundle.load(from: Fixtures.corpus(moodyModel)), destinationVersion: version)
        try options.loadMappings(from: [Fixtures.corpus(moodyMappings)])
        if policy { options.functions.registerPolicy(Country5ToCountry6Policy(), as: "Migrations.Country5ToCountry6Policy") }
        return options
    }

    static func value(_ record: Record, _ name: String, in model: ObjectModel) -> Value? {
        MigrationFixtures.value(record, name, model: model)
    }

    /// Each Moody store Core Data wrote at version N, migrated to N + 1 through the objc.io mapping model, has the
    /// objects and links of the store Core Data wrote at N + 1.
    @Test(arguments: [2, 3, 4]) func moodyHopMatchesCoreData(_ version: Int) throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = try Self.moodyOptions(to: "Moody \(version + 1)")
        let store = try Fixtures.copyStore(
            Fixtures.corpus("\(Self.moodyStores)/Moody \(version).moody"), into: folder)
        let expectedFolder = folder.appendingPathComponent("expected", isDirectory: true)
        try FileManager.default.createDirectory(at: expectedFolder, withIntermediateDirectories: true)
        let expected = try Fixtures.copyStore(
            Fixtures.corpus("\(Self.moodyStores)/Moody \(version + 1).moody"), into: expectedFolder)

        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        #expect(plan.plan.hops.map(\.isInferred) == [false])
        let output = folder.appendingPathComponent("migrated.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let destination = try #require(options.bundle.version(named: "Moody \(version + 1)"))
        #expect(try MigrationFixtures.hashes(output) == destination.entityVersionHashes)
        let migrated = CorpusMigrationTests.canonical(try MigrationFixtures.read(output, bundle: options.bundle))
        let apple = CorpusMigrationTests.canonical(try MigrationFixtures.read(expected, bundle: options.bundle))
        #expect(migrated.keys.sorted() == apple.keys.sorted())
        for entity in apple.keys.sorted() { #expect(migrated[entity] == apple[entity], "\(entity)") }
    }

    /// Moody v1 → v6 in one run: v1 → v2 inferred, then the four mapping models, the last with its policy.
    @Test func moodyOneToSix() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = try Self.moodyOptions(to: nil)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody.moody"), into: folder)
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        #expect(plan.plan.hops.map(\.isInferred) == [true, false, false, false, false])

        let output = folder.appendingPathComponent("moody6.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let v6 = try #require(options.bundle.version(named: "Moody 6"))
        #expect(try MigrationFixtures.hashes(output) == v6.entityVersionHashes)

        let source = try MigrationFixtures.read(store, bundle: options.bundle)
        let migrated = try MigrationFixtures.read(output, bundle: options.bundle)
        #expect(migrated["Mood"]?.count == source["Mood"]?.count)
        #expect(migrated["Country"]?.count == source["Country"]?.count)
        // v6 continents are made by the policy, one per isoContinent code of the v5 countries.
        let continents = migrated["Continent"] ?? []
        let codes = Set(continents.compactMap { Self.value($0, "numericISO3166Code", in: v6) })
        #expect(codes.count == continents.count)
        #expect(!continents.isEmpty)
        let byReference = Dictionary(continents.map { ($0.reference, $0) }, uniquingKeysWith: { first, _ in first })
        for country in migrated["Country"] ?? [] {
            guard let index = RecordLayout(entity: "Country", in: v6)?.relationshipIndex("continent"),
                case .toOne(let target?) = country.relationships[index]
            else {
                Issue.record("\(country.reference) has no continent")
                continue
            }
            #expect(byReference[target] != nil)
        }
        // Running again gives the same store.
        let again = folder.appendingPathComponent("again.sqlite")
        _ = try StoreMigration.migrate(store: store, to: .file(again), options: options)
        #expect(try MigrationFixtures.read(again, bundle: options.bundle) == migrated)
    }

    /// Without the policy registered, `plan` cannot run and names the class and the entity mapping.
    @Test func missingPolicyStopsThePlan() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let options = try Self.moodyOptions(to: nil, policy: false)
        let store = try Fixtures.copyStore(Fixtures.corpus("\(Self.moodyStores)/Moody 5.moody"), into: folder)
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(!plan.plan.isExecutable)
        #expect(plan.plan.problems.contains { $0.message.contains("Country5ToCountry6Policy") && $0.message.contains("CountryToCountry") })
        #expect(throws: DecantError.self) {
            try StoreMigration.migrate(store: store, to: .file(folder.appendingPathComponent("out.sqlite")), options: options)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.sqlite").path))
    }

    /// CoreDataPlus SampleModel V1 → V2 (inferred) → V3 through Apple's compiled `V2toV3.cdm` and its policy.
    @Test(arguments: ["Fixtures/V2toV3.cdm", "MappingModels/V2toV3.xcmappingmodel"])
    func coreDataPlusOneToThree(_ mapping: String) throws {
        let root = "alemar11__CoreDataPlus/Tests/Resources/SampleModel"
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = StoreMigration.Options(
            bundle: try ModelBundle.load(from: Fixtures.corpus("\(root)/SampleModel.xcdatamodeld")),
            destinationVersion: "SampleModel3")
        try options.loadMappings(from: [Fixtures.corpus("\(root)/\(mapping)")])
        options.functions.registerPolicy(V2to3MakerPolicy(), as: "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        let store = try Fixtures.copyStore(Fixtures.corpus("\(root)/Fixtures/SampleModel_V1.sqlite"), into: folder)
        let plan = try StoreMigration.plan(store: store, options: options)
        #expect(plan.plan.isExecutable, "\(plan.plan.problems)")
        #expect(plan.plan.hops.map(\.isInferred) == [true, false])

        let output = folder.appendingPathComponent("v3.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let v2 = try #require(options.bundle.version(named: "SampleModel2"))
        let v3 = try #require(options.bundle.version(named: "SampleModel3"))
        #expect(try MigrationFixtures.hashes(output) == v3.entityVersionHashes)

        let source = try MigrationFixtures.read(
            Fixtures.copyStore(Fixtures.corpus("\(root)/Fixtures/SampleModel_V2.sqlite"), into: folder
                .appendingPathComponent("v2", isDirectory: true).creatingDirectory()),
            bundle: options.bundle)
        let migrated = try MigrationFixtures.read(output, bundle: options.bundle)
        let cars = ["Car", "SportCar", "LuxuryCar"].flatMap { migrated[$0] ?? [] }
        let sourceCars = ["Car", "SportCar", "LuxuryCar"].flatMap { source[$0] ?? [] }
        #expect(cars.count == sourceCars.count)
        #expect(migrated["Person"]?.count == source["Person"]?.count)
        // One Maker per distinct maker name of the V2 cars; every car with a maker is createdBy the one of its name.
        let makerNames = Set(sourceCars.compactMap { Self.value($0, "maker", in: v2)?.text })
        let makers = migrated["Maker"] ?? []
        let names = Set(makers.compactMap { Self.value($0, "name", in: v3)?.text })
        #expect(names == makerNames)
        #expect(makers.count == makerNames.count)
        let makerName = Dictionary(
            makers.map { ($0.reference, Self.value($0, "name", in: v3)?.text ?? "") }, uniquingKeysWith: { a, _ in a })
        for car in cars {
            let layout = try #require(RecordLayout(entity: car.reference.entity, in: v3))
            let index = try #require(layout.relationshipIndex("createdBy"))
            guard case .toOne(let maker?) = car.relationships[index] else {
                Issue.record("\(car.reference) has no maker")
                continue
            }
            #expect(makerName[maker] != nil)
            #expect(Self.value(car, "numberPlate", in: v3) != nil)
        }
    }

    /// Every mapping model in the corpus loads, and plans against its bundle; those needing app code name it.
    @Test func everyCorpusMappingModelPlans() throws {
        let models = Fixtures.corpusItems { url in
            url.pathExtension == "xcmappingmodel" || url.pathExtension == "cdm"
        }
        #expect(models.count >= 12)
        for url in models {
            let mapping = try XcodeMappingModel.load(contentsOf: url, bundle: nil)
            #expect(!mapping.entityMappings.isEmpty, "\(Fixtures.corpusRelativePath(url))")
            guard let source = mapping.sourceModel, let destination = mapping.destinationModel else {
                // A .cdm carries hashes only: it plans against its bundle (the Moody and CoreDataPlus tests).
                #expect(url.pathExtension == "cdm", "\(Fixtures.corpusRelativePath(url)) has no model snapshots")
                continue
            }
            var model = mapping.mappingModel(from: source, to: destination)
            model.sourceVersion = "source"
            model.destinationVersion = "destination"
            var from = source
            from.versionName = "source"
            var to = destination
            to.versionName = "destination"
            var plan = try MigrationPlan(
                bundle: ModelBundle(name: "corpus", versions: [from, to], currentVersionName: "destination", sourceKind: .xcdatamodeld),
                source: from,
                mappingModels: [model]
            )
            plan.requireHooks(ValueExpressionFunctions())
            for problem in plan.problems {
                #expect(
                    problem.message.contains("app code"),
                    "\(Fixtures.corpusRelativePath(url)): \(problem)")
            }
        }
    }
}

extension URL {
    fileprivate func creatingDirectory() throws -> URL {
        try FileManager.default.createDirectory(at: self, withIntermediateDirectories: true)
        return self
    }
}
