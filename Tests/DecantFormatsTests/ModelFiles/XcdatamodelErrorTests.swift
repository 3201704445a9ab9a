import DecantCore
import DecantCodecs
import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Damaged model sources throw `.malformedInput` with the file and the line; other paths get the right codes.
@Suite("Xcdatamodel errors")
struct XcdatamodelErrorTests {
    static let header = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\">\n"

    static let cases: [(body: String, line: Int, fragment: String)] = [
        ("<entity name=\"A\">\n<attribute name=\"x\" attributeType=\"Integer 128\"/>\n</entity>\n</model>", 4, "Integer 128"),
        ("<entity representedClassName=\"A\"/>\n</model>", 3, "no name"),
        ("<entity name=\"A\">\n<relationship name=\"r\" deletionRule=\"Explode\" destinationEntity=\"A\"/>\n</entity>\n</model>", 4,
            "deletionRule"),
        ("<entity name=\"A\" parentEntity=\"Missing\"/>\n</model>", 3, "Missing"),
        ("<entity name=\"A\">\n<relationship name=\"r\" destinationEntity=\"Nowhere\"/>\n</entity>\n</model>", 4, "Nowhere"),
        ("<entity name=\"A\"/>\n<entity name=\"A\"/>\n</model>", 4, "twice"),
        ("<entity name=\"A\">\n<attribute name=\"d\" attributeType=\"Date\" minDateTimeInterval=\"soon\"/>\n</entity>\n</model>", 4,
            "soon"),
        ("<entity name=\"A\">\n<attribute name=\"n\"/>\n</entity>\n</model>", 4, "no attributeType"),
        ("<entity name=\"A\">\n\n<attribute name=\"x\" attributeType=\"String\">\n</entity>\n</model>", 6, "mismatched end tag"),
        ("<entity name=\"A\" parentEntity=\"B\"/>\n<entity name=\"B\" parentEntity=\"A\"/>\n</model>", 3, "cycle"),
        ("<entity name=\"A\">\n<attribute name=\"c\" attributeType=\"Integer 32\" derived=\"YES\" derivationExpression=\"items.@bogus\"/>\n</entity>\n</model>",
            4, "@bogus"),
    ]

    @Test(arguments: cases.indices)
    func malformedSourcesReportFileAndLine(_ index: Int) throws {
        let sample = Self.cases[index]
        let error = #expect(throws: DecantError.self) {
            try XcdatamodelReader.parse(Data((Self.header + sample.body).utf8), path: "Bad.xcdatamodel/contents")
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "Bad.xcdatamodel/contents")
        #expect(error?.location?.line == sample.line, "\(error.map(String.init(describing:)) ?? "-")")
        #expect(error?.description.contains(sample.fragment) == true, "\(error.map(String.init(describing:)) ?? "-")")
    }

    @Test func wrongRootElement() {
        let error = #expect(throws: DecantError.self) {
            try XcdatamodelReader.parse(Data("<plist/>".utf8), path: "x")
        }
        #expect(error?.code == .malformedInput && error?.location?.line == 1)
    }

    @Test func unknownAttributesAndElementsAreTolerated() throws {
        let body = "<entity name=\"A\" futureFlag=\"YES\">\n<attribute name=\"x\" attributeType=\"String\" shiny=\"1\"/>\n<gizmo/>\n</entity>\n<elements><element name=\"A\" positionX=\"1\" positionY=\"2\" width=\"3\" height=\"4\"/></elements>\n</model>"
        let model = try XcdatamodelReader.parse(Data((Self.header + body).utf8), path: "x")
        #expect(model.entities.map(\.name) == ["A"] && model.entities[0].attributes.map(\.name) == ["x"])
    }

    @Test func derivedAttributeIsHashedOnItsExpression() throws {
        let body = """
            <entity name="A">
            <attribute name="itemCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="items.@count"/>
            <relationship name="items" toMany="YES" deletionRule="Nullify" destinationEntity="A"/>
            </entity>
            </model>
            """
        let model = try XcdatamodelReader.parse(Data((Self.header + body).utf8), path: "x")
        let count = try #require(model.entities.first?.attributes.first)
        #expect(count.derivation == Derivation(expression: "count:(items)", sourceExpression: "items.@count"))
        #expect(count.isReadOnly)
        // 2.5: the hash of a derived attribute is SHA-256 over the expression's format only.
        #expect(model.versionHash(ofProperty: "itemCount", in: "A") == sha256("count:(items)"))
    }

    @Test func missingPathsAndEmptyBundles() throws {
        let missing = #expect(throws: DecantError.self) {
            try ModelBundle.load(from: URL(fileURLWithPath: "/nonexistent/Nope.xcdatamodeld"))
        }
        #expect(missing?.code == .fileNotFound)
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let error = #expect(throws: DecantError.self) { try ModelBundle.load(from: empty) }
        #expect(error?.code == .malformedInput)
    }

    private func sha256(_ text: String) -> Data? {
        // An independent SHA-256 (Python's hashlib), so the check does not reuse the code under test.
        let script = "import hashlib, sys; sys.stdout.write(hashlib.sha256(sys.argv[2].encode()).hexdigest())"
        guard let hex = try? PythonOracle.text(script, arguments: [text]) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes)
    }
}

/// The derivation-expression normaliser on the shapes derived attributes allow.
@Suite("Derivation expressions")
struct DerivationExpressionTests {
    @Test(arguments: [
        ("items.@count", "count:(items)"),
        ("  items.@count ", "count:(items)"),
        ("order.items.@count", "count:(order.items)"),
        ("items.@sum.price", "sum:(items.price)"),
        ("items.@max.price", "max:(items.price)"),
        ("items.@min.price", "min:(items.price)"),
        ("items.@avg.price", "average:(items.price)"),
        ("now()", "now()"),
        ("lowercase:(name)", "lowercase:(name)"),
        ("canonical:( name )", "canonical:(name)"),
        ("uppercase:(owner.name)", "uppercase:(owner.name)"),
        ("name", "name"),
        ("owner.name", "owner.name"),
        ("42", "42"),
        ("'abc'", "\"abc\""),
        ("\"a\\\"b\"", "\"a\\\"b\""),
        ("firstName ++ \" \" ++ lastName", "firstName ++ \" \" ++ lastName"),
    ])
    func normalises(_ source: String, _ expected: String) throws {
        #expect(try DerivationExpression.normalize(source) == expected)
    }

    @Test(arguments: ["items.@bogus", "lowercase:(name", "'open", "a.", "items.@count.@sum", "lowercase:", "a # b", ""])
    func rejects(_ source: String) {
        let error = #expect(throws: DecantError.self) { try DerivationExpression.normalize(source) }
        #expect(error?.code == .malformedInput)
    }
}
