import DecantTestSupport
import Foundation
import Testing

/// `decant inspect` on record inputs: the format, entities and counts, and with --model what does not fit it.
@Suite("decant inspect on CSV and JSON", .requiresDecantBinary)
struct InspectRecordsTests {
    static let books = Fixtures.samplesRoot.appendingPathComponent("books").path
    static let model = Fixtures.samplesRoot.appendingPathComponent("Books.xcdatamodeld").path

    @Test func describesACSVFolderWithAndWithoutTheModel() throws {
        let plain = try EndToEndTests.run(["inspect", Self.books, "--json"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try EndToEndTests.validate(plain.stdout) == "valid")
        let document = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any]
        #expect(document?["format"] as? String == "csv")
        #expect(document?["entityCounts"] as? [String: Int] == ["Book": 8])
        #expect(document?["checkedAgainstModel"] as? Bool == false)
        let checked = try EndToEndTests.run(["inspect", Self.books, "--model", Self.model])
        #expect(checked.status == 0)
        #expect(checked.stdout.contains("every object read through the model: it fits"))
    }

    @Test func whatDoesNotFitTheModelIsLocated() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("title,author,the_date\nDune,Frank Herbert,someday\n".utf8)
            .write(to: folder.appendingPathComponent("Book.csv"))
        let outcome = try EndToEndTests.run(["inspect", folder.appendingPathComponent("Book.csv").path, "--model", Self.model])
        #expect(outcome.status == 65)
        #expect(outcome.stderr.contains("Book.csv:2:"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("the_date") || outcome.stderr.contains("theDate"), "\(outcome.stderr)")
    }

    @Test func describesDecantsJSONDocumentThroughTheModel() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("books.json").path
        let converted = try EndToEndTests.run(["convert", Self.books, json, "--model", Self.model])
        #expect(converted.status == 0, "\(converted.stderr)")
        let outcome = try EndToEndTests.run(["inspect", json, "--model", Self.model, "--json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try EndToEndTests.validate(outcome.stdout) == "valid")
        #expect(outcome.stdout.contains("\"format\" : \"json\""))
        let without = try EndToEndTests.run(["inspect", json])
        #expect(without.status == 64)
        #expect(without.stderr.contains("give it with --model"))
    }
}
