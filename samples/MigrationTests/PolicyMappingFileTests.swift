// Two real apps' migration policies (NSEntityMigrationPolicy subclasses: app code) kept as Decant mapping files
// (samples/PolicyMappingFiles) and tested with DecantTesting, as an app team keeps them beside its model. The models
// are the apps' own, read from the shared corpus here; in an app's repository they sit beside the test.
import DecantTesting
import Foundation
import Testing

@Suite("Policies as mapping files")
struct PolicyMappingFileTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let corpus = samples.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared")

    /// objc.io's Moody 5 → 6: one Continent per code, found or created, shared by the countries that have it.
    @Test func moodyCountriesFindOrCreateTheirContinent() throws {
        let model = Self.corpus.appendingPathComponent("corpus/objcio__core-data/Migrations/Migrations/Moody.xcdatamodeld")
        var store = try TestStore(model: model, version: "Moody 5")
        store.searchesForMappings = false
        let now = Value.date(Date(timeIntervalSinceReferenceDate: 0))
        for (code, continent) in [(710, Value.integer(10004)), (231, .integer(10004)), (704, .integer(10005)), (36, .null)] {
            try store.insert("Country", ["numericISO3166Code": .integer(Int64(code)), "isoContinent": continent, "updatedAt": now])
        }
        let migrated = try store.migrated(
            to: "Moody 6", mappings: [Self.samples.appendingPathComponent("PolicyMappingFiles/Moody5-Moody6.yaml")])
        #expect(try migrated.count("Country") == 4)
        #expect(try migrated.count("Continent") == 2)
        #expect(try migrated.count("Country", where: "continent.numericISO3166Code == 10004") == 2)
        #expect(try migrated.count("Country", where: "continent == nil") == 1)
    }

    /// LoopKit's Model → Modelv4: a cached entry keeps its values and gets the app's bundle id; a deleted one becomes
    /// a cached entry with the delete operation.
    @Test func loopKitFoldsDeletedCarbsIntoCachedOnes() throws {
        let model = Self.corpus.appendingPathComponent("corpus-apps/LoopKit__LoopKit/LoopKit/Persistence/Model.xcdatamodeld")
        var store = try TestStore(model: model, version: "Model")
        store.searchesForMappings = false
        let start = Value.date(Date(timeIntervalSinceReferenceDate: 650_229_460))
        try store.insert(
            "CachedCarbObject",
            ["createdByCurrentApp": .bool(true), "grams": .double(30), "startDate": start, "syncIdentifier": "s1",
                "syncVersion": .integer(2)])
        try store.insert("DeletedCarbObject", ["externalID": "hk-7", "startDate": start])
        var functions = ValueExpressionFunctions()
        functions.parameters["bundleID"] = "com.loopkit.Loop"
        let migrated = try store.migrated(
            to: "Modelv4",
            mappings: [Self.samples.appendingPathComponent("PolicyMappingFiles/LoopKit-Model-Modelv4.yaml")],
            functions: functions)
        #expect(try migrated.count("CachedCarbObject") == 2)
        let kept = try #require(try migrated.fetch("CachedCarbObject", where: "syncIdentifier == 's1'").first)
        #expect(kept["provenanceIdentifier"] == "com.loopkit.Loop")
        #expect(kept["operation"] == .integer(1))   // synced more than once: an update
        let deleted = try #require(try migrated.fetch("CachedCarbObject", where: "syncIdentifier == 'hk-7'").first)
        #expect(deleted["operation"] == .integer(2))
        #expect(deleted["createdByCurrentApp"] == .bool(false))
        #expect(deleted["syncVersion"] == .integer(1))
    }
}
