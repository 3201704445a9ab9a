import Decant
import Foundation
import Testing

/// One `import Decant` gives a Swift program every layer: the model, the formats, the SQLite store and the
/// whole-job operations.
@Suite("import Decant")
struct ExportsTests {
    @Test func oneImportReachesEveryLayer() throws {
        let entity = Entity(name: "Note")
        let model = ObjectModel(versionName: "V1", entities: [entity], versionIdentifiers: ["1"])
        let metadata = StoreMetadata.fresh(for: model, frameworkVersion: SchemaStyle.current.frameworkVersion)
        #expect(metadata.storeType == "SQLite")
        let schema = try StoreSchema(model: model)
        #expect(schema.entity(named: "Note")?.tableName == "ZNOTE")
        #expect(try Data(#"{"a":1}"#.utf8) == ["a": 1].jsonDocument().filter { $0 != 0x20 && $0 != 0x0A })
    }
}
