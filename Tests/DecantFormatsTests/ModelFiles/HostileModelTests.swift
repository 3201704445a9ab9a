import DecantCore
@testable import DecantCodecs
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

    /// A chain of n entities reads in time linear in n: 4× the entities take well under the 16× quadratic work would.
    @Test func longInheritanceChainReadsInLinearTime() throws {
        func chain(_ count: Int) -> String {
            var contents = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model>\n<entity name=\"E0\"/>\n"
            for index in 1..<count { contents += "<entity name=\"E\(index)\" parentEntity=\"E\(index - 1)\"/>\n" }
            return contents + "</model>\n"
        }
        let count = 5_000
        let contents = chain(count)
        let model = try XcdatamodelReader.parse(Data(contents.utf8), path: "x")
        #expect(model.entities.count == count)
        let growth = try Growth.ratio(from: 1_500) { count in
            let data = Data(chain(count).utf8)
            _ = try XcdatamodelReader.parse(data, path: "x")
        }
        #expect(growth < 10, "4× the entities took \(growth)× the time")
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
        // The refusal names the bound it hit: without one, the 2^40 renderings would never end (no clock needed).
        let error = #expect(throws: DecantError.self) {
            try ArchivedExpressionFormat(archive: archive).expression(next.uid)
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.message.contains("shared objects") == true)
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
