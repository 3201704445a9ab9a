import DecantCore
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Composite attributes in compiled models and model caches (`coredata-formats.md` 12.1): an
/// `NSCompositeAttributeDescription` of type 2100, value class `NSDictionary`, whose `NSCompositeElements` are
/// complete `NSAttributeDescription`s; SwiftData's userInfo values (`EnumType` a Boolean, `enum` an array).
@Suite("Composite attributes in archived models")
struct CompositeArchiveTests {
    /// One entity with each composite shape SwiftData writes (12.5), and a fetch index (12.7).
    static var model: ObjectModel {
        var trip = Entity(name: "Trip")
        trip.className = "Trip"
        trip.uniquenessConstraints = [["name"]]
        trip.fetchIndexes = [FetchIndex(name: "SwiftDataIndexOnBinaryname", elements: [.init(property: "name")])]
        var composites: [CompositeType] = []
        func composite(_ name: String, optional: Bool, _ elements: [Attribute], info: [String: UserInfoValue]) {
            composites.append(CompositeType(name: "Trip.\(name)", attributes: elements))
            var attribute = Attribute(name: name, type: .composite, isOptional: optional)
            attribute.compositeName = "Trip.\(name)"
            attribute.valueClassName = "NSDictionary"
            attribute.userInfo = info
            trip.attributes.append(attribute)
        }
        trip.attributes.append(Attribute(name: "name", type: .string))
        trip.attributes.append(Attribute(name: "id", type: .uuid))
        // A String-backed enum: one element named like the property.
        composite("mode", optional: false, [Attribute(name: "mode", type: .string, isOptional: true)], info: ["EnumType": .bool(true)])
        // A payload-free enum without raw values: one String element per case.
        composite(
            "season", optional: true, ["spring", "summer", "autumn"].map { Attribute(name: $0, type: .string, isOptional: true) },
            info: ["EnumType": .bool(true), "enum": .array(["spring", "summer", "autumn"])])
        // A struct whose member `id` clashes with the entity's own `id` column.
        composite(
            "place", optional: true,
            [
                Attribute(name: "id", type: .uuid, isOptional: true), Attribute(name: "city", type: .string, isOptional: true),
                Attribute(name: "latitude", type: .double, isOptional: true),
                Attribute(name: "stops", type: .binary, isOptional: true),
            ], info: [:])
        trip.attributes.sort { $0.name < $1.name }  // as a decoded archive lists them
        var model = ObjectModel(entities: [trip], versionIdentifiers: ["1.0.0"])
        model.composites = composites
        return model
    }

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
        ("a nested composite", "is itself a composite"),
        ("no elements", "has no elements"),
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
            case "a nested composite":
                return writer.addArray([Self.element(&writer, "inner", type: 2100, className: "NSCompositeAttributeDescription")]).uid
            case "no elements": return writer.addArray([]).uid
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

    @Test func aCompositeNamingAMissingTypeIsNotEncoded() throws {
        var model = Self.model
        model.composites.removeAll { $0.name == "Trip.place" }
        let error = try #require(throws: DecantError.self) { try ArchivedModelEncoder.encode(model) }
        #expect(error.message.contains("Trip.place") && error.location?.entity == "Trip")
    }
}
