import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Composite attributes in compiled models and model caches (`coredata-formats.md` 12.1): an
/// `NSCompositeAttributeDescription` of type 2100, value class `NSDictionary`, whose `NSCompositeElements` are
/// complete `NSAttributeDescription`s; SwiftData's userInfo values (`EnumType` a Boolean, `enum` an array).
@Suite("Composite attributes in archived models")
struct CompositeArchiveTests {
    static var model: ObjectModel { CompositeFixtures.trip }

    @Test func compositesRoundTripWithTheirElementsUserInfoAndHashes() throws {
        let model = Self.model
        let data = try ArchivedModelEncoder.encode(model)
        let decoded = try ArchivedModelDecoder.decode(data)
        #expect(decoded.entityVersionHashes == model.entityVersionHashes)
        let trip = try #require(decoded.entity(named: "Trip"))
        for name in ["mode", "season", "place"] {
            let attribute = try #require(trip.attributes.first { $0.name == name })
            #expect(attribute.type == .composite)
            let original = try #require(model.composites.first { $0.name == "Trip.\(name)" })
            let composite = try #require(decoded.composites.first { $0.name == attribute.compositeName })
            #expect(
                composite.attributes.map { "\($0.name) \($0.type) \($0.isOptional)" }
                    == original.attributes.map { "\($0.name) \($0.type) \($0.isOptional)" }, "\(name)")
        }
        #expect(trip.attributes.first { $0.name == "season" }?.userInfo["enum"] == .array(["spring", "summer", "autumn"]))
        #expect(trip.attributes.first { $0.name == "mode" }?.userInfo["EnumType"] == .bool(true))
        #expect(trip.fetchIndexes == model.entities[0].fetchIndexes)
        // Written back unchanged.
        #expect(try ArchivedModelEncoder.encode(decoded) == data)
    }

    /// The archive's keys and classes, checked by hand against 12.1.
    @Test func theArchiveHasTheShapeCoreDataWrites() throws {
        let archive = try KeyedArchive(data: ArchivedModelEncoder.encode(Self.model))
        var composites: [ArchivedObject] = []
        for index in 0..<archive.objectCount {
            let object = try archive.object(at: index)
            if object.className == "NSCompositeAttributeDescription" { composites.append(object) }
        }
        #expect(composites.count == 3)
        for composite in composites {
            #expect(composite.classes.starts(with: ["NSCompositeAttributeDescription", "NSAttributeDescription", "NSPropertyDescription"]))
            #expect(try archive.integer(forKey: "NSAttributeType", in: composite) == 2100)
            #expect(try archive.string(forKey: "NSAttributeValueClassName", in: composite) == "NSDictionary")
            let name = try #require(try archive.string(forKey: "NSPropertyName", in: composite))
            #expect(try archive.string(forKey: "NSRenamingIdentifier", in: composite) == name)
            let elements = try #require(try archive.elements(forKey: "NSCompositeElements", in: composite))
            #expect(!elements.isEmpty)
            for value in elements {
                let element = try #require(try archive.object(for: value))
                #expect(element.className == "NSAttributeDescription")
                let elementName = try #require(try archive.string(forKey: "NSPropertyName", in: element))
                #expect(try archive.string(forKey: "NSRenamingIdentifier", in: element) == elementName)
                #expect(try archive.integer(forKey: "NSAttributeType", in: element) != nil)
                #expect(try archive.integer(forKey: "_P", in: element) != nil)
                #expect(try archive.integer(forKey: "NSFlagsKey", in: element) == 0)
            }
        }
    }

    // MARK: Mutated archives

    /// A one-entity model archive whose attribute `place` is written by hand.
    static func handArchive(
        className: String = "NSCompositeAttributeDescription", type: Int64 = 2100,
        elements: (inout KeyedArchiveWriter) -> PropertyListValue?
    ) throws -> Data {
        var writer = KeyedArchiveWriter()
        let model = writer.reserveObject()
        let entity = writer.reserveObject()
        let attribute = writer.reserveObject()
        let placeName = writer.addString("place").uid
        let tripName = writer.addString("Trip").uid
        var fields: PropertyListDictionary = [
            "NSPropertyName": placeName, "NSAttributeType": .integer(type), "NSEntity": entity.uid,
        ]
        if let list = elements(&writer) { fields["NSCompositeElements"] = list }
        writer.setObject(
            attribute, className: className,
            classes: [className, "NSAttributeDescription", "NSPropertyDescription", "NSObject"], fields: fields)
        let properties = writer.addDictionary(keys: [placeName], values: [attribute.uid]).uid
        writer.setObject(
            entity, className: "NSEntityDescription", fields: ["NSEntityName": tripName, "NSProperties": properties])
        let entities = writer.addDictionary(keys: [tripName], values: [entity.uid]).uid
        writer.setObject(model, className: "NSManagedObjectModel", fields: ["NSEntities": entities])
        return try writer.encodedData(root: model)
    }

    static func element(_ writer: inout KeyedArchiveWriter, _ name: String, type: Int64 = 700, className: String = "NSAttributeDescription")
        -> PropertyListValue
    {
        let nameValue = writer.addString(name).uid
        let chain = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
        return writer.addObject(
            className: className,
            classes: className == "NSRelationshipDescription"
                ? [className, "NSPropertyDescription", "NSObject"] : className == chain[0] ? chain : [className] + chain,
            fields: ["NSPropertyName": nameValue, "NSAttributeType": .integer(type)]
        ).uid
    }

    @Test func aHandWrittenCompositeDecodes() throws {
        let data = try Self.handArchive { writer in
            let city = Self.element(&writer, "city")
            let year = Self.element(&writer, "year", type: 300)
            return writer.addArray([city, year]).uid
        }
        let model = try ArchivedModelDecoder.decode(data)
        let place = try #require(model.entity(named: "Trip")?.attributes.first)
        #expect(place.type == .composite && place.compositeName == "Trip.place")
        #expect(model.composites.first?.attributes.map(\.name) == ["city", "year"])
        #expect(model.composites.first?.attributes.map(\.type) == [.string, .integer64])
    }

    /// Each damage ends in a located malformed-input error naming the composite.
    @Test(arguments: [
        ("no NSCompositeElements", "has no NSCompositeElements"),
        ("elements not an array", "expected"),
        ("a string element", "expected an NSAttributeDescription"),
        ("a relationship element", "expected an NSAttributeDescription"),
        ("composites nested 9 deep", "more than 8 levels deep"),
        ("duplicate element", "two elements named city"),
        ("plain class, type 2100", "composite only by half"),
        ("composite class, type 700", "composite only by half"),
    ])
    func damagedCompositesAreRefused(damage: String, expected: String) throws {
        var className = "NSCompositeAttributeDescription"
        var type: Int64 = 2100
        if damage == "plain class, type 2100" { className = "NSAttributeDescription" }
        if damage == "composite class, type 700" { type = 700 }
        let data = try Self.handArchive(className: className, type: type) { writer in
            switch damage {
            case "no NSCompositeElements": return nil
            case "elements not an array": return .integer(7)
            case "a string element": return writer.addArray([writer.addString("city").uid]).uid
            case "a relationship element":
                return writer.addArray([Self.element(&writer, "city", className: "NSRelationshipDescription")]).uid
            case "composites nested 9 deep":
                var inner = writer.addArray([]).uid
                for level in 0..<9 {
                    let name = writer.addString("level\(level)").uid
                    let object = writer.addObject(
                        className: "NSCompositeAttributeDescription",
                        classes: ["NSCompositeAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject"],
                        fields: ["NSPropertyName": name, "NSAttributeType": .integer(2100), "NSCompositeElements": inner]
                    ).uid
                    inner = writer.addArray([object]).uid
                }
                return inner
            case "duplicate element":
                let first = Self.element(&writer, "city")
                let second = Self.element(&writer, "city")
                return writer.addArray([first, second]).uid
            default:
                let city = Self.element(&writer, "city")
                return writer.addArray([city]).uid
            }
        }
        let error = try #require(throws: DecantError.self) { try ArchivedModelDecoder.decode(data, path: "Trip.mom") }
        #expect(error.code == .malformedInput)
        #expect(error.message.contains(expected), "\(damage): \(error.message)")
        #expect(error.location?.path == "Trip.mom")
        #expect(error.location?.object != nil, "\(damage): \(error)")
    }

    /// Xcode lets a composite hold a composite, and a composite be empty (phimage/MomXML's model): both read back.
    @Test func nestedAndEmptyCompositesRoundTrip() throws {
        let model = try #require(
            try ModelBundle.load(from: Fixtures.corpus("phimage__MomXML/Tests/Model.xcdatamodeld")).version(named: "Model"))
        let decoded = try ArchivedModelDecoder.decode(ArchivedModelEncoder.encode(model))
        #expect(decoded.entityVersionHashes == model.entityVersionHashes)
        let member = try #require(decoded.entity(named: "Produit")?.attributes.first { $0.name == "attribute1" })
        let outer = try #require(decoded.composites.first { $0.name == member.compositeName })
        #expect(outer.attributes.map(\.name) == ["one", "two", "three"])
        let inner = try #require(decoded.composites.first { $0.name == outer.attributes[2].compositeName })
        #expect(inner.attributes.isEmpty)
    }

    @Test func aCompositeNamingAMissingTypeIsNotEncoded() throws {
        var model = Self.model
        model.composites.removeAll { $0.name == "Trip.place" }
        let error = try #require(throws: DecantError.self) { try ArchivedModelEncoder.encode(model) }
        #expect(error.message.contains("Trip.place") && error.location?.entity == "Trip")
    }
}
