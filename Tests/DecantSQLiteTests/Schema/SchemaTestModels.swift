import DecantCore

/// Models built by hand, faithfully from coredata-formats.md and from the corpus `contents` files.
enum SchemaTestModels {
    static func attribute(_ name: String, _ type: AttributeType, transient: Bool = false, indexed: Bool = false) -> Attribute {
        var attribute = Attribute(name: name, type: type, isOptional: true, isTransient: transient)
        attribute.isIndexed = indexed
        return attribute
    }

    static func toMany(_ name: String, _ destination: String, inverse: String? = nil, ordered: Bool = false) -> Relationship {
        var relationship = Relationship(name: name, destination: destination, inverse: inverse, toMany: true)
        relationship.isOrdered = ordered
        return relationship
    }

    static func toOne(_ name: String, _ destination: String, inverse: String? = nil) -> Relationship {
        Relationship(name: name, destination: destination, inverse: inverse)
    }

    /// The example model of formats 4.14.
    static var example: ObjectModel {
        var badge = Entity(name: "badge")
        badge.attributes = [attribute("motto", .string)]
        badge.relationships = [toMany("holders", "Person", inverse: "badges")]
        var garage = Entity(name: "Garage")
        garage.attributes = [attribute("city", .string)]
        garage.relationships = [toMany("cars", "Car", inverse: "garages"), toMany("visitors", "Car")]
        var person = Entity(name: "Person")
        person.attributes = [attribute("nickname", .string)]
        person.relationships = [
            toMany("badges", "badge", inverse: "holders"), toMany("drivenCars", "Car", inverse: "drivers"),
            toMany("drivenTrucks", "Truck", inverse: "drivers"),
        ]
        var vehicle = Entity(name: "Vehicle", isAbstract: true)
        vehicle.attributes = [attribute("plate", .string)]
        var car = Entity(name: "Car", parentName: "Vehicle")
        car.attributes = [attribute("nickname", .string)]
        car.relationships = [toMany("garages", "Garage", inverse: "cars"), toMany("drivers", "Person", inverse: "drivenCars")]
        car.fetchIndexes = [FetchIndex(name: "byNickname", elements: [.init(property: "nickname")])]
        var truck = Entity(name: "Truck", parentName: "Vehicle")
        truck.attributes = [attribute("nickname", .string)]
        truck.relationships = [toMany("drivers", "Person", inverse: "drivenTrucks")]
        var wheel = Entity(name: "Wheel")
        wheel.attributes = [attribute("diameter", .double)]
        wheel.relationships = [toOne("vehicle", "Vehicle")]
        return ObjectModel(entities: [badge, garage, person, vehicle, car, truck, wheel])
    }

    /// `Person {nickname; likedBy ⇄ likes, likes ordered}` (formats 4.14).
    static var likes: ObjectModel {
        var person = Entity(name: "Person")
        person.attributes = [attribute("nickname", .string)]
        person.relationships = [
            toMany("likedBy", "Person", inverse: "likes"), toMany("likes", "Person", inverse: "likedBy", ordered: true),
        ]
        return ObjectModel(entities: [person])
    }

    /// CoreDataPlus `SampleModel.xcdatamodeld/SampleModel.xcdatamodel` (version identifier 1), formats 4.12.
    static var sampleModelV1: ObjectModel {
        var car = Entity(name: "Car")
        car.attributes = [
            attribute("color", .transformable), attribute("currentDrivingSpeed", .integer64, transient: true),
            attribute("maker", .string), attribute("markedForDeletionAsOf", .date), attribute("model", .string),
            attribute("numberPlate", .string),
        ]
        car.relationships = [toOne("owner", "Person", inverse: "cars")]
        car.uniquenessConstraints = [["numberPlate"]]
        var expensive = Entity(name: "ExpensiveSportCar", parentName: "SportCar")
        expensive.attributes = [attribute("isLimitedEdition", .boolean)]
        var person = Entity(name: "Person")
        person.attributes = [
            attribute("firstName", .string), attribute("id", .uuid), attribute("isDriving", .boolean, transient: true),
            attribute("lastName", .string), attribute("updatedAt", .date),
        ]
        person.relationships = [toMany("cars", "Car", inverse: "owner")]
        person.uniquenessConstraints = [["firstName", "lastName"]]
        let sport = Entity(name: "SportCar", parentName: "Car")
        return ObjectModel(entities: [car, expensive, person, sport], versionIdentifiers: ["1"])
    }
}
