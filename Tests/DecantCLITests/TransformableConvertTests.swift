import ArgumentParser
import Decant
@testable import DecantCLI
import DecantTestSupport
import Foundation
import Testing

/// `decant convert STORE OUT.ndjson --decode-transformables` through the binary: values as `{"archived": …}`, app
/// classes kept as base64 with a warning on standard error and in `--json` (schema-valid), and the way back into a
/// store.
extension EndToEndTests {
    @Test(.requiresDecantBinary) func decodeTransformablesWarnsOfWhatStaysBase64() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        let text = try Self.run([
            "convert", store.path, folder.appendingPathComponent("a.ndjson").path, "--decode-transformables",
        ])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stderr.contains(
                "warning: \(store.path): entity Book, object Book/p1, key cover: 51 of 51 transformable values kept as base64, not "
                    + "Foundation's plain values; the first, Book/p1, holds an object of class CoreDataPlus_Tests.Cover"),
            "\(text.stderr)")
        let json = try Self.run([
            "convert", store.path, folder.appendingPathComponent("b.ndjson").path, "--decode-transformables", "--json",
        ])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(try Self.validate(json.stdout, schema: "convert") == "valid", "\(json.stdout)")
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let warnings = document?["warnings"] as? [[String: Any]] ?? []
        let kept = warnings.filter { $0["kind"] as? String == "transformable-kept-as-base64" }
        #expect(kept.count == 3, "\(json.stdout)")
        #expect((kept.first?["location"] as? [String: Any])?["keyPath"] as? String == "cover")
        // Without the option: base64, and no warning.
        let plain = try Self.run(["convert", store.path, folder.appendingPathComponent("c.ndjson").path, "--json"])
        #expect(plain.status == 0 && !plain.stdout.contains("transformable-kept-as-base64"), "\(plain.stdout)")
    }

    @Test(.requiresDecantBinary) func decodeTransformablesRoundTripsThroughTheBinary() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Items.sqlite")
        let writer = try SQLiteStoreWriter(creating: store, model: TransformableFixtures.model)
        let payloads: [Int64: Data?] = [
            1: try TransformableFixtures.nestedDictionary(), 2: try TransformableFixtures.everyShape.archivedData(),
        ]
        for batch in TransformableFixtures.batches(payloads: payloads) { try writer.write(batch) }
        try writer.finish()
        let ndjson = folder.appendingPathComponent("items.ndjson")
        let out = try Self.run(["convert", store.path, ndjson.path, "--decode-transformables"])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        let lines = try String(contentsOf: ndjson, encoding: .utf8)
        #expect(lines.contains(#"{"@id":"Item/p1","blob":null,"payload":{"archived":{"name":"n","info":"#), "\(lines)")
        #expect(try DocumentSchema.validate(ndjson, lines: true) == "valid")
        let back = folder.appendingPathComponent("back.sqlite")
        let model = folder.appendingPathComponent("Items.sqlite")
        let result = try Self.run(["convert", ndjson.path, back.path, "--model", model.path])
        #expect(result.status == 0, "\(result.stderr)")
        let python = try PythonOracle.text(
            """
            import sqlite3, sys
            a = dict(sqlite3.connect(sys.argv[2]).execute('select Z_PK, ZPAYLOAD from ZITEM'))
            b = dict(sqlite3.connect(sys.argv[3]).execute('select Z_PK, ZPAYLOAD from ZITEM'))
            print(sorted(a) == sorted(b), all(b[k] is not None and b[k][:8] == b'bplist00' for k in b))
            """, arguments: [store.path, back.path])
        #expect(python == "True True")
        for key in [Int64(1), 2] {
            let script = "import sqlite3, sys; sys.stdout.buffer.write(sqlite3.connect(sys.argv[2]).execute("
                + "'select ZPAYLOAD from ZITEM where Z_PK = \(key)').fetchone()[0])"
            let before = try PythonOracle.run(script, arguments: [store.path])
            let after = try PythonOracle.run(script, arguments: [back.path])
            #expect(try FoundationValue(archivedData: after) == FoundationValue(archivedData: before))
            #expect(try TransformableFixtures.pythonTree(of: after) == TransformableFixtures.pythonTree(of: before))
        }
    }

    @Test func decodeTransformablesIsInConvertsHelp() {
        let help = DecantCommand.helpMessage(for: DecantCommand.Convert.self, columns: 200)
        #expect(help.contains("--decode-transformables"))
        #expect(help.contains("{\"archived\": value}"))
    }
}
