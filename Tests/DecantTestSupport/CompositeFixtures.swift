public import DecantCore
import Foundation

/// Models with composite attributes of every shape SwiftData writes (`coredata-formats.md` 12.5), for the tests of
/// archives, SQLite stores, formats and commands.
public enum CompositeFixtures {
    /// One entity with each composite shape SwiftData writes (12.5), and a fetch index (12.7).
    public static var trip: ObjectModel {
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

    /// Trip's records: one with every composite set (the place partly), one with none.
    public static let tripValues: [[String: Value]] = [
        [
            "name": "Lisbon", "id": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
            "mode": .composite(["mode": "walk"]), "season": .composite(["summer": "summer"]),
            "place": .composite([
                "id": .uuid(UUID(uuidString: "0A5E0D1C-2B3C-4D5E-8F90-A1B2C3D4E5F6") ?? UUID()), "city": "Lisboa",
                "latitude": .double(38.72), "stops": .data(Data([1, 2, 3])),
            ]),
        ],
        ["name": "Home", "id": .uuid(UUID(uuidString: "11111111-2222-4333-8444-555555555555") ?? UUID()),
         "mode": .composite(["mode": "stay"])],
    ]
}

extension CompositeFixtures {
    /// ``tripValues`` as records of Trip's layout in `model`, keys 1, 2, ….
    public static func tripRecords(in model: ObjectModel) -> [Record] {
        guard let layout = RecordLayout(entity: "Trip", in: model) else { return [] }
        return tripValues.enumerated().map { index, values in
            Record(
                entity: "Trip", id: .primaryKey(Int64(index + 1)), values: layout.attributes.map { values[$0.name] ?? .null })
        }
    }
}
