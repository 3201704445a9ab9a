import Decant
import DecantTestSupport
import Foundation
import Testing

/// Mapping-file entries as Core Data's entity mappings: a `where` filters its own entry only, and several entries
/// (named, with `to:`) may feed one destination entity, as an `NSEntityMigrationPolicy`-based mapping model does.
@Suite("Mapping-file entries")
struct MappingFileEntriesTests {
    /// v1 `Country{name, code}`; v2 `Country{name, continent}` ⇄ `Continent{code, countries}`.
    static let geo: ModelBundle = {
        var country1 = Entity(name: "Country")
        country1.attributes = [
            Attribute(name: "code", type: .integer16, isOptional: true), Attribute(name: "name", type: .string, isOptional: true),
        ]
        var country2 = Entity(name: "Country")
        country2.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        country2.relationships = [Relationship(name: "continent", destination: "Continent", inverse: "countries")]
        var continent = Entity(name: "Continent")
        continent.attributes = [Attribute(name: "code", type: .integer16, isOptional: true)]
        continent.relationships = [Relationship(name: "countries", destination: "Country", inverse: "continent", toMany: true)]
        return MigrationFixtures.bundle(
            "Geo",
            [
                ObjectModel(versionName: "Geo 1", entities: [country1]),
                ObjectModel(versionName: "Geo 2", entities: [continent, country2]),
            ])
    }()

    /// Three countries: two with a continent code, one without.
    static func countries(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("geo.sqlite")
        let v1 = geo.versions[0]
        try MigrationFixtures.writeStore(
            at: url, model: v1,
            records: [
                MigrationFixtures.record("Country", 1, in: v1, ["name": "France", "code": .integer(10)]),
                MigrationFixtures.record("Country", 2, in: v1, ["name": "Nowhere"]),
                MigrationFixtures.record("Country", 3, in: v1, ["name": "Chile", "code": .integer(20)]),
            ])
        return url
    }

    static func migrate(_ store: URL, file text: String, bundle: ModelBundle, in folder: URL) throws
        -> (StoreMigration.Report, [String: [Record]])
    {
        let file = folder.appendingPathComponent("map.yaml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        var options = StoreMigration.Options(bundle: bundle)
        try options.loadMappings(from: [file])
        let output = folder.appendingPathComponent("out.sqlite")
        SQLiteFormat().files(at: output).remove()
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        let current = try #require(bundle.currentVersion)
        return (report, try CSVStoreRoundTripTests.records(of: output, model: current))
    }

    /// objc.io's Moody shape: a Continent per country that has a code. A country without one keeps its own entry's
    /// object; the `where` of the Continent entry does not drop it (before, it was dropped from both).
    @Test func aWhereFiltersItsOwnEntryOnly() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.countries(in: folder)
        let (report, records) = try Self.migrate(
            store,
            file: """
                source: Geo 1
                destination: Geo 2
                entities:
                  Continent:
                    from: Country
                    where: '$source.code != nil'
                    attributes:
                      code: $source.code
                  Country:
                    from: Country
                    relationships:
                      continent: mapped('CountryToContinent', $source)
                """, bundle: Self.geo, in: folder)
        #expect(report.written == ["Country": 3, "Continent": 2])
        // The countries read are credited to Country, whose own entry takes them all; the Continent entry made 2.
        let ledger = try #require(report.ledgers.first)
        #expect(ledger.rows["Country"] == MigrationLedger.Row(read: 3, written: 3))
        #expect(ledger.rows["Continent"] == MigrationLedger.Row(written: 2, removed: 1, created: 3))
        let v2 = Self.geo.versions[1]
        let countries = try #require(records["Country"])
        let linked = countries.map { country in
            (MigrationFixtures.value(country, "name", model: v2), MigrationFixtures.relationship(country, "continent", model: v2))
        }
        #expect(linked.count == 3)
        #expect(linked.first { $0.0 == "Nowhere" }?.1 == .toOne(nil))
        #expect(linked.filter { $0.1 != .toOne(nil) }.count == 2)
        #expect(report.dangling == 0)
        // The plan drops no Country: another entry takes every one.
        let plan = try MigrationPlan(bundle: Self.geo, source: Self.geo.versions[0], mappings: [
            try MappingFiles.load(from: folder.appendingPathComponent("map.yaml"))
        ])
        #expect(!plan.destructiveChanges.contains { if case .filtered = $0 { true } else { false } })
    }

    /// v1 `Carb{amount}` and `DeletedCarb{amount}`; v2 `Carb{amount, operation}` only: LoopKit folds its deleted
    /// objects into the live entity with an operation flag, from two entries into one destination.
    static let carbs: ModelBundle = {
        var carb1 = Entity(name: "Carb")
        carb1.attributes = [Attribute(name: "amount", type: .double, isOptional: true)]
        var deleted = Entity(name: "DeletedCarb")
        deleted.attributes = [Attribute(name: "amount", type: .double, isOptional: true)]
        var carb2 = Entity(name: "Carb")
        carb2.attributes = [
            Attribute(name: "amount", type: .double, isOptional: true),
            Attribute(name: "operation", type: .integer16, isOptional: true),
        ]
        return MigrationFixtures.bundle(
            "Carbs",
            [
                ObjectModel(versionName: "Carbs 1", entities: [carb1, deleted]),
                ObjectModel(versionName: "Carbs 2", entities: [carb2]),
            ])
    }()

    @Test func twoEntriesFeedOneDestination() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = Self.carbs.versions[0]
        let store = folder.appendingPathComponent("carbs.sqlite")
        try MigrationFixtures.writeStore(
            at: store, model: v1,
            records: [
                MigrationFixtures.record("Carb", 1, in: v1, ["amount": .double(12)]),
                MigrationFixtures.record("DeletedCarb", 1, in: v1, ["amount": .double(5)]),
                MigrationFixtures.record("DeletedCarb", 2, in: v1, ["amount": .double(7)]),
            ])
        let (report, records) = try Self.migrate(
            store,
            file: """
                source: Carbs 1
                destination: Carbs 2
                entities:
                  Carb:
                    attributes:
                      operation: 0
                  DeletedCarbToCarb:
                    to: Carb
                    from: DeletedCarb
                    attributes:
                      operation: 2
                """, bundle: Self.carbs, in: folder)
        let v2 = Self.carbs.versions[1]
        let carbs = try #require(records["Carb"])
        let rows = carbs.map {
            [MigrationFixtures.value($0, "amount", model: v2), MigrationFixtures.value($0, "operation", model: v2)]
        }
        #expect(Set(rows.map { "\($0)" }) == [
            "[Optional(DecantCore.Value.double(12.0)), Optional(DecantCore.Value.integer(0))]",
            "[Optional(DecantCore.Value.double(5.0)), Optional(DecantCore.Value.integer(2))]",
            "[Optional(DecantCore.Value.double(7.0)), Optional(DecantCore.Value.integer(2))]",
        ])
        #expect(report.written == ["Carb": 3])
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
    }

    /// A named entry says where its objects come from; its names are checked when the plan is made, at its line.
    @Test func aNamedEntryIsCheckedAtItsLine() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("map.yaml")
        try "source: Carbs 1\ndestination: Carbs 2\nentities:\n  Extra:\n    to: Carb\n".write(
            to: file, atomically: true, encoding: .utf8)
        let error = try #require(throws: DecantError.self) { try MappingFiles.load(from: file) }
        #expect(error.location?.line == 4 && error.location?.keyPath == "entities.Extra")
        try "source: Carbs 1\ndestination: Carbs 2\nentities:\n  Extra:\n    to: Crab\n    from: DeletedCarb\n".write(
            to: file, atomically: true, encoding: .utf8)
        let plan = try MigrationPlan(
            bundle: Self.carbs, source: Self.carbs.versions[0], mappings: [try MappingFiles.load(from: file)])
        let problem = try #require(plan.problems.first)
        #expect(problem.message.contains("has no entity Crab") && problem.location?.line == 4)
    }

    /// A misspelt entry name in `mapped('…', $source)` is the file's mistake: reported at its line when the plan is
    /// made, not as an object's error once data runs.
    @Test func aMisspeltMappedNameIsReportedAtItsLine() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("map.yaml")
        try """
            source: Geo 1
            destination: Geo 2
            entities:
              Continent:
                from: Country
              Country:
                relationships:
                  continent: mapped('CountryToContinnent', $source)
            """.write(to: file, atomically: true, encoding: .utf8)
        let plan = try MigrationPlan(
            bundle: Self.geo, source: Self.geo.versions[0], mappings: [try MappingFiles.load(from: file)])
        let problem = try #require(plan.problems.first)
        #expect(plan.problems.count == 1)
        #expect(problem.message.hasPrefix("mapped('CountryToContinnent', …): this hop has no entity mapping"))
        #expect(problem.message.contains("CountryToContinent"))
        #expect(problem.location?.line == 8 && problem.location?.keyPath == "entities.Country.relationships.continent")
    }

    /// LoopKit's Model → Modelv4, whose Xcode mapping model names two policy classes (app code), written as a mapping
    /// file from the README (samples/PolicyMappingFiles): each CachedCarbObject copied, its provenance the app's
    /// bundle id (a parameter) when the app created it, its operation an update when it was synced more than once,
    /// the externalID rule; each DeletedCarbObject a CachedCarbObject with the delete operation; the shared renaming
    /// identifier settled. The app's test expects one CachedCarbObject from its fixture.
    static let loopKitMapping = Fixtures.samplesRoot.appendingPathComponent(
        "PolicyMappingFiles/LoopKit-Model-Modelv4.yaml")

    @Test func loopKitsPoliciesAsAMappingFileMigrateItsFixture() throws {
        let repository = "\(Fixtures.appsPrefix)LoopKit__LoopKit/"
        let bundleURL = Fixtures.corpus(repository + "LoopKit/Persistence/Model.xcdatamodeld")
        let bundle = try ModelBundle.load(from: bundleURL)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Fixtures.copyStore(
            Fixtures.corpus(repository + "LoopKitHostedTests/TestCoreData/Model.sqlite.v1.original"), into: folder)
        let file = Self.loopKitMapping
        var options = StoreMigration.Options(bundle: bundle)
        options.modelURL = bundleURL
        try options.loadMappings(from: [file])
        // Without the parameter the plan cannot run, and says which to give.
        let unplanned = try StoreMigration.plan(store: store, options: options, dryRun: false)
        #expect(unplanned.plan.problems.map(\.message) == [
            "CachedCarbObjectToCachedCarbObject reads $param.bundleID, which the run was not given"
        ])
        options.functions.parameters["bundleID"] = "com.loopkit.Loop"
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.destinationVersion == "Modelv4")
        #expect(report.written["CachedCarbObject"] == 1)
        let v4 = try #require(bundle.version(named: "Modelv4"))
        let carb = try #require(try CSVStoreRoundTripTests.records(of: output, model: v4)["CachedCarbObject"]?.first)
        #expect(MigrationFixtures.value(carb, "provenanceIdentifier", model: v4) == "com.loopkit.Loop")
        #expect(MigrationFixtures.value(carb, "operation", model: v4) == .integer(0))
        #expect(MigrationFixtures.value(carb, "createdByCurrentApp", model: v4) == .bool(true))
        #expect(MigrationFixtures.value(carb, "grams", model: v4) == .double(30))
    }

    /// Find or create: one Continent per distinct code, shared by the countries that have it; a country without a
    /// code makes none and links to none.
    @Test func findOrCreateMakesOneObjectPerKey() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("geo.sqlite")
        let v1 = Self.geo.versions[0]
        try MigrationFixtures.writeStore(
            at: url, model: v1,
            records: [
                MigrationFixtures.record("Country", 1, in: v1, ["name": "France", "code": .integer(10)]),
                MigrationFixtures.record("Country", 2, in: v1, ["name": "Nowhere"]),
                MigrationFixtures.record("Country", 3, in: v1, ["name": "Chile", "code": .integer(20)]),
                MigrationFixtures.record("Country", 4, in: v1, ["name": "Spain", "code": .integer(10)]),
            ])
        let (report, records) = try Self.migrate(
            url,
            file: """
                source: Geo 1
                destination: Geo 2
                entities:
                  Continent:
                    from: Country
                    findOrCreate: $source.code
                    attributes:
                      code: $source.code
                  Country:
                    relationships:
                      continent: mapped('CountryToContinent', $source)
                """, bundle: Self.geo, in: folder)
        #expect(report.written == ["Country": 4, "Continent": 2])
        #expect(report.ledgers.allSatisfy { $0.isReconciled })
        let v2 = Self.geo.versions[1]
        let continents = try #require(records["Continent"])
        #expect(Set(continents.map { MigrationFixtures.value($0, "code", model: v2) }) == [.integer(10), .integer(20)])
        let countries = try #require(records["Country"])
        func continent(of name: String) -> ObjectReference? {
            let country = countries.first { MigrationFixtures.value($0, "name", model: v2) == .string(name) }
            guard case .toOne(let reference)? = country.flatMap({ MigrationFixtures.relationship($0, "continent", model: v2) })
            else { return nil }
            return reference
        }
        #expect(continent(of: "France") != nil && continent(of: "France") == continent(of: "Spain"))
        #expect(continent(of: "Chile") != nil && continent(of: "Chile") != continent(of: "France"))
        #expect(continent(of: "Nowhere") == nil)
        #expect(report.dangling == 0)
    }

    /// objc.io's Moody 5 → 6, whose Xcode mapping model names `Country5ToCountry6Policy` (app code), written as a
    /// mapping file from the README: every Country copied, and linked to the one Continent of its code, found or
    /// created. The app's test expects 2 Continents for its 3 Countries, 710 and 231 sharing 10004.
    @Test func moodysPolicyAsAMappingFileMigratesItsStore() throws {
        let repository = "objcio__core-data/Migrations/"
        let bundleURL = Fixtures.corpus(repository + "Migrations/Moody.xcdatamodeld")
        let bundle = try ModelBundle.load(from: bundleURL)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Fixtures.copyStore(Fixtures.corpus(repository + "MigrationsTests/Moody 5.moody"), into: folder)
        let file = Fixtures.samplesRoot.appendingPathComponent("PolicyMappingFiles/Moody5-Moody6.yaml")
        var options = StoreMigration.Options(bundle: bundle, destinationVersion: "Moody 6")
        options.modelURL = bundleURL
        try options.loadMappings(from: [file])
        let output = folder.appendingPathComponent("out.sqlite")
        let report = try StoreMigration.migrate(store: store, to: .file(output), options: options)
        #expect(report.written["Continent"] == 2 && report.written["Country"] == 3)
        let v6 = try #require(bundle.version(named: "Moody 6"))
        let records = try CSVStoreRoundTripTests.records(of: output, model: v6)
        let continents = try #require(records["Continent"])
        let byCode = Dictionary(
            uniqueKeysWithValues: continents.map { (MigrationFixtures.value($0, "numericISO3166Code", model: v6), $0.id) })
        let countries = try #require(records["Country"])
        func continentCode(_ country: Int64) -> Value? {
            guard let record = countries.first(where: { MigrationFixtures.value($0, "numericISO3166Code", model: v6) == .integer(country) }),
                case .toOne(let reference?)? = MigrationFixtures.relationship(record, "continent", model: v6)
            else { return nil }
            return byCode.first { $0.value == reference.id }?.key ?? nil
        }
        #expect(continentCode(710) == .integer(10004) && continentCode(231) == .integer(10004))
        #expect(Set(byCode.keys) == [.integer(10004), .integer(10005)])
    }


    /// What a mapping file names that its models lack is found when the file is read, at its line (65): a
    /// `mapped('…')` entry the hop does not have, a `$source` property the source lacks, a fetch of an entity the
    /// source lacks. They were plan problems (exit 1) found only once a store was read.
    @Test(arguments: [
        ("mapped('CountryToContinent'", "mapped('CountryToContinnent'", "this hop has no entity mapping CountryToContinnent"),
        ("numericISO3166Code: $source.isoContinent", "numericISO3166Code: $source.isoContinnent", "did you mean isoContinent?"),
        ("continent: mapped('CountryToContinent', $source)", "continent: fetch('Planet', 'TRUEPREDICATE')", "fetches Planet"),
    ])
    func aMappingFilesMistakeIsFoundWhenItIsRead(_ original: String, _ typo: String, _ said: String) throws {
        let bundle = try ModelBundle.load(from: Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"))
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sample = try String(
            contentsOf: Fixtures.samplesRoot.appendingPathComponent("PolicyMappingFiles/Moody5-Moody6.yaml"), encoding: .utf8)
        #expect(sample.contains(original))
        let file = folder.appendingPathComponent("typo.yaml")
        try sample.replacingOccurrences(of: original, with: typo).write(to: file, atomically: true, encoding: .utf8)
        var options = StoreMigration.Options(bundle: bundle, destinationVersion: "Moody 6")
        #expect {
            try options.loadMappings(from: [file])
        } throws: { error in
            guard let error = error as? DecantError else { return false }
            return error.code == .malformedInput && error.message.contains(said) && error.location?.line != nil
                && error.location?.path?.hasSuffix("typo.yaml") == true
        }
    }

    /// v1 `Measurement{value, geoLocations}` (a to-many with no inverse) and `GeoLocation{lat}`; v2 `Track{value,
    /// locations}` ⇄ `GeoLocation{lat, track}` with `track` required: a Track made per Measurement, its locations moved
    /// onto it from the to-many side.
    static let tracks: ModelBundle = {
        var measurement = Entity(name: "Measurement")
        measurement.attributes = [Attribute(name: "value", type: .double, isOptional: true)]
        measurement.relationships = [Relationship(name: "geoLocations", destination: "GeoLocation", toMany: true)]
        var location1 = Entity(name: "GeoLocation")
        location1.attributes = [Attribute(name: "lat", type: .double, isOptional: true)]
        var track = Entity(name: "Track")
        track.attributes = [Attribute(name: "value", type: .double, isOptional: true)]
        track.relationships = [Relationship(name: "locations", destination: "GeoLocation", inverse: "track", toMany: true)]
        var location2 = Entity(name: "GeoLocation")
        location2.attributes = [Attribute(name: "lat", type: .double, isOptional: true)]
        location2.relationships = [Relationship(name: "track", destination: "Track", inverse: "locations")]
        return MigrationFixtures.bundle(
            "Tracks",
            [
                ObjectModel(versionName: "Tracks 1", entities: [location1, measurement]),
                ObjectModel(versionName: "Tracks 2", entities: [location2, track]),
            ])
    }()

    /// Core Data sets the inverse of every relationship a mapping sets, whatever object made the other side, before
    /// it validates: each GeoLocation, made by its own entry, gets the Track its Measurement's entry listed it on
    /// (before, every GeoLocation was rejected, `track` being required and nil).
    @Test func linksSetFromTheToManySideReachTheirMembersMadeElsewhere() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let v1 = Self.tracks.versions[0]
        let url = folder.appendingPathComponent("tracks.sqlite")
        var records = (1...5).map { MigrationFixtures.record("GeoLocation", Int64($0), in: v1, ["lat": .double(Double($0))]) }
        records += [
            MigrationFixtures.record(
                "Measurement", 1, in: v1, ["value": .double(1)],
                relationships: ["geoLocations": .toMany([.pk("GeoLocation", 1), .pk("GeoLocation", 2)])]),
            MigrationFixtures.record(
                "Measurement", 2, in: v1, ["value": .double(2)],
                relationships: ["geoLocations": .toMany([.pk("GeoLocation", 3), .pk("GeoLocation", 4), .pk("GeoLocation", 5)])]),
        ]
        try MigrationFixtures.writeStore(at: url, model: v1, records: records)
        var track = Self.tracks.versions[1]
        let location = try #require(track.entities.firstIndex { $0.name == "GeoLocation" })
        track.entities[location].relationships[0].isOptional = false
        let bundle = MigrationFixtures.bundle("Tracks", [v1, track])
        let (report, written) = try Self.migrate(
            url,
            file: """
                source: Tracks 1
                destination: Tracks 2
                entities:
                  Track:
                    from: Measurement
                    relationships:
                      locations: $source.geoLocations
                """, bundle: bundle, in: folder)
        #expect(report.written == ["Track": 2, "GeoLocation": 5])
        #expect(report.rejected == 0)
        let locations = try #require(written["GeoLocation"])
        let owners = locations.map { MigrationFixtures.relationship($0, "track", model: track) }
        #expect(owners.allSatisfy { if case .toOne(.some) = $0 { true } else { false } }, "\(owners)")
        let byLat = Dictionary(uniqueKeysWithValues: zip(locations.map { MigrationFixtures.value($0, "lat", model: track) }, owners))
        #expect(byLat[.double(1)] == byLat[.double(2)] && byLat[.double(3)] == byLat[.double(5)])
        #expect(byLat[.double(1)] != byLat[.double(3)])
        #expect(!report.warnings.contains { $0.kind == .oneSidedLink }, "\(report.warnings)")
    }

    /// A fetch whose predicate is computed, or reads a variable other than `$source`, is the file's mistake: reported
    /// at its line when the plan is made, with what to write instead.
    @Test func fetchMistakesAreReportedAtTheirLines() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("map.yaml")
        try """
            source: Geo 1
            destination: Geo 2
            entities:
              Continent:
                from: Country
                attributes:
                  code: "fetchCount('Country', 'code == ' + string($source.code))"
              Country:
                relationships:
                  continent: "mapped('CountryToContinent', fetch('Country', 'code == $manager.code'))"
            """.write(to: file, atomically: true, encoding: .utf8)
        let plan = try MigrationPlan(
            bundle: Self.geo, source: Self.geo.versions[0], mappings: [try MappingFiles.load(from: file)])
        let computed = try #require(plan.problems.first { $0.message.contains("computes its entity or predicate") })
        #expect(computed.location?.line == 7 && computed.location?.keyPath == "entities.Continent.attributes.code")
        let reading = try #require(plan.problems.first { $0.message.contains("a predicate Decant cannot read") })
        #expect(reading.location?.line == 10 && reading.location?.keyPath == "entities.Country.relationships.continent")
        #expect(reading.message.contains("a fetch predicate knows one variable, $source"))
        #expect(reading.advice?.contains("$source.keyPath (the object being mapped)") == true)
    }
}
