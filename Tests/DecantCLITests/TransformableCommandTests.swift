import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant inspect STORE` with Transformable values: the audit section in text, the same in `--json` (schema-valid),
/// and hostile values as located warnings on standard error, the run going on (exit 0).
extension EndToEndTests {
    @Test(.requiresDecantBinary) func transformableAuditOnACorpusStore() throws {
        let store = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        let text = try Self.run(["inspect", store.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("Book.cover  transformer: CoverTransformer"))
        #expect(text.stdout.contains("CoreDataPlus_Tests.Cover not allowed: 52 values (Book/p1, Book/p2"))
        let json = try Self.run(["inspect", store.path, "--json"])
        #expect(try Self.validate(json.stdout) == "valid")
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let audits = (document?["transformables"] as? [String: Any])?["attributes"] as? [[String: Any]]
        #expect(audits?.compactMap { $0["attribute"] as? String } == ["cover", "content"])
        #expect(audits?.first?["decodesSecurely"] as? Bool == false)
    }

    @Test(.requiresDecantBinary) func hostileTransformableValuesAreLocatedWarnings() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = try TransformableFixtures.nestedDictionary()
        let store = folder.appendingPathComponent("Items.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: TransformableFixtures.model)
        let payloads: [Int64: Data?] = [
            1: good, 2: good.prefix(good.count - 10), 3: try TransformableFixtures.deep(500),
            4: try TransformableFixtures.cyclic(),
        ]
        for batch in TransformableFixtures.batches(payloads: payloads) { try writer.write(batch) }
        try writer.finish()
        // The store keeps its model in Z_MODELCACHE: no --model needed.
        let text = try Self.run(["inspect", store.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("unreadable: 3 values (Item/p2, Item/p3, Item/p4)"))
        let warnings = text.stderr.split(separator: "\n")
        #expect(warnings.count == 3, "\(text.stderr)")
        #expect(warnings.allSatisfy { $0.hasPrefix("warning: ") && $0.contains("entity Item, object Item/p") })
        #expect(warnings.allSatisfy { $0.contains("key payload: transformable value not read") })
        let json = try Self.run(["inspect", store.path, "--json"])
        #expect(json.status == 0)
        #expect(try Self.validate(json.stdout) == "valid")
    }
}
