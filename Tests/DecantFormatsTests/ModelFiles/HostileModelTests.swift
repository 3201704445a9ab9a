import DecantCore
@testable import DecantFormats
import DecantTestSupport
import Foundation
import Testing

/// Model inputs built to exhaust the stack or the clock (deep derivations, long inheritance chains, archived
/// expressions that loop or share) end in a located ``DecantError`` in reasonable time.
@Suite("Hostile models")
struct HostileModelTests {
    static let depth = 10_000

    static let deepDerivations: [String] = [
        String(repeating: "(", count: depth) + "x" + String(repeating: ")", count: depth),
        String(repeating: "lowercase:(", count: depth) + "x" + String(repeating: ")", count: depth),
        Array(repeating: "x", count: depth).joined(separator: " + "),
    ]

    @Test(arguments: deepDerivations.indices)
    func deepDerivationsAreRefused(_ index: Int) {
        let error = #expect(throws: DecantError.self) {
            try DerivationExpression.normalize(Self.deepDerivations[index])
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("deeper than 256 levels") == true)
        // The message quotes the start of the expression, not all of it.
        #expect((error?.message.count ?? 0) < 200)
    }

    @Test func nestingUnderTheLimitIsNormalised() throws {
        let nested = String(repeating: "(", count: 200) + "items.@count" + String(repeating: ")", count: 200)
        #expect(try DerivationExpression.normalize(nested) == "count:(items)")
        let chain = Array(repeating: "x", count: 100).joined(separator: " + ")
        #expect(try DerivationExpression.normalize(chain) == chain)
    }

    @Test func deepDerivationInAModelNamesTheAttribute() {
        let expression = Self.deepDerivations[0]
        let contents = """
            <?xml version="1.0" encoding="UTF-8"?>
            <model>
            <entity name="A">
            <attribute name="d" attributeType="String" derived="YES" derivationExpression="\(expression)"/>
            </entity>
            </model>
            """
        let error = #expect(throws: DecantError.self) {
            try XcdatamodelReader.parse(Data(contents.utf8), path: "Deep.xcdatamodel/contents")
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "Deep.xcdatamodel/contents")
        #expect(error?.location?.line == 4)
        #expect(error?.location?.entity == "A" && error?.location?.keyPath == "d")
    }

    @Test func longInheritanceChainReadsInLinearTime() throws {
        let count = 5_000
        var contents = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model>\n<entity name=\"E0\"/>\n"
        for index in 1..<count { contents += "<entity name=\"E\(index)\" parentEntity=\"E\(index - 1)\"/>\n" }
        contents += "</model>\n"
        let start = Date()
        let model = try XcdatamodelReader.parse(Data(contents.utf8), path: "x")
        #expect(model.entities.count == count)
        #expect(Date().timeIntervalSince(start) < 30)
        // A cycle at the end of the chain is still found.
        let cyclic = contents.replacingOccurrences(
            of: "<entity name=\"E0\"/>", with: "<entity name=\"E0\" parentEntity=\"E\(count - 1)\"/>")
        let error = #expect(throws: DecantError.self) { try XcdatamodelReader.parse(Data(cyclic.utf8), path: "x") }
        #expect(error?.message.contains("cycle") == true)
    }

    // MARK: Archived expressions

    @Test func constantArrayThatContainsItselfIsRefused() throws {
        var writer = KeyedArchiveWriter()
        let array = writer.reserveObject()
        writer.setObject(array, className: "NSArray", fields: ["NS.objects": .array([array.uid])])
        let expression = writer.addObject(
            className: "NSConstantValueExpression", fields: ["NSExpressionType": 0, "NSConstantValue": array.uid])
        let archive = try KeyedArchive(data: try writer.encodedData(root: expression), path: "loop.mom")
        let error = #expect(throws: DecantError.self) {
            try ArchivedExpressionFormat(archive: archive).expression(expression.uid)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "loop.mom")
        #expect(error?.message.contains("deeper than 64") == true)
    }

    @Test func sharedSubexpressionsAreBounded() throws {
        // 40 function expressions, each taking the next one twice: 2^40 renderings without a bound.
        var writer = KeyedArchiveWriter()
        var next = writer.addObject(className: "NSSelfExpression", fields: ["NSExpressionType": 1])
        for _ in 0..<40 {
            let arguments = writer.addArray([next.uid, next.uid])
            next = writer.addObject(
                className: "NSFunctionExpression",
                fields: ["NSExpressionType": 4, "NSSelectorName": .string("add:to:"), "NSArguments": arguments.uid])
        }
        let archive = try KeyedArchive(data: try writer.encodedData(root: next), path: "dag.mom")
        let start = Date()
        let error = #expect(throws: DecantError.self) {
            try ArchivedExpressionFormat(archive: archive).expression(next.uid)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("shared objects") == true)
        #expect(Date().timeIntervalSince(start) < 30)
    }

    @Test func deeplyNestedInlineValuesInAnArchiveAreRefused() {
        var value: PropertyListValue = .string("leaf")
        for _ in 0..<200 { value = [value] }
        let plist: PropertyListValue = [
            "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": ["root": value], "$objects": ["$null"],
        ]
        let error = #expect(throws: DecantError.self) { try KeyedArchive(propertyList: plist, path: "deep.archive") }
        #expect(error?.code == .malformedInput)
        #expect(error?.location?.path == "deep.archive")
    }
}
