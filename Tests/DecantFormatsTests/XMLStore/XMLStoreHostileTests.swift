import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Hostile XML is refused before it can read a file, reach the network, or use unbounded memory or time; and
/// every refusal is a located `.malformedInput` (exit 65).
@Suite("Hostile XML stores")
struct XMLStoreHostileTests {
    static let header = "<?xml version=\"1.0\" standalone=\"yes\"?>\n"

    static func read(_ text: String) throws -> XMLStoreReader {
        try read(Data(text.utf8))
    }

    static func read(_ data: Data) throws -> XMLStoreReader {
        try XMLStoreReader(data: data, path: "hostile.xml", bundle: nil)
    }

    static func refusal(_ text: String) throws -> DecantError {
        try refusal(Data(text.utf8))
    }

    static func refusal(_ data: Data) throws -> DecantError {
        let error = try #require(throws: DecantError.self) { _ = try Self.read(data) }
        #expect(error.code == .malformedInput)
        #expect(error.code.exitCode == 65)
        #expect(error.location?.path == "hostile.xml")
        #expect(error.location?.line != nil)
        return error
    }

    @Test func externalEntityIsNeverResolved() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = folder.appendingPathComponent("secret.txt")
        try Data("TOP-SECRET".utf8).write(to: secret)
        let declared = try Self.refusal(
            Self.header + "<!DOCTYPE database [<!ENTITY xxe SYSTEM \"\(secret.absoluteString)\">]>\n"
                + "<database><object type=\"A\" id=\"z102\"><attribute name=\"x\" type=\"string\">&xxe;</attribute>"
                + "</object></database>")
        #expect(declared.message.contains("internal subset"))
        #expect(!declared.description.contains("TOP-SECRET"))
        // An external DTD that would declare the entity is never opened: the reference stays undefined.
        let dtd = folder.appendingPathComponent("evil.dtd")
        try Data("<!ENTITY xxe SYSTEM \"\(secret.absoluteString)\">".utf8).write(to: dtd)
        let external = try Self.refusal(
            Self.header + "<!DOCTYPE database SYSTEM \"\(dtd.absoluteString)\">\n"
                + "<database><object type=\"A\" id=\"z102\"><attribute name=\"x\" type=\"string\">&xxe;</attribute>"
                + "</object></database>")
        #expect(external.message.contains("undefined entity &xxe;"))
        #expect(external.location?.line == 3)
        // A parameter entity pulling in a remote DTD is refused the same way, before any network access.
        let parameter = try Self.refusal(
            Self.header + "<!DOCTYPE database [<!ENTITY % remote SYSTEM \"http://127.0.0.1:9/x.dtd\"> %remote;]>"
                + "<database/>")
        #expect(parameter.message.contains("internal subset"))
    }

    @Test func billionLaughsIsRefusedAtOnce() throws {
        var subset = "<!ENTITY lol \"lol\">"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            subset += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
        }
        // At once: the refusal names the DOCTYPE's line (2), before the object that would expand 10^9 "lol"s (line
        // 3) is reached; no clock is read.
        let error = try Self.refusal(
            Self.header + "<!DOCTYPE database [\(subset)]>\n<database><object type=\"A\" id=\"z102\">"
                + "<attribute name=\"x\" type=\"string\">&lol9;</attribute></object></database>")
        #expect(error.message.contains("internal subset"))
        #expect(error.location?.line == 2)
    }

    @Test func undeclaredEntitiesAreNotExpandedAndPredefinedOnesAre() throws {
        let error = try Self.refusal(
            Self.header + "<database>\n<object type=\"A\" id=\"z102\">\n"
                + "<attribute name=\"x\" type=\"string\">&nbsp;</attribute></object></database>")
        #expect(error.location?.line == 4)
        let reader = try Self.read(
            Self.header + "<database><object type=\"A\" id=\"z102\">"
                + "<attribute name=\"x\" type=\"string\">a &amp; b &lt;c&gt; &#x41;&#66;</attribute>"
                + "</object></database>")
        var batch = try #require(RecordLayout(entity: "A", in: reader.model)).emptyBatch()
        #expect(try reader.nextBatch(into: &batch))
        #expect(batch.record(at: 0).values == [.string("a & b <c> AB")])
    }

    @Test func nestingDepthIsBounded() throws {
        let depth = 100_000
        let text =
            Self.header + "<database>" + String(repeating: "<a>", count: depth)
            + String(repeating: "</a>", count: depth)
            + "</database>"
        let error = try Self.refusal(text)
        #expect(error.message.contains("deeper than") || error.message.contains("unexpected <a>"))
        // Inside the metadata plist, where nesting is legal, the bound still holds.
        let plist =
            Self.header + "<database><databaseInfo><metadata><plist version=\"1.0\">"
            + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
            + "</plist></metadata></databaseInfo></database>"
        #expect(try Self.refusal(plist).message.contains("deeper than"))
    }

    @Test func invalidUTF8IsRefusedWithItsOffset() throws {
        var data = Data((Self.header + "<database>\n<object type=\"A\" id=\"z102\">").utf8)
        let offset = data.count
        data.append(contentsOf: [0xC3, 0x28])
        data.append(contentsOf: Array("</object></database>".utf8))
        let error = try Self.refusal(data)
        #expect(error.location?.offset == offset)
        #expect(error.location?.line == 3)
        #expect(error.description.hasPrefix("hostile.xml:3: offset \(offset): malformed input: invalid UTF-8"))
        // Overlong encodings and surrogates are not UTF-8 either.
        for bad: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]] {
            var copy = Data((Self.header + "<database>").utf8)
            copy.append(contentsOf: bad)
            copy.append(contentsOf: Array("</database>".utf8))
            #expect(throws: DecantError.self) { _ = try Self.read(copy) }
        }
    }

    @Test func brokenXMLIsLocated() throws {
        let mismatched = try Self.refusal(Self.header + "<database>\n<object type=\"A\" id=\"z102\">\n</database>")
        #expect(mismatched.location?.line == 4)
        #expect(mismatched.message.contains("</database> closes <object>"))
        let truncated = try Self.refusal(Self.header + "<database>\n<object type=\"A\" id=\"z1")
        #expect(truncated.message.contains("unterminated") || truncated.message.contains("ends inside"))
        let notAStore = try Self.refusal(Self.header + "<plist version=\"1.0\"><dict/></plist>")
        #expect(notAStore.message.contains("not a Core Data XML store"))
    }
}
