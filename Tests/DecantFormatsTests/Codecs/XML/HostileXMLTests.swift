import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// XML that once crashed or could hurt Decant (FoundationXML traps on names that are not UTF-8; deep nesting; entity
/// tricks) now ends in a located ``DecantError``, and the parser's own errors read as words.
@Suite("Hostile XML")
struct HostileXMLTests {
    static let modelHeader = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel">

        """
    static let plistHeader = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    static func model(_ before: String, _ bad: [UInt8] = [], _ after: String = "") -> Data {
        Data(modelHeader.utf8) + Data(before.utf8) + Data(bad) + Data(after.utf8)
    }

    static func parseModel(_ data: Data) throws {
        _ = try XcdatamodelReader.parse(data, path: "Bad.xcdatamodel/contents")
    }

    // MARK: Invalid UTF-8

    /// Where the bad bytes go: before them, the bytes, after them.
    static let invalidUTF8Cases: [(String, [UInt8], String)] = [
        ("<ent", [0xE9], "ity name=\"A\"/>\n</model>\n"),  // an element name
        ("<entity na", [0xFF], "me=\"A\"/>\n</model>\n"),  // an attribute name
        ("<!-- caf", [0xC3], " -->\n</model>\n"),  // a comment: a lead byte with no continuation
        ("<!-- ", [0xED, 0xA0, 0x80], " -->\n</model>\n"),  // a UTF-16 surrogate written as UTF-8
        ("<?fu", [0x80], "zz?>\n</model>\n"),  // a processing instruction's target
        ("<entity name=\"", [0xF5, 0x80, 0x80, 0x80], "\"/>\n</model>\n"),  // above U+10FFFF, in a value
    ]

    @Test(arguments: invalidUTF8Cases.indices)
    func invalidUTF8InAModelNamesItsOffset(_ index: Int) {
        let (before, bad, after) = Self.invalidUTF8Cases[index]
        let error = #expect(throws: DecantError.self) { try Self.parseModel(Self.model(before, bad, after)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "Bad.xcdatamodel/contents")
        #expect(error?.location?.offset == Self.modelHeader.utf8.count + before.utf8.count)
        #expect(error?.location?.line == 3)
        #expect(error?.message.contains("not valid UTF-8") == true)
    }

    @Test func invalidUTF8InAnXMLPropertyListNamesItsOffset() {
        let before = "<dict>\n<k"
        let data = Data(Self.plistHeader.utf8) + Data(before.utf8) + Data([0xE9])
            + Data("ey>a</key><true/></dict></plist>".utf8)
        let error = #expect(throws: DecantError.self) { try PropertyListValue.decode(from: data, path: "Info.plist") }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.offset == Self.plistHeader.utf8.count + before.utf8.count)
        #expect(error?.location?.line == 5)
    }

    @Test func invalidUTF8InVersionInfoPlistNamesTheFile() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Fixtures.corpus("alemar11__CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd")
        let bundle = folder.appendingPathComponent("SampleModel.momd")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: source.appendingPathComponent("SampleModel.mom"), to: bundle.appendingPathComponent("SampleModel.mom"))
        let info = bundle.appendingPathComponent("VersionInfo.plist")
        let before = "<dict>\n<!-- "
        try (Data(Self.plistHeader.utf8) + Data(before.utf8) + Data([0xBF]) + Data(" --></dict></plist>".utf8))
            .write(to: info)
        let error = #expect(throws: DecantError.self) { try ModelBundle.load(from: bundle) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == info.path)
        #expect(error?.location?.offset == Self.plistHeader.utf8.count + before.utf8.count)
    }

    @Test func invalidUTF8InCurrentVersionFileNamesTheFile() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = folder.appendingPathComponent("Notes.xcdatamodeld")
        let version = bundle.appendingPathComponent("Notes.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Self.model("<entity name=\"A\"/>\n</model>\n").write(to: version.appendingPathComponent("contents"))
        let current = bundle.appendingPathComponent(".xccurrentversion")
        let before = "<dict>\n<key>_XCCurrentVersionName</key>\n<string>Notes"
        let after = ".xcdatamodel</string></dict></plist>"
        try (Data(Self.plistHeader.utf8) + Data(before.utf8) + Data([0xFF]) + Data(after.utf8)).write(to: current)
        let error = #expect(throws: DecantError.self) { try ModelBundle.load(from: bundle) }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == current.path)
        #expect(error?.location?.offset == Self.plistHeader.utf8.count + before.utf8.count)
        #expect(error?.location?.line == 6)
    }

    @Test func declaredLatin1IsReadAsLatin1() throws {
        let data = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<model>\n<entity name=\"Caf".utf8)
            + Data([0xE9]) + Data("\"/>\n</model>\n".utf8)
        let model = try XcdatamodelReader.parse(data, path: "x")
        #expect(model.entities.map(\.name) == ["Café"])
    }

    @Test(arguments: ["UTF-16", "Shift_JIS", "EBCDIC-US", "windows-1252"])
    func otherDeclaredEncodingsAreRefused(_ encoding: String) {
        let data = Data("<?xml version=\"1.0\" encoding=\"\(encoding)\"?>\n<model/>\n".utf8)
        let error = #expect(throws: DecantError.self) { try Self.parseModel(data) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains(encoding) == true)
        #expect(error?.location?.offset == 30)
    }

    @Test func utf16IsRefused() {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<model/>\n"
        let withMark = Data([0xFF, 0xFE]) + (text.data(using: .utf16LittleEndian) ?? Data())
        let error = #expect(throws: DecantError.self) { try Self.parseModel(withMark) }
        #expect(error?.code == .unsupportedFormat)
        let withoutMark = text.data(using: .utf16BigEndian) ?? Data()
        let unmarked = #expect(throws: DecantError.self) { try Self.parseModel(withoutMark) }
        #expect(unmarked?.location?.offset == 0)
        #expect(unmarked?.message.contains("UTF-16") == true)
    }

    // MARK: Depth

    @Test func sixtyThousandNestedElementsAreRefused() {
        let depth = 60_000
        let body = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) + "\n</model>\n"
        let error = #expect(throws: DecantError.self) { try Self.parseModel(Self.model(body)) }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("deeper than \(256) levels") == true)
        #expect(error?.location?.line == 3)
    }

    @Test func nestingJustUnderTheLimitIsRead() throws {
        let depth = 250
        let body = String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        let model = try XcdatamodelReader.parse(Self.model(body + "<entity name=\"A\"/>\n</model>\n"), path: "x")
        #expect(model.entities.map(\.name) == ["A"])
    }

    @Test(arguments: ["array", "dict"])
    func deeplyNestedPropertyListsAreRefused(_ element: String) {
        let depth = 60_000
        let xml = Self.plistHeader + String(repeating: "<\(element)>", count: depth)
            + String(repeating: "</\(element)>", count: depth) + "</plist>"
        let error = #expect(throws: DecantError.self) { try PropertyListValue.decode(from: Data(xml.utf8), path: "x") }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("deeper than 256") == true)
    }

    @Test func elementsInsideScalarsAreRefused() {
        let depth = 60_000
        let xml = Self.plistHeader + String(repeating: "<string>", count: depth)
            + String(repeating: "</string>", count: depth) + "</plist>"
        let error = #expect(throws: DecantError.self) { try PropertyListValue.decode(from: Data(xml.utf8), path: "x") }
        #expect(error?.message.contains("<string> inside <string>") == true)
    }

    // MARK: Readable parser errors

    static let parserErrors: [(body: String, line: Int, words: String)] = [
        ("<entity name=\"A\">\n</model>\n", 4, "mismatched end tag"),
        ("<entity name=\"A\">\n<attribute name=\"x\"/>\n", 4, "premature end of document"),
        ("<entity name=\"A\"/>\u{1}\n</model>\n", 3, "invalid character"),
        ("<entity name=A/>\n</model>\n", 3, "attribute value not started"),
        ("<entity name=\"A\" name=\"B\"/>\n</model>\n", 3, "attribute given twice"),
        ("<!-- unterminated\n</model>\n", 5, "comment not closed"),
    ]

    @Test(arguments: parserErrors.indices)
    func parserErrorsAreWords(_ index: Int) {
        let sample = Self.parserErrors[index]
        let error = #expect(throws: DecantError.self) { try Self.parseModel(Self.model(sample.body)) }
        let text = error.map(String.init(describing:)) ?? "-"
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains(sample.words) == true, "\(text)")
        #expect(error?.location?.line == sample.line, "\(text)")
        #expect(!text.contains("NSXMLParserErrorDomain") && !text.contains("(null)"), "\(text)")
    }

    @Test func propertyListParserErrorsAreWords() {
        let xml = Self.plistHeader + "<array>\n</dict>\n</plist>"
        let error = #expect(throws: DecantError.self) { try PropertyListValue.decode(from: Data(xml.utf8), path: "x") }
        #expect(error?.message == "not well-formed XML: mismatched end tag (XML error 76)")
        #expect(error?.location?.line == 5)
    }

    // MARK: Entities and DTDs

    static let billionLaughs: String = {
        var declarations = "  <!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            declarations += "  <!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
        }
        return "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n" + declarations + "]>\n"
    }()

    @Test func billionLaughsIsRefusedInAModel() {
        let data = Data((Self.billionLaughs + "<model><entity name=\"&lol9;\"/></model>\n").utf8)
        let error = #expect(throws: DecantError.self) { try Self.parseModel(data) }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("<!ENTITY") == true)
        #expect(error?.location?.line == 3)
    }

    @Test func billionLaughsIsRefusedInAPropertyList() {
        let data = Data((Self.billionLaughs + "<plist><string>&lol9;</string></plist>\n").utf8)
        let error = #expect(throws: DecantError.self) { try PropertyListValue.decode(from: data, path: "x") }
        #expect(error?.code == .unsupportedFormat)
        let text = Self.billionLaughs
        let declaration = text.range(of: "<!ENTITY").map {
            text.utf8.distance(from: text.startIndex, to: $0.lowerBound)
        }
        #expect(error?.location?.offset == declaration)
    }

    @Test func externalEntitiesAreNeverRead() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = folder.appendingPathComponent("secret.txt")
        try Data("PWNED".utf8).write(to: secret)
        let declared = "<?xml version=\"1.0\"?>\n<!DOCTYPE plist [<!ENTITY e SYSTEM \"\(secret.absoluteString)\">]>\n"
            + "<plist><string>&e;</string></plist>\n"
        let error = #expect(throws: DecantError.self) {
            try PropertyListValue.decode(from: Data(declared.utf8), path: "x")
        }
        #expect(error?.code == .unsupportedFormat)
        // An external DTD that declares the entity is not loaded either: the reference stays undeclared.
        let dtd = folder.appendingPathComponent("evil.dtd")
        try Data("<!ENTITY e \"PWNED\">".utf8).write(to: dtd)
        let external = "<?xml version=\"1.0\"?>\n<!DOCTYPE plist SYSTEM \"\(dtd.absoluteString)\">\n"
            + "<plist><string>&e;</string></plist>\n"
        let value = try? PropertyListValue.decode(from: Data(external.utf8), path: "x")
        #expect(value?.stringValue?.contains("PWNED") != true)
        let model = "<?xml version=\"1.0\"?>\n<!DOCTYPE model SYSTEM \"\(dtd.absoluteString)\">\n"
            + "<model><entity name=\"&e;\"/></model>\n"
        let entities = try? XcdatamodelReader.parse(Data(model.utf8), path: "x").entities.map(\.name)
        #expect(entities?.contains("PWNED") != true)
    }
}
