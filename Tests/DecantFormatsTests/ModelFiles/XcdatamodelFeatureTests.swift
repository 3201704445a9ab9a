import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Each element and XML attribute of a model source, read from a real corpus file that uses it.
@Suite("Xcdatamodel features")
struct XcdatamodelFeatureTests {
    static let coreDataPlus = "alemar11__CoreDataPlus/Tests/Resources/SampleModel/SampleModel.xcdatamodeld"
    static let momcom = "atomicbird__momcom/momcomTests/momcomTests.xcdatamodeld"

    func version(_ bundle: String, _ name: String) throws -> ObjectModel {
        let loaded = try ModelBundle.load(from: Fixtures.corpus(bundle))
        return try #require(loaded.version(named: name))
    }

    @Test func modelAttributesAndCurrentVersion() throws {
        let bundle = try ModelBundle.load(from: Fixtures.corpus(Self.coreDataPlus))
        #expect(bundle.versions.compactMap(\.versionName) == ["SampleModel", "SampleModel2", "SampleModel3"])
        #expect(bundle.currentVersionName == "SampleModel")
        let model = try #require(bundle.version(named: "SampleModel2"))
        #expect(model.versionIdentifiers == ["2"])
        #expect(model.sourceInfo["type"] == "com.apple.IDECoreDataModeler.DataModel")
        #expect(model.sourceInfo["lastSavedToolsVersion"] == "22758")
        #expect(model.sourceInfo["systemVersion"] == "23E224")
        #expect(model.sourceInfo["minimumToolsVersion"] == "Automatic")
        #expect(model.sourceInfo["sourceLanguage"] == "Swift")
        #expect(model.sourceInfo["documentVersion"] == "1.0")
        #expect(model.sourceInfo["userDefinedModelVersionIdentifier"] == nil)
    }

    @Test func entityAttributesFetchIndexAndConstraints() throws {
        let model = try version(Self.coreDataPlus, "SampleModel2")
        let car = try #require(model.entity(named: "Car"))
        #expect(car.className == "Car" && car.isSyncable && car.parentName == nil)
        #expect(car.fetchIndexes.count == 1)
        let index = try #require(car.fetchIndexes.first)
        #expect(index.name == "byMakerAndNumberPlate")
        #expect(index.elements.map(\.property) == ["maker", "numberPlate"])
        #expect(index.elements.allSatisfy { $0.type == "Binary" && $0.isAscending && $0.expression == nil })
        #expect(car.uniquenessConstraints == [["numberPlate"]])
        let luxury = try #require(model.entity(named: "LuxuryCar"))
        #expect(luxury.parentName == "SportCar" && luxury.renamingIdentifier == "ExpensiveSportCar")
        #expect(luxury.canonicalName == "ExpensiveSportCar")
        #expect(model.entity(named: "Person")?.uniquenessConstraints == [["firstName", "lastName"]])
    }

    @Test func attributeFlagsDefaultsAndTransformers() throws {
        let model = try version(Self.coreDataPlus, "SampleModel")
        let car = try #require(model.entity(named: "Car"))
        let color = try #require(car.attributes.first { $0.name == "color" })
        #expect(color.type == .transformable && color.valueTransformerName == "ColorTransformer")
        #expect(color.valueClassName == "Color" && color.isOptional)
        let speed = try #require(car.attributes.first { $0.name == "currentDrivingSpeed" })
        #expect(speed.isTransient && speed.type == .integer64 && speed.defaultValue == "0" && speed.usesScalarValueType == true)
        let plate = try #require(car.attributes.first { $0.name == "numberPlate" })
        #expect(!plate.isOptional && plate.usesScalarValueType == nil)
        let person = try #require(model.entity(named: "Person"))
        let id = try #require(person.attributes.first { $0.name == "id" })
        #expect(id.type == .uuid && id.preservesValueInHistoryOnDeletion && id.usesScalarValueType == false)
        let owner = try #require(car.relationships.first { $0.name == "owner" })
        #expect(owner.destinationEntity == "Person" && owner.inverseName == "cars" && owner.inverseEntity == "Person")
        #expect(owner.maxCount == 1 && owner.minCount == 0 && !owner.isToMany && owner.deleteRule == .nullify)
        let cars = try #require(person.relationships.first { $0.name == "cars" })
        #expect(cars.isToMany && cars.maxCount == 0 && !cars.isOrdered)
    }

    @Test func datesRangesSpotlightTruthFileFetchedPropertiesAndIndexes() throws {
        let model = try version(Self.momcom, "momcTests 2")
        let abstract = try #require(model.entity(named: "AbstractEntity"))
        #expect(abstract.isAbstract)
        let entity = try #require(model.entity(named: "Entity"))
        #expect(entity.className == "EntityClass" && entity.parentName == "AbstractEntity")
        #expect(entity.renamingIdentifier == "myRenamingIdentifier")
        #expect(entity.versionHashModifier == "myVersionHashModifier")
        #expect(entity.userInfo == ["someKey": "randomValue"])
        let date = try #require(entity.attributes.first { $0.name == "dateAttribute" })
        #expect(date.minDate == 284_000_400 && date.maxDate == 602_395_200 && date.defaultValue == "388411200")
        #expect(date.minValue == "2010-01-01 01:00:00" && date.maxValue == "2020-02-03 04:00")
        let decimal = try #require(entity.attributes.first { $0.name == "decimalAttribute" })
        #expect(decimal.minValue == "-4.5" && decimal.maxValue == "4.5" && decimal.defaultValue == "0.0")
        #expect(decimal.userInfo == ["rdar13677527max": "4", "rdar13677527min": "-4"])
        let binary = try #require(entity.attributes.first { $0.name == "binaryAttribute" })
        #expect(binary.isTransient && binary.isIndexedBySpotlight && binary.isStoredInExternalRecord && binary.isSyncable)
        #expect(binary.userInfo.count == 3)
        let transformable = try #require(entity.attributes.first { $0.name == "transformableAttribute" })
        #expect(transformable.valueTransformerName == "myValueTransformer")
        let others = try #require(entity.relationships.first { $0.name == "otherEntities" })
        #expect(others.isToMany && others.minCount == 1 && others.maxCount == 9)
        let back = try #require(model.entity(named: "OtherEntity")?.relationships.first)
        #expect(!back.isToMany && back.minCount == 1 && back.maxCount == 1)
        let fetched = try #require(entity.fetchedProperties.first)
        #expect(fetched.name == "yesBooleans" && fetched.entity == "Entity" && fetched.predicate == "booleanAttribute = YES")
        #expect(fetched.isOptional && fetched.isSyncable)
        #expect(entity.compoundIndexes == [["booleanAttribute", "dateAttribute"], ["decimalAttribute", "doubleAttribute"]])
    }

    @Test func modelFetchRequestsAndConfigurations() throws {
        let model = try version(Self.momcom, "momcTests 2")
        #expect(model.fetchRequests.map(\.name) == ["FetchRequestDictionaries", "FetchRequestObjectIDs", "FetchRequestObjects"])
        let dictionaries = model.fetchRequests[0]
        #expect(dictionaries.entity == "Entity")
        #expect(dictionaries.predicate == "booleanAttribute == 1 AND floatAttribute > 5")
        #expect(
            dictionaries.settings == [
                "includeSubentities": "YES", "includePropertyValues": "YES", "includesPendingChanges": "YES",
                "returnObjectsAsFaults": "YES", "returnDistinctResults": "YES", "resultType": "2",
            ])
        #expect(model.fetchRequests[2].settings == ["fetchLimit": "100", "fetchBatchSize": "10"])
        #expect(model.configurations == [ModelConfiguration(name: "UnrelatedConfiguration", entityNames: ["UnrelatedEntity"])])
        #expect(model.versionIdentifiers == [""])
        #expect(model.sourceInfo["macOSVersion"] == "Automatic" && model.sourceInfo["iOSVersion"] == "Automatic")
        #expect(model.sourceInfo["name"] == "")
    }

    @Test func multipleConfigurations() throws {
        let model = try version("JohnEstropia__CoreStore/CoreStoreTests/Model.xcdatamodeld", "Model")
        #expect(model.configurations.map(\.name) == ["Config1", "Config2"])
        #expect(model.configurations.allSatisfy { !$0.entityNames.isEmpty && !$0.usedWithCloudKit })
    }

    @Test func compositesUserInfoAndCodeGeneration() throws {
        let model = try version("phimage__MomXML/Tests/Model.xcdatamodeld", "Model")
        #expect(model.composites.map(\.name) == ["Composite", "Composite1"])
        let composite = model.composites[0]
        #expect(composite.attributes.map(\.name) == ["one", "two", "three"])
        #expect(composite.attributes[2].type == .composite && composite.attributes[2].compositeName == "Composite1")
        #expect(model.composites[1].attributes.isEmpty)
        let product = try #require(model.entity(named: "Produit"))
        #expect(product.codeGenerationType == "class" && product.userInfo == ["key": "value"])
        let member = try #require(product.attributes.first { $0.name == "attribute1" })
        #expect(member.type == .composite && member.compositeName == "Composite")
        let custom = try #require(product.attributes.first { $0.name == "attribute" })
        #expect(custom.valueClassName == "CustomClass")
        let link = try #require(product.relationships.first)
        #expect(link.userInfo == ["key": "value", "key1": "value"])
    }

    @Test func externalStorageOrderedRenamedAndIndexedProperties() throws {
        let ensembles = try version("drewmccormack__ensembles/Examples/Idiomatic/Shared/Model.xcdatamodeld", "Model_1")
        let data = ensembles.entities.flatMap(\.attributes).first { $0.name == "data" }
        #expect(data?.allowsExternalBinaryDataStorage == true && data?.type == .binary)
        let sync = try version("3lvis__Sync/Tests/PropertyMapper/Models/Ordered.xcdatamodeld", "Ordered")
        let notes = sync.entities.flatMap(\.relationships).first { $0.name == "notes" }
        #expect(notes?.isOrdered == true && notes?.deleteRule == .cascade && notes?.isToMany == true)
        let moody = try version("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld", "Moody 3")
        let remote = moody.entities.flatMap(\.attributes).first { $0.name == "remoteID" }
        #expect(remote?.renamingIdentifier == "remoteIdentifier" && remote?.isIndexed == true)
        #expect(moody.entity(named: "GeographicRegion")?.isAbstract == true)
        let transient = try version(
            "JohnEstropia__CoreStore/Demo/Sources/Demos/Classic/ColorsDemo/Classic.ColorsDemo.xcdatamodeld", "ColorsDemo")
        let group = transient.entities.flatMap(\.attributes).first { $0.name == "colorGroup" }
        #expect(group?.isTransient == true)
        let fetched = transient.entities.flatMap(\.fetchedProperties).first
        #expect(fetched?.name == "testFetchProperty" && fetched?.entity == "Palette" && fetched?.predicate == nil)
    }

    @Test func versionsSortNumerically() throws {
        let moody = try ModelBundle.load(from: Fixtures.corpus("objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld"))
        #expect(moody.versions.compactMap(\.versionName) == ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5", "Moody 6"])
    }

    @Test func bareXcdatamodelLoads() throws {
        let bundle = try ModelBundle.load(from: Fixtures.corpus("rentzsch__mogenerator/test/test.xcdatamodel"))
        #expect(bundle.sourceKind == .xcdatamodel && bundle.name == "test" && bundle.currentVersionName == "test")
        let model = try #require(bundle.currentVersion)
        #expect(model.fetchRequests.count == 5)
        #expect(model.fetchRequests.first { $0.name == "byParent" }?.predicate == "parent == $parent")
    }
}
