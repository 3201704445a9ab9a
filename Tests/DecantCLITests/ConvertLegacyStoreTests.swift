import Decant
import DecantTestSupport
import Foundation
import Testing

/// `decant convert` with Core Data's XML and binary stores: a mapping model (an Apple-written XML store) converts
/// without a model, a store goes to both formats and back, and a bad XML store exits 65 with its place.
@Suite("decant convert with XML and binary stores", .serialized)
struct ConvertLegacyStoreTests {
    @Test(.requiresDecantBinary) func mappingModelConvertsWithoutAModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mapping = try #require(Fixtures.corpusItems { $0.lastPathComponent == "xcmapping.xml" }.first)
        try FileManager.default.copyItem(at: mapping, to: folder.appendingPathComponent("xcmapping.xml"))
        let outcome = try ConvertCSVTests.run(in: folder, ["convert", "xcmapping.xml", "Mapping.sqlite"])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output.hasPrefix("Mapping.sqlite: "), "\(outcome.output)")
        #expect(outcome.output.contains("(model declared by xcmapping.xml)"), "\(outcome.output)")
    }

    @Test(.requiresDecantBinary) func storeGoesToXMLAndBinaryAndBack() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try ConvertCSVTests.writeNotesStore(in: folder)
        let bundle = ConvertCSVTests.notesBundle.path
        for (format, file) in [("xml", "Notes.xml"), ("binary", "Notes.binarystore")] {
            let out = try ConvertCSVTests.run(in: folder, ["convert", "Notes.sqlite", file, "--to", format])
            #expect(out.status == 0, "\(out.errors)")
            let back = try ConvertCSVTests.run(
                in: folder, ["convert", file, "Back-\(format).sqlite", "--model", bundle])
            #expect(back.status == 0, "\(back.errors)")
            #expect(back.output.hasPrefix("Back-\(format).sqlite: 5 objects written (model Notes 3)"), "\(back.output)")
        }
        // The binary store carries no model: without --model it cannot be read (exit 65, naming --model).
        let missing = try ConvertCSVTests.run(in: folder, ["convert", "Notes.binarystore", "Out.sqlite"])
        #expect(missing.status == 65)
        #expect(missing.errors.contains("--model"))
    }

    @Test(.requiresDecantBinary) func invalidUTF8Exits65WithLineAndOffsetAndNoOutput() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        var data = Data("<?xml version=\"1.0\"?>\n<database>\n<object type=\"A\" id=\"z102\">".utf8)
        let offset = data.count
        data.append(contentsOf: [0xFF, 0xFE])
        data.append(contentsOf: Array("</object></database>".utf8))
        try data.write(to: folder.appendingPathComponent("bad.xml"))
        let outcome = try ConvertCSVTests.run(in: folder, ["convert", "bad.xml", "Out.sqlite"])
        #expect(outcome.status == 65)
        #expect(outcome.stdout.isEmpty)
        let first = outcome.errors.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("Error: bad.xml:3: offset \(offset): malformed input: invalid UTF-8"), "\(first)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["bad.xml"])
    }
}
