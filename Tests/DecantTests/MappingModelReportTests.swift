import Decant
import DecantTestSupport
import Foundation
import Testing

/// `MappingModelReport`: what `decant inspect X.xcmappingmodel` says about a mapping model.
@Suite("Mapping model report")
struct MappingModelReportTests {
    static func keyPath(_ path: String) -> NSExpressionNode {
        .function(operand: .variable("source"), selector: "valueForKeyPath:", arguments: [.keyPath(path)])
    }

    /// Versions A (Car: plate), B (Car: plate, seats; Person added), and C, a copy of B under another name.
    static func bundle() -> ModelBundle {
        var car = Entity(name: "Car")
        car.attributes = [Attribute(name: "plate", type: .string, isOptional: true)]
        var newCar = car
        newCar.attributes.append(Attribute(name: "seats", type: .integer16, isOptional: true))
        var person = Entity(name: "Person")
        person.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        return ModelBundle(
            name: "Cars",
            versions: [
                ObjectModel(versionName: "A", entities: [car]), ObjectModel(versionName: "B", entities: [newCar, person]),
                ObjectModel(versionName: "C", entities: [newCar, person]),
            ], currentVersionName: "C", sourceKind: .xcdatamodeld)
    }

    static func mapping(_ bundle: ModelBundle) -> XcodeMappingModel {
        let a = bundle.versions[0]
        let b = bundle.versions[1]
        return XcodeMappingModel(
            path: "AtoB.cdm",
            entityMappings: [
                XcodeEntityMapping(
                    name: "CarToCar", type: .custom, sourceEntityName: "Car", destinationEntityName: "Car",
                    sourceEntityVersionHash: a.versionHash(of: "Car"), destinationEntityVersionHash: b.versionHash(of: "Car"),
                    migrationPolicyClassName: "App.CarPolicy",
                    attributeMappings: [
                        XcodePropertyMapping(name: "plate", valueExpression: Self.keyPath("plate")),
                        XcodePropertyMapping(
                            name: "seats",
                            valueExpression: .function(
                                operand: .variable("entityPolicy"), selector: "seats:", arguments: [Self.keyPath("plate")])),
                    ]),
                XcodeEntityMapping(
                    name: "Person", type: .add, sourceEntityName: nil, destinationEntityName: "Person",
                    destinationEntityVersionHash: b.versionHash(of: "Person"),
                    attributeMappings: [
                        XcodePropertyMapping(
                            name: "name",
                            valueExpression: .function(
                                operand: .classConstant("_NSPredicateUtilities"), selector: "reverse:",
                                arguments: [.constant(.string("x"))]))
                    ]),
            ])
    }

    @Test func versionsEntityMappingsAndAppCode() throws {
        let bundle = Self.bundle()
        let report = MappingModelReport(mapping: Self.mapping(bundle), path: "AtoB.cdm", bundle: bundle)
        #expect(report.source.versions == ["A"])
        #expect(report.destination.versions == ["B", "C"])
        #expect(report.source.entityHashes == ["Car": try #require(bundle.versions[0].versionHash(of: "Car")).base64EncodedString()])
        #expect(report.destination.entityHashes.keys.sorted() == ["Car", "Person"])
        #expect(report.entityMappings.map(\.kind) == ["custom", "add"])
        #expect(report.entityMappings[0].policy == "App.CarPolicy")
        #expect(report.entityMappings[1].source == nil)
        // The key path copy needs nothing; the policy's method and the unknown utility do.
        #expect(report.appCode.map(\.property) == ["seats", "name"])
        #expect(report.appCode[0].classes == ["App.CarPolicy"])
        #expect(!report.appCode[0].unsupported)
        #expect(report.appCode[1].classes.isEmpty)
        #expect(report.appCode[1].unsupported)
        let text = report.text
        #expect(text.contains("source (version A):"))
        #expect(text.contains("destination (version B, C):"))
        #expect(text.contains("CarToCar  custom  Car → Car, policy App.CarPolicy"))
        #expect(text.contains("Person  add  - → Person"))
        #expect(text.contains("CarToCar.seats  FUNCTION($entityPolicy, \"seats:\""))
        #expect(text.contains("(calls App.CarPolicy)"))
        #expect(text.contains("Person.name"))
        #expect(text.contains("(no Decant counterpart)"))
        // Without a bundle: hashes only.
        let alone = MappingModelReport(mapping: Self.mapping(bundle), path: "AtoB.cdm")
        #expect(alone.source.versions == nil)
        #expect(alone.text.contains("source:\n  Car  "))
    }

    /// objc.io's Moody 5 → 6 (Apple-written): a custom mapping with a policy class, an added entity, a copy, and the
    /// versions it fits found by hash.
    @Test func moodyMappingModelFromTheCorpus() throws {
        let folder = Fixtures.corpus("objcio__core-data/Migrations/Migrations")
        let bundle = try ModelBundle.load(from: folder.appendingPathComponent("Moody.xcdatamodeld"))
        let url = folder.appendingPathComponent("Moody 5-Moody 6.xcmappingmodel")
        let report = MappingModelReport(
            mapping: try XcodeMappingModel.load(contentsOf: url, bundle: bundle), path: "Moody 5-Moody 6.xcmappingmodel",
            bundle: bundle)
        #expect(report.source.versions == ["Moody 5"])
        #expect(report.destination.versions == ["Moody 6"])
        #expect(report.entityMappings.map(\.name).sorted() == ["Continent", "CountryToCountry", "MoodToMood"])
        let country = try #require(report.entityMappings.first { $0.name == "CountryToCountry" })
        #expect(country.kind == "custom")
        #expect(country.policy == "Migrations.Country5ToCountry6Policy")
    }
}
