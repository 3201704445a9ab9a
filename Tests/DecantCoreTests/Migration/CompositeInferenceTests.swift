import DecantCore
import DecantTestSupport
import Testing

/// Inference carries composite attributes as it carries attributes: unchanged, or with elements added (nil) or
/// removed (dropped); an element whose type changes beyond a widening is refused, naming the element.
@Suite("Composite attributes in inferred mappings")
struct CompositeInferenceTests {
    static func changingPlace(_ change: (inout [Attribute]) -> Void) throws -> ObjectModel {
        var model = CompositeFixtures.trip
        let index = try #require(model.composites.firstIndex { $0.name == "Trip.place" })
        change(&model.composites[index].attributes)
        return model
    }

    static func placeMapping(_ result: MappingInference.Result) -> PropertyMapping? {
        result.mapping.entityMappings.first { $0.destinationEntity == "Trip" }?.attributes.first { $0.name == "place" }
    }

    @Test func unchangedAddedAndRemovedElementsAreCopied() throws {
        let same = MappingInference.infer(from: CompositeFixtures.trip, to: CompositeFixtures.trip)
        #expect(same.problems.isEmpty)
        #expect(Self.placeMapping(same)?.expression == .sourceProperty("place"))
        let added = try Self.changingPlace { $0.append(Attribute(name: "country", type: .string, isOptional: true)) }
        let removed = try Self.changingPlace { $0.removeAll { $0.name == "stops" } }
        for destination in [added, removed] {
            let inferred = MappingInference.infer(from: CompositeFixtures.trip, to: destination)
            #expect(inferred.problems.isEmpty, "\(inferred.problems)")
            #expect(Self.placeMapping(inferred)?.expression == .sourceProperty("place"))
        }
    }

    @Test func anElementTypeChangeIsRefusedByName() throws {
        let changed = try Self.changingPlace { elements in
            if let index = elements.firstIndex(where: { $0.name == "latitude" }) { elements[index].type = .string }
        }
        let inferred = MappingInference.infer(from: CompositeFixtures.trip, to: changed)
        let problem = try #require(inferred.problems.first)
        #expect(problem.entity == "Trip" && problem.property == "place")
        #expect(problem.message == "composite element place.latitude: Double → String is not a change Core Data infers")
        #expect(Self.placeMapping(inferred)?.expression == nil)
    }
}
