import DecantCore
import DecantFormats
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
        let error = #expect(throws: DecantError.self) { try DerivationExpression.normalize(Self.deepDerivations[index]) }
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
}
