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
        try TypedPathTests.requiredCountStores([("good.sqlite", .string("7")), ("bad.sqlite", .null)], in: folder)
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
