import Decant
import DecantTestSupport
import Foundation
import Testing

/// Errors name files as the user typed them (issue 21): a validation error names the store (never `<input>`), a
/// model error the relative path given (never the absolute one). Run in a folder, with relative paths.
@Suite("errors name files as typed", .serialized)
struct TypedPathTests {

    @Test(.requiresDecantBinary) func errorsNameTheRelativePathsGiven() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.requiredCountStores([("Store.sqlite", .null)], in: folder)

        // A required value that is nil: the error names the store as typed.
        let validated = try ConvertCSVTests.run(in: folder, ["validate", "Store.sqlite", "--model", "Req.xcdatamodeld"])
        #expect(validated.status == 1, "\(validated.errors)")
        #expect(!validated.errors.contains("<input>"), "\(validated.errors)")
        #expect(validated.errors.contains("Store.sqlite: entity Item"), "\(validated.errors)")

        // A model bundle with no version: named as typed, not as an absolute path.
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("Empty.xcdatamodeld"), withIntermediateDirectories: false)
        let planned = try ConvertCSVTests.run(in: folder, ["plan", "Store.sqlite", "--model", "Empty.xcdatamodeld"])
        #expect(planned.status == 65, "\(planned.errors)")
        #expect(planned.errors.hasPrefix("Error: Empty.xcdatamodeld:"), "\(planned.errors)")
        #expect(!planned.errors.contains(folder.path), "\(planned.errors)")

        // An error inside a version of a bundle, or inside a version named directly, and in a .xccurrentversion that
        // names no version: each file named under the relative path given.
        let broken = folder.appendingPathComponent("Broken.xcdatamodeld/Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("<?xml version=\"1.0\"?>\n<model><entity name=\"A\">\n".utf8).write(to: broken.appendingPathComponent("contents"))
        try ModelBundleFiles.write(
            "Current", versions: [("Current", ModelBundleFiles.item(#"<attribute name="n" attributeType="String"/>"#))],
            current: "Gone", in: folder)
        for (typed, shown) in [
            ("Broken.xcdatamodeld", "Broken.xcdatamodeld/Broken.xcdatamodel/contents:"),
            ("./Broken.xcdatamodeld/Broken.xcdatamodel", "Broken.xcdatamodeld/Broken.xcdatamodel/contents:"),
            ("Current.xcdatamodeld", "Current.xcdatamodeld/.xccurrentversion:"),
        ] {
            let inspected = try ConvertCSVTests.run(in: folder, ["inspect", typed])
            #expect(inspected.status == 65, "\(inspected.errors)")
            #expect(inspected.errors.hasPrefix("Error: \(shown)"), "\(typed): \(inspected.errors)")
            #expect(!inspected.errors.contains(folder.path), "\(inspected.errors)")
        }
    }

    /// Writes `Req.xcdatamodeld` (one entity `Item` with a required String `count`) in `folder`, and per (name, value)
    /// a store there holding one Item whose `count` is that value.
    static func requiredCountStores(_ stores: [(name: String, count: Value)], in folder: URL) throws {
        let bundle = try ModelBundleFiles.write(
            "Req", versions: [("Req", ModelBundleFiles.item(#"<attribute name="count" attributeType="String"/>"#))],
            in: folder)
        let version = try #require(try ModelBundle.load(from: bundle).version(named: "Req"))
        let layout = try #require(RecordLayout(entity: "Item", in: version))
        for (name, count) in stores {
            let writer = try SQLiteStoreWriter(creating: folder.appendingPathComponent(name), model: version)
            var batch = RecordBatch(layout: layout)
            batch.append(Record(entity: "Item", id: .primaryKey(1), values: [count]))
            try writer.write(batch)
            try writer.finish()
        }
    }
}
