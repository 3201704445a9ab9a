import Decant
import DecantTestSupport
import Foundation
import Testing

/// Batch runs through the binary (issue 21): one line per store naming it once, and the documented exit status for
/// mixed results: problems found and passes make 1; an input failure among them makes its own code.
@Suite("batch lines and exit status", .serialized)
struct BatchExitTests {

    @Test(.requiresDecantBinary) func mixedResults() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try ModelBundleFiles.write(
            "Req", versions: [("Req", ModelBundleFiles.item(#"<attribute name="count" attributeType="String"/>"#))],
            in: folder)
        let version = try #require(try ModelBundle.load(from: bundle).version(named: "Req"))
        for (name, value) in [("good.sqlite", Value.string("7")), ("bad.sqlite", .null)] {
            let writer = try SQLiteStoreWriter(creating: folder.appendingPathComponent(name), model: version)
            let layout = try #require(RecordLayout(entity: "Item", in: version))
            var batch = RecordBatch(layout: layout)
            batch.append(Record(entity: "Item", id: .primaryKey(1), values: [value]))
            try writer.write(batch)
            try writer.finish()
        }
        let problems = try ConvertCSVTests.run(
            in: folder, ["validate", "good.sqlite", "bad.sqlite", "--model", "Req.xcdatamodeld"])
        #expect(problems.status == 1, "\(problems.output)\(problems.errors)")
        let lines = problems.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("FAIL  bad.sqlite: ") }, "\(problems.output)")
        for line in lines where line.hasPrefix("PASS") || line.hasPrefix("FAIL") {
            let name = line.contains("good.sqlite") ? "good.sqlite" : "bad.sqlite"
            #expect(line.components(separatedBy: name).count == 2, "the path once: \(line)")
        }
        let failure = try ConvertCSVTests.run(
            in: folder, ["validate", "bad.sqlite", "good.sqlite", "missing.sqlite", "--model", "Req.xcdatamodeld"])
        #expect(failure.status == 66, "\(failure.output)\(failure.errors)")
        #expect(failure.output.split(separator: "\n").filter { $0.hasPrefix("PASS") || $0.hasPrefix("FAIL") }.count == 3)
    }
}
