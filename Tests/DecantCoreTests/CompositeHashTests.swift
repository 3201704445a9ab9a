import DecantCore
import DecantTestSupport
import Foundation
import Testing

/// Composite attributes hash as SwiftData's stores show (`coredata-formats.md` 8 and 12.9): SHA-256 over the
/// elements' attribute hashes in element-name order. The models are built by hand as 12.2–12.7 say SwiftData
/// builds them from the vectors' `Model.swift`, and must give the hashes of `expected.json`.
@Suite("Composite hashes")
struct CompositeHashTests {
    /// Builds one entity's properties, collecting the composite types its composite attributes name.
    struct EntityBuilder {
        var entity: Entity
        var composites: [CompositeType] = []

        init(_ name: String) { entity = Entity(name: name) }

        mutating func attribute(_ name: String, _ type: AttributeType, optional: Bool = false) {
            entity.attributes.append(Attribute(name: name, type: type, isOptional: optional))
        }

        /// A composite attribute whose elements are each `(name, type, optional)`.
        mutating func composite(_ name: String, optional: Bool, _ elements: [(String, AttributeType, Bool)]) {
            let typeName = "\(entity.name).\(name)"
            composites.append(
                CompositeType(
                    name: typeName,
                    attributes: elements.map { Attribute(name: $0.0, type: $0.1, isOptional: $0.2) }))
            var attribute = Attribute(name: name, type: .composite, isOptional: optional)
            attribute.compositeName = typeName
            entity.attributes.append(attribute)
        }

        /// A Codable enum with a raw type: one optional element named like the property (12.5).
        mutating func rawEnum(_ name: String, _ raw: AttributeType, optional: Bool) {
            composite(name, optional: optional, [(name, raw, true)])
        }

        /// A Codable struct: every member an optional element (12.5).
        mutating func structure(_ name: String, optional: Bool, _ members: [(String, AttributeType)]) {
            composite(name, optional: optional, members.map { ($0.0, $0.1, true) })
        }

        /// `Color.Resolved`: four non-optional Float elements (12.3).
        mutating func color(_ name: String) {
            composite(
                name, optional: false,
                ["linearRed", "linearGreen", "linearBlue", "opacity"].map { ($0, AttributeType.float, false) })
        }

        mutating func toOne(_ name: String, _ destination: String, inverse: String? = nil, optional: Bool) {
            var relationship = Relationship(name: name, destination: destination, inverse: inverse)
            relationship.isOptional = optional
            entity.relationships.append(relationship)
        }

        mutating func toMany(_ name: String, _ destination: String, inverse: String? = nil, optional: Bool) {
            var relationship = Relationship(name: name, destination: destination, inverse: inverse, toMany: true)
            relationship.isOptional = optional
            entity.relationships.append(relationship)
        }
    }

    static func model(_ builders: [EntityBuilder]) -> ObjectModel {
        var model = ObjectModel(entities: builders.map(\.entity), versionIdentifiers: ["1.0.0"])
        model.composites = builders.flatMap(\.composites)
        return model
    }

    static let author: [(String, AttributeType)] = [
        ("id", .uuid), ("person", .string), ("place", .string), ("year", .string),
    ]
    static let tags: [(String, AttributeType)] = [
        ("flavors", .binary), ("profiles", .binary), ("styles", .binary), ("booze", .binary), ("nA", .binary),
    ]
    static let prep: [(String, AttributeType)] = [("id", .uuid), ("prepIngredientName", .string), ("prepRecipe", .binary)]

    static func garnish() -> EntityBuilder {
        var garnish = EntityBuilder("Garnish")
        garnish.entity.uniquenessConstraints = [["name"]]
        garnish.attribute("name", .string)
        garnish.toMany("cocktails", "Cocktail", inverse: "garnish", optional: true)
        return garnish
    }

    static func ingredient() -> EntityBuilder {
        var ingredient = EntityBuilder("Ingredient")
        ingredient.toOne("ingredientBase", "IngredientBase", optional: false)
        ingredient.attribute("id", .uuid)
        ingredient.attribute("value", .double)
        ingredient.rawEnum("unit", .string, optional: false)
        return ingredient
    }

    /// `CocktailsV1/Model.swift` as SwiftData builds it.
    static func cocktailsV1() -> ObjectModel {
        var cocktail = EntityBuilder("Cocktail")
        cocktail.entity.uniquenessConstraints = [["cocktailName"]]
        cocktail.attribute("id", .uuid)
        cocktail.attribute("cocktailName", .string)
        cocktail.toOne("imageAsset", "CocktailImage", optional: true)
        cocktail.rawEnum("glasswareType", .string, optional: false)
        cocktail.toMany("garnish", "Garnish", inverse: "cocktails", optional: false)
        cocktail.rawEnum("ice", .string, optional: true)
        cocktail.structure("author", optional: true, author)
        cocktail.toMany("spec", "Ingredient", optional: false)
        cocktail.structure("buildOrder", optional: true, [("instructions", .binary)])
        cocktail.structure("compiledTags", optional: false, tags)
        cocktail.rawEnum("variation", .string, optional: true)
        cocktail.rawEnum("collection", .integer64, optional: true)
        cocktail.attribute("collectionName", .string)
        cocktail.attribute("titleCocktail", .boolean, optional: true)

        var image = EntityBuilder("CocktailImage")
        image.color("backgroundColor")
        image.color("drinkColor")
        image.attribute("glassBackLayer", .string)
        image.attribute("drinkLayer", .string)
        image.attribute("iceLayer", .string, optional: true)
        image.attribute("inDrinkComponents", .transformable, optional: true)
        image.attribute("straw", .string, optional: true)
        image.attribute("innerRim", .string)
        image.attribute("glassReflection", .string)
        image.attribute("garnishes", .transformable, optional: true)

        var base = EntityBuilder("IngredientBase")
        base.entity.uniquenessConstraints = [["name"]]
        base.attribute("name", .string)
        base.attribute("info", .string, optional: true)
        base.rawEnum("category", .string, optional: false)
        base.structure("tags", optional: true, tags)
        base.structure("prep", optional: true, prep)
        base.attribute("isCustom", .boolean)
        return model([cocktail, image, garnish(), ingredient(), base])
    }

    /// `CocktailsHistoric/Model.swift` as SwiftData builds it (CocktailImage and LegacyIngredient unreachable).
    static func cocktailsHistoric() -> ObjectModel {
        var cocktail = EntityBuilder("Cocktail")
        cocktail.entity.uniquenessConstraints = [["cocktailName"]]
        cocktail.attribute("id", .uuid)
        cocktail.attribute("cocktailName", .string)
        cocktail.rawEnum("glasswareType", .string, optional: false)
        cocktail.toMany("garnish", "Garnish", inverse: "cocktails", optional: false)
        cocktail.rawEnum("ice", .string, optional: true)
        cocktail.structure("author", optional: true, author)
        cocktail.toMany("spec", "Ingredient", optional: false)
        cocktail.structure("buildOrder", optional: true, [("instructions", .binary)])
        cocktail.attribute("notes", .string, optional: true)
        cocktail.structure("compiledTags", optional: false, tags)
        cocktail.rawEnum("variation", .string, optional: true)
        cocktail.attribute("variationName", .string, optional: true)
        cocktail.rawEnum("collection", .integer64, optional: true)
        cocktail.attribute("isCustomCocktail", .boolean)
        cocktail.attribute("collectionName", .string)
        cocktail.attribute("titleCocktail", .boolean, optional: true)
        cocktail.attribute("favorite", .boolean)
        // A payload-free enum without raw values: one optional String element per case (12.5).
        let cases = [
            "algonquin", "alaska", "betweenTheSheets", "bloodAndSand", "bramble", "bobbyBurns", "chocolateCocktail",
            "elDiablo", "fogCutter", "ginFizz", "gimlet", "silverFizz", "hotToddy", "mexicanFiringSquad",
            "modernCocktail",
        ]
        cocktail.composite("historicSpec", optional: true, cases.map { ($0, .string, true) })

        var base = EntityBuilder("IngredientBase")
        base.entity.uniquenessConstraints = [["name"]]
        base.attribute("id", .uuid)
        base.attribute("name", .string)
        base.attribute("info", .string, optional: true)
        base.structure("tags", optional: true, tags)
        base.structure("prep", optional: true, prep)
        base.attribute("isCustom", .boolean)
        base.attribute("umbrellaCategory", .string)
        base.attribute("baseCategory", .string)
        base.attribute("specialtyCategory", .string)
        return model([cocktail, garnish(), ingredient(), base])
    }

    struct Expected: Decodable {
        var entities: [String: String]
        var checksum: String
        var versionHashesDigest: String
    }

    static func expected(_ folder: String) throws -> Expected {
        let url = Fixtures.corpus("swiftdata-vectors/\(folder)/expected.json")
        return try JSONDecoder().decode(Expected.self, from: Data(contentsOf: url))
    }

    @Test(arguments: ["CocktailsV1", "CocktailsHistoric"])
    func handBuiltModelsGiveAppleHashes(folder: String) throws {
        let model = folder == "CocktailsV1" ? Self.cocktailsV1() : Self.cocktailsHistoric()
        let expected = try Self.expected(folder)
        #expect(model.entityVersionHashes.mapValues { $0.base64EncodedString() } == expected.entities)
        #expect(model.versionChecksum == expected.checksum)
        #expect(model.versionHashesDigest == expected.versionHashesDigest)
    }

    /// The rule's parts: element order does not matter (name order is taken; the vectors above fail with
    /// declaration order), nothing of the composite itself is fed, and each element's optionality is.
    @Test func compositeHashIsOverElementsInNameOrderOnly() throws {
        let model = Self.cocktailsV1()
        let tags = try #require(model.composites.first { $0.name == "Cocktail.compiledTags" })
        #expect(
            VersionHashing.hash(ofCompositeElements: tags.attributes.reversed())
                == VersionHashing.hash(ofCompositeElements: tags.attributes))
        let hash = try #require(model.versionHash(ofProperty: "author", in: "Cocktail"))
        #expect(hash != VersionHashing.hash(of: Attribute(name: "author", type: .composite, isOptional: true)))
        // The composite's own name, optionality and type are not fed.
        var renamed = model
        let cocktail = try #require(renamed.entities.firstIndex { $0.name == "Cocktail" })
        let index = try #require(renamed.entities[cocktail].attributes.firstIndex { $0.name == "author" })
        renamed.entities[cocktail].attributes[index].isOptional = false
        #expect(renamed.versionHash(ofProperty: "author", in: "Cocktail") == hash)
        // An element's optionality counts.
        var changed = model
        let composite = try #require(changed.composites.firstIndex { $0.name == "Cocktail.author" })
        changed.composites[composite].attributes[0].isOptional = false
        #expect(changed.versionHash(ofProperty: "author", in: "Cocktail") != hash)
        #expect(changed.versionHash(of: "Cocktail") != model.versionHash(of: "Cocktail"))
    }
}
