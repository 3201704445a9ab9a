import DecantCore
import DecantCodecs
import DecantFormats
import Foundation
import Testing

/// Each `NSExpression` shape of 3.4.3 as the engine's value expression.
@Suite("XcodeMapping translation")
struct XcodeMappingTranslationTests {
    static func models() -> (ObjectModel, ObjectModel) {
        var car = Entity(name: "Car")
        car.attributes = [
            Attribute(name: "plate", type: .string, isOptional: true),
            Attribute(name: "seats", type: .integer16, isOptional: true),
            Attribute(name: "count", type: .integer64, isOptional: true),
        ]
        car.attributes[1].defaultValue = "4"
        car.relationships = [Relationship(name: "owner", destination: "Person", inverse: "cars")]
        var person = Entity(name: "Person")
        person.attributes = [Attribute(name: "name", type: .string, isOptional: true)]
        person.relationships = [Relationship(name: "cars", destination: "Car", inverse: "owner", toMany: true)]
        return (
            ObjectModel(versionName: "A", entities: [car, person]), ObjectModel(versionName: "B", entities: [car, person])
        )
    }

    static func keyPath(_ path: String) -> NSExpressionNode {
        .function(operand: .variable("source"), selector: "valueForKeyPath:", arguments: [.keyPath(path)])
    }

    @Test func everyShapeBecomesAValueExpression() throws {
        let (a, b) = Self.models()
        let fetchRequest = NSExpressionNode.function(
            operand: .variable("manager"), selector: "fetchRequestForSourceEntityNamed:predicateString:",
            arguments: [.constant(.string("Car")), .constant(.string("plate != nil"))])
        let xcode = XcodeMappingModel(
            path: "test.cdm",
            entityMappings: [
                XcodeEntityMapping(
                    name: "CarToCar", type: .custom, sourceEntityName: "Car", destinationEntityName: "Car",
                    sourceExpression: .fetch(request: fetchRequest, context: .variable("manager"), countOnly: false),
                    migrationPolicyClassName: "App.CarPolicy",
                    attributeMappings: [
                        XcodePropertyMapping(
                            name: "plate",
                            valueExpression: .function(
                                operand: .function(
                                    operand: .classConstant("_NSPredicateUtilities"), selector: "castObject:toType:",
                                    arguments: [.constant(.string("Helpers")), .constant(.string("Class"))]),
                                selector: "normalizedPlate:", arguments: [Self.keyPath("plate")])),
                        XcodePropertyMapping(
                            name: "count",
                            valueExpression: .fetch(request: fetchRequest, context: .variable("manager"), countOnly: true)),
                    ],
                    relationshipMappings: [
                        XcodePropertyMapping(
                            name: "owner",
                            valueExpression: .function(
                                operand: .variable("manager"),
                                selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                                arguments: [.constant(.string("PersonToPerson")), Self.keyPath("owner")]))
                    ]),
                XcodeEntityMapping(
                    name: "PersonToPerson", type: .copy, sourceEntityName: "Person", destinationEntityName: "Person",
                    attributeMappings: [
                        XcodePropertyMapping(
                            name: "name",
                            valueExpression: .function(
                                operand: .variable("entityPolicy"), selector: "title:", arguments: [Self.keyPath("name")]))
                    ],
                    relationshipMappings: [
                        XcodePropertyMapping(
                            name: "cars",
                            valueExpression: .function(
                                operand: .variable("manager"),
                                selector: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                                arguments: [.constant(.string("cars")), Self.keyPath("cars.@distinctUnionOfSets.self")]))
                    ]),
            ])
        let mapping = xcode.mappingModel(from: a, to: b)
        let car = try #require(mapping.mapping(producing: "Car"))
        #expect(car.policy == "App.CarPolicy")
        #expect(car.filter?.description == "$source.plate != nil")
        #expect(car.property("plate")?.expression?.description == "call('Helpers', 'normalizedPlate:', $source.plate)")
        #expect(car.property("count")?.expression?.description == "fetchCount('Car', 'plate != nil')")
        #expect(car.property("seats")?.expression?.description == "4")   // no mapping: the default value
        #expect(car.property("owner")?.expression?.description == "mapped('PersonToPerson', $source.owner)")
        let person = try #require(mapping.mapping(producing: "Person"))
        #expect(person.policy == nil)
        // $entityPolicy without a policy class has no receiver: reported, never dropped.
        #expect(person.property("name")?.expression?.unsupportedParts.isEmpty == false)
        #expect(
            person.property("cars")?.expression?.description
                == "mappedThrough('cars', $source.cars.@distinctUnionOfSets.self)")
    }
}
