import Decant

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

    /// CoreDataPlus `SampleModel2.xcdatamodel` (version identifier 2).
    static var sampleModelV2: ObjectModel {
        var car = Entity(name: "Car")
        car.attributes = [
            attribute("maker", .string), attribute("markedForDeletionAsOf", .date), attribute("model", .string),
            attribute("numberPlate", .string),
        ]
        car.relationships = [toOne("owner", "Person", inverse: "cars")]
        car.fetchIndexes = [
            FetchIndex(name: "byMakerAndNumberPlate", elements: [.init(property: "maker"), .init(property: "numberPlate")]),
        ]
        car.uniquenessConstraints = [["numberPlate"]]
        var luxury = Entity(name: "LuxuryCar", parentName: "SportCar")
        luxury.renamingIdentifier = "ExpensiveSportCar"
        luxury.attributes = [attribute("isLimitedEdition", .boolean)]
        var person = Entity(name: "Person")
        person.attributes = [attribute("firstName", .string), attribute("lastName", .string), attribute("updatedAt", .date)]
        person.relationships = [toMany("cars", "Car", inverse: "owner")]
        person.uniquenessConstraints = [["firstName", "lastName"]]
        let sport = Entity(name: "SportCar", parentName: "Car")
        return ObjectModel(entities: [car, luxury, person, sport], versionIdentifiers: ["2"])
    }

    /// CoreDataPlus `SampleModel3.xcdatamodel` (version identifier 1).
    static var sampleModel3V1: ObjectModel {
        var user = Entity(name: "User")
        user.attributes = [attribute("name", .string), attribute("petName", .string)]
        return ObjectModel(entities: [user], versionIdentifiers: ["1"])
    }

    /// CoreDataPlus `SampleModel2.V1`, a model built in code (`Tests/Resources/SampleModel2/SampleModel2+V1.swift`
    /// in CoreDataPlus), as the corpus store's `Z_MODELCACHE` holds it: without the later `authorIndex` fetch index.
    static var sampleModel2V1: ObjectModel {
        var writer = Entity(name: "Writer", isAbstract: true)
        writer.attributes = [attribute("age", .integer16)]
        var author = Entity(name: "Author", parentName: "Writer")
        author.attributes = [attribute("alias", .string), attribute("siteURL", .uri)]
        author.relationships = [toMany("books", "Book", inverse: "author")]
        author.fetchedProperties = [
            FetchedProperty(name: "feedbacks", entity: "Feedback", predicate: "authorAlias == $FETCH_SOURCE.alias"),
        ]
        author.uniquenessConstraints = [["alias"]]
        var book = Entity(name: "Book")
        var pagesCount = attribute("pagesCount", .integer64)
        pagesCount.derivation = Derivation(expression: "count:(pages)")
        book.attributes = [
            attribute("uniqueID", .uuid), attribute("title", .string), attribute("price", .decimal),
            attribute("cover", .transformable), attribute("publishedAt", .date), pagesCount,
        ]
        book.relationships = [toOne("author", "Author", inverse: "books"), toMany("pages", "Page", inverse: "book")]
        book.uniquenessConstraints = [["uniqueID"]]
        var graphicNovel = Entity(name: "GraphicNovel", parentName: "Book")
        graphicNovel.attributes = [attribute("isBlackAndWhite", .boolean)]
        var page = Entity(name: "Page")
        page.attributes = [attribute("isBookmarked", .boolean), attribute("number", .integer32), attribute("content", .transformable)]
        page.relationships = [toOne("book", "Book", inverse: "pages")]
        var feedback = Entity(name: "Feedback")
        feedback.attributes = [
            attribute("authorAlias", .string), attribute("bookID", .uuid), attribute("comment", .string),
            attribute("rating", .double),
        ]
        return ObjectModel(entities: [writer, author, book, graphicNovel, page, feedback])
    }

    /// CoreDataPlus `SampleModel2.V2` as its corpus store holds it: V1 without `Author.siteURL`, `Book.cover` renamed
    /// `frontCover`.
    static var sampleModel2V2: ObjectModel {
        var model = sampleModel2V1
        for index in model.entities.indices {
            if model.entities[index].name == "Author" {
                model.entities[index].attributes.removeAll { $0.name == "siteURL" }
            } else if model.entities[index].name == "Book",
                      let cover = model.entities[index].attributes.firstIndex(where: { $0.name == "cover" }) {
                model.entities[index].attributes[cover].name = "frontCover"
                model.entities[index].attributes[cover].renamingIdentifier = "cover"
            }
        }
        return model
    }

    /// objcio `Moody.xcdatamodel` (Moody version 1).
    static var moodyV1: ObjectModel {
        var continent = Entity(name: "Continent", parentName: "GeographicRegion")
        continent.attributes = [attribute("numberOfCountries", .integer64)]
        continent.relationships = [toMany("countries", "Country", inverse: "continent")]
        var country = Entity(name: "Country", parentName: "GeographicRegion")
        country.relationships = [toOne("continent", "Continent", inverse: "countries"), toMany("moods", "Mood", inverse: "country")]
        var region = Entity(name: "GeographicRegion", isAbstract: true)
        region.attributes = [
            attribute("markedForDeletionDate", .date), attribute("numberOfMoods", .integer64),
            attribute("numericISO3166Code", .integer16), attribute("uniquenessDummy", .integer16),
            attribute("updatedAt", .date),
        ]
        region.compoundIndexes = [["markedForDeletionDate", "updatedAt"]]
        region.uniquenessConstraints = [["numericISO3166Code", "uniquenessDummy"]]
        var mood = moodBase(remoteIDName: "remoteIdentifier")
        mood.relationships = [toOne("country", "Country", inverse: "moods")]
        return ObjectModel(entities: [continent, country, region, mood], versionIdentifiers: ["1"])
    }

    /// objcio `Moody 2.xcdatamodel`: version 1 plus `Mood.rating`, `remoteIdentifier` renamed `remoteID`.
    static var moodyV2: ObjectModel {
        var model = moodyV1
        model.versionIdentifiers = ["2"]
        if let index = model.entities.firstIndex(where: { $0.name == "Mood" }) {
            var mood = moodBase(remoteIDName: "remoteID")
            mood.attributes.append(attribute("rating", .integer16))
            mood.relationships = model.entities[index].relationships
            model.entities[index] = mood
        }
        return model
    }

    /// objcio `Moody 3.xcdatamodel`: version 2 plus `Mood.continent ⇄ Continent.moods`.
    static var moodyV3: ObjectModel {
        var model = moodyV2
        model.versionIdentifiers = ["3"]
        for index in model.entities.indices {
            if model.entities[index].name == "Mood" {
                model.entities[index].relationships.insert(toOne("continent", "Continent", inverse: "moods"), at: 0)
            } else if model.entities[index].name == "Continent" {
                model.entities[index].relationships.append(toMany("moods", "Mood", inverse: "continent"))
            }
        }
        return model
    }

    /// objcio `Moody 4.xcdatamodel`: version 3 without the `GeographicRegion` parent.
    static var moodyV4: ObjectModel {
        let regionAttributes = [
            attribute("markedForDeletionDate", .date), attribute("numberOfMoods", .integer64),
            attribute("numericISO3166Code", .integer16), attribute("uniquenessDummy", .integer16),
            attribute("updatedAt", .date),
        ]
        var continent = Entity(name: "Continent")
        continent.attributes = regionAttributes + [attribute("numberOfCountries", .integer64)]
        continent.relationships = [toMany("countries", "Country", inverse: "continent"), toMany("moods", "Mood", inverse: "continent")]
        var country = Entity(name: "Country")
        country.attributes = regionAttributes
        country.relationships = [toOne("continent", "Continent", inverse: "countries"), toMany("moods", "Mood", inverse: "country")]
        for index in [0, 1] {
            var entity = index == 0 ? continent : country
            entity.compoundIndexes = [["markedForDeletionDate", "updatedAt"]]
            entity.uniquenessConstraints = [["numericISO3166Code", "uniquenessDummy"]]
            if index == 0 { continent = entity } else { country = entity }
        }
        var mood = moodBase(remoteIDName: "remoteID")
        mood.attributes.append(attribute("rating", .integer16))
        mood.relationships = [toOne("continent", "Continent", inverse: "moods"), toOne("country", "Country", inverse: "moods")]
        return ObjectModel(entities: [continent, country, mood], versionIdentifiers: ["4"])
    }

    /// objcio `Moody 5.xcdatamodel` (Moody version 5).
    static var moodyV5: ObjectModel {
        var country = Entity(name: "Country")
        country.attributes = [
            attribute("isoContinent", .integer16), attribute("markedForDeletionDate", .date),
            attribute("numberOfMoods", .integer64), attribute("numericISO3166Code", .integer16),
            attribute("uniquenessDummy", .integer16), attribute("updatedAt", .date),
        ]
        country.relationships = [toMany("moods", "Mood", inverse: "country")]
        country.compoundIndexes = [["markedForDeletionDate", "updatedAt"]]
        country.uniquenessConstraints = [["numericISO3166Code", "uniquenessDummy"]]
        var mood = moodBase(remoteIDName: "remoteID")
        mood.attributes.append(attribute("rating", .integer16))
        mood.relationships = [toOne("country", "Country", inverse: "moods")]
        return ObjectModel(entities: [country, mood], versionIdentifiers: ["5"])
    }

    private static func moodBase(remoteIDName: String) -> Entity {
        var mood = Entity(name: "Mood")
        mood.attributes = [
            attribute("colors", .transformable), attribute("creatorID", .string), attribute("date", .date),
            attribute("latitude", .double), attribute("longitude", .double),
            attribute("markedForDeletionDate", .date, indexed: true), attribute("markedForRemoteDeletion", .boolean),
            attribute(remoteIDName, .string, indexed: true),
        ]
        mood.compoundIndexes = [["markedForRemoteDeletion", "markedForDeletionDate", "date"]]
        return mood
    }
}
