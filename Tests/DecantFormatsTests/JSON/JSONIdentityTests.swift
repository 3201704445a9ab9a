import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import Foundation
import Testing

/// Object ids in the NDJSON output: `"@id"` is `Entity/` and the id, escaped as any JSON string.
@Suite("JSON object ids")
struct JSONIdentityTests {
    @Test func externalIdsAreEscapedLikeAnyString() throws {
        let model = ArchiveTesting.shapeModel([("content", .string)])
        let layout = try ArchiveTesting.layout(of: "Shape", in: model)
        let ids: [RecordID] = [
            .external("12"), .external(#"a"b\c"#), .external("tab\tnew\nline\u{1}"), .external("é/ü 🙂"),
            .external(""), .primaryKey(7),
        ]
        var batch = RecordBatch(layout: layout)
        for id in ids {
            batch.beginRecord(id: id)
            batch.appendText("x")
            batch.endRecord()
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ids-\(UUID().uuidString).ndjson")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try JSONRecordWriter(creating: url, model: model, style: .lines)
        try writer.write(batch)
        try writer.finish()
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").dropFirst().map(String.init)
        #expect(lines.count == ids.count)
        for (line, id) in zip(lines, ids) {
            var expected = JSONOutput()
            expected.append("{\"@id\":")
            expected.appendString("Shape/\(id)")
            expected.append(",\"content\":\"x\"}")
            #expect(line == String(decoding: expected.bytes, as: UTF8.self))
        }
    }
}
