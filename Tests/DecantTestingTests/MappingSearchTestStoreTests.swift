import DecantTestSupport
import DecantTesting
import Foundation
import Testing

/// A store made with a model file finds its project's Xcode mapping models when it migrates, as `decant migrate
/// --model` does: samples/PolicyMigration's `Journal 1-Journal 2.xcmappingmodel` moves each Note's text into a
/// Paragraph through a Swift policy, the sample's own (`NoteToParagraphPolicy.swift` here is a link to the sample's
/// source file, so the test runs the code the sample ships).
@Suite("Testing library mapping search")
struct MappingSearchTestStoreTests {
    static let model = Fixtures.samplesRoot.appendingPathComponent("PolicyMigration/Journal.xcdatamodeld")

    static func journal() throws -> TestStore {
        var store = try TestStore(model: model, version: "Journal")
        try store.insert("Note", ["text": "Walked to the harbour"])
        try store.insert("Note", ["text": "Rain all day"])
        return store
    }

    @Test func theProjectsMappingModelIsFound() throws {
        var functions = ValueExpressionFunctions()
        functions.registerPolicy(NoteToParagraphPolicy(), as: "NotesMigration.NoteToParagraphPolicy")
        let migrated = try Self.journal().migrated(functions: functions)
        #expect(migrated.model.versionName == "Journal 2")
        #expect(try migrated.count("Paragraph") == 2)
        let rain = try #require(try migrated.fetch("Paragraph", where: "body == 'Rain all day'").first)
        #expect(try migrated.related(rain, "note").count == 1)
        let note = try #require(try migrated.fetch("Note").first)
        #expect(try migrated.related(note, "paragraphs").count == 1)
    }

    @Test func withoutTheSearchTheHopIsInferred() throws {
        var store = try Self.journal()
        store.searchesForMappings = false
        let migrated = try store.migrated()
        // Inference drops text and makes no Paragraph.
        #expect(try migrated.count("Note") == 2 && migrated.count("Paragraph") == 0)
    }
}
