import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Xcode mapping models: compiled `.cdm` files decoded, `.xcmappingmodel` sources compiled the way Xcode's mapping
/// compiler does, and the two compared on the one pair the corpus has.
@Suite("XcodeMapping")
struct XcodeMappingTests {
    static let sourceModels: [String] = Fixtures.corpusItems { $0.pathExtension == "xcmappingmodel" }
        .map(Fixtures.corpusRelativePath)
    static let compiledModels: [String] = Fixtures.corpusItems { $0.pathExtension == "cdm" }
        .map(Fixtures.corpusRelativePath)

    static let sampleModel = "alemar11__CoreDataPlus/Tests/Resources/SampleModel/"
    static let moody = "objcio__core-data/Migrations/Migrations/"

    @Test("the corpora have 17 .xcmappingmodel (6 in the apps corpus) and 1 .cdm")
    func corpusCounts() {
        #expect(Self.sourceModels.count == 17)
        #expect(Self.compiledModels.count == 1)
    }

    @Test("every .xcmappingmodel compiles against its embedded snapshots", arguments: sourceModels)
    func everySourceModel(_ path: String) throws {
        let model = try XcodeMappingModel.load(contentsOf: Fixtures.corpus(path), bundle: nil)
        #expect(!model.entityMappings.isEmpty)
        #expect(model.sourceModel != nil && model.destinationModel != nil)
        #expect(model.sourceModelPath?.hasSuffix(".xcdatamodel") == true)
        #expect(model.destinationModelPath?.hasSuffix(".xcdatamodel") == true)
        for mapping in model.entityMappings {
            if mapping.type != .add {
                #expect(mapping.sourceEntityVersionHash?.count == 32, "\(mapping.name)")
                #expect(mapping.sourceExpression != nil, "\(mapping.name)")
            }
            if mapping.type != .remove { #expect(mapping.destinationEntityVersionHash?.count == 32, "\(mapping.name)") }
            let names = mapping.attributeMappings.map(\.name)
            #expect(names == names.sorted(), "\(mapping.name)")
        }
        // The xcmapping.xml file itself reads the same.
        let xml = try XcodeMappingModel.load(
            contentsOf: Fixtures.corpus(path).appendingPathComponent("xcmapping.xml"), bundle: nil)
        #expect(xml.entityMappings == model.entityMappings)
    }

    @Test("every .cdm decodes")
    func everyCompiledModel() throws {
        for path in Self.compiledModels {
            let model = try XcodeMappingModel.load(contentsOf: Fixtures.corpus(path), bundle: nil)
            #expect(!model.entityMappings.isEmpty, "\(path)")
        }
    }

    @Test("entity mapping names, types and counts")
    func spotChecks() throws {
        func summary(_ path: String) throws -> [String] {
            try XcodeMappingModel.load(contentsOf: Fixtures.corpus(path), bundle: nil).entityMappings.map {
                "\($0.name) \($0.type) \($0.attributeMappings.count)/\($0.relationshipMappings.count)"
            }
        }
        #expect(
            try summary(Self.sampleModel + "Fixtures/V2toV3.cdm") == [
                "CarToCar custom 3/3", "LuxuryCarToLuxuryCar custom 4/3", "PersonToPerson copy 3/2",
                "SportCarToSportCar custom 3/3", "Maker add 1/1",
            ])
        #expect(
            try summary(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel")
                == summary(Self.sampleModel + "Fixtures/V2toV3.cdm"))
        let moody56 = try summary(Self.moody + "Moody 5-Moody 6.xcmappingmodel")
        #expect(moody56.contains { $0.hasPrefix("CountryToCountry custom") })
        #expect(moody56.contains { $0.hasPrefix("Continent add") })
        #expect(moody56.count == 3)
        let corestore = try summary(
            "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/"
                + "Advanced.EvolutionDemo.V2.FromV1.xcmappingmodel")
        #expect(corestore.count == 1)
        #expect(corestore.first?.hasPrefix("CreatureToCreature custom") == true)
    }

    @Test("the CoreDataPlus V2toV3 source compiles to exactly its .cdm")
    func compiledEqualsCDM() throws {
        let bundle = try ModelBundle.load(from: Fixtures.corpus(Self.sampleModel + "SampleModel.xcdatamodeld"))
        let url = Fixtures.corpus(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel")
        #expect(bundle.version(named: "SampleModel2") != nil && bundle.version(named: "SampleModel3") != nil)
        let compiled = try XcodeMappingModel(
            xcmappingAt: url, source: bundle.version(named: "SampleModel2"),
            destination: bundle.version(named: "SampleModel3"))
        let cdm = try XcodeMappingModel(
            cdmData: Data(contentsOf: Fixtures.corpus(Self.sampleModel + "Fixtures/V2toV3.cdm")), path: "V2toV3.cdm")
        #expect(compiled.entityMappings.count == cdm.entityMappings.count)
        for (mine, apple) in zip(compiled.entityMappings, cdm.entityMappings) {
            #expect(mine == apple, "\(mine.name)")
        }
        #expect(compiled.entityMappings == cdm.entityMappings)
        #expect(compiled.sourceModelPath == "Tests/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel")
        // Against the embedded snapshots, and through the bundle by version name, the result is the same.
        let snapshots = try XcodeMappingModel.load(contentsOf: url, bundle: nil)
        #expect(snapshots.entityMappings == cdm.entityMappings)
        let viaBundle = try XcodeMappingModel.load(contentsOf: url, bundle: bundle)
        #expect(viaBundle.entityMappings == cdm.entityMappings)
    }

    @Test("with the model sources found beside it, a .xcmappingmodel compiles as with its snapshots", arguments: sourceModels)
    func sourcesAgreeWithSnapshots(_ path: String) throws {
        let url = Fixtures.corpus(path)
        let snapshots = try XcodeMappingModel.load(contentsOf: url, bundle: nil)
        let repository = String(path.prefix { $0 != "/" })
        let bundles = Fixtures.corpusItems { $0.pathExtension == "xcdatamodeld" }
            .filter { Fixtures.corpusRelativePath($0).hasPrefix(repository + "/") }
        func versionName(_ modelPath: String?) -> String? {
            modelPath?.split(separator: "/").last.map { String($0.dropLast(".xcdatamodel".count)) }
        }
        let wanted = [versionName(snapshots.sourceModelPath), versionName(snapshots.destinationModelPath)]
        for bundleURL in bundles {
            guard let bundle = try? ModelBundle.load(from: bundleURL),
                wanted.allSatisfy({ name in name.map { bundle.version(named: $0) != nil } ?? false })
            else { continue }
            let source = try #require(bundle.version(named: wanted[0] ?? ""))
            let destination = try #require(bundle.version(named: wanted[1] ?? ""))
            // Every entity of a snapshot has the hash the version has; a version may have gained entities since the
            // mapping model was saved (LoopKit's Modelv4 added CgmEvent), which Core Data's subset match allows (3.3).
            for (snapshot, version) in [(snapshots.sourceModel, source), (snapshots.destinationModel, destination)] {
                let hashes = try #require(snapshot?.entityVersionHashes)
                #expect(hashes == version.entityVersionHashes.filter { hashes[$0.key] != nil }, "\(path)")
            }
            let viaBundle = try XcodeMappingModel.load(contentsOf: url, bundle: bundle)
            #expect(viaBundle.entityMappings == snapshots.entityMappings)
            return
        }
        Issue.record("no .xcdatamodeld beside \(path) has versions \(wanted)")
    }

    @Test("Moody 2→3 relationship expressions follow sourcekeypath and sourcemappingname")
    func moodyRelationships() throws {
        let model = try XcodeMappingModel.load(
            contentsOf: Fixtures.corpus(Self.moody + "Moody 2-Moody 3.xcmappingmodel"), bundle: nil)
        var expressions: [String: String] = [:]
        for mapping in model.entityMappings {
            for property in mapping.relationshipMappings {
                expressions["\(mapping.name).\(property.name)"] = property.valueExpression?.description ?? "nil"
            }
        }
        #expect(
            expressions.values.contains(
                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ContinentToContinent", $source.country.continent)"#
            ))
        #expect(
            expressions.values.contains(
                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "MoodToMood", $source.countries.@distinctUnionOfSets.moods)"#
            ))
        // An empty policy class name is no policy: the mappings are plain copies.
        #expect(model.entityMappings.allSatisfy { $0.type == .copy && $0.migrationPolicyClassName == nil })
        let first = try #require(model.entityMappings.first)
        #expect(
            first.sourceExpression?.description
                == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "\#(first.sourceEntityName ?? "")", "TRUEPREDICATE"), $manager.sourceContext, NO)"#
        )
    }

    @Test("CarToCar reads as section 3.2 prints it")
    func cdmDescriptions() throws {
        let cdm = try XcodeMappingModel.load(
            contentsOf: Fixtures.corpus(Self.sampleModel + "Fixtures/V2toV3.cdm"), bundle: nil)
        let car = try #require(cdm.entityMappings.first)
        #expect(car.migrationPolicyClassName == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        #expect(car.attributeMappings.first { $0.name == "model" }?.valueExpression?.description == "$source.model")
        #expect(car.relationshipMappings.first { $0.name == "createdBy" }?.valueExpression == nil)
        #expect(
            car.relationshipMappings.first { $0.name == "owner" }?.valueExpression?.description
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.owner)"#
        )
        let person = try #require(cdm.entityMappings.first { $0.name == "PersonToPerson" })
        #expect(
            person.relationshipMappings.first { $0.name == "cars" }?.valueExpression?.description
                == #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)"#
        )
        #expect(cdm.sourceEntityHashes.count == 4)
        #expect(cdm.destinationEntityHashes.count == 5)
    }

    @Test("missing snapshots without models is a usage error")
    func noModels() throws {
        let url = Fixtures.corpus(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel/xcmapping.xml")
        var text = try String(contentsOf: url, encoding: .utf8)
        for key in ["sourcemodeldata", "destinationmodeldata"] {
            text = text.replacingOccurrences(
                of: #"<attribute name="\#(key)" type="binary">[^<]*</attribute>"#, with: "",
                options: .regularExpression)
        }
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("xcmapping.xml")
        try Data(text.utf8).write(to: file)
        do {
            _ = try XcodeMappingModel.load(contentsOf: file, bundle: nil)
            Issue.record("read without any model")
        } catch let error as DecantError {
            #expect(error.code == .usage)
        }
        let bundle = try ModelBundle.load(from: Fixtures.corpus(Self.sampleModel + "SampleModel.xcdatamodeld"))
        let model = try XcodeMappingModel.load(contentsOf: file, bundle: bundle)
        #expect(model.entityMappings.count == 5)
        #expect(model.sourceModel == nil)
    }

    @Test("a stored mapping name, filter predicate and old-style type name win over the generated ones")
    func storedSettingsWin() throws {
        let url = Fixtures.corpus(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel/xcmapping.xml")
        var text = try String(contentsOf: url, encoding: .utf8)
        let person = #"<attribute name="sourcename" type="string">Person</attribute>"#
        #expect(text.contains(person))
        text = text.replacingOccurrences(
            of: person,
            with: person + #"<attribute name="name" type="string">People</attribute>"#
                + #"<attribute name="sourcefilterpredicatestring" type="string">lastName != nil</attribute>"#)
        let car = #"<attribute name="mappingnumber" type="int16">1</attribute>"#
        #expect(text.contains(car))
        text = text.replacingOccurrences(
            of: car, with: car + #"<attribute name="mappingtypename" type="string">Transform</attribute>"#)
            .replacingOccurrences(
                of: #"<attribute name="mappingtypename" type="string">Undefined</attribute>"#, with: "")
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("xcmapping.xml")
        try Data(text.utf8).write(to: file)
        let model = try XcodeMappingModel.load(contentsOf: file, bundle: nil)
        #expect(model.entityMappings.map(\.name) == [
            "CarToCar", "LuxuryCarToLuxuryCar", "People", "SportCarToSportCar", "Maker",
        ])
        #expect(model.entityMappings.first?.type == .transform)
        let people = try #require(model.entityMappings.first { $0.name == "People" })
        #expect(
            people.sourceExpression?.description
                == #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Person", "lastName != nil"), $manager.sourceContext, NO)"#
        )
        // Relationships that lead to Person now go through the mapping's stored name.
        let car0 = try #require(model.entityMappings.first)
        #expect(
            car0.relationshipMappings.first { $0.name == "owner" }?.valueExpression?.description
                == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "People", $source.owner)"#
        )
    }
}
