import DecantCore
import DecantSwiftData
import DecantTestSupport
import Foundation
import Testing

/// Every vector of `swiftdata-vectors/`: the model read from its Swift source has exactly Apple's entity hashes,
/// checksum and digest, version by version.
@Suite struct SwiftDataVectorTests {
    struct Expected {
        var name: String?
        var entities: [String: String]
        var versionIdentifiers: [String]
        var checksum: String
        var digest: String

        init(_ object: [String: Any]) throws {
            name = object["name"] as? String
            entities = try #require(object["entities"] as? [String: String])
            versionIdentifiers = try #require(object["versionIdentifiers"] as? [String])
            checksum = try #require(object["checksum"] as? String)
            digest = try #require(object["versionHashesDigest"] as? String)
        }
    }

    static let vectors = ["Crafting", "RecipeBook", "CocktailsV1", "CocktailsHistoric", "CocktailsVersioned"]

    static func expected(_ vector: String) throws -> (top: Expected, versions: [Expected]) {
        let url = Fixtures.corpus("swiftdata-vectors/\(vector)/expected.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let versions = try (object["versions"] as? [[String: Any]] ?? []).map(Expected.init)
        return (try Expected(object), versions)
    }

    static func check(_ model: ObjectModel, against expected: Expected) {
        let hashes = model.entityVersionHashes.mapValues { $0.base64EncodedString() }
        #expect(hashes == expected.entities, "\(model.versionName ?? "-")")
        #expect(model.versionChecksum == expected.checksum, "\(model.versionName ?? "-")")
        #expect(model.versionHashesDigest == expected.digest, "\(model.versionName ?? "-")")
        #expect(model.versionIdentifiers == expected.versionIdentifiers, "\(model.versionName ?? "-")")
    }

    @Test(arguments: vectors)
    func vectorGivesApplesHashes(_ vector: String) throws {
        let bundle = try SwiftSourceModelReader.load(from: Fixtures.corpus("swiftdata-vectors/\(vector)"))
        #expect(bundle.sourceKind == .swiftSource)
        let (top, versions) = try Self.expected(vector)
        let current = try #require(bundle.currentVersion)
        Self.check(current, against: top)
        if versions.isEmpty {
            #expect(bundle.versions.count == 1)
            #expect(bundle.currentVersionName == "1.0.0")
        } else {
            #expect(bundle.versions.map(\.versionName) == versions.map(\.name))
            for (model, expected) in zip(bundle.versions, versions) { Self.check(model, against: expected) }
        }
    }

    @Test func versionedVectorHasItsPlan() throws {
        let bundle = try SwiftSourceModelReader.load(from: Fixtures.corpus("swiftdata-vectors/CocktailsVersioned"))
        #expect(bundle.order == .given)
        #expect(bundle.currentVersionName == "CocktailSchemaV2")
        #expect(bundle.stages.map(\.from) == ["CocktailSchemaV1"])
        #expect(bundle.stages.map(\.to) == ["CocktailSchemaV2"])
        #expect(bundle.stages.map(\.kind) == [.lightweight])
    }

    @Test func unreachedModelsAreNotEntities() throws {
        let bundle = try SwiftSourceModelReader.load(from: Fixtures.corpus("swiftdata-vectors/CocktailsHistoric"))
        let names = try #require(bundle.currentVersion).entities.map(\.name)
        #expect(!names.contains("CocktailImage") && !names.contains("LegacyIngredient"))
    }
}
