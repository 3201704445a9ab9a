import DecantCore
@testable import DecantCodecs
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// JSON that is not what it should be: truncated, broken, not UTF-8, with unknown keys or values of the wrong
/// type. Every case is `.malformedInput` naming the file, line and column, and the entity and key when known.
@Suite("JSON bad input")
struct JSONBadInputTests {
    static let model = JSONRoundTripTests.edgeModel
    static let options = FormatOptions(bundle: JSONTesting.bundle(model))
    static let header = String(decoding: JSONDocumentHeader(model: model).encoded(), as: UTF8.self)

    /// A document whose objects are `objects`, one per line from line 3.
    static func document(_ objects: [String]) -> String {
        "{\n\"decant\": \(header),\n\"objects\": [\n" + objects.joined(separator: ",\n") + "\n]}\n"
    }

    static func error(_ text: String, style: JSONRecordWriter.Style = .document) -> DecantError? {
        JSONTesting.readError(text, style: style, options: options)
    }

    @Test func aTruncatedDocument() throws {
        let store = try JSONRoundTripTests.edgeStore()
        let data = try JSONTesting.write(store, style: .document)
        for cut in [data.count / 3, data.count / 2, data.count - 2] {
            let error = #expect(throws: DecantError.self) {
                _ = try JSONTesting.read(data.prefix(cut), style: .document, options: Self.options)
            }
            #expect(error?.code == .malformedInput)
            #expect(error?.message.contains("unexpected end of file") == true, "\(error?.message ?? "")")
            #expect(error?.location?.path == "in.json")
            #expect((error?.location?.line ?? 0) > 1)
        }
    }

    @Test func aTruncatedNDJSONFile() throws {
        let data = try JSONTesting.write(try JSONRoundTripTests.edgeStore(), style: .lines)
        let error = #expect(throws: DecantError.self) {
            _ = try JSONTesting.read(data.prefix(data.count - 10), style: .lines, options: Self.options)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 15)
    }

    @Test(
        "a value of the wrong type names the object, the attribute and what was expected",
        arguments: [
            (#"{"@id": "Thing/p1", "i16": "7"}"#, "i16", "a whole number (Integer 16), found a string"),
            (#"{"@id": "Thing/p1", "i64": 1.5}"#, "i64", "a whole number"),
            (#"{"@id": "Thing/p1", "flag": 1}"#, "flag", "true or false, found a number"),
            (#"{"@id": "Thing/p1", "real": "1.5"}"#, "real", "a number"),
            (#"{"@id": "Thing/p1", "amount": "1,5"}"#, "amount", "a decimal number as a string"),
            (#"{"@id": "Thing/p1", "when": "2024-13-01T00:00:00Z"}"#, "when", "out of range"),
            (#"{"@id": "Thing/p1", "when": true}"#, "when", "an ISO 8601 date"),
            (#"{"@id": "Thing/p1", "bytes": "%%%"}"#, "bytes", "base64 data, found a string that is not base64"),
            (#"{"@id": "Thing/p1", "uuid": "not-a-uuid"}"#, "uuid", "a UUID"),
            (#"{"@id": "Thing/p1", "text": ["a"]}"#, "text", "a string, found an array"),
            (#"{"@id": "Thing/p1", "next": "Other/p1"}"#, "next", "leads to Thing objects, not to Other/p1"),
            (#"{"@id": "Thing/p1", "next": 3}"#, "next", "object ids like \"Thing/p1\", found a number"),
            (#"{"@id": "Thing/p1", "parts": "Thing/p2"}"#, "parts", "an array of object ids"),
        ])
    func wrongType(object: String, key: String, expected: String) {
        let error = Self.error(Self.document([#"{"@id": "Thing/p0"}"#, object]))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "in.json")
        #expect(error?.location?.line == 5)
        #expect(error?.location?.entity == "Thing")
        #expect(error?.location?.object == "Thing/p1")
        #expect(error?.location?.keyPath == key)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test func anUnknownKeyIsAnError() {
        let error = Self.error(Self.document([#"{"@id": "Thing/p1", "colour": "red"}"#]))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 4)
        #expect(error?.location?.column == 21)
        #expect(error?.location?.keyPath == "colour")
        #expect(error?.message.contains("unknown key colour") == true)
    }

    @Test(
        "objects that are not objects of the model",
        arguments: [
            (#"{"text": "no id"}"#, "no \"@id\""),
            (#"{"@id": "p1"}"#, "an object id like"),
            (#"{"@id": "Gadget/p1"}"#, "no entity Gadget"),
            (#"{"@id": "Thing/p1", "text": "a", "text": "b"}"#, "appears twice"),
            ("[1]", "expected an object, found an array"),
        ])
    func notAnObjectOfTheModel(object: String, expected: String) {
        let error = Self.error(Self.document([object]))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 4)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test(
        "broken syntax is located",
        arguments: [
            ("[{\"text\": \"a\"}\n {\"text\": \"b\"}]", 2, 2, "expected ',' or ']' after an object"),
            ("[{\"text\": \"a\",}]", 1, 15, "expected a key in double quotes"),
            ("[{\"text\" \"a\"}]", 1, 10, "expected ':' after a key"),
            ("[{\"text\": 'a'}]", 1, 11, "unexpected character '''"),
            ("[{\"text\": tru}]", 1, 11, "expected true"),
            ("[{\"text\": 01}]", 1, 12, "leading zero"),
            ("[{\"text\": \"a\nb\"}]", 1, 13, "control character U+000A in a string"),
            ("[{\"text\": \"\\x\"}]", 1, 13, "expected an escape"),
            ("[{\"text\": \"\\ud800\"}]", 1, 18, "unpaired surrogate"),
            ("[{\"text\": \"a\"}] x", 1, 17, "expected the end of the file"),
            ("", 1, 1, "the file is empty"),
            ("   \n  ", 2, 3, "the file is empty"),
            ("nope", 1, 1, "unexpected character 'n'"),
            (String(repeating: "[", count: 600), 1, 514, "nested deeper than 512 levels"),
        ])
    func brokenSyntax(text: String, line: Int, column: Int, expected: String) {
        var options = Self.options
        options.entity = "Thing"
        let error = JSONTesting.readError(text, options: options)
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "in.json")
        #expect(error?.location?.line == line)
        #expect(error?.location?.column == column)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test func invalidUTF8IsLocated() {
        var options = Self.options
        options.entity = "Thing"
        for (bytes, column) in [
            (Array("[{\"text\": \"caf".utf8) + [0xE9] + Array("\"}]".utf8), 15),  // Latin-1 é
            (Array("[{\"text\": \"".utf8) + [0xED, 0xA0, 0x80] + Array("\"}]".utf8), 12),  // encoded surrogate
            (Array("[{\"text\": \"".utf8) + [0xC0, 0xAF] + Array("\"}]".utf8), 12),  // overlong
            (Array("[{\"text\": ".utf8) + [0xFF] + Array("}]".utf8), 11),
        ] {
            let error = #expect(throws: DecantError.self) {
                _ = try JSONTesting.read(Data(bytes), style: .document, options: options)
            }
            #expect(error?.code == .malformedInput)
            #expect(error?.location?.line == 1)
            #expect(error?.location?.column == column)
            #expect(error?.message.contains("invalid UTF-8") == true, "\(error?.message ?? "")")
        }
    }

    @Test func ndjsonIsOneValuePerLine() {
        let header = "{\"decant\": \(Self.header)}"
        let spanning = Self.error(header + "\n{\"@id\": \"Thing/p1\",\n\"text\": \"a\"}\n", style: .lines)
        #expect(spanning?.code == .malformedInput)
        #expect(spanning?.location?.line == 2)
        #expect(spanning?.message.contains("spans several lines") == true)
        let two = Self.error(header + "\n{\"@id\": \"Thing/p1\"} {\"@id\": \"Thing/p2\"}\n", style: .lines)
        #expect(two?.location?.line == 2)
        #expect(two?.location?.column == 21)
        #expect(two?.message.contains("expected the end of the line") == true)
    }

    @Test func aDocumentHasOnlyItsKeys() {
        let extra = Self.error("{\"decant\": \(Self.header), \"objects\": [], \"more\": 1}")
        #expect(extra?.message.contains("expected '}' after the objects") == true)
        let other = Self.error("{\"decant\": \(Self.header), \"records\": []}")
        #expect(other?.message.contains("unknown key records") == true)
        #expect(other?.location?.keyPath == "records")
        let badHeader = Self.error("{\"decant\": {\"formatVersion\": 1, \"model\": {\"hashes\": {}}}}")
        #expect(badHeader?.location?.keyPath == "decant.model.hashes")
        let newer = Self.error("{\"decant\": {\"formatVersion\": 2, \"model\": {}}}")
        #expect(newer?.code == .unsupportedFormat)
    }

    @Test func readingStreams() throws {
        // The reader hands out the first objects long before the broken end of a large input: it parses as it goes.
        let store = try JSONRoundTripTests.edgeStore()
        let line = String(decoding: try JSONTesting.write(store, style: .lines), as: UTF8.self)
            .split(separator: "\n")[1]
            .replacingOccurrences(of: "\"@id\":\"Thing/ext-0/x\"", with: "\"@id\":\"Thing/n#\"")
        var text = "{\"decant\": \(Self.header)}\n"
        for index in 0..<20_000 { text += line.replacingOccurrences(of: "n#", with: "n\(index)") + "\n" }
        text += "{broken"
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("big.ndjson")
        try Data(text.utf8).write(to: url)
        let reader = try JSONRecordReader(contentsOf: url, style: .lines, options: Self.options, batchSize: 100)
        var batch = try #require(RecordLayout(entity: "Thing", in: Self.model)).emptyBatch()
        var read = 0
        let error = #expect(throws: DecantError.self) {
            while try reader.nextBatch(into: &batch) { read += batch.count }
        }
        #expect(read == 20_000)
        #expect(error?.location?.line == 20_002)
        #expect(error?.location?.path == url.displayPath)
    }
}
