import DecantCore
@testable import DecantCodecs
import DecantTestSupport
import Foundation
import Testing

@testable import DecantFormats

/// RFC 4180 as the tokenizer reads it: quoting, line breaks of every kind inside and between records, a
/// byte-order mark, other delimiters, empty fields, blank lines, chunk boundaries, and located errors.
@Suite("CSV tokenizer")
struct CSVTokenizerTests {
    /// The records of `bytes`, each field as its text with a trailing `*` when it was quoted.
    static func records(_ bytes: [UInt8], delimiter: UInt8 = 0x2C) throws -> [[String]] {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("input.csv")
        try Data(bytes).write(to: url)
        let tokenizer = try CSVTokenizer(url: url, path: "input.csv", entity: nil, delimiter: delimiter)
        var result: [[String]] = []
        while try tokenizer.nextRecord() {
            result.append(
                tokenizer.fields.indices.map { tokenizer.text($0) + (tokenizer.fields[$0].quoted ? "*" : "") })
        }
        return result
    }

    static func records(_ text: String, delimiter: UInt8 = 0x2C) throws -> [[String]] {
        try records(Array(text.utf8), delimiter: delimiter)
    }

    /// The error reading all of `bytes` throws.
    static func error(_ bytes: [UInt8]) -> DecantError? {
        do {
            _ = try records(bytes)
            return nil
        } catch {
            return error as? DecantError
        }
    }

    @Test(
        "line breaks between records",
        arguments: [
            "a,b\r\nc,d\r\n", "a,b\nc,d\n", "a,b\rc,d\r", "a,b\r\nc,d", "a,b\nc,d\r\n", "\r\n\na,b\n\n\r\nc,d\n\n",
        ])
    func lineBreaks(_ text: String) throws {
        #expect(try Self.records(text) == [["a", "b"], ["c", "d"]])
    }

    @Test func quotedFields() throws {
        #expect(try Self.records("\"a,b\",c\n") == [["a,b*", "c"]])
        #expect(try Self.records("\"say \"\"hi\"\"\",\"\"\"\"\n") == [["say \"hi\"*", "\"*"]])
        #expect(
            try Self.records("\"two\r\nlines\",\"lf\nonly\",\"cr\ronly\"\n") == [
                ["two\r\nlines*", "lf\nonly*", "cr\ronly*"]
            ])
        #expect(try Self.records("\"\",,\"\"") == [["*", "", "*"]])
        #expect(try Self.records("a,b,\n") == [["a", "b", ""]])
        #expect(try Self.records(",") == [["", ""]])
        #expect(try Self.records(" a , b ") == [[" a ", " b "]])
    }

    @Test func byteOrderMarkIsSkipped() throws {
        #expect(
            try Self.records([0xEF, 0xBB, 0xBF] + Array("_id,name\np1,é\n".utf8)) == [["_id", "name"], ["p1", "é"]])
        // Only at the start of the file.
        #expect(
            try Self.records(Array("a\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("b\n".utf8)) == [["a"], ["\u{FEFF}b"]])
    }

    @Test(
        "other delimiters",
        arguments: [(UInt8(ascii: ";"), "a;\"b;c\";d"), (0x09, "a\t\"b\tc\"\td"), (UInt8(ascii: "|"), "a|\"b|c\"|d")])
    func delimiters(_ delimiter: UInt8, _ text: String) throws {
        #expect(
            try Self.records(text + "\n", delimiter: delimiter) == [
                ["a", "b\(Character(Unicode.Scalar(delimiter)))c*", "d"]
            ])
        // A comma is plain text then.
        #expect(try Self.records("a,b\n", delimiter: delimiter) == [["a,b"]])
    }

    @Test func fieldsSpanChunks() throws {
        let long = String(repeating: "x\"\"y,\r\n", count: 40_000)
        let text = "id,text\n1,\"\(long)\"\n2,short\n"
        let records = try Self.records(text)
        #expect(records.count == 3)
        #expect(records[1][1] == String(repeating: "x\"y,\r\n", count: 40_000) + "*")
        #expect(records[2] == ["2", "short"])
    }

    @Test func linesAndColumnsCountCharacters() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("input.csv")
        try Data("h1,h2\r\n\"a\r\nb\",é✓,x\n\nlast,\"q\"\n".utf8).write(to: url)
        let tokenizer = try CSVTokenizer(url: url, path: "input.csv", entity: nil, delimiter: 0x2C)
        #expect(try tokenizer.nextRecord())
        #expect(try tokenizer.nextRecord())
        #expect(tokenizer.recordLine == 2)
        #expect(tokenizer.fields.map(\.line) == [2, 3, 3])
        #expect(tokenizer.fields.map(\.column) == [1, 4, 7])
        #expect(try tokenizer.nextRecord())
        #expect(tokenizer.recordLine == 5)
        #expect(tokenizer.fields.map(\.column) == [1, 6])
        #expect(try !tokenizer.nextRecord())
        #expect(try !tokenizer.nextRecord())
    }

    @Test(
        "broken quotes and bad bytes are located",
        arguments: [
            ("a,b\n1,\"open\nstill open", 2, 3, "no closing quote"),
            ("a,b\n1,x\"y\n", 2, 4, "a quote inside an unquoted field"),
            ("a,b\n\"1\"2,y\n", 2, 4, "text after the closing quote"),
            ("a,b\nok,\"fine\" ,y\n", 2, 10, "text after the closing quote"),
        ])
    func brokenQuotes(_ text: String, _ line: Int, _ column: Int, _ message: String) {
        let error = Self.error(Array(text.utf8))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "input.csv")
        #expect(error?.location?.line == line)
        #expect(error?.location?.column == column)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
    }

    @Test(
        "invalid UTF-8 is located at its field",
        arguments: [
            [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80],
        ] as [[UInt8]])
    func invalidUTF8(_ bad: [UInt8]) {
        let error = Self.error(Array("a,b\nok,x".utf8) + bad + Array("y\n".utf8))
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.line == 2)
        #expect(error?.location?.column == 4)
        #expect(error?.message.contains("invalid UTF-8 in field 2") == true)
    }

    @Test func validUTF8Passes() throws {
        let text = "é,✓,𝄞,\u{10FFFF},\u{FEFF}"
        #expect(try Self.records(text) == [["é", "✓", "𝄞", "\u{10FFFF}", "\u{FEFF}"]])
    }

    @Test("a bad byte anywhere in a run of ASCII is found at its offset (runs are checked eight bytes at a time)")
    func badByteInASCIIRunsIsFound() {
        for length in [1, 7, 8, 9, 16, 23] {
            for offset in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[offset] = 0xFF
                #expect(UTF8Validation.firstInvalidByte(in: bytes) == offset, "length \(length), offset \(offset)")
                // A valid two-byte sequence before it does not hide it.
                #expect(UTF8Validation.firstInvalidByte(in: [0xC3, 0xA9] + bytes) == offset + 2)
            }
            #expect(UTF8Validation.firstInvalidByte(in: [UInt8](repeating: 0x41, count: length)) == nil)
            // A multi-byte sequence cut by the end of the buffer.
            let cut = [UInt8](repeating: 0x41, count: length) + [0xE2, 0x9C]
            #expect(UTF8Validation.firstInvalidByte(in: cut) == length)
        }
    }
}
